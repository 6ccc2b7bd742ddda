"""Memory bandwidth: STREAM-class kernels on pinned threads over placed memory.

    from numascope.families.bandwidth.bench import BandwidthParams, measure, run
    r = measure(topo, kernel="triad")                       # all usable CPUs, compact
    r = measure(topo, kernel="read", cpus=[0, 1],
                memory=MemorySpec("bind", (1,)))            # remote read from node 1
    p = BandwidthParams(kernel="copy", reps=5).checked(topo)    # inputs checked once
    r = run(topo, p)
    r.metric("bandwidth").median                             # GB/s, STREAM bytes, GB = 10^9

The kernels themselves are described once, in the C core's kernel table (bw.c,
`_core.kernels()`): their names, arrays and byte counts below come from it.

The hot loop, its timing and the validation of what it computed run in C (`_core.bw_run`);
this module sizes the arrays, picks CPUs and variants, turns seconds into both byte
conventions, sets implausibly fast repetitions aside (bw_outliers) and checks where the
pages went.

Timing: a repetition makes as many passes over the arrays as it takes to last at least
MIN_REP_SECONDS (calibrated by the C core; one pass for DRAM-sized arrays, as STREAM), its
bytes counted per pass; it runs from the earliest thread's start to the latest thread's end,
each thread stamping its own clock, so a thread held up at the start (preempted) cannot shorten
the window. The metrics hold the repetitions kept; excluded ones are listed in
params["excluded_reps"] with a note. A variant whose repetitions the rule would cut by more
than a few (bw_outliers: a disturbed run, two modes) keeps them all and is listed in
params["bimodal"] with both modes' medians.

Byte conventions, per element of one array (8-byte doubles), as bw.c's table states them:
    kernel  STREAM bytes   DRAM traffic when ordinary stores write-allocate (read the target)
    read         8              8
    fill         8             16
    copy        16             24
    scale       16             24
    add         24             32
    triad       24             32
Whether they do is stated per CPU and store kind (bw_traffic): streaming (non-temporal)
stores never do (traffic = STREAM bytes); ordinary ones do on Zen and on Intel up to Cooper
Lake; where it is not known (Ice Lake-SP and later: SpecI2M, an unidentified CPU) the
record says "unknown" and has no DRAM figure."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace
from typing import Any

from numascope import _core, placement, steady, sysstate
from numascope.benchmark import Case
from numascope.errors import MeasurementError, UserError
from numascope.families.bandwidth import ports

# the kernels, from the C core's table (bw.c), which the options read too
from numascope.families.bandwidth.kernels import (
    ARRAYS,
    DRAM_BYTES,
    KERNELS,
    STORES,
    STREAM_BYTES,
)
from numascope.families.bandwidth.options import TABLE
from numascope.families.bandwidth.outliers import MIN_REPS, RULE, SHARE_RULE, bimodal_text, screen
from numascope.families.bandwidth.sizes import LLC_FACTOR, default_array_bytes, format_bytes
from numascope.host import HUGE_2M, Host, live_host
from numascope.memspec import MemorySpec
from numascope.memspec import check_nodes as check_memory
from numascope.pages import check_placement
from numascope.profile import Profile
from numascope.profile import profile as _profile
from numascope.results.record import BenchResult, Metric
from numascope.steady import Steady
from numascope.topology.model import Topology
from numascope.traffic import cpu_uarch, write_allocate
from numascope.traffic import dram_bytes as traffic_bytes

FAMILY = "bandwidth"


GB = 1e9
UNITS_NOTE = "GB = 10^9 bytes"
# the defaults, declared in options.py
DEFAULT_KERNEL, DEFAULT_REPS, DEFAULT_ISA, DEFAULT_NT, DEFAULT_POLICY = (
    TABLE[n].default for n in ("kernel", "reps", "isa", "nt", "policy"))
WARMUP = 1                     # untimed rounds before the timed ones (no flag)
NUMA_BALANCING_NOTE = ("automatic NUMA balancing is on: it may migrate pages during the "
                       "measurement (echo 0 > /proc/sys/kernel/numa_balancing)")
QUICK_REPS = MIN_REPS          # 5 vs 5 is the least that a rank test can call significant
LATE_START_SHARE = 0.10        # threads starting further apart than this share of a rep: noted
# A repetition runs the kernel over the arrays as many passes as it takes to last at least
# this long (the C core calibrates the count after the warm-ups, as likwid-bench sizes its
# iteration count from a run time, -s). The clock is not the limit (CLOCK_MONOTONIC_RAW
# counts ns; STREAM's rule, at least 20 ticks of the clock per timed test - McCalpin,
# stream.c - asks 20 ns of it): the team's start is. Its threads leave the start barrier
# about 10 us apart (median 9.4 us over 150 repetitions, 2 threads, measured on a busy
# 2-CPU KVM guest with the `start_spread` this module records), so a 10 us pass (1 MiB in
# L2) would be half overhead, and 1 ms keeps it at about 1 %. DRAM-sized arrays (a pass of
# tens of ms) keep STREAM's one pass per repetition.
MIN_REP_SECONDS = 1e-3


def dram_bytes(kernel: str, nt: bool) -> int:
    """Bytes per element that cross the memory bus where ordinary stores first read the
    target line (write-allocate), streaming stores do not (bw.c's table). Whether this CPU's
    stores allocate: bw_traffic.write_allocate."""
    return DRAM_BYTES[kernel][1 if nt else 0]


def auto_isas() -> list[str]:
    """The ISAs isa="auto" times against each other: the vector ones this CPU has (the
    widest is not always the fastest for streaming: AVX2 beats AVX-512 on some parts)."""
    avail = _core.isa()
    vec = [i for i in avail if i != "scalar"]
    return vec or avail



# -- the parameters of one measurement -------------------------------------------------------
@dataclass(frozen=True)
class BandwidthParams:
    """One bandwidth measurement. The defaults are the options' (options.py) and nowhere
    else; `checked(topo)` validates every input once, by the options' rules, when a case is
    built, and resolves the defaults (CPUs, array size), so that a case holds exactly what
    will be measured.

    The second group says what the case stands for (sweep, placement policy, domain …): it
    is copied into the record's params, never used to measure."""

    kernel: str = DEFAULT_KERNEL
    cpus: tuple[int, ...] = ()             # empty: every usable CPU, compact order
    memory: MemorySpec = field(default_factory=MemorySpec)
    size_bytes: int | None = None          # per array; None: LLC_FACTOR x the CPUs' LLC
    reps: int | Steady = DEFAULT_REPS     # a count, or --reps auto's stopping rule
    isa: str = DEFAULT_ISA                 # auto | one of ISAS
    nt: str = DEFAULT_NT                   # streaming stores: auto | both | on | off
    warmup: int = WARMUP
    min_seconds: float = MIN_REP_SECONDS   # a repetition's least duration (passes calibrated)
    # what the case stands for
    sweep: str | bool | None = None        # single | scaling | per-domain | tier-ratio;
    #                                        True: a point of bw --sweep (sweep.py)
    policy: str | None = None              # CPU order (placement.POLICIES), "cpus" if given
    where: str | None = None               # all, S0, N1, L3:5, a CPU list
    policies: tuple[str, ...] = ()         # scaling: every policy giving these CPUs
    domain: str | None = None
    domains: tuple[str, ...] = ()          # per-domain: every domain giving these CPUs
    extra: tuple[tuple[str, Any], ...] = ()    # more record fields (the tier sweep's)

    # -- checking ---------------------------------------------------------------------
    def checked(self, topo: Topology) -> BandwidthParams:
        """These parameters with every input checked against `topo` (UserError, or
        Unavailable where this host cannot, e.g. an empty hugetlb pool) and the defaults
        resolved."""
        if TABLE["kernel"].convert(self.kernel) != [self.kernel]:    # the options' rules
            raise UserError(f"one kernel per measurement (got {self.kernel!r})")
        TABLE["reps"].convert(self.reps)
        if self.warmup < 0:
            raise UserError(f"warm-up rounds cannot be negative (got {self.warmup})")
        if not 0 <= self.min_seconds <= 60:
            raise UserError(f"a repetition's minimum time must be 0..60 s (got "
                            f"{self.min_seconds})")
        variants(self.kernel, self.isa, self.nt)
        cpus = placement.check_cpus(topo, self.cpus) if self.cpus else \
            placement.select_cpus(topo)
        memory = check_memory(topo, self.memory)
        size = self.size_bytes
        if size is None:
            size = default_array_bytes(topo.llc_bytes(cpus))
        else:
            TABLE["size"].convert(size)
        p = replace(self, cpus=tuple(cpus), memory=memory, size_bytes=size)
        h = live_host(topo)
        if h is not None:
            if self.size_bytes is not None:     # the default size is checked when measured
                p.check_fits(h)
            p.check_pages(h)
        return p

    def check_fits(self, h: Host) -> None:
        """UserError when the arrays do not fit in the free memory they will use."""
        what = (f"{self.kernel} with {self.arrays} array{'s' if self.arrays > 1 else ''} of "
                f"{format_bytes(self.array_bytes)}")
        h.check_fits(self.total_bytes, what)
        if self.memory.policy == "bind":
            h.check_fits(self.total_bytes, what, list(self.memory.nodes))

    def check_pages(self, h: Host) -> None:
        """Unavailable when hugetlb pages are asked for and the pool cannot hold the arrays
        (each its own mapping, rounded up to whole 2 MiB pages)."""
        if self.memory.pages == "hugetlb":
            each = -(-self.array_bytes // HUGE_2M) * HUGE_2M
            h.check_hugetlb(self.arrays * each, f"{self.kernel} with {self.arrays} "
                            f"array{'s' if self.arrays > 1 else ''} of "
                            f"{format_bytes(self.array_bytes)}")

    # -- derived ------------------------------------------------------------------------
    @property
    def arrays(self) -> int:
        return ARRAYS[self.kernel]

    @property
    def elements(self) -> int:
        return (self.size_bytes or 0) // 8

    @property
    def array_bytes(self) -> int:
        return self.elements * 8

    @property
    def total_bytes(self) -> int:
        return self.arrays * self.array_bytes

    def key(self) -> tuple:
        """What is measured (two cases with the same key give the same measurement)."""
        return (self.kernel, tuple(sorted(self.cpus)), self.memory, self.size_bytes,
                self.reps, self.isa, self.nt, self.warmup, self.min_seconds)

    def context(self) -> dict[str, Any]:
        """The record's params saying what the case stands for (only those set)."""
        d: dict[str, Any] = {}
        for k in ("sweep", "policy", "policies", "where", "domain", "domains"):
            v = getattr(self, k)
            if v is not None and v != ():
                d[k] = list(v) if isinstance(v, tuple) else v
        d.update(dict(self.extra))
        return d


def variants(kernel: str, isa: str, nt: str, fits: bool | None = None
             ) -> list[tuple[str, bool]]:
    """(isa, streaming stores) pairs to time, interleaved; the fastest is reported. The
    ISA and the store kind are checked by their options' rules. nt="auto" takes ordinary
    stores where the working set `fits` in the caches the threads share, streaming ones
    where it does not, and both where that is unknown (None); "both" always times both."""
    isas = auto_isas() if TABLE["isa"].convert(isa) == "auto" else [isa]
    TABLE["nt"].convert(nt)
    if not STORES[kernel]:
        kinds = [False]
    elif nt == "both" or (nt == "auto" and fits is None):
        kinds = [False, True]
    elif nt == "auto":
        kinds = [not fits]
    else:
        kinds = [nt == "on"]
    return [(i, k) for i in isas for k in kinds]


def shared_cache_bytes(topo: Topology, cpus: list[int]) -> tuple[int, str] | None:
    """The cache the threads on `cpus` share at its largest level: per level (data or
    unified), the sizes of the distinct caches holding any of them added up (L3: the
    threads' L3 domains; L2: one per core used), and the largest of those levels, with its
    name; None when the topology reports no cache."""
    best: tuple[int, str] | None = None
    want = set(cpus)
    for level in sorted({c.level for c in topo.caches if c.kind != "Instruction"}):
        seen = {(c.cpus, c.size_bytes) for c in topo.caches
                if c.level == level and c.kind != "Instruction" and want & set(c.cpus)}
        total = sum(size for _, size in seen)
        if total and (best is None or total >= best[0]):
            best = (total, f"L{level} x{len(seen)}" if len(seen) > 1 else f"L{level}")
    if best is None and topo.llc_bytes(cpus):
        best = (topo.llc_bytes(cpus), "LLC")
    return best


def store_choice(topo: Topology, p: BandwidthParams) -> tuple[bool | None, str]:
    """Whether all arrays of `p` fit in the caches its threads share (None: unknown), and
    the reason as the record states it."""
    what = f"working set {format_bytes(p.total_bytes)} ({p.arrays} x " \
        f"{format_bytes(p.array_bytes)})"
    if not STORES[p.kernel]:
        return None, "no stores"
    if p.nt != "auto":
        return None, f"--nt {p.nt}"
    cache = shared_cache_bytes(topo, list(p.cpus))
    if cache is None:
        return None, f"{what}; cache sizes unknown: both store kinds timed"
    size, name = cache
    if p.total_bytes <= size:
        return True, (f"{what} fits in the {name} of these CPUs ({format_bytes(size)}): "
                      "ordinary stores (streaming ones would bypass the cache the data "
                      "lives in)")
    return False, (f"{what} exceeds the {name} of these CPUs ({format_bytes(size)}): "
                   "streaming stores (no write-allocate of lines that go to memory)")


def variant_name(isa: str, nt: bool) -> str:
    return isa + ("-nt" if nt else "")


# -- one measurement --------------------------------------------------------------------------
def measure(topo: Topology, kernel: str = DEFAULT_KERNEL, cpus: list[int] | None = None,
            memory: MemorySpec | dict[str, Any] | None = None, size_bytes: int | None = None,
            reps: int | Steady = DEFAULT_REPS, isa: str = DEFAULT_ISA, nt: str = DEFAULT_NT,
            warmup: int = WARMUP, label: str | None = None, corrupt_index: int = -1
            ) -> BenchResult:
    """Measure one kernel on pinned `cpus` (default: all usable, compact order) over arrays of
    `size_bytes` each (default: 4 × the LLC of those CPUs) placed by `memory` (a MemorySpec;
    default first touch on THP). nt="auto" times ordinary and streaming stores, isa="auto"
    the vector ISAs this CPU has, all interleaved; the fastest (by median) is reported and
    every variant is kept as a metric "bandwidth[<isa>[-nt]]". Raises UserError on bad
    input and MeasurementError when the kernel's result or the page placement is wrong.
    `corrupt_index` is a test hook that corrupts one element on purpose."""
    if cpus is not None and not cpus:
        raise UserError("zero threads: give at least one CPU")
    spec = memory if isinstance(memory, MemorySpec) else MemorySpec.from_dict(memory)
    p = BandwidthParams(kernel=kernel, cpus=tuple(cpus or ()), memory=spec,
                        size_bytes=size_bytes, reps=reps,
                        isa=isa, nt=nt, warmup=warmup)
    return run(topo, p.checked(topo), label=label, corrupt_index=corrupt_index)


def run(topo: Topology, p: BandwidthParams, label: str | None = None,
        corrupt_index: int = -1) -> BenchResult:
    """Measure checked parameters (BandwidthParams.checked): the C core runs the kernel,
    times it and validates it; this turns its seconds into both byte conventions."""
    cpus = list(p.cpus)
    notes: list[str] = []
    llc = topo.llc_bytes(cpus)
    if llc and p.array_bytes < LLC_FACTOR * llc and p.sweep is not True:   # bw --sweep
        notes.append(f"arrays of {format_bytes(p.array_bytes)} are smaller than {LLC_FACTOR} "
                     f"× the LLC of these CPUs ({format_bytes(llc)}): caches inflate the "
                     "result")
    h = live_host(topo)
    if h is not None:       # free memory changes during a sweep: asked again before each
        p.check_fits(h)
        p.check_pages(h)
    if sysstate.numa_balancing():
        notes.append(NUMA_BALANCING_NOTE)   # in every result; the command says it once

    cpu_nodes = [topo.cpu(c).node for c in cpus]
    fits, nt_reason = store_choice(topo, p)
    acc = ports.read_accumulators(topo, [v[0] for v in variants(p.kernel, p.isa, p.nt, fits)])
    if not isinstance(p.reps, Steady):
        raw, ok = _batch(p, p.reps, cpu_nodes, notes, corrupt_index, fits, acc=acc[0])
        return _result(topo, p, raw, notes, ok, cpu_nodes, label, nt_reason, acc)
    # --reps auto: units, each a real call over its own fresh arrays, until the reported
    # figure is steady over them
    raws: list[dict] = []
    oks: list[bool] = []

    def unit(n: int) -> list[list[float]]:
        raw, ok = _batch(p, n, cpu_nodes, notes, corrupt_index, fits,
                         _passes(raws[0]) if raws else None, acc=acc[0])
        raws.append(raw)
        oks.append(ok)
        return _reported_units(p.kernel, raws, p.elements)

    verdict = steady.repeat(unit, p.reps)
    res = _result(topo, p, _joined(raws), notes, all(oks), cpu_nodes, label, nt_reason, acc)
    res.params["reps"] = verdict.reps
    res.params["steady"] = verdict.to_dict() | {"metric": "bandwidth"}
    return res


def _batch(p: BandwidthParams, reps: int, cpu_nodes: list[int | None], notes: list[str],
           corrupt_index: int = -1, fits: bool | None = None,
           passes: list[int] | None = None, acc: int = ports.CHOICES[0]) -> tuple[dict, bool]:
    """One call of the C core: `reps` timed repetitions of every variant, validated, and
    whether its pages are where they were asked to be (its notes added once). Each
    variant's passes per repetition are `passes` (a later batch of --reps auto takes the
    first one's) or calibrated to last p.min_seconds; `acc`: the read kernel's sums
    (ports.read_accumulators)."""
    vs = variants(p.kernel, p.isa, p.nt, fits)
    try:
        raw = _core.bw_run(p.kernel, list(p.cpus), p.elements, reps, vs,
                           memory=p.memory.to_core(), warmup=p.warmup,
                           corrupt_index=corrupt_index, passes=passes,
                           min_seconds=p.min_seconds, accumulators=acc)
    except ValueError as e:
        raise UserError(str(e)) from None
    if not raw["validated"]:
        where = f", first at element {raw['first_bad']}" if raw["first_bad"] >= 0 else ""
        what = "repetitions" if not STORES[p.kernel] else "elements"
        spot = f"; {raw['spot_bad']} spot-checked elements were wrong after their " \
            "repetition" if raw.get("spot_bad") else ""
        skipped = f"; {raw['pass_bad']} pass marks were wrong after their pass (a pass " \
            "skipped work)" if raw.get("pass_bad") else ""
        raise MeasurementError(
            f"{p.kernel} failed validation: {raw['bad_elements']} {what} differ from the "
            f"expected {raw['expected']!r}{where}{spot}{skipped}")
    check_times(p.kernel, raw)
    ok, pnotes = check_placement(p.memory.to_dict(), cpu_nodes, raw["pages"],
                                 raw["pages_by_thread"], raw["sampled_pages"])
    notes.extend(n for n in pnotes if n not in notes)
    return raw, ok


def _passes(raw: dict) -> list[int]:
    """Passes per repetition of each variant (1 in answers from before passes existed)."""
    return list(raw.get("passes") or [1] * len(raw["times"]))


def _joined(raws: list[dict]) -> dict:
    """The C core's answers of several batches as one: each variant's repetitions (times,
    thread stamps) in the order measured; the first batch's pages and set-up time."""
    out = dict(raws[0])
    for key in ("times", "thread_starts", "thread_ends", "rep_spans"):
        if key in out:
            out[key] = [[x for r in raws for x in r[key][v]] for v in range(len(out[key]))]
    return out


def _reported_units(kernel: str, raws: list[dict], n: int) -> list[list[float]]:
    """Per call (a unit of --reps auto), the GB/s of the variant the record reports (the
    fastest by median over all calls, implausibly fast repetitions set aside): the figure
    --reps auto waits to be steady."""
    per_variant, excluded = _screen_variants(kernel, _joined(raws), n, [])
    vi = max(range(len(per_variant)), key=lambda i: statistics.median(per_variant[i][3]))
    name = variant_name(per_variant[vi][0], per_variant[vi][1])
    dropped = {e["rep"] for e in excluded if e["variant"] == name}
    out, at = [], 0
    for raw in raws:
        times = raw["times"][vi]
        per_rep = STREAM_BYTES[kernel] * n * _passes(raw)[vi]
        out.append([per_rep / t / GB for i, t in enumerate(times, at) if i not in dropped])
        at += len(times)
    return out


def check_times(kernel: str, raw: dict) -> None:
    """MeasurementError for a repetition without a positive, finite time: its bandwidth
    would be infinite or negative, so it is an invalid repetition, not a fast one."""
    for (visa, vnt), times in zip(raw["variants"], raw["times"]):
        for r, t in enumerate(times):
            if not (math.isfinite(t) and t > 0):
                raise MeasurementError(
                    f"{kernel} {variant_name(visa, bool(vnt))}: repetition {r + 1} took {t!r} "
                    "s, no measurable time (clock fault or no work done): invalid repetition")


def _screen_variants(kernel: str, raw: dict, n: int, notes: list[str],
                     bimodal: list[dict[str, Any]] | None = None
                     ) -> tuple[list[tuple[str, bool, list[float], list[float]]],
                                list[dict[str, Any]]]:
    """Per variant (isa, nt, kept seconds, kept GB/s), and the implausibly fast repetitions
    set aside (bw_outliers), each with a note; a bimodal variant (nothing set aside: a
    disturbed run) is added to `bimodal` with its modes, and noted."""
    per_variant = []
    excluded: list[dict[str, Any]] = []
    for (visa, vnt), times, passes in zip(raw["variants"], raw["times"], _passes(raw)):
        gbs = [STREAM_BYTES[kernel] * n * passes / t / GB for t in times]
        s = screen(gbs)
        name = variant_name(visa, bool(vnt))
        if s.modes is not None:
            notes.append(f"{bimodal_text(name, len(gbs), s)} ({SHARE_RULE})")
            if bimodal is not None:
                bimodal.append({"variant": name, "reps": len(gbs),
                                "would_exclude": s.would_exclude, "allowed": s.allowed,
                                "modes": [m.to_dict() for m in s.modes], "split": "2-means"})
        for i in s.excluded:
            excluded.append({"variant": name, "rep": i, "gbs": gbs[i], "seconds": times[i],
                             "median_gbs": s.median})
        if s.excluded:
            shown = ", ".join(f"{gbs[i]:.1f}" for i in s.excluded)
            notes.append(f"{name}: {len(s.excluded)} of {len(gbs)} repetitions excluded as "
                         f"implausibly fast ({shown} GB/s against a median of "
                         f"{s.median:.1f} GB/s): {RULE}")
        per_variant.append((visa, bool(vnt), [times[i] for i in s.kept],
                            [gbs[i] for i in s.kept]))
    return per_variant, excluded


def _start_spread(raw: dict, notes: list[str]) -> float:
    """Largest gap between the first and the last thread to start a repetition (seconds),
    with a note when it was a sizeable share of the repetition (a thread held up)."""
    worst, share = 0.0, 0.0
    for starts, times in zip(raw.get("thread_starts", []), raw["times"]):
        for st, t in zip(starts, times):
            gap = max(st, default=0.0)
            worst = max(worst, gap)
            if t > 0:
                share = max(share, gap / t)
    if share > LATE_START_SHARE:
        notes.append(f"threads started up to {1e3 * worst:.2f} ms apart ({share:.0%} of a "
                     "repetition): one was held up (preempted?); the timing window covers it")
    return worst


def _result(topo: Topology, p: BandwidthParams, raw: dict, notes: list[str],
            placement_ok: bool, cpu_nodes: list[int | None], label: str | None,
            nt_reason: str = "", acc: tuple[int, str] | None = None) -> BenchResult:
    kernel, cpus, n = p.kernel, list(p.cpus), p.elements
    bimodal: list[dict[str, Any]] = []
    per_variant, excluded = _screen_variants(kernel, raw, n, notes, bimodal)
    spread = _start_spread(raw, notes)
    # nt=auto: the faster store kind by median bandwidth, both kept
    vi = max(range(len(per_variant)), key=lambda i: statistics.median(per_variant[i][3]))
    visa, vnt, times, gbs = per_variant[vi]
    passes = _passes(raw)
    stores = "n/a" if not STORES[kernel] else ("streaming" if vnt else "ordinary")
    wa = write_allocate(cpu_uarch(topo), stores)
    dram_pe = traffic_bytes(STREAM_BYTES[kernel], STORES[kernel], wa)
    metrics = {
        "bandwidth": Metric("bandwidth", "GB/s", True, gbs,
                            f"STREAM bytes: {STREAM_BYTES[kernel]} B/element; {UNITS_NOTE}"),
        "seconds": Metric("seconds", "s", False, list(times),
                          f"per repetition ({passes[vi]} pass{'es' if passes[vi] > 1 else ''} "
                          "over the arrays), earliest thread start to latest thread end, "
                          "inside C"),
    }
    if dram_pe is not None:     # unknown write-allocate: no DRAM figure rather than a guess
        metrics["dram_bandwidth"] = Metric(
            "dram_bandwidth", "GB/s", True, [dram_pe * n * passes[vi] / t / GB for t in times],
            f"DRAM traffic: {dram_pe} B/element ({stores} stores, write-allocate "
            f"{wa.label}); {UNITS_NOTE}")
    if len(per_variant) > 1:
        for v in per_variant:
            key = f"bandwidth[{variant_name(v[0], v[1])}]"
            kind = "n/a" if not STORES[kernel] else "streaming" if v[1] else "ordinary"
            metrics[key] = Metric(key, "GB/s", True, v[3],
                                  f"STREAM bytes, {v[0]}, {kind} stores; {UNITS_NOTE}")
        tried = ", ".join(variant_name(v[0], v[1]) for v in per_variant)
        notes.append(f"auto: timed {tried} interleaved; {variant_name(visa, vnt)} was fastest "
                     "(median) and is reported")
    threads = len(cpus)
    context = p.context()
    where = context.get("where") or placement.format_cpulist(cpus)
    case = label or (f"{kernel} {visa}{'-nt' if vnt else ''} {threads}T "
                     f"{context.get('policy', 'cpus')} {where}")
    params: dict[str, Any] = {
        "kernel": kernel, "isa": visa, "stores": stores, "nt": p.nt, "threads": threads,
        "variants": [variant_name(v[0], v[1]) for v in per_variant],
        "array_bytes": n * 8, "arrays": ARRAYS[kernel], "elements": n, "reps": p.reps,
        "warmup": p.warmup, "stream_bytes_per_element": STREAM_BYTES[kernel],
        "dram_bytes_per_element": dram_pe, "write_allocate": wa.label,
        "write_allocate_reason": wa.reason, "units": UNITS_NOTE,
        "llc_bytes": topo.llc_bytes(cpus), "init_seconds": raw["init_seconds"],
        "timing": "earliest thread start to latest thread end",
        "excluded_reps": excluded, "bimodal": bimodal, "start_spread_max_s": spread,
        "passes": passes[vi],
        **({"accumulators": acc[0], "accumulators_reason": acc[1]}
           if acc is not None and kernel == "read" else {}),
        "passes_by_variant": {variant_name(vi_, bool(vn_)): k
                              for (vi_, vn_), k in zip(raw["variants"], passes)},
        "min_rep_seconds": p.min_seconds, "nt_reason": nt_reason,
        "working_set_bytes": p.total_bytes,
    }
    if raw.get("rep_spans"):
        # each repetition's [first start, last end] in seconds of CLOCK_MONOTONIC_RAW: one
        # clock for every process of a host (advise --verify sets ranks' repetitions in
        # time); every repetition of the reported variant, those in excluded_reps too
        params["rep_spans"] = raw["rep_spans"][vi]
    params.update(context)
    place = {
        "cpus": list(cpus), "cpulist": placement.format_cpulist(cpus),
        "cpu_nodes": cpu_nodes, "memory": p.memory.to_dict(),
        "pages_per_node": {int(k): v for k, v in raw["pages"].items()},
        "pages_by_thread": [{int(k): v for k, v in d.items()} for d in raw["pages_by_thread"]],
        "sampled_pages": raw["sampled_pages"],
        # share of all arrays' mapped bytes on huge pages, and per array; -1: unknown
        "huge_fraction": raw["huge_fraction"], "huge_by_array": raw["huge_by_array"],
        "ok": placement_ok,
    }
    return BenchResult(FAMILY, case, params, metrics, place, notes, validated=True)


# -- sweeps -----------------------------------------------------------------------------------
def thread_counts(n: int, dense_up_to: int = 16) -> list[int]:
    """1..n when small; else powers of two, their midpoints, and n."""
    if n <= dense_up_to:
        return list(range(1, n + 1))
    counts = {1, n}
    p = 1
    while p < n:
        counts.update({p, p + p // 2})
        p *= 2
    return sorted(c for c in counts if c <= n)


def _merge(cases: list[Case], seen: dict[tuple, int], case: Case, field: str) -> None:
    """Append `case` unless an identical measurement is already listed; then only note that
    the existing one also stands for this case's `field` (e.g. another policy giving the
    same CPUs)."""
    p: BandwidthParams = case.params  # type: ignore[assignment]
    key = p.key()
    if key in seen:
        i = seen[key]
        prev: BandwidthParams = cases[i].params  # type: ignore[assignment]
        cases[i] = Case(cases[i].label,
                        replace(prev, **{field: getattr(prev, field) + getattr(p, field)}))
        return
    seen[key] = len(cases)
    cases.append(case)


def merged(scaling: list[Case], domains: list[Case]) -> list[Case]:
    """Scaling then per-domain cases, a domain case identical to a scaling point (one
    socket: `S0 2T` is `compact 2T`) not listed twice: the scaling point stands for the
    domain too (its `domains`), and the per-domain figure and table show it as the domain's."""
    cases = list(scaling)
    seen = {c.params.key(): i for i, c in enumerate(cases)}  # type: ignore[attr-defined]
    for c in domains:
        _merge(cases, seen, c, "domains")
    return cases


def scaling_cases(topo: Topology, kernels: list[str], base: BandwidthParams | None = None,
                  where: str = "all", policies: tuple[str, ...] = placement.POLICIES,
                  counts: str = "all", max_threads: int | None = None) -> list[Case]:
    """One case per (kernel, policy, thread count ≤ max_threads): the memory-wall curves.
    `base` gives the memory, size, repetitions and code of every case."""
    base = base or BandwidthParams()
    cases: list[Case] = []
    seen: dict[tuple, int] = {}
    for kernel in kernels:
        for policy in policies:
            try:
                order = placement.order(topo, where, policy)
            except UserError:
                continue  # e.g. per-l3 on a machine without L3 information
            steps = thread_counts(len(order)) if counts == "all" else \
                thread_counts(len(order), dense_up_to=4)
            for t in steps:
                if max_threads is not None and t > max_threads:
                    break
                p = replace(base, kernel=kernel, cpus=tuple(order[:t]), sweep="scaling",
                            policy=policy, policies=(policy,), where=where).checked(topo)
                _merge(cases, seen, Case(f"{kernel} {policy} {t}T", p), "policies")
    return cases


def domain_cases(topo: Topology, kernels: list[str], base: BandwidthParams | None = None
                 ) -> list[Case]:
    """Each package, each NUMA node (memory bound to it) and each L3 alone, all its CPUs."""
    base = base or BandwidthParams()
    doms = [f"S{p.id}" for p in topo.packages] + [f"N{n.id}" for n in topo.nodes] + \
        [f"L3:{d.index}" for d in topo.l3s]
    cases: list[Case] = []
    seen: dict[tuple, int] = {}
    for kernel in kernels:
        for dom in doms:
            try:
                cpus = placement.order(topo, dom, "compact")
            except UserError:
                continue  # a memory-only node or a domain with no usable CPU
            mem = base.memory
            # a node alone: memory bound to it (on a one-node machine that is first touch)
            if dom.startswith("N") and mem.first_touch and len(topo.nodes) > 1:
                mem = MemorySpec("bind", (int(dom[1:]),), mem.pages)
            p = replace(base, kernel=kernel, cpus=tuple(cpus), memory=mem, sweep="per-domain",
                        domain=dom, domains=(dom,), where=dom, policy="compact").checked(topo)
            _merge(cases, seen, Case(f"{kernel} {dom} {len(cpus)}T", p), "domains")
    return cases


def build_cases(topo: Topology, kernels: list[str] | None = None, scaling: bool = False,
                per_domain: bool = False, where: str = "all", policy: str = DEFAULT_POLICY,
                threads: int | None = None, cpus: list[int] | None = None,
                memory: MemorySpec | None = None, size_bytes: int | None = None,
                reps: int | Steady = DEFAULT_REPS, isa: str = DEFAULT_ISA, nt: str = DEFAULT_NT
                ) -> list[Case]:
    """The cases `numascope bw` measures for its options, each carrying its checked
    BandwidthParams: input is checked here (by the options' rules), before any measurement
    starts."""
    kernels = TABLE["kernel"].convert(kernels or [DEFAULT_KERNEL])
    if threads is not None:
        TABLE["threads"].convert(threads)
    base = BandwidthParams(kernel=kernels[0], memory=memory or MemorySpec(),
                           size_bytes=size_bytes, reps=reps, isa=isa, nt=nt)
    # the inputs every case shares, checked once even when a sweep yields no case
    base = replace(base.checked(topo), cpus=(), size_bytes=size_bytes)
    cases: list[Case] = []
    if scaling:
        cases += scaling_cases(topo, kernels, base, where=where, max_threads=threads)
    if per_domain:
        cases = merged(cases, domain_cases(topo, kernels, base))
    if not scaling and not per_domain:
        chosen = placement.check_cpus(topo, cpus) if cpus is not None else \
            placement.select_cpus(topo, where, policy, threads)
        for k in kernels:
            p = replace(base, kernel=k, cpus=tuple(chosen), sweep="single", policy=policy,
                        where=where).checked(topo)
            cases.append(Case(f"{k} {policy} {len(chosen)}T", p))
    return cases


def suite_cases(topo: Topology, profile: Profile | str) -> list[Case]:
    """Cases for `numascope run`. A thin profile: triad scaling (compact and one-per-L3,
    thinned on big machines) + triad per domain; a dense one: every kernel scaling under
    every policy + every kernel per domain. Repetitions: until steady where the profile
    says so (quick, full: Profile.repetitions), else the profile's count, at least the
    MIN_REPS the outlier screen needs (smoke: 5). Arrays: 4 x the LLC, or the profile's
    fixed working set (smoke)."""
    prof = _profile(profile)
    reps = prof.repetitions(max(prof.reps, QUICK_REPS))
    base = BandwidthParams(reps=reps, size_bytes=prof.working_set)
    if not prof.dense:
        cases = merged(scaling_cases(topo, ["triad"], base, policies=("compact", "per-l3"),
                                     counts="thin"), domain_cases(topo, ["triad"], base))
    else:
        cases = merged(scaling_cases(topo, list(KERNELS), base),
                       domain_cases(topo, list(KERNELS), base))
    # the stage's pool is shared by the measurements, not by their repeats (Bandwidth.measure)
    steady.pool_cases(reps, len({c.params.key() for c in cases}))
    return cases


# the record's params that describe the measurement itself (the rest is its context)
MEASURED_KEYS = frozenset({
    "kernel", "isa", "stores", "nt", "threads", "variants", "array_bytes", "arrays",
    "elements", "reps", "warmup", "stream_bytes_per_element", "dram_bytes_per_element",
    "write_allocate", "write_allocate_reason", "units", "llc_bytes", "init_seconds", "timing",
    "excluded_reps", "bimodal", "start_spread_max_s", "steady", "passes", "passes_by_variant",
    "min_rep_seconds", "nt_reason", "working_set_bytes"})
