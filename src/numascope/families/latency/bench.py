"""Memory latency by pointer chasing: idle latency, the working-set sweep, loaded latency.

The chase runs in C (`_core.lat_chase`) on one pinned thread over a random single cycle of
lines (Sattolo), one dependent load at a time, in one of two stated modes:

    tlb     random inside 256 KiB windows, windows in random order (MLC / multichase style)
    random  one random cycle over the whole buffer (TLB misses included)

A line is `stride` bytes: one pointer per 256 B by default (multichase's default). With one
pointer per 64 B line the adjacent-line and spatial prefetchers bring in lines the chase
visits soon after, and latency reads low (here 120-142 ns at 64 B against 143-147 ns at
256 B over 1 GiB); Intel MLC disables the prefetchers instead, which needs MSR access. The
working set stays the buffer's extent: a set-associative cache indexed within a page sees
the same capacity edge at any stride up to 4 KiB (fewer sets used, each as deep).

Every timed sample is kept (ns per load and TSC ticks per load); the chase is validated by
checking it ended on the line the cycle predicts (and, up to 4 Mi lines, that the cycle
covers every line). Memory is placed by a spec: bound to one node, or first touch."""

from __future__ import annotations

import math
import platform
import statistics
from dataclasses import dataclass, replace
from typing import Any

from numascope import placement, steady
from numascope.benchmark import core_errors
from numascope.errors import MeasurementError, UserError
from numascope.families.latency import distribution
from numascope.families.latency import knee as knee_rule
from numascope.families.latency.mixes import DEFAULT as DEFAULT_MIX
from numascope.families.latency.mixes import Mix
from numascope.families.latency.options import (  # noqa: F401 - LINE, MAX_STRIDE re-exported
    LINE,
    LOADED_DELAYS,
    MAX_STRIDE,
    MODES,
    SAMPLES,
    TABLE,
    WINDOW,
    check_stride,
)
from numascope.families.latency.options import (
    STRIDE as STRIDE_OPTION,
)
from numascope.host import HUGE_2M, Host, live_host
from numascope.memspec import MemorySpec
from numascope.results.record import BenchResult, Metric
from numascope.steady import Steady
from numascope.topology.model import Topology
from numascope.units import format_bytes, parse_size  # noqa: F401 - re-exported

FAMILY = "latency"
KINDS = ("idle", "loaded")
STRIDE = STRIDE_OPTION.default   # prefetch-proof (multichase's default), declared in options
KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
SUITE_LOADED_SAMPLES = 5      # the suite's loaded-latency points: short, one delay each


def _core():
    from numascope import _core as core  # lazy: builds the C core on first use
    return core


# -- sizes ----------------------------------------------------------------------------------

def llc_bytes(topo: Topology, cpu: int) -> int:
    return topo.cache_bytes(3, cpu) or topo.llc_bytes([cpu]) or topo.cache_bytes(2, cpu) or 0


def dram_size(topo: Topology, cpu: int) -> int:
    """A working set that lives in DRAM: 4x the LLC, at least 256 MiB, a power of two."""
    want = max(4 * llc_bytes(topo, cpu), 256 * MIB)
    return 1 << (want - 1).bit_length()


def quick_dram_size(topo: Topology, cpu: int) -> int:
    """A cheaper DRAM working set for quick runs: 2x the LLC, at least 256 MiB."""
    want = max(2 * llc_bytes(topo, cpu), 256 * MIB)
    return 1 << (want - 1).bit_length()


def sweep_sizes(topo: Topology, cpu: int, lo: int = TABLE["min"].default,
                hi: int | None = None, per_octave: int = TABLE["per_octave"].default,
                stride: int = STRIDE) -> list[int]:
    """Log-spaced working sets from `lo` to `hi` (default >= 4x LLC), multiples of 4 KiB."""
    if per_octave < 1:
        raise UserError(f"sweep points per doubling must be at least 1 (got {per_octave})")
    hi = hi or dram_size(topo, cpu)
    if lo < 2 * stride or hi < lo:
        raise UserError(f"sweep range must satisfy {2 * stride} B (two {stride} B strides) "
                        f"<= min <= max (got min {format_bytes(lo)}, max {format_bytes(hi)})")
    sizes, k = [], 0
    while True:
        s = round(lo * 2 ** (k / per_octave) / (4 * KIB)) * 4 * KIB or lo
        if s > hi:
            break
        if not sizes or s != sizes[-1]:
            sizes.append(s)
        k += 1
    if sizes[-1] < hi:
        sizes.append(hi)
    return sizes


# -- checks on user input -------------------------------------------------------------------

def check_size(nbytes: int, stride: int) -> None:
    """UserError unless the buffer holds two lines of the chase."""
    if nbytes < 2 * stride:
        raise UserError(f"buffer of {nbytes} B is too small for a {stride} B stride "
                        f"(at least {2 * stride} B: two lines)")


def check_memory(topo: Topology, memory: MemorySpec) -> MemorySpec:
    """The spec, if the chase can use it: first touch, or bound to one node with memory."""
    if memory.policy not in ("first-touch", "bind"):
        raise UserError(f"the latency buffer is placed by first touch or bound to one node, "
                        f"not by {memory.policy}")
    if memory.policy == "bind":
        if len(memory.nodes) != 1:
            raise UserError("the latency buffer is bound to one node (got nodes "
                            f"{placement.format_cpulist(memory.nodes)}): give one, e.g. "
                            "--membind 1")
        (node,) = memory.nodes
        if node not in topo.node_ids():
            raise UserError(f"NUMA node {node} does not exist (nodes: "
                            f"{placement.format_cpulist(topo.node_ids())})")
        if topo.node(node).memoryless:
            raise UserError(f"NUMA node {node} has no memory")
    return memory



NO_PAGES = MemorySpec(pages=TABLE["pages"].default)   # first touch, latency's page kind


@dataclass(frozen=True)
class LatencyParams:
    """One latency measurement. The defaults live here and nowhere else; `checked(topo)`
    validates every input once, when a case is built, and resolves the defaults (the CPU,
    the working set, loads per sample, the loaders), so a case holds what will be measured.

    idle:   the chaser alone on `cpu` over `bytes` placed by `memory`
    loaded: the same chase while `load_cpus` read `load_bytes` each, in 1 KiB bursts
            separated by an empty loop of `delay` iterations (MLC --loaded_latency); with
            a write `mix` (mixes.py) each step also stores to a second buffer as large"""

    kind: str = "idle"                      # idle | loaded
    bytes: int | None = None                # working set; None: dram_size (4x the LLC)
    mode: str = "tlb"                       # tlb | random
    cpu: int | None = None                  # the chaser; None: the first usable CPU
    memory: MemorySpec = NO_PAGES           # first touch or bound to one node; page kind
    samples: int | Steady = SAMPLES.default   # a count, or --samples auto's stopping rule
    loads: int | None = None                # per sample; None: 1<<16 (loaded, or <= 64 MiB)
    stride: int = STRIDE                    #   else 1<<18
    window: int = WINDOW
    seed: int = 1
    clock: bool = True                      # measure the core clock for core cycles
    dist_groups: int = distribution.DIST_GROUPS   # single-load distribution: timed groups
                                            #   per chunk (one chunk per sample; TAIL_GROUPS
                                            #   at least in all); 0: none
    dist_group: int = 0                     # loads per timed group; 0: the pass chooses
    delay: int = 0                          # loaded: the injected delay
    load_cpus: tuple[int, ...] = ()         # loaded: empty: every usable CPU but the chaser
    load_bytes: int | None = None           # loaded: per loader; None: dram_size / 4, >= 64 MiB
    mix: str = DEFAULT_MIX                  # loaded: the loaders' read:write mix (mixes.py)
    # The chaser was left to the default (the first CPU this task may use): a role, not a
    # CPU number, so the case label leaves the number out (it is in params["cpu"]). Under a
    # launcher that binds tasks (mpirun, srun) each node's first CPU differs, and a label
    # naming it would make the same case a different metric on every node of a fleet.
    default_cpu: bool = False

    @property
    def node(self) -> int | None:
        """The node the buffer is bound to (None: first touch)."""
        return self.memory.nodes[0] if self.memory.policy == "bind" else None

    @property
    def lines(self) -> int:
        return (self.bytes or 0) // self.stride

    @property
    def need_bytes(self) -> int:
        """What the measurement allocates: the buffer, its permutation (4 B a line) and the
        loaders' buffers."""
        b = (self.bytes or 0) + self.lines * 4
        streams = 2 if self.kind == "loaded" and Mix.parse(self.mix).writes else 1
        return b + streams * (self.load_bytes or 0) * len(self.load_cpus) \
            if self.kind == "loaded" else b

    def checked(self, topo: Topology) -> LatencyParams:
        """These parameters with every input checked against `topo` (UserError; Unavailable
        when the hugetlb pool cannot hold the buffer) and the defaults resolved."""
        if self.kind not in KINDS:
            raise UserError(f"unknown latency kind {self.kind!r} (choose {', '.join(KINDS)})")
        if self.mode not in MODES:
            raise UserError(f"unknown chase mode {self.mode!r} (choose {', '.join(MODES)})")
        for name in ("stride", "samples", "loads"):      # the options' own rules
            TABLE[name].convert(getattr(self, name), name)
        cpu = topo.usable_cpus()[0] if self.cpu is None else self.cpu
        placement.check_cpus(topo, [cpu])
        memory = check_memory(topo, self.memory)
        nbytes = dram_size(topo, cpu) if self.bytes is None else self.bytes
        check_size(nbytes, self.stride)
        p = replace(self, cpu=cpu, memory=memory, bytes=nbytes,
                    default_cpu=self.default_cpu or self.cpu is None)
        if self.kind == "loaded":
            p = p._loaded(topo)
        elif self.loads is None:   # cache-resident sizes: short samples are plenty
            p = replace(p, loads=1 << 16 if nbytes <= 64 * MIB else 1 << 18)
        h = live_host(topo)
        if h is not None:
            p.check_host(h)
        return p

    def _loaded(self, topo: Topology) -> LatencyParams:
        cpu = self.cpu
        if isinstance(self.samples, Steady):
            raise UserError("--samples auto applies to the idle chase; loaded latency takes "
                            "a count (its delays share one measurement)")
        if self.memory.pages != "none":
            raise UserError("loaded latency runs on base pages (--pages none)")
        if self.delay < 0:
            raise UserError(f"delays must be >= 0 (got {self.delay})")
        mix = Mix.parse(self.mix)
        if mix.nt and platform.machine().lower() not in ("x86_64", "amd64"):
            raise UserError(f"--mix {mix.name}: streaming stores are implemented for x86-64 "
                            f"only (movnti), not {platform.machine()}")
        loaders = list(self.load_cpus) or [c for c in topo.usable_cpus() if c != cpu]
        if not loaders:
            raise UserError("loaded latency needs at least one CPU besides the chaser")
        placement.check_cpus(topo, loaders)
        if cpu in loaders:
            raise UserError(f"CPU {cpu} cannot be both the chaser and a loader")
        load_bytes = self.load_bytes or max(dram_size(topo, cpu) // 4, 64 * MIB)
        return replace(self, load_cpus=tuple(loaders), load_bytes=load_bytes,
                       loads=self.loads or 1 << 16, mix=mix.name)

    def check_host(self, h: Host) -> None:
        """UserError when the buffers do not fit in the free memory where they go;
        Unavailable when hugetlb pages are asked for and the pool cannot hold the buffer."""
        nbuf = len(self.load_cpus) * \
            (2 if self.kind == "loaded" and Mix.parse(self.mix).writes else 1)
        what = f"the latency buffer of {format_bytes(self.bytes or 0)}" + (
            f" and {nbuf} loader buffer{'s' if nbuf != 1 else ''}"
            f" of {format_bytes(self.load_bytes or 0)}" if self.kind == "loaded" else "")
        h.check_fits(self.need_bytes, what, list(self.memory.nodes) or None)
        if self.memory.pages == "hugetlb":
            h.check_hugetlb(-(-(self.bytes or 0) // HUGE_2M) * HUGE_2M,
                            f"the latency buffer of {format_bytes(self.bytes or 0)}")

    def label(self) -> str:
        """The case label: the stride is in it, as figures taken at another stride are not
        the same case; the chaser's CPU only when it was chosen (default_cpu)."""
        if self.kind == "loaded":
            n = len(self.load_cpus)
            mix = "" if self.mix == DEFAULT_MIX else f"mix={self.mix} "
            return f"loaded {mix}delay={self.delay} {n} loader{'s' if n != 1 else ''} " \
                   f"stride {self.stride}"
        return f"{self.mode} {format_bytes(self.bytes or 0)} stride {self.stride}" + \
            ("" if self.default_cpu else f" cpu{self.cpu}") + \
            (f" node{self.node}" if self.node is not None else "")


# -- measurements ---------------------------------------------------------------------------

def _ghz(cpu: int) -> float | None:
    """The measured core clock, when numascope.clock can measure it here."""
    try:
        from numascope.clock import measured_ghz
        return float(measured_ghz(cpu))
    except (ImportError, UserError, MeasurementError, OSError, RuntimeError, ValueError):
        # no clock module, or it cannot measure here: TSC cycles only
        return None


def _huge_text(pages: str, frac: float) -> str:
    asked = {"none": "4K", "thp": "THP", "hugetlb": "hugetlb"}[pages]
    if frac < 0:
        return f"{asked} (huge share unknown)"
    return f"{asked} ({frac:.0%} huge)"


def latency_metrics(ns: list[float], tsc: list[float], cpu: int, clock: bool = True,
                    prefix: str = "", stride: int = STRIDE) -> dict[str, Metric]:
    m = {
        f"{prefix}latency": Metric(f"{prefix}latency", "ns", False, list(ns),
                                   f"ns per dependent load, one pointer per {stride} B "
                                   "(stride), one value per timed sample"),
        f"{prefix}tsc_cycles": Metric(f"{prefix}tsc_cycles", "TSC cycles", False, list(tsc),
                                      "time-stamp-counter ticks per load (not core cycles)"),
    }
    ghz = _ghz(cpu) if clock else None
    if ghz:
        m[f"{prefix}core_cycles"] = Metric(
            f"{prefix}core_cycles", "cycles", False, [v * ghz for v in ns],
            f"ns x measured core clock {ghz:.2f} GHz (numascope.clock)")
    return m


def run(topo: Topology, p: LatencyParams,
        tail_groups: int = distribution.TAIL_GROUPS) -> BenchResult:
    """Idle latency of checked parameters (LatencyParams.checked): the chaser pinned on
    `p.cpu`, one pointer every `p.stride` bytes, memory placed by `p.memory`. With
    --samples auto, chases of a few samples each, every one over its own fresh buffer,
    until the latency is steady over them; the tail comes from their passes merged, so each
    pass times only its share of the TAIL_GROUPS the case needs (the least units there
    are), not all of them again."""
    if isinstance(p.samples, Steady):
        units: list[BenchResult] = []
        share = -(-distribution.TAIL_GROUPS // steady.MIN_UNITS)

        def once(n: int) -> BenchResult:     # a unit: its own call, allocation and chase
            units.append(run(topo, replace(p, samples=n, dist_group=_group(units, p)),
                             tail_groups=share))
            return units[-1]
        res, _ = steady.gather(once, p.samples, "latency", count="samples")
        distribution.merge_units(res, units)    # every unit's single loads, one histogram
        return res
    nbytes, cpu, pages = p.bytes or 0, p.cpu or 0, p.memory.pages
    with core_errors("the buffer"):
        r = _core().lat_chase(nbytes, cpu, p.memory.to_core(), p.mode, p.window, p.samples,
                              p.loads, p.stride, p.seed, p.dist_groups, p.dist_group,
                              tail_groups)
    tail, dist = distribution.from_core(r.get("hist"))
    notes = []
    if pages != "none" and 0 <= r["huge_fraction"] < 0.5:
        notes.append(f"asked for {pages} but the kernel gave huge pages for only "
                     f"{r['huge_fraction']:.0%} of the buffer")
    if r["cycle_walked"]:
        notes.append(f"cycle walked in full: {r['cycle_walked']} lines, every line once")
    return BenchResult(
        family=FAMILY, case=p.label(),
        params={"kind": "idle", "bytes": nbytes, "mode": p.mode, "pages": pages, "cpu": cpu,
                "cpu_default": p.default_cpu,
                "node": p.node, "samples": p.samples, "loads_per_sample": p.loads,
                "window": p.window if p.mode == "tlb" else None, "stride": p.stride,
                "seed": p.seed},
        metrics={**latency_metrics(r["ns"], r["tsc"], cpu, p.clock, stride=p.stride), **tail},
        placement={"cpus": [cpu], "memory": p.memory.to_dict(), "pages_per_node": r["where"],
                   "huge_fraction": r["huge_fraction"],
                   "pages": _huge_text(pages, r["huge_fraction"])},
        notes=notes, distributions={"latency": dist} if dist else {})


def _group(batches: list[BenchResult], p: LatencyParams) -> int:
    """The loads per timed group of a batch: the first batch's, so that the batches'
    histograms share one grid (combine), else as asked."""
    d = batches[0].distributions.get("latency") if batches else None
    return d["loads_per_group"] if d else p.dist_group


def run_loaded(topo: Topology, p: LatencyParams,
               delays: list[int] | tuple[int, ...] | None = None) -> list[BenchResult]:
    """Loaded latency of checked parameters, one result per delay (`delays`, default
    `p.delay` alone) from one C call: the chaser's latency samples and the loaders'
    bandwidth, in `p.mix` (reads only: their read bandwidth; with stores: the DRAM traffic,
    write-allocate counted where this CPU's stores do it, mixes.Mix.counting). A point whose
    latency is below a lower-bandwidth point's beyond noise carries a note (`inversions`)."""
    delays = [p.delay] if delays is None else list(delays)
    if any(d < 0 for d in delays):
        raise UserError("delays must be >= 0")
    cpu, load_cpus = p.cpu or 0, list(p.load_cpus)
    mix = Mix.parse(p.mix)
    with core_errors("the buffers"):
        r = _core().lat_loaded(p.bytes, cpu, load_cpus, delays, p.memory.to_core(),
                               p.load_bytes, p.mode, p.window, p.samples, p.loads, p.seed,
                               p.stride, reads=mix.reads, writes=mix.writes, nt=mix.nt)
    ghz = _ghz(cpu) if p.clock else None
    wa = _write_allocate(topo, mix)
    out = []
    for pt in r["points"]:
        metrics = latency_metrics(pt["ns"], pt["tsc"], cpu, clock=False, stride=p.stride)
        tail, dist = distribution.from_core(pt.get("hist"))   # where the C pass ran
        if ghz:
            metrics["core_cycles"] = Metric("core_cycles", "cycles", False,
                                            [v * ghz for v in pt["ns"]],
                                            f"ns x measured core clock {ghz:.2f} GHz")
        metrics.update(_bandwidth(mix, wa, pt))
        at = replace(p, delay=pt["delay"])
        params = {"kind": "loaded", "delay": pt["delay"], "bytes": p.bytes, "mode": p.mode,
                  "cpu": cpu, "cpu_default": p.default_cpu, "load_cpus": load_cpus,
                  "load_bytes": p.load_bytes,
                  "node": p.node, "samples": p.samples, "loads_per_sample": p.loads,
                  "stride": p.stride}
        notes = ["delay = iterations of an empty loop after each 1 KiB read burst"]
        if mix.writes:     # reads only: the record stays as it always was
            params.update(mix=mix.name, reads_per_step=mix.reads, writes_per_step=mix.writes,
                          stores=mix.stores, write_allocate=wa.label,
                          traffic=mix.counting(wa))
            notes = [f"delay = iterations of an empty loop after each step: {mix.step()}",
                     (f"stores checked: {pt['lines_checked']} stored lines read back held "
                      "the value written at this delay"),
                     f"Intel MLC --loaded_latency equivalent: {mix.mlc(wa)}"]
        out.append(BenchResult(
            family=FAMILY, case=at.label(), params=params, metrics={**metrics, **tail},
            placement={"cpus": [cpu, *load_cpus], "memory": p.memory.to_dict(),
                       "pages_per_node": r["chase"]["where"]},
            notes=notes, distributions={"latency": dist} if dist else {}))
    for inv in inversions(out):
        inv.high.notes.append(inv.note())
    return out


def _write_allocate(topo: Topology, mix: Mix):
    """Whether this mix's stores read their line first here (numascope.traffic's rules)."""
    from numascope.traffic import cpu_uarch, write_allocate
    return write_allocate(cpu_uarch(topo), mix.stores)


def _bandwidth(mix: Mix, wa, pt: dict[str, Any]) -> dict[str, Metric]:
    """The point's bandwidth metrics: `bandwidth` (the curve's axis: reads, or the DRAM
    traffic of a write mix as Mix.counting states it) and, with stores, what was issued."""
    rd, wr = pt["loader_gbs"], pt.get("loader_write_gbs", 0.0)
    if not (rd > 0 if not mix.writes else wr > 0):
        raise MeasurementError(f"loaders {'stored' if mix.writes else 'read'} nothing at "
                               f"delay {pt['delay']}")
    if not mix.writes:
        return {"bandwidth": Metric(
            "bandwidth", "GB/s", True, [rd],
            "read bandwidth of the loaders while the chaser ran (10^9 B/s, 64 B per line read)")}
    dram = mix.dram_gbs(rd, wr, wa)
    return {
        "bandwidth": Metric("bandwidth", "GB/s", True, [rd + wr if dram is None else dram],
                            f"{mix.counting(wa)}; 10^9 B/s, summed over the loaders"),
        "read_bandwidth": Metric("read_bandwidth", "GB/s", True, [rd],
                                 "loads the loaders issued (10^9 B/s)"),
        "write_bandwidth": Metric("write_bandwidth", "GB/s", True, [wr],
                                  f"{'streaming' if mix.nt else 'ordinary'} stores the "
                                  "loaders issued (10^9 B/s)"),
    }


def chase(topo: Topology, nbytes: int | None = None, cpu: int | None = None,
          memory: MemorySpec = NO_PAGES, **kw: Any) -> BenchResult:
    """Idle latency of one working set: LatencyParams(bytes=nbytes, cpu=cpu, memory=memory,
    **kw), checked, then measured."""
    return run(topo, LatencyParams(bytes=nbytes, cpu=cpu, memory=memory, **kw).checked(topo))


def loaded(topo: Topology, cpu: int | None = None, load_cpus: list[int] | None = None,
           memory: MemorySpec | None = None, delays: list[int] | None = None,
           nbytes: int | None = None, load_bytes: int | None = None,
           **kw: Any) -> list[BenchResult]:
    """Loaded latency for each of `delays` (default LOADED_DELAYS) in one C call."""
    delays = list(LOADED_DELAYS) if delays is None else list(delays)
    if any(d < 0 for d in delays):
        raise UserError("delays must be >= 0")
    p = LatencyParams(kind="loaded", bytes=nbytes, cpu=cpu, memory=memory or NO_PAGES,
                      load_cpus=tuple(load_cpus or ()), load_bytes=load_bytes,
                      **{"samples": 5, **kw}).checked(topo)
    return run_loaded(topo, p, delays)


def summary(res: BenchResult) -> dict[str, float]:
    """p5 / p50 / p95 / min of the latency samples (ns), the median cycles and, where the
    record has the single-load distribution, its p99 and p99.9 (load_p99, load_p999: the
    merged histogram's; NaN without)."""
    m = res.metrics["latency"]
    out = {"p5": m.percentile(5), "p50": m.percentile(50), "p95": m.percentile(95),
           "min": m.min, "tsc_cycles": res.metrics["tsc_cycles"].median}
    if "core_cycles" in res.metrics:
        out["core_cycles"] = res.metrics["core_cycles"].median
    for key, name in (("load_p99", "latency_p99"), ("load_p999", "latency_p999")):
        out[key] = res.metrics[name].median if name in res.metrics else math.nan
    return out


# -- loaded latency: more bandwidth must not mean less latency ------------------------------

NOISE_FLOOR = 0.01   # a drop smaller than 1 % of the latency is never a finding


def _bw(r: BenchResult) -> float:
    return r.metrics["bandwidth"].median


def _p50(r: BenchResult) -> float:
    return r.metrics["latency"].percentile(50)


def point_noise(r: BenchResult) -> float:
    """Half the p5-p95 range of one point's latency samples: how far its p50 can move from
    sample to sample."""
    m = r.metrics["latency"]
    return (m.percentile(95) - m.percentile(5)) / 2


@dataclass
class Inversion:
    """Two points of one loaded-latency curve in the wrong order: `high` read more
    bandwidth than `low` yet its p50 latency is lower by more than their combined noise."""
    low: BenchResult          # less bandwidth, more latency
    high: BenchResult         # more bandwidth, less latency
    drop_ns: float            # p50(low) - p50(high)
    noise_ns: float           # noise(low) + noise(high), at least 1 % of p50(low)

    def note(self) -> str:
        lo, hi = self.low, self.high
        mix = hi.params.get("mix", DEFAULT_MIX)
        return (f"not monotone{'' if mix == DEFAULT_MIX else f' (mix {mix})'}: "
                f"{_p50(hi):.1f} ns at {_bw(hi):.1f} GB/s (delay "
                f"{hi.params['delay']}) is {self.drop_ns:.1f} ns below {_p50(lo):.1f} ns at "
                f"{_bw(lo):.1f} GB/s (delay {lo.params['delay']}), beyond the samples' "
                f"combined noise ({self.noise_ns:.1f} ns): a disturbed run, or a clock that "
                "rises with load")


def inversions(points: list[BenchResult]) -> list[Inversion]:
    """Where a latency-vs-bandwidth curve is not monotone beyond noise, each curve (mix,
    placement: curve_key) on its own: for each point, the lower-bandwidth point of its
    curve that exceeds its p50 by the most beyond their combined noise (half the p5-p95
    range of each point's samples, summed; at least 1 % of the latency)."""
    out = []
    for curve in curves(points):
        out += _curve_inversions(curve)
    return out


def _curve_inversions(curve: list[BenchResult]) -> list[Inversion]:
    pts = sorted(curve, key=_bw)
    out = []
    for j, high in enumerate(pts):
        worst: Inversion | None = None
        for low in pts[:j]:
            if _bw(low) >= _bw(high):
                continue
            drop = _p50(low) - _p50(high)
            noise = max(point_noise(low) + point_noise(high), NOISE_FLOOR * _p50(low))
            if drop > noise and (worst is None
                                 or drop - noise > worst.drop_ns - worst.noise_ns):
                worst = Inversion(low, high, drop, noise)
        if worst:
            out.append(worst)
    return out


def curve_key(r: BenchResult) -> tuple:
    """The points of one loaded-latency curve share these parameters (all but the delay)."""
    p = r.params
    return tuple(str(p.get(k)) for k in ("cpu", "load_cpus", "node", "bytes", "load_bytes",
                                         "mode", "stride")) + (p.get("mix", DEFAULT_MIX),)


def curves(results: list[BenchResult]) -> list[list[BenchResult]]:
    """The loaded-latency points grouped into curves (curve_key), in the order the curves
    first appear, each curve in bandwidth order."""
    by: dict[tuple, list[BenchResult]] = {}
    for r in results:
        if r.family == FAMILY and r.params.get("kind") == "loaded":
            by.setdefault(curve_key(r), []).append(r)
    return [sorted(c, key=_bw) for c in by.values()]


READ_COUNTING = "DRAM traffic = the lines the loaders read (64 B each)"


def curve_summary(curve: list[BenchResult]) -> dict[str, Any]:
    """One curve in brief: its mix, how its bandwidth is counted, its knee (knee.py's rule)
    and the points that break monotonicity (flagged, kept)."""
    p = curve[0].params
    pts = [(_bw(r), _p50(r)) for r in curve]
    k = knee_rule.find(pts)
    return {
        "mix": p.get("mix", DEFAULT_MIX),
        "write_allocate": p.get("write_allocate", "n/a"),
        "bandwidth_counted": p.get("traffic", READ_COUNTING),
        "points": [{"delay": r.params["delay"], "gbs": b, "p50_ns": ns}
                   for r, (b, ns) in zip(curve, pts)],
        "knee_rule": knee_rule.RULE,
        "knee": None if k is None else {"gbs": k.gbs, "line_ns": k.line_ns,
                                        "base_gbs": k.base[0], "base_ns": k.base[1]},
        "knee_text": knee_rule.text(pts),
        "not_monotone": [inv.high.params["delay"] for inv in _curve_inversions(curve)],
    }


# -- the sweep and its plateaus -------------------------------------------------------------

@dataclass
class Level:
    name: str                 # "L1", "L2", "L3", "DRAM", or "extra" for an unexpected step
    first_bytes: int          # smallest working set on the plateau
    last_bytes: int           # largest working set on the plateau
    latency_ns: float         # median of the plateau's medians
    expected_bytes: int | None  # the cache size from the topology (None for DRAM)
    verdict: str              # how the detected edge compares with the expected size

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _plateaus(points: list[tuple[int, float]], tol: float) -> list[list[tuple[int, float]]]:
    """Group consecutive sweep points whose latency stays within `tol` of the group's
    lowest; transition points between levels end up in groups of one."""
    groups: list[list[tuple[int, float]]] = []
    for s, v in points:
        if groups and v <= groups[-1][0][1] * (1 + tol):
            groups[-1].append((s, v))
        else:
            groups.append([(s, v)])
    return groups


def detect_levels(points: list[tuple[int, float]], topo: Topology, cpu: int,
                  tol: float = 0.35) -> list[Level]:
    """Plateaus of a latency sweep (size, median ns), named by the topology's cache sizes:
    a plateau whose working sets fit the level-N cache is LN; beyond the LLC it is DRAM.
    The edge of each plateau (between its last point and the next point) is compared with
    the expected cache size."""
    pts = sorted(points)
    if not pts:
        return []
    groups = _plateaus(pts, tol)
    caps = [(f"L{lvl}", topo.cache_bytes(lvl, cpu)) for lvl in (1, 2, 3)]
    caps = [(n, c) for n, c in caps if c]
    levels: list[Level] = []
    for gi, g in enumerate(groups):
        last_group = gi == len(groups) - 1
        if len(g) < 2 and not (last_group and caps and g[-1][0] > caps[-1][1]):
            continue          # a transition point, not a plateau
        mid = statistics.median(s for s, _ in g)     # the plateau's typical working set
        name, expected = "DRAM", None
        llc = caps[-1][1] if caps else None
        if llc is None or g[-1][0] <= llc:   # a plateau reaching past the LLC is DRAM
            for n, c in caps:
                if mid <= c:
                    name, expected = n, c
                    break
        nxt = groups[gi + 1][0][0] if not last_group else None
        lat = statistics.median(v for _, v in g)
        if expected is None:
            if llc and g[0][0] < llc / 1.5:
                verdict = f"DRAM latency from {format_bytes(g[0][0])} on, below the " \
                          f"{format_bytes(llc)} LLC reported: the effective last-level " \
                          "cache is smaller (shared with other tenants, or a VM's view?)"
            else:
                verdict = "beyond the last cache level" + (
                    f" ({format_bytes(llc)})" if llc else "")
        elif nxt is None:
            verdict = f"no larger working set measured to find the {name} edge"
        elif g[-1][0] <= expected * 1.5 and nxt >= expected / 1.5:
            verdict = f"edge between {format_bytes(g[-1][0])} and {format_bytes(nxt)}, " \
                      f"consistent with {name} = {format_bytes(expected)}"
        elif nxt < expected / 1.5:
            verdict = f"latency rises by {format_bytes(nxt)}, before the " \
                      f"{format_bytes(expected)} {name} is full (shared or smaller effective" \
                      " cache?)"
        else:
            verdict = f"plateau lasts to {format_bytes(g[-1][0])}, beyond the " \
                      f"{format_bytes(expected)} {name}"
        if any(lv.name == name for lv in levels):
            name = f"{name}+"     # a second step inside the same level's range
        levels.append(Level(name, g[0][0], g[-1][0], lat, expected, verdict))
    return levels


def sweep_points(results: list[BenchResult]) -> list[tuple[int, float]]:
    return [(r.params["bytes"], r.metrics["latency"].median) for r in results
            if r.family == FAMILY and r.params.get("kind") == "idle"]
