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
from typing import Any

from numascope.bench import latency as lat
from numascope.bench.base import Case
from numascope.errors import UserError
from numascope.profile import Profile
from numascope.results.record import BenchResult, Metric
from numascope.topology.model import Topology
from numascope.topology.tiers import DRAM, tier_names

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
        from numascope.bench import bandwidth
    except ImportError:
        return False
    return hasattr(bandwidth, "measure")


def default_executor(topo: Topology, what: tuple[str, ...] = ("latency", "bandwidth"),
                     nbytes: int | None = None, samples: int = 9,
                     mode: str = "tlb", stride: int = lat.STRIDE,
                     bw_bytes: int | None = None) -> Executor:
    """Latency: one chaser on the node's first CPU, buffer of `nbytes` bound to the target
    node, one pointer per `stride` bytes (stated in the latency metric's note).
    Read bandwidth: every CPU of the source node reading an array of `bw_bytes` (default:
    numascope.bench.bandwidth's 4 x LLC) bound to the target node."""
    def run(cpus: list[int], node: int) -> dict[str, Metric]:
        out: dict[str, Metric] = {}
        if "latency" in what:
            size = nbytes or lat.dram_size(topo, cpus[0])
            r = lat.chase(topo, size, cpus[0], node, mode=mode, samples=samples,
                          loads=1 << 17, clock=False, stride=stride)
            out["latency"] = r.metrics["latency"]
        if "bandwidth" in what and bandwidth_available():
            from numascope.bench import bandwidth
            b = bandwidth.measure(topo, kernel="read", cpus=cpus,
                                  memory={"policy": "bind", "nodes": [node]},
                                  size_bytes=bw_bytes)
            m = b.metrics.get("bandwidth") or next(
                (m for m in b.metrics.values() if m.unit.startswith("GB")), None)
            if m is not None:
                out["bandwidth"] = Metric("bandwidth", m.unit, True, list(m.values), m.note)
        return out
    return run


def measure_pair(topo: Topology, src: int, dst: int, executor: Executor) -> BenchResult:
    cpus = node_cpus(topo, src)
    metrics = executor(cpus, dst)
    notes = []
    if "bandwidth" not in metrics:
        notes.append("read bandwidth not measured (numascope.bench.bandwidth unavailable "
                     "or not asked)")
    return BenchResult(
        family=FAMILY, case=f"N{src}->N{dst}",
        params={"src": src, "dst": dst, "distance": topo.distance(src, dst),
                "tier": tier_names(topo).get(dst), "dst_cpuless": topo.node(dst).cpuless},
        metrics=metrics, placement={"cpus": cpus, "memory": {"policy": "bind", "nodes": [dst]}},
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


def table(results: list[BenchResult], metric: str) -> tuple[list[int], list[int],
                                                             list[list[float]]]:
    """(source nodes, target nodes, M) with M[i][j] the metric's median; NaN if missing."""
    rs = [r for r in results if r.family == FAMILY]
    src = sorted({r.params["src"] for r in rs})
    dst = sorted({r.params["dst"] for r in rs})
    m = [[math.nan] * len(dst) for _ in src]
    for r in rs:
        if metric in r.metrics:
            m[src.index(r.params["src"])][dst.index(r.params["dst"])] = \
                r.metrics[metric].median
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
    stage = "matrix"     # its name in `numascope run`
    title = "node-to-node bandwidth and latency matrices"

    def suite_cases(self, topo: Topology, profile: Profile) -> list[Case]:
        """The cases `numascope run` measures under this profile."""
        return suite_cases(topo, profile.name)

    def __init__(self, executor: Executor | None = None):
        self.executor = executor

    def cases(self, topo: Topology, src: list[int] | None = None, dst: list[int] | None = None,
              **_: Any) -> list[Case]:
        return [Case(f"N{i}->N{j}", {"src": i, "dst": j}) for i, j in pairs(topo, src, dst)]

    def measure(self, topo: Topology, case: Case) -> BenchResult:
        ex = self.executor or default_executor(topo, nbytes=case.params.get("bytes"),
                                               stride=case.params.get("stride", lat.STRIDE))
        return measure_pair(topo, case.params["src"], case.params["dst"], ex)


def suite_cases(topo: Topology, profile: str) -> list[Case]:
    """quick: the local pair of the first source node only; full: every pair."""
    if profile == "quick":
        s = sources(topo)[:1]
        d = [n for n in s if n in targets(topo)] or targets(topo)[:1]
        cpu = node_cpus(topo, s[0])[0] if s else 0
        return [Case(c.label, {**c.params, "bytes": lat.quick_dram_size(topo, cpu)})
                for c in Matrix().cases(topo, src=s, dst=d)]
    return Matrix().cases(topo)
