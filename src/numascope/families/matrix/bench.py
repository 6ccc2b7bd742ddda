"""NUMA matrices: idle latency and read bandwidth for every (CPUs of node i, memory of node j),
like Intel MLC's --latency_matrix and --bandwidth_matrix.

Sources are nodes with usable CPUs (CPU-less nodes are memory targets only); targets are
nodes with memory (memory-less nodes are CPU sources only). The measuring itself is an
executor `(cpus, node) -> {metric name: Metric}`, so the orchestration can be tested on a
replayed topology with a fake executor that only records what it was asked."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from numascope.benchmark import Case
from numascope.errors import UserError
from numascope.families.latency import bench as lat
from numascope.families.matrix.options import METRICS, TABLE
from numascope.host import HUGE_2M
from numascope.memspec import MemorySpec
from numascope.profile import Profile
from numascope.results.record import BenchResult, Metric
from numascope.topology.model import Topology
from numascope.topology.tiers import DRAM, tier_names
from numascope.units import format_bytes

FAMILY = "matrix"
Executor = Callable[[list[int], int], dict[str, Metric]]


def sources(topo: Topology) -> list[int]:
    usable = set(topo.usable_cpus())
    return [n.id for n in topo.nodes if any(c in usable for c in n.cpus)]


def targets(topo: Topology) -> list[int]:
    return [n.id for n in topo.nodes if not n.memoryless]


def node_cpus(topo: Topology, node: int) -> list[int]:
    usable = set(topo.usable_cpus())
    return [c for c in topo.node(node).cpus if c in usable]


def pairs(topo: Topology, src: list[int] | None = None,
          dst: list[int] | None = None) -> list[tuple[int, int]]:
    """Every (source node, target node) to measure, rows first."""
    all_src, all_dst = sources(topo), targets(topo)
    src = all_src if src is None else src
    dst = all_dst if dst is None else dst
    for n in src:
        if n not in topo.node_ids():
            raise UserError(f"NUMA node {n} does not exist")
        if n not in all_src:
            raise UserError(f"NUMA node {n} has no usable CPU to run on")
    for n in dst:
        if n not in topo.node_ids():
            raise UserError(f"NUMA node {n} does not exist")
        if n not in all_dst:
            raise UserError(f"NUMA node {n} has no memory")
    if not src or not dst:
        raise UserError("no node pair to measure (no usable CPU or no memory node)")
    return [(i, j) for i in src for j in dst]


def bandwidth_available() -> bool:
    try:
        from numascope.families.bandwidth import bench as bandwidth
    except ImportError:
        return False
    return hasattr(bandwidth, "measure")


@dataclass(frozen=True)
class MatrixParams:
    """What a matrix measures. The defaults live here and nowhere else; `checked(topo)`
    validates every input once, when the cases are built, and resolves the rows and
    columns.

    rows    CPU nodes: where the reader runs (None: every node with a usable CPU)
    cols    memory nodes: where its memory is bound (None: every node with memory)
    pages   page kind for both matrices; None: latency on base pages, bandwidth on THP
            (the defaults of `lat` and `bw`)"""

    what: tuple[str, ...] = METRICS
    rows: tuple[int, ...] | None = None
    cols: tuple[int, ...] | None = None
    bytes: int | None = None               # latency buffer; None: 4x the LLC, >= 256 MiB
    bw_bytes: int | None = None            # read-bandwidth array; None: bandwidth's default
    mode: str = TABLE["mode"].default
    stride: int = TABLE["stride"].default
    samples: int = TABLE["samples"].default
    loads: int = 1 << 17
    pages: str | None = None
    chains: int = 0                        # > 0: also N chains in lockstep (lat --chains)

    @property
    def lat_pages(self) -> str:
        return self.pages or lat.TABLE["pages"].default          # as `lat`: base pages

    @property
    def bw_pages(self) -> str:
        from numascope.families.bandwidth.options import TABLE as BW
        return self.pages or BW["pages"].default                 # as `bw`: THP

    def pairs(self, topo: Topology) -> list[tuple[int, int]]:
        return pairs(topo, None if self.rows is None else list(self.rows),
                     None if self.cols is None else list(self.cols))

    def latency(self, topo: Topology, cpu: int, node: int) -> lat.LatencyParams:
        """The idle-latency parameters of one pair (checked)."""
        return lat.LatencyParams(bytes=self.bytes or lat.dram_size(topo, cpu), cpu=cpu,
                                 memory=MemorySpec("bind", (node,), self.lat_pages),
                                 mode=self.mode, samples=self.samples, loads=self.loads,
                                 clock=False, stride=self.stride).checked(topo)

    def checked(self, topo: Topology) -> MatrixParams:
        """These parameters with every input checked against `topo` (UserError; Unavailable
        when the hugetlb pool cannot hold a buffer) and the rows and columns resolved."""
        bad = [w for w in self.what if w not in METRICS]
        if bad or not self.what:
            raise UserError(f"unknown matrix {bad[0] if bad else ''!r} (choose "
                            f"{', '.join(METRICS)})")
        if self.mode not in lat.MODES:
            raise UserError(f"unknown chase mode {self.mode!r} (choose "
                            f"{', '.join(lat.MODES)})")
        for name in ("stride", "samples", "bw_size", "chains"):   # the options' own rules
            TABLE[name].convert(getattr(self, "bw_bytes" if name == "bw_size" else name), name)
        ps = self.pairs(topo)
        p = replace(self, rows=tuple(dict.fromkeys(i for i, _ in ps)),
                    cols=tuple(dict.fromkeys(j for _, j in ps)))
        h = lat.live_host(topo)
        for i in p.rows or ():
            cpu = node_cpus(topo, i)[0]
            for j in p.cols or ():
                if "latency" in p.what:
                    base = p.latency(topo, cpu, j)   # size, stride, fits, hugetlb, per node
                    if p.chains:
                        from numascope.families.latency import chains
                        chains.cases(topo, base, [p.chains])   # lines enough per chain
                if "bandwidth" in p.what and h is not None and p.bw_bytes is not None:
                    what = f"the read-bandwidth array of {format_bytes(p.bw_bytes)}"
                    h.check_fits(p.bw_bytes, what, [j])
                    if p.bw_pages == "hugetlb":
                        h.check_hugetlb(-(-p.bw_bytes // HUGE_2M) * HUGE_2M, what)
        return p

    def describe(self, topo: Topology) -> list[str]:
        """What each pair measures, a short line per matrix."""
        pages = {"none": "base pages", "thp": "THP", "hugetlb": "hugetlb pages"}
        out = []
        if "latency" in self.what:
            cpu = node_cpus(topo, (self.rows or sources(topo))[0])[0]
            size = self.bytes or lat.dram_size(topo, cpu)
            out.append(f"latency: {self.mode} chase over {format_bytes(size)}, stride "
                       f"{self.stride} B, {self.samples} sample{'s' if self.samples != 1 else ''}"
                       f", {pages[self.lat_pages]}")
            if self.chains:
                out.append(f"misses in flight: {self.chains} chains in lockstep over the same "
                           "buffer, x the 1-chain latency (Little's law)")
        if "bandwidth" in self.what:
            size = format_bytes(self.bw_bytes) if self.bw_bytes else "4x the LLC"
            out.append(f"bandwidth: every CPU of the row's node reads {size}, "
                       f"{pages[self.bw_pages]}")
        return out


@dataclass(frozen=True)
class Pair:
    """One case of a matrix: the reader on CPU node `src`, memory on node `dst`."""
    src: int
    dst: int
    params: MatrixParams


UNITS = {"latency": "ns", "bandwidth": "GB/s", "mlp": "misses", "mlp_bandwidth": "GB/s"}


def shown_metrics(p: MatrixParams) -> tuple[str, ...]:
    """The matrices a run shows: what it measures, and with --chains the misses in flight
    and one core's bandwidth."""
    extra = ("mlp", "mlp_bandwidth") if p.chains and "latency" in p.what else ()
    return (*p.what, *extra)


def default_executor(topo: Topology, params: MatrixParams | None = None) -> Executor:
    """Latency: one chaser on the node's first CPU, buffer of `params.bytes` bound to the
    target node, one pointer per `params.stride` bytes (stated in the latency metric's
    note), with the single-load tail (latency_p99 …; the histogram stays with `lat`).
    Read bandwidth: every CPU of the source node reading an array of `params.bw_bytes`
    (default: numascope.families.bandwidth.bench's 4 x LLC) bound to the target node."""
    p = params or MatrixParams()

    def run(cpus: list[int], node: int) -> dict[str, Metric]:
        out: dict[str, Metric] = {}
        if "latency" in p.what:
            base = p.latency(topo, cpus[0], node)
            r = lat.run(topo, base)
            out["latency"] = r.metrics["latency"]
            # the single-load tail (latency_p50 … latency_p999) where the chase kept it
            out.update((name, r.metrics[name]) for name, _ in lat.distribution.QUANTILES
                       if name in r.metrics)
            if p.chains:
                out.update(mlp_metrics(topo, base, p.chains, r.metrics["latency"].median))
        if "bandwidth" in p.what and bandwidth_available():
            from numascope.families.bandwidth import bench as bandwidth
            b = bandwidth.measure(topo, kernel="read", cpus=cpus,
                                  memory=MemorySpec("bind", (node,), p.bw_pages).to_core(),
                                  size_bytes=p.bw_bytes)
            m = b.metrics.get("bandwidth") or next(
                (m for m in b.metrics.values() if m.unit.startswith("GB")), None)
            if m is not None:
                out["bandwidth"] = Metric("bandwidth", m.unit, True, list(m.values), m.note)
        return out
    return run


def mlp_metrics(topo: Topology, base: lat.LatencyParams, n: int,
                latency_ns: float) -> dict[str, Metric]:
    """`n` chains in lockstep over the pair's latency buffer: per sample, misses in flight
    (Little's law: n / ns per step x `latency_ns`, the pair's 1-chain median) and the GB/s
    one core reads that way (64 B per load)."""
    from numascope.families.latency import chains, mlp
    (case,) = chains.cases(topo, base, [n])
    r = chains.run(topo, case.params)
    lpn = r.metrics["loads_per_ns"].values
    return {
        "mlp": Metric("mlp", "misses", True, [v * latency_ns for v in lpn],
                      f"misses in flight per core: {n} chains' loads per ns x the 1-chain "
                      f"latency {latency_ns:.1f} ns (Little's law)"),
        "mlp_bandwidth": Metric("mlp_bandwidth", "GB/s", True, [v * mlp.LINE for v in lpn],
                                f"one core, {n} chains in lockstep, {mlp.LINE} B per load"),
    }


def measure_pair(topo: Topology, src: int, dst: int, executor: Executor,
                 pages: str = "none") -> BenchResult:
    cpus = node_cpus(topo, src)
    metrics = executor(cpus, dst)
    notes = []
    if "bandwidth" not in metrics:
        notes.append("read bandwidth not measured (numascope.families.bandwidth.bench unavailable "
                     "or not asked)")
    return BenchResult(
        family=FAMILY, case=f"N{src}->N{dst}",
        params={"src": src, "dst": dst, "distance": topo.distance(src, dst),
                "tier": tier_names(topo).get(dst), "dst_cpuless": topo.node(dst).cpuless},
        metrics=metrics,
        placement={"cpus": cpus, "memory": MemorySpec("bind", (dst,), pages).to_dict()},
        notes=notes)


def run_matrix(topo: Topology, executor: Executor, src: list[int] | None = None,
               dst: list[int] | None = None, on_result: Callable[[BenchResult], None] | None
               = None) -> list[BenchResult]:
    """Measure every pair through `executor`, rows (source nodes) first."""
    out = []
    for i, j in pairs(topo, src, dst):
        r = measure_pair(topo, i, j, executor)
        out.append(r)
        if on_result:
            on_result(r)
    return out


def table(results: list[BenchResult], metric: str, stat: str = "median"
          ) -> tuple[list[int], list[int], list[list[float]]]:
    """(source nodes, target nodes, M) with M[i][j] the metric's median (stat="best": its
    best repetition); NaN if missing."""
    rs = [r for r in results if r.family == FAMILY]
    src = sorted({r.params["src"] for r in rs})
    dst = sorted({r.params["dst"] for r in rs})
    m = [[math.nan] * len(dst) for _ in src]
    for r in rs:
        if metric in r.metrics:
            m[src.index(r.params["src"])][dst.index(r.params["dst"])] = \
                getattr(r.metrics[metric], stat)
    return src, dst, m


def ratios_by_distance(results: list[BenchResult], metric: str) -> list[dict[str, Any]]:
    """Remote/local ratio per SLIT distance class: each pair's value divided by its source
    node's local value (src == dst), averaged over the pairs of that distance."""
    rs = [r for r in results if r.family == FAMILY and metric in r.metrics]
    local = {r.params["src"]: r.metrics[metric].median for r in rs
             if r.params["src"] == r.params["dst"]}
    classes: dict[Any, list[float]] = {}
    values: dict[Any, list[float]] = {}
    for r in rs:
        base = local.get(r.params["src"])
        if not base:
            continue
        d = r.params.get("distance")
        classes.setdefault(d, []).append(r.metrics[metric].median / base)
        values.setdefault(d, []).append(r.metrics[metric].median)
    return [{"distance": d, "pairs": len(v), "ratio": statistics.fmean(v),
             "median": statistics.median(values[d])}
            for d, v in sorted(classes.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))]


def _tier(r: BenchResult, sources: set[int]) -> str:
    # records from before tiers were stored: a target that is also a source has CPUs
    t = r.params.get("tier")
    return t if t else DRAM if r.params["dst"] in sources else "CPU-less"


def tier_summary(results: list[BenchResult]) -> list[dict[str, Any]]:
    """Per memory tier and CPU node: the tier's nearest node from that CPU node (SLIT
    distance, then node id), its latency and bandwidth, and their ratio to the CPU node's
    local DRAM (its own node, else its nearest DRAM node). Ratios are None without one."""
    rs = [r for r in results if r.family == FAMILY]
    sources = {r.params["src"] for r in rs}
    by: dict[tuple[str, int], list[BenchResult]] = {}
    for r in rs:
        by.setdefault((_tier(r, sources), r.params["src"]), []).append(r)

    def nearest(group: list[BenchResult]) -> BenchResult:
        return min(group, key=lambda r: (r.params.get("distance") or 1 << 30, r.params["dst"]))

    def value(r: BenchResult | None, m: str) -> float | None:
        return r.metrics[m].median if r is not None and m in r.metrics else None

    order = sorted({t for t, _ in by}, key=lambda t: (t != DRAM, t))
    rows = []
    for tier in order:
        for src in sorted(sources):
            if (tier, src) not in by:
                continue
            r = nearest(by[(tier, src)])
            local = next((x for x in rs if x.params["src"] == src and x.params["dst"] == src),
                         None) or (nearest(by[(DRAM, src)]) if (DRAM, src) in by else None)
            row: dict[str, Any] = {"tier": tier, "src": src, "node": r.params["dst"],
                                   "distance": r.params.get("distance"),
                                   "nodes": sorted(x.params["dst"] for x in by[(tier, src)]),
                                   "local_node": local.params["dst"] if local else None}
            for m in ("latency", "bandwidth"):
                v, base = value(r, m), value(local, m)
                row[m] = v
                row[f"{m}_ratio"] = v / base if v is not None and base else None
            rows.append(row)
    return rows


class Matrix:
    """One case per (source node, target node) pair."""

    family = FAMILY
    # compared by default (numascope compare): a node pair measures two independent things: idle latency and read bandwidth
    primary = ("latency", "bandwidth")
    title = "node-to-node bandwidth and latency matrices"

    def suite_cases(self, topo: Topology, profile: Profile) -> list[Case]:
        """The cases `numascope run` measures under this profile."""
        return suite_cases(topo, profile)

    def __init__(self, executor: Executor | None = None):
        self.executor = executor
        self._executors: dict[MatrixParams, Executor] = {}

    def cases(self, topo: Topology, params: MatrixParams | None = None) -> list[Case]:
        """One checked case per pair, rows (CPU nodes) first."""
        p = (params or MatrixParams()).checked(topo)
        return [Case(f"N{i}->N{j}", Pair(i, j, p)) for i, j in p.pairs(topo)]

    def measure(self, topo: Topology, case: Case) -> BenchResult:
        pair: Pair = case.params
        ex = self.executor or self._executors.setdefault(
            pair.params, default_executor(topo, pair.params))
        return measure_pair(topo, pair.src, pair.dst, ex, pair.params.lat_pages)


def suite_cases(topo: Topology, profile: Profile) -> list[Case]:
    """Thinned (quick, smoke): the first CPU node's row — its own memory and every other
    node's, CPU-less memory included: the local/remote gap in a few pairs — on a cheaper
    DRAM working set (smoke: its fixed one); dense (full): every pair."""
    if profile.dense:
        return Matrix().cases(topo)
    s = sources(topo)[:1]
    cpu = node_cpus(topo, s[0])[0] if s else 0
    return Matrix().cases(topo, MatrixParams(
        rows=tuple(s), bytes=profile.working_set or lat.quick_dram_size(topo, cpu),
        bw_bytes=profile.working_set, samples=profile.samples))
