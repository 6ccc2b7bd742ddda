"""What an interconnect case (one placement of two ranks) will take (numascope.plan's
model): per test and launch, an mpirun job started and its timed and warm-up exchanges at
every size (each message at a nominal microsecond plus its bytes at a thread's stream
rate). Headline: the first path (the first core's nearest neighbour)."""

from __future__ import annotations

from numascope import cost
from numascope.benchmark import Case

MESSAGE_S = 1e-6


def estimate(topo, cases: list[Case]) -> list[cost.Estimate]:
    from numascope.families.interconnect.bench import NetParams
    out = []
    for c in cases:
        p = NetParams.from_dict(c.params["net"])
        launches = p.reps * len(p.tests)
        exchange = 0.0
        for t in p.tests:
            timed, warm, timed_big, warm_big = p.counts(t)
            per = p.window if t != "lat" else 2
            for size in p.sizes:
                n = (timed + warm) if size <= 8192 else (timed_big + warm_big)
                exchange += p.reps * n * per * (MESSAGE_S + size / (cost.STREAM_GBS * 1e9))
        out.append(cost.Estimate.of(launches=launches * cost.LAUNCH_S, exchanges=exchange,
                                    case=cost.CASE_S))
    return out


def headline(topo, cases: list[Case]) -> list[bool]:
    return [i == 0 for i in range(len(cases))]
