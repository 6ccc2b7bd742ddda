"""What a storage case will take (numascope.plan's model): each repetition one fio job of
its ramp and runtime (time-based) and fio's start. Headline: the first case (the default
job on the first drive, placed local to it)."""

from __future__ import annotations

from numascope import cost
from numascope.benchmark import Case


def estimate(topo, cases: list[Case]) -> list[cost.Estimate]:
    out = []
    for c in cases:
        io, reps = c.params["io"], c.params.get("reps", 1)
        out.append(cost.Estimate.of(fio=reps * (io.get("runtime", 0) + io.get("ramp", 0)),
                                    launches=reps * cost.LAUNCH_S, case=cost.CASE_S))
    return out


def headline(topo, cases: list[Case]) -> list[bool]:
    return [i == 0 for i in range(len(cases))]
