"""Compression vs the memory wall: does summing Blosc2-compressed chunks beat the plain sum?

For each case (data set × codec × clevel × filter × thread count) the C core runs, on the
same pinned threads with the same chunk ownership:
    plain        the in-memory sum of a copy each thread first-touched for its own chunks;
    compressed   the data stored as Blosc2 chunks sized for the L2 (compressed by, hence
                 first-touched by, the owning thread), each thread decompressing its chunks
                 just in time into its own cache-resident buffer with its own dctx
                 (nthreads=1) and summing them (read="buffer"), or summing each block in a
                 Blosc2 postfilter right after it is decompressed (read="fused").
Blocks default to half a chunk (`block_for`): on the smooth data that raised the
compression ratio (36 -> 51 with lz4-5-shuffle) and decompress+sum speed by 7-10 %.
Repetitions alternate plain and compressed, each timed inside C. Both sums are validated
against a Kahan reference (exact for integers); a mismatch is a MeasurementError.

Conventions: GB = 10^9 bytes; decompress+sum speed counts uncompressed-equivalent bytes;
ratio = uncompressed bytes / total compressed bytes (Blosc headers included)."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace
from typing import Any

from numascope import steady
from numascope.benchmark import Case
from numascope.errors import MeasurementError, UserError
from numascope.families.compress.datasets import (
    Dataset,
    check_values,
    fit,
    format_bytes,
    load,
    synthetic,
    too_small,
)
from numascope.families.compress.options import (  # noqa: F401 - the names re-exported
    CLEVELS,
    CODECS,
    DEFAULT_SET,
    FILTERS,
    MAX_CHUNK,
    READS,
    SYNTHETIC,
    SYNTHETIC_DTYPE,
    TABLE,
    check_clevel,
    check_codec,
    check_filter,
    check_synthetic,
)
from numascope.host import host
from numascope.memspec import MemorySpec
from numascope.pages import check_placement
from numascope.profile import Profile
from numascope.profile import profile as _profile
from numascope.results.record import BenchResult, Metric
from numascope.steady import Steady
from numascope.topology.model import Topology

FAMILY = "compress"
QUICK_COMBOS = (("blosclz", 5, "shuffle"), ("lz4", 5, "shuffle"), ("lz4", 5, "bitshuffle"),
                ("zstd", 1, "shuffle"))
MIB = 1 << 20
DEFAULT_REPS = TABLE["reps"].default   # timed repetitions per case (options.py)
REL_TOL = 1e-9                # |sum - reference| <= REL_TOL * sum(|x|) (float data)


def _core():
    from numascope import _core as core  # lazy: builds the C core on first use
    return core


def thread_counts(n_all: int) -> list[int]:
    """1, 2, 4, … and always the full count."""
    out, t = [], 1
    while t < n_all:
        out.append(t)
        t *= 2
    return out + [n_all]


def chunk_for(topo: Topology, cpu: int | None = None) -> int:
    """Half the L2 of the first CPU: the decompressed chunk plus Blosc's block buffers and
    the streaming compressed input stay in L2. 256 KiB when the L2 is unknown."""
    l2 = topo.cache_bytes(2, cpu) or 512 * 1024
    return max(64 * 1024, l2 // 2)


def block_for(chunk: int, item: int = 1) -> int:
    """Half the chunk (whole items): two blocks per chunk. The decompressed chunk, Blosc's
    block temporaries and the compressed input still fit in the L2 the chunk is sized for."""
    return max(item, chunk // 2 // item * item)


def default_size(topo: Topology, profile: Profile | str = "full") -> int:
    """4x the last-level cache (so the plain sum meets the memory wall), within the
    profile's working-set bounds (smoke: its fixed working set)."""
    prof = _profile(profile)
    if prof.working_set:
        return prof.working_set
    llc = topo.llc_bytes() or 32 * MIB
    return int(min(prof.max_bytes, max(prof.min_bytes, 4 * llc)))


def check_memory(nbytes: int, memory: MemorySpec | None = None) -> None:
    """The data, its placed plain copy and (at worst, incompressible) the compressed store
    are held at once: refuse a size that does not fit in the memory available now (the
    copy and the store on the bound nodes too)."""
    what = f"{format_bytes(nbytes)} of data (with its plain copy and compressed store)"
    h = host("/")
    h.check_fits(3 * nbytes, what)
    if memory is not None and memory.policy == "bind":
        h.check_fits(2 * nbytes, what, list(memory.nodes))


def combos(codecs=CODECS, clevels=CLEVELS, filters=FILTERS) -> list[tuple[str, int, str]]:
    """Every codec x clevel x filter, each checked by the options' rules (options.py)."""
    for c in codecs:
        check_codec(c)
    for f in filters:
        check_filter(f)
    for lv in clevels:
        check_clevel(lv)
    return [(c, lv, f) for c in codecs for lv in clevels for f in filters]


def combo_label(codec: str, clevel: int, filt: str) -> str:
    return f"{codec}-{clevel}-{filt}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


SYNTHETIC_BYTES = 256 * MIB  # a synthetic data set's size when none is given
# what a unit of --reps auto is here (numascope.steady): the store is built once per setting
SAME_STORE = "one call of the C kernel over the same compressed store and plain copy"


@dataclass(frozen=True)
class DataSpec:
    """How to get a data set; carried in case params so any process can rebuild it."""

    name: str = DEFAULT_SET           # a synthetic name, or "file"
    path: str | None = None
    fmt: str = TABLE["format"].default
    dtype: str | None = None
    column: str | None = None
    variable: str | None = None
    size: int | None = None           # bytes (synthetic: generated; file: prefix)
    seed: int = 0

    def to_params(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_params(cls, d: dict[str, Any]) -> DataSpec:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})

    def build(self) -> Dataset:
        if self.path:
            return check_values(fit(load(self.path, self.fmt, self.dtype, self.column,
                                         self.variable), self.size))
        return synthetic(self.name, self.size or SYNTHETIC_BYTES,
                         self.dtype or SYNTHETIC_DTYPE, self.seed)


@dataclass(frozen=True)
class CompressParams:
    """One compression case. The options' defaults and rules are options.py's (TABLE);
    `checked(topo)` validates every input once with them, when the case is built, and
    resolves the defaults (thread count, chunk size), so a case holds exactly what will be
    measured.

    The data lives where the owning thread first touches it (plain copy and compressed
    store alike), on 4 KiB pages, unless `memory` binds or interleaves it (numactl's
    --membind / --interleave; --pages for the page kind): then every page the plain copy
    and the compressed store hold is checked to be on those nodes (move_pages)."""

    data: DataSpec = field(default_factory=DataSpec)
    codec: str = "lz4"
    clevel: int = 5
    filter: str = "shuffle"
    threads: int | None = None        # None: every CPU `where` gives
    where: str = "all"                # --cpus: all, S0, N1, L3:5 or a CPU list
    policy: str = TABLE["policy"].default    # the order threads take those CPUs in
    chunk_bytes: int | None = None    # None: half the L2 (chunk_for)
    block_bytes: int | None = None    # None: half the chunk (block_for); 0: Blosc's choice
    read: str = TABLE["read"].default        # buffer | fused (READS)
    reps: int | Steady = DEFAULT_REPS     # a count, or --reps auto's stopping rule
    memory: MemorySpec = field(default_factory=lambda: MemorySpec(pages=TABLE["pages"].default))

    # -- checking ---------------------------------------------------------------------
    def checked(self, topo: Topology) -> CompressParams:
        """These parameters with every input checked (UserError, exit 2) and the defaults
        resolved."""
        from numascope.placement import select_cpus
        combos([self.codec], [self.clevel], [self.filter])
        TABLE["read"].convert(self.read, "read mode")
        TABLE["reps"].convert(self.reps)
        TABLE["policy"].convert(self.policy)
        avail = len(select_cpus(topo, self.where, self.policy))
        threads = avail if self.threads is None else self.threads
        if not 1 <= threads <= avail:
            raise UserError(f"{threads} threads asked but {self.where} with policy "
                            f"{self.policy} gives {plural(avail, 'CPU')}")
        chunk = TABLE["chunk"].convert(chunk_for(topo) if self.chunk_bytes is None
                                       else self.chunk_bytes)
        if self.block_bytes is not None and not 0 <= self.block_bytes <= chunk:
            raise UserError(f"a Blosc block ({self.block_bytes} B) cannot be larger than its "
                            f"chunk ({chunk} B)")
        if not self.data.path:
            check_synthetic(self.data.name)
            if self.data.dtype is not None:
                TABLE["dtype"].convert(self.data.dtype)
        if self.memory.policy not in ("first-touch", "bind", "interleave", "preferred"):
            raise UserError(f"compress places its data by first touch, --membind, "
                            f"--interleave or --preferred, not {self.memory.policy}")
        from numascope.memspec import check_nodes
        return replace(self, threads=threads, chunk_bytes=chunk,
                       memory=check_nodes(topo, self.memory))

    # -- as a record's params -----------------------------------------------------------
    @property
    def label(self) -> str:
        dname = self.data.path or self.data.name
        return (f"{dname} {combo_label(self.codec, self.clevel, self.filter)} "
                f"{self.threads}T{_memory_label(self.memory)}")

    def to_params(self) -> dict[str, Any]:
        """The fields a record's params hold (the shape older records have too)."""
        return {"data": self.data.to_params(), "codec": self.codec, "clevel": self.clevel,
                "filter": self.filter, "threads": self.threads, "where": self.where,
                "policy": self.policy, "chunk_bytes": self.chunk_bytes,
                "block_bytes": self.block_bytes, "read": self.read, "reps": self.reps,
                "memory": self.memory.to_dict()}

    @classmethod
    def from_params(cls, d: dict[str, Any]) -> CompressParams:
        kw = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        if isinstance(kw.get("data"), dict):
            kw["data"] = DataSpec.from_params(kw["data"])
        if isinstance(kw.get("memory"), dict):
            kw["memory"] = MemorySpec.from_dict(kw["memory"])
        return cls(**kw)


def _memory_label(m: MemorySpec) -> str:
    """"" for compress's default (first touch, 4 KiB pages), else " mem bind N1", " mem
    interleave N0,N1 thp", " mem first-touch hugetlb"."""
    if m.policy == "first-touch" and m.pages == "none":
        return ""
    return f" mem {m.describe(default_pages='none')}"


@dataclass
class _Cache:
    """One data set, one compressed store and one plain copy at a time (memory)."""

    spec: DataSpec | None = None
    ds: Dataset | None = None
    ref: tuple[Any, float] | None = None
    store_key: tuple | None = None
    store: Any = None
    store_cpus: list[int] = field(default_factory=list)
    compress_s: float = math.nan
    compress_threads: int = 0
    cbytes: int = 0
    block: int = 0
    plain_key: tuple | None = None
    plain: Any = None


class Compress:
    """The Benchmark for family "compress". Cases come from `cases()` / `suite_cases()`;
    order them codec-combination-major with thread counts descending (as `cases()` does)
    so each combination is compressed once, by the largest team. A case's params are a
    checked CompressParams."""

    family = FAMILY
    # compared by default (numascope compare): uncompressed-equivalent GB/s of the compressed sum (speedup is derived from it)
    primary = ("decompress_sum",)
    title = "compression against the memory wall (Blosc2)"

    def suite_cases(self, topo: Topology, profile: Profile) -> list[Case]:
        """The cases `numascope run` measures under this profile."""
        return suite_cases(topo, profile)

    def __init__(self) -> None:
        self._c = _Cache()

    def cases(self, topo: Topology, data: DataSpec | list[DataSpec] | None = None,
              codecs=CODECS, clevels=CLEVELS, filters=FILTERS,
              threads: list[int] | None = None, where: str = "all",
              policy: str = CompressParams.policy, chunk_bytes: int | None = None,
              reps: int | Steady = DEFAULT_REPS, block_bytes: int | None = None,
              read: str = CompressParams.read,
              memory: MemorySpec | None = None, **_: Any) -> list[Case]:
        """Every data set x codec x clevel x filter x thread count (descending), checked."""
        from numascope.placement import select_cpus
        specs = data if isinstance(data, list) else [data or DataSpec()]
        base = CompressParams(where=where, policy=policy, chunk_bytes=chunk_bytes,
                              block_bytes=block_bytes, read=read, reps=reps,
                              **({"memory": memory} if memory else {})).checked(topo)
        settings = combos(codecs, clevels, filters)
        avail = len(select_cpus(topo, where, policy))
        counts = sorted(set(threads or thread_counts(avail)), reverse=True)
        out = []
        for spec in specs:
            checked = [replace(base, data=spec, codec=codec, clevel=lv, filter=filt,
                               threads=t).checked(topo)
                       for codec, lv, filt in settings for t in counts]
            if not spec.path:
                check_memory(spec.size or SYNTHETIC_BYTES, base.memory)
            if base.memory.pages == "hugetlb":   # the copy, and the store at worst, whole pages
                nbytes = spec.size or SYNTHETIC_BYTES
                host("/").check_hugetlb(2 * nbytes + 2 * counts[0] * (2 << 20),
                                        f"{format_bytes(nbytes)} of data on hugetlb pages")
            out += [Case(p.label, p) for p in checked]  # type: ignore[arg-type]
        return out

    # -- measurement --------------------------------------------------------------------
    def _dataset(self, spec: DataSpec) -> Dataset:
        c = self._c
        if c.spec != spec:
            c.store = c.plain = c.store_key = c.plain_key = None  # free memory first
            c.ds, c.ref = spec.build(), None
            c.spec = spec
        assert c.ds is not None
        if c.ref is None:
            ref = _core().cz_ref_sum(c.ds.data, c.ds.dtype)
            if not math.isfinite(ref[1]):
                raise UserError(f"{c.ds.name}: the values are so large that their sum "
                                "overflows a double: the sums cannot be validated")
            c.ref = ref
        return c.ds

    def measure(self, topo: Topology, case: Case) -> BenchResult:
        from numascope.placement import select_cpus
        p = case.params if isinstance(case.params, CompressParams) \
            else CompressParams.from_params(case.params)
        if p.threads is None or p.chunk_bytes is None:
            p = p.checked(topo)
        assert p.threads is not None and p.chunk_bytes is not None
        core = _core()
        ds = self._dataset(p.data)
        cpus = select_cpus(topo, p.where, p.policy, p.threads)
        item = ds.data.itemsize
        chunk = max(item, p.chunk_bytes // item * item)
        c = self._c
        block = p.block_bytes   # None: half the chunk; 0: Blosc's automatic choice
        block = block_for(chunk, item) if block is None else min(chunk, block // item * item)
        skey = (p.codec, p.clevel, p.filter, chunk, block, p.memory)
        mem = p.memory.to_core()
        try:
            if c.store_key != skey:
                c.store = None
                c.store, c.compress_s, c.cbytes, c.block = core.cz_store_new(
                    ds.data, chunk, item, p.codec, p.clevel, p.filter, cpus, block, mem)
                c.store_key, c.store_cpus, c.compress_threads = skey, list(cpus), len(cpus)
            elif c.store_cpus != list(cpus):
                core.cz_store_place(c.store, cpus)
                c.store_cpus = list(cpus)
            pkey = (tuple(cpus), chunk, p.memory)
            if c.plain_key != pkey:
                c.plain = None
                c.plain = core.cz_plain_new(ds.data, chunk, cpus, mem)
                c.plain_key = pkey
            got: list[tuple[dict[str, Any], bool]] = []   # (the C core's answer, agreed)
            verdict = None
            if isinstance(p.reps, Steady):
                # --reps auto: timed calls on the same store (not fresh allocations: the
                # store is built once per setting) until the figure is steady over them
                def batch(n: int) -> list[list[float]]:
                    got.append(self._timed(ds, cpus, n, p.read))
                    return [[ds.nbytes / 1e9 / t for t in r["comp_s"]] for r, _ in got]
                verdict = steady.repeat(batch, p.reps, what=SAME_STORE, fresh=False)
            else:
                got.append(self._timed(ds, cpus, p.reps, p.read))
        except ValueError as e:  # the C core's reasons (CPU not allowed, blosc2 failure)
            raise UserError(str(e)) from None
        except MemoryError:
            raise UserError(f"not enough memory for {format_bytes(ds.nbytes)} of data "
                            "(plain copy + compressed store)") from None
        r = dict(got[0][0])
        for k in ("comp_s", "plain_s", "plain_sums", "comp_sums"):
            r[k] = [x for one, _ in got for x in one[k]]
        res = self._result(topo, case.label, p, ds, cpus, chunk, r, all(a for _, a in got))
        if verdict is not None:
            res.params["reps"] = verdict.reps
            res.params["steady"] = verdict.to_dict() | {"metric": "decompress_sum"}
        return res

    def _timed(self, ds: Dataset, cpus: list[int], reps: int, read: str
               ) -> tuple[dict[str, Any], bool]:
        """One call of the C core: `reps` paired plain and compressed repetitions, validated;
        whether the two sums were bit-identical."""
        c = self._c
        r = _core().cz_measure(c.plain, c.store, cpus, ds.dtype, reps, read)
        if read == "fused" and r["postfilter_bytes"] != ds.nbytes * (reps + 1):
            raise MeasurementError(f"the postfilter summed {r['postfilter_bytes']} bytes, not "
                                   f"{reps + 1} x {ds.nbytes}: not every byte was "
                                   "decompressed and summed")
        return r, self._validate(ds, r)

    def _validate(self, ds: Dataset, r: dict[str, Any]) -> bool:
        """Every plain and compressed sum must match the reference; returns whether the two
        aggregations were bit-identical (they should be: same kernel, same blocks)."""
        assert self._c.ref is not None
        ref, abs_sum = self._c.ref
        is_float = ds.dtype.startswith("f")
        tol = REL_TOL * abs_sum if is_float else 0
        for kind in ("plain_sums", "comp_sums"):
            for s in r[kind]:
                if not (abs(s - ref) <= tol):
                    raise MeasurementError(
                        f"{kind.split('_')[0]} sum {s!r} differs from the reference {ref!r} "
                        f"(tolerance {tol:.3g}): the measurement is not valid")
        return all(a == b for a, b in zip(r["plain_sums"], r["comp_sums"]))

    def _result(self, topo: Topology, label: str, p: CompressParams, ds: Dataset,
                cpus: list[int], chunk: int, r: dict[str, Any], identical: bool) -> BenchResult:
        c = self._c
        gb = ds.nbytes / 1e9
        comp = [gb / t for t in r["comp_s"]]
        plain = [gb / t for t in r["plain_s"]]
        metrics = {
            "decompress_sum": Metric("decompress_sum", "GB/s", True, comp,
                                     "uncompressed-equivalent bytes per second, GB = 1e9 B"),
            "plain_sum": Metric("plain_sum", "GB/s", True, plain,
                                "bytes summed per second from memory, GB = 1e9 B"),
            "speedup": Metric("speedup", "x", True,
                              [tp / tc for tp, tc in zip(r["plain_s"], r["comp_s"])],
                              "plain time / compressed time, paired repetitions"),
            "ratio": Metric("ratio", "x", True, [ds.nbytes / c.cbytes],
                            "uncompressed bytes / total compressed bytes"),
            "compress_speed": Metric("compress_speed", "GB/s", True, [gb / c.compress_s],
                                     f"uncompressed GB/s with {c.compress_threads} threads"),
        }
        notes = list(ds.notes)
        small = too_small(ds.nbytes, topo.llc_bytes(cpus))
        if small:
            notes.append(small)
        nchunks = -(-ds.nbytes // chunk)
        if nchunks < len(cpus):
            notes.append(f"only {plural(nchunks, 'chunk')} of {format_bytes(chunk)} for "
                         f"{len(cpus)} threads: some threads have no work")
        if not identical:
            notes.append("plain and compressed sums agree within tolerance but not bit for bit")
        params = {
            "data": p.data.to_params(), "dataset": ds.name, "source": ds.source,
            "kind": ds.kind, "dtype": ds.dtype, "nbytes": ds.nbytes, "codec": p.codec,
            "clevel": p.clevel, "filter": p.filter, "threads": len(cpus),
            "where": p.where, "policy": p.policy, "chunk_bytes": chunk,
            "block_bytes": c.block, "read": r["mode"],
            "nchunks": -(-ds.nbytes // chunk), "reps": p.reps, "isa": r["isa"],
            "compressed_bytes": c.cbytes, "compress_threads": c.compress_threads,
            "sum": r["plain_sums"][0], "reference_sum": c.ref[0] if c.ref else None,
        }
        placed = {"plain_pages": _pages(_core().cz_where(c.plain)),
                  "compressed_pages": _pages(_core().cz_where(c.store))}
        if p.memory.policy == "first-touch":
            memory: Any = "first touch by the owning thread"
        else:
            memory = p.memory.to_dict()
            params["memory"] = memory
            notes += check_placed(p.memory, placed)
        placement = {"cpus": list(cpus), "memory": memory, **placed}
        return BenchResult(FAMILY, label, params, metrics, placement, notes, True)


def check_placed(memory: MemorySpec, placed: dict[str, dict | None]) -> list[str]:
    """A bound or interleaved copy with a sampled page off its nodes is not a measurement
    of that placement: each copy judged by bw's rule (bw_placement.check_placement), its
    MeasurementError naming the copy; returns that rule's notes. Pages the kernel could not
    locate (None) say nothing."""
    if memory.policy not in ("bind", "interleave"):
        return []
    notes: list[str] = []
    for what, pages in placed.items():
        if pages is None:
            continue
        name = what.replace("_", " ")
        try:
            _, said = check_placement(memory.to_dict(), [], pages, [], 1)
        except MeasurementError as e:
            raise MeasurementError(f"{name}: {e}") from None
        notes += [f"{name}: {n}" for n in said]
    return notes


def _pages(where: dict | None) -> dict | None:
    """Drop the 'not present' bucket: the compressed regions are mapped worst-case size and
    only the pages that hold compressed bytes are ever touched."""
    if where is None:
        return None
    return {k: v for k, v in where.items() if k != -1}


SUITE_CLEVELS = (1, 5)
SUITE_FILTERS = ("shuffle", "bytedelta")


def suite_cases(topo: Topology, profile: Profile | str) -> list[Case]:
    """Thinned profile (quick): the smooth synthetic set, four fast codec settings, 1..all
    threads. Dense profile (full): the three synthetic sets, every codec at clevel 1 and 5
    with shuffle and bytedelta (Blosc's usual winners for numeric data); the whole codec x
    clevel x filter sweep is `numascope compress --profile full`, too long for a suite
    stage. Sizes within the profile's bounds."""
    prof = _profile(profile)
    bench = Compress()
    # until steady in the measured profiles, within the stage's pool; else 5 repetitions
    reps = prof.repetitions(DEFAULT_REPS)
    size = default_size(topo, prof)
    if not prof.dense:
        cases: list[Case] = []
        spec = DataSpec(DEFAULT_SET, size=size)
        for codec, lv, filt in QUICK_COMBOS:
            cases += bench.cases(topo, spec, codecs=[codec], clevels=[lv], filters=[filt],
                                 reps=reps)
    else:
        cases = bench.cases(topo, [DataSpec(n, size=size) for n in SYNTHETIC],
                            clevels=SUITE_CLEVELS, filters=SUITE_FILTERS, reps=reps)
    steady.pool_cases(reps, len(cases))
    return cases


# -- analysis ----------------------------------------------------------------------------

@dataclass
class ComboRow:
    label: str
    ratio: float
    compress_gbs: float
    gbs: dict[int, float]          # threads → median decompress+sum GB/s
    speedup: dict[int, float]      # threads → median paired speed-up over plain
    gbs_best: dict[int, float] = field(default_factory=dict)  # threads → best repetition


@dataclass
class DataSummary:
    dataset: str
    source: str
    nbytes: int
    dtype: str
    chunk_bytes: int
    threads: list[int]
    plain: dict[int, float]        # threads → median plain GB/s over all its cases
    rows: list[ComboRow]
    best: dict[int, tuple[str, float, float]]  # threads → (combo, GB/s, speed-up)
    crossover: int | None          # fewest threads from which the best codec beats plain
    notes: list[str]
    plain_best: dict[int, float] = field(default_factory=dict)  # threads → best repetition

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset, "source": self.source, "nbytes": self.nbytes,
            "dtype": self.dtype, "chunk_bytes": self.chunk_bytes, "threads": self.threads,
            "plain_gbs": self.plain, "plain_best_gbs": self.plain_best,
            "codecs": [r.__dict__ for r in self.rows],
            "best": {t: {"codec": b[0], "gbs": b[1], "speedup": b[2]}
                     for t, b in self.best.items()},
            "crossover_threads": self.crossover, "notes": self.notes,
        }


def summarize(results: list[BenchResult]) -> list[DataSummary]:
    """Group by data set: ratio, speeds, best codec per thread count, crossover."""
    groups: dict[str, list[BenchResult]] = {}
    for r in results:
        if r.family == FAMILY:
            groups.setdefault(r.params["dataset"] + "|" + r.params["source"], []).append(r)
    out = []
    for rs in groups.values():
        p0 = rs[0].params
        threads = sorted({r.params["threads"] for r in rs})
        plain = {t: statistics.median(r.metric("plain_sum").median for r in rs
                                      if r.params["threads"] == t) for t in threads}
        rows: dict[str, ComboRow] = {}
        for r in rs:
            lab = combo_label(r.params["codec"], r.params["clevel"], r.params["filter"])
            row = rows.setdefault(lab, ComboRow(lab, r.metric("ratio").median,
                                                r.metric("compress_speed").median, {}, {}))
            row.gbs[r.params["threads"]] = r.metric("decompress_sum").median
            row.gbs_best[r.params["threads"]] = r.metric("decompress_sum").best
            row.speedup[r.params["threads"]] = r.metric("speedup").median
        best: dict[int, tuple[str, float, float]] = {}
        for t in threads:
            cands = [row for row in rows.values() if t in row.gbs]
            if cands:
                b = max(cands, key=lambda row: row.gbs[t])
                best[t] = (b.label, b.gbs[t], b.speedup[t])
        # the fewest threads from which the best codec beats plain at every larger count
        crossover = None
        for t in reversed(threads):
            if t not in best or best[t][2] <= 1.0:
                break
            crossover = t
        notes = sorted({n for r in rs for n in r.notes})
        plain_best = {t: max(r.metric("plain_sum").best for r in rs
                             if r.params["threads"] == t) for t in threads}
        out.append(DataSummary(p0["dataset"], p0["source"], p0["nbytes"], p0["dtype"],
                               p0["chunk_bytes"], threads, plain, list(rows.values()), best,
                               crossover, notes, plain_best))
    return out
