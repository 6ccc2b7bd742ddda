"""What a matrix case (one CPU node x memory node pair) will take (numascope.plan's model):
its latency chase (the latency family's model on the pair's buffer), its read-bandwidth
arrays first-touched and read for the pair's repetitions by the node's CPUs, and its
chains where asked. Headline: the first row (the first CPU node's pairs)."""

from __future__ import annotations

from numascope import cost
from numascope.benchmark import Case
from numascope.families.latency import cost as lat_cost


def estimate(topo, cases: list[Case]) -> list[cost.Estimate]:
    return [_one(topo, c) for c in cases]


def _one(topo, case: Case) -> cost.Estimate:
    pair = case.params
    p = pair.params
    parts: dict[str, float] = {"case": cost.CASE_S}
    if "latency" in p.what:
        from numascope.families.latency.bench import LatencyParams
        lp = LatencyParams(bytes=p.bytes, stride=p.stride, samples=p.samples, loads=p.loads,
                           cpu=None)
        for k, v in lat_cost._chase(topo, lp).items():
            parts[f"latency {k}"] = v
    if "bandwidth" in p.what:
        cpus = max(len(topo.node(pair.src).cpus), 1)
        nbytes = p.bw_bytes or 4 * (topo.llc_bytes() or 256 << 20)
        reps = 10
        parts["bandwidth first touch"] = nbytes / (cpus * cost.TOUCH_GBS * 1e9)
        parts["bandwidth reads"] = reps * max(nbytes / (min(cpus * cost.STREAM_GBS,
                                                             cost.SOCKET_GBS) * 1e9), 1e-3)
    if p.chains:
        from numascope.families.latency.bench import LatencyParams
        lp = LatencyParams(bytes=p.bytes, stride=p.stride, samples=p.samples, loads=p.loads)
        parts["chains"] = sum(lat_cost._chase(topo, lp, p.chains, True).values())
    return cost.Estimate.of(**parts)


def headline(topo, cases: list[Case]) -> list[bool]:
    """The first CPU node's row."""
    from numascope.families.matrix.bench import sources
    first = sources(topo)[:1]
    return [bool(first) and c.params.src == first[0] for c in cases]
