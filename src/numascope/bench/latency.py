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
import statistics
from dataclasses import dataclass
from typing import Any

from numascope.bench.base import Case, core_errors
from numascope.errors import MeasurementError, Unavailable, UserError
from numascope.placement import check_cpus
from numascope.profile import Profile
from numascope.results.record import BenchResult, Metric
from numascope.topology.model import Topology
from numascope.units import format_bytes, parse_size  # noqa: F401 - re-exported

FAMILY = "latency"
MODES = ("tlb", "random")
PAGES = ("none", "thp", "hugetlb")
WINDOW = 256 * 1024           # TLB-friendly window (multichase's default: 64 x 4 KiB pages)
LINE = 64                     # a cache line: the smallest stride
STRIDE = 256                  # default stride: prefetch-proof (multichase's default)
MAX_STRIDE = 4096             # beyond a page every load is a page walk as well
KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
LOADED_DELAYS = (0, 50, 100, 200, 400, 800, 1600, 3200, 10000)


def _core():
    from numascope import _core as core  # lazy: builds the C core on first use
    return core


# -- sizes and units ------------------------------------------------------------------------

def percentile(values: list[float], p: float) -> float:
    """Linear-interpolated percentile (p in 0..100) of the samples."""
    if not values:
        return math.nan
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


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


def sweep_sizes(topo: Topology, cpu: int, lo: int = 4 * KIB, hi: int | None = None,
                per_octave: int = 2, stride: int = STRIDE) -> list[int]:
    """Log-spaced working sets from `lo` to `hi` (default ≥ 4x LLC), multiples of 4 KiB."""
    hi = hi or dram_size(topo, cpu)
    if lo < 2 * stride or hi < lo:
        raise UserError(f"sweep range must satisfy {2 * stride} B (two {stride} B strides) "
                        "<= min <= max")
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

def check_stride(stride: int, name: str = "stride") -> int:
    """The stride as given, or UserError: a power of two from 64 B (a cache line) to 4 KiB."""
    if not isinstance(stride, int) or stride < LINE or stride > MAX_STRIDE \
            or stride & (stride - 1):
        raise UserError(f"{name} must be a power of two from {LINE} to {MAX_STRIDE} bytes "
                        f"(got {stride})")
    return stride


def check_size(nbytes: int, stride: int) -> None:
    """UserError unless the buffer holds two lines of the chase."""
    if nbytes < 2 * stride:
        raise UserError(f"buffer of {nbytes} B is too small for a {stride} B stride "
                        f"(at least {2 * stride} B: two lines)")


def memory_spec(topo: Topology, node: int | None, pages: str) -> dict[str, Any]:
    if pages not in PAGES:
        raise UserError(f"unknown page kind {pages!r} (choose {', '.join(PAGES)})")
    if node is None:
        return {"policy": "first-touch", "huge": pages}
    if node not in topo.node_ids():
        raise UserError(f"NUMA node {node} does not exist (nodes: "
                        f"{', '.join(map(str, topo.node_ids()))})")
    if topo.node(node).memoryless:
        raise UserError(f"NUMA node {node} has no memory")
    return {"policy": "bind", "nodes": [node], "huge": pages}


def check_cpu(topo: Topology, cpu: int) -> None:
    check_cpus(topo, [cpu])


def _meminfo(key: str) -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(key + ":"):
                    parts = line.split()
                    return int(parts[1]) * (1024 if len(parts) > 2 else 1)
    except OSError:
        return None
    return None


def check_fits(topo: Topology, nbytes: int, node: int | None, pages: str,
               stride: int = STRIDE) -> None:
    """UserError when the buffer (plus the permutation, 4 B a line) cannot fit."""
    need = nbytes + nbytes // stride * 4
    free = topo.node(node).free_bytes if node is not None else _meminfo("MemAvailable")
    if free is not None and need > free:
        where = f"node {node}" if node is not None else "this machine"
        raise UserError(f"a {format_bytes(nbytes)} buffer does not fit in the "
                        f"{format_bytes(free)} free on {where}")
    if pages == "hugetlb":
        hp_free, hp_size = _meminfo("HugePages_Free"), _meminfo("Hugepagesize")
        if not hp_free or not hp_size or hp_free * hp_size < nbytes:
            raise Unavailable("not enough hugetlb pages reserved for "
                              f"{format_bytes(nbytes)} (see vm.nr_hugepages)")


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
        return f"{asked} (huge ?)"
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


def chase(topo: Topology, nbytes: int, cpu: int | None = None, node: int | None = None,
          mode: str = "tlb", pages: str = "none", samples: int = 15, loads: int | None = None,
          window: int = WINDOW, seed: int = 1, clock: bool = True,
          stride: int = STRIDE) -> BenchResult:
    """Idle latency of one working set, chaser pinned on `cpu`, memory bound to `node`,
    one pointer every `stride` bytes."""
    if cpu is None:
        cpu = topo.usable_cpus()[0]
    check_cpu(topo, cpu)
    check_stride(stride)
    if mode not in MODES:
        raise UserError(f"unknown chase mode {mode!r} (choose {', '.join(MODES)})")
    check_size(nbytes, stride)
    if samples < 1:
        raise UserError("samples must be at least 1")
    spec = memory_spec(topo, node, pages)
    check_fits(topo, nbytes, node, pages, stride)
    loads = loads or 1 << 18
    with core_errors("the buffer"):
        r = _core().lat_chase(nbytes, cpu, spec, mode, window, samples, loads, stride, seed)
    notes = []
    if pages != "none" and 0 <= r["huge_fraction"] < 0.5:
        notes.append(f"asked for {pages} but the kernel gave huge pages for only "
                     f"{r['huge_fraction']:.0%} of the buffer")
    if r["cycle_walked"]:
        notes.append(f"cycle walked in full: {r['cycle_walked']} lines, every line once")
    metrics = latency_metrics(r["ns"], r["tsc"], cpu, clock, stride=stride)
    # the stride is in the label: figures taken at another stride are not the same case
    label = f"{mode} {format_bytes(nbytes)} stride {stride} cpu{cpu}" + (
        f" node{node}" if node is not None else "")
    return BenchResult(
        family=FAMILY, case=label,
        params={"kind": "idle", "bytes": nbytes, "mode": mode, "pages": pages, "cpu": cpu,
                "node": node, "samples": samples, "loads_per_sample": loads,
                "window": window if mode == "tlb" else None, "stride": stride, "seed": seed},
        metrics=metrics,
        placement={"cpus": [cpu], "memory": spec, "pages_per_node": r["where"],
                   "huge_fraction": r["huge_fraction"],
                   "pages": _huge_text(pages, r["huge_fraction"])},
        notes=notes)


def summary(res: BenchResult) -> dict[str, float]:
    """p5 / p50 / p95 / min of the latency samples (ns) and the median cycles."""
    v = res.metrics["latency"].values
    out = {"p5": percentile(v, 5), "p50": percentile(v, 50), "p95": percentile(v, 95),
           "min": min(v), "tsc_cycles": res.metrics["tsc_cycles"].median}
    if "core_cycles" in res.metrics:
        out["core_cycles"] = res.metrics["core_cycles"].median
    return out


def loaded(topo: Topology, cpu: int | None = None, load_cpus: list[int] | None = None,
           node: int | None = None, delays: list[int] | None = None, nbytes: int | None = None,
           load_bytes: int | None = None, mode: str = "tlb", samples: int = 5,
           loads: int = 1 << 16, seed: int = 1, stride: int = STRIDE) -> list[BenchResult]:
    """Loaded latency (MLC --loaded_latency): the chaser on `cpu` while `load_cpus` read
    their own buffers in 1 KiB bursts separated by an injected delay loop; one result per
    delay, with the chaser's latency samples and the loaders' read bandwidth. A point whose
    latency is below a lower-bandwidth point's beyond noise carries a note (`inversions`)."""
    usable = topo.usable_cpus()
    if cpu is None:
        cpu = usable[0]
    check_cpu(topo, cpu)
    if load_cpus is None:
        load_cpus = [c for c in usable if c != cpu]
    if not load_cpus:
        raise UserError("loaded latency needs at least one CPU besides the chaser")
    for c in load_cpus:
        check_cpu(topo, c)
    if cpu in load_cpus:
        raise UserError(f"CPU {cpu} cannot be both the chaser and a loader")
    if mode not in MODES:
        raise UserError(f"unknown chase mode {mode!r} (choose {', '.join(MODES)})")
    check_stride(stride)
    delays = list(LOADED_DELAYS) if delays is None else delays
    if any(d < 0 for d in delays):
        raise UserError("delays must be >= 0")
    nbytes = nbytes or dram_size(topo, cpu)
    check_size(nbytes, stride)
    load_bytes = load_bytes or max(dram_size(topo, cpu) // 4, 64 * MIB)
    spec = memory_spec(topo, node, "none")
    check_fits(topo, nbytes + load_bytes * len(load_cpus), node, "none", stride)
    with core_errors("the buffers"):
        r = _core().lat_loaded(nbytes, cpu, load_cpus, delays, spec, load_bytes, mode, WINDOW,
                               samples, loads, seed, stride)
    ghz = _ghz(cpu)
    out = []
    for p in r["points"]:
        bw = p["loader_gbs"]     # sum over loaders of bytes / own reading time
        if not bw > 0:
            raise MeasurementError(f"loaders read nothing at delay {p['delay']}")
        metrics = latency_metrics(p["ns"], p["tsc"], cpu, clock=False, stride=stride)
        if ghz:
            metrics["core_cycles"] = Metric("core_cycles", "cycles", False,
                                            [v * ghz for v in p["ns"]],
                                            f"ns x measured core clock {ghz:.2f} GHz")
        metrics["bandwidth"] = Metric(
            "bandwidth", "GB/s", True, [bw],
            "read bandwidth of the loaders while the chaser ran (10^9 B/s, 64 B per line read)")
        out.append(BenchResult(
            family=FAMILY,
            case=f"loaded delay={p['delay']} {len(load_cpus)} loaders stride {stride}",
            params={"kind": "loaded", "delay": p["delay"], "bytes": nbytes, "mode": mode,
                    "cpu": cpu, "load_cpus": list(load_cpus), "load_bytes": load_bytes,
                    "node": node, "samples": samples, "loads_per_sample": loads,
                    "stride": stride},
            metrics=metrics,
            placement={"cpus": [cpu, *load_cpus], "memory": spec,
                       "pages_per_node": r["chase"]["where"]},
            notes=["delay = iterations of an empty loop after each 1 KiB read burst"]))
    for inv in inversions(out):
        inv.high.notes.append(inv.note())
    return out


# -- loaded latency: more bandwidth must not mean less latency ------------------------------

NOISE_FLOOR = 0.01   # a drop smaller than 1 % of the latency is never a finding


def _bw(r: BenchResult) -> float:
    return r.metrics["bandwidth"].median


def _p50(r: BenchResult) -> float:
    return percentile(r.metrics["latency"].values, 50)


def point_noise(r: BenchResult) -> float:
    """Half the p5-p95 range of one point's latency samples: how far its p50 can move from
    sample to sample."""
    v = r.metrics["latency"].values
    return (percentile(v, 95) - percentile(v, 5)) / 2


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
        return (f"not monotone: {_p50(hi):.1f} ns at {_bw(hi):.1f} GB/s (delay "
                f"{hi.params['delay']}) is {self.drop_ns:.1f} ns below {_p50(lo):.1f} ns at "
                f"{_bw(lo):.1f} GB/s (delay {lo.params['delay']}), beyond the samples' "
                f"combined noise ({self.noise_ns:.1f} ns): a disturbed run, or a clock that "
                "rises with load")


def inversions(points: list[BenchResult]) -> list[Inversion]:
    """Where the latency-vs-bandwidth curve is not monotone beyond noise: for each point,
    the lower-bandwidth point that exceeds its p50 by the most beyond their combined noise
    (half the p5-p95 range of each point's samples, summed; at least 1 % of the latency)."""
    pts = sorted((r for r in points if r.params.get("kind") == "loaded"), key=_bw)
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
                                         "mode", "stride"))


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
        mid = g[len(g) // 2][0]
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


# -- the Benchmark and the suite ------------------------------------------------------------

class Latency:
    """Idle latency (one size, or a sweep) and loaded latency as uniform cases. Loaded cases
    measure one delay each; the points measured so far are kept per curve, so that a point
    that breaks the curve's monotonicity gets its note when it is measured."""

    family = FAMILY
    stage = "latency"     # its name in `numascope run`
    title = "idle and loaded memory latency"

    def suite_cases(self, topo: Topology, profile: Profile) -> list[Case]:
        """The cases `numascope run` measures under this profile."""
        return suite_cases(topo, profile.name)

    def __init__(self) -> None:
        self._curves: dict[tuple, list[BenchResult]] = {}

    def cases(self, topo: Topology, sweep: bool = False, sizes: list[int] | None = None,
              cpu: int | None = None, node: int | None = None, mode: str = "tlb",
              pages: str = "none", samples: int = 15, loads: int | None = None,
              stride: int = STRIDE, **_: Any) -> list[Case]:
        cpu = topo.usable_cpus()[0] if cpu is None else cpu
        check_cpu(topo, cpu)
        check_stride(stride)
        if sizes is None:
            sizes = sweep_sizes(topo, cpu) if sweep else [dram_size(topo, cpu)]
        modes = list(MODES) if mode == "both" else [mode]
        base = {"kind": "idle", "cpu": cpu, "node": node, "pages": pages, "samples": samples,
                "loads": loads, "stride": stride}
        return [Case(f"{m} {format_bytes(s)}", {**base, "bytes": s, "mode": m})
                for m in modes for s in sizes]

    def measure(self, topo: Topology, case: Case) -> BenchResult:
        p = dict(case.params)
        if p.pop("kind", "idle") == "loaded":
            res = loaded(topo, **p)
            if len(res) != 1:
                raise UserError("a loaded-latency case measures exactly one delay")
            return self._on_curve(res[0])
        loads = p.pop("loads", None)
        if loads is None and p["bytes"] <= 64 * MIB:
            loads = 1 << 16   # cache-resident sizes: short samples are plenty
        return chase(topo, p.pop("bytes"), loads=loads, **p)

    def _on_curve(self, r: BenchResult) -> BenchResult:
        curve = self._curves.setdefault(curve_key(r), [])
        curve.append(r)
        for inv in inversions(curve):
            if (r is inv.low or r is inv.high) and inv.note() not in r.notes:
                r.notes.append(inv.note())
        return r


def suite_cases(topo: Topology, profile: str) -> list[Case]:
    """quick: one DRAM working set (TLB-friendly); full: both modes at DRAM size, the whole
    sweep, and loaded latency when there is a second CPU."""
    b = Latency()
    cpu = topo.usable_cpus()[0]
    if profile == "quick":
        return b.cases(topo, sizes=[quick_dram_size(topo, cpu)], samples=9, loads=1 << 17)
    cases = b.cases(topo, mode="both")
    cases += [Case(f"sweep {c.label}", c.params) for c in b.cases(topo, sweep=True)]
    if len(topo.usable_cpus()) > 1:
        cases += [Case(f"loaded delay={d}", {"kind": "loaded", "cpu": cpu, "delays": [d]})
                  for d in LOADED_DELAYS]
    return cases
