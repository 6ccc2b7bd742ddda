"""What a compute case will take (numascope.plan's model): the clock measurement (its
passes), DGEMM's 2n^3 and LU's 2n^3/3 FLOPs per repetition on every core at a nominal
sustained rate, and HPL's launch and its 2N^3/3 FLOPs. Headline: none (the peaks are
context for every other figure; under a budget they come after the measured ones)."""

from __future__ import annotations

from numascope import cost
from numascope.benchmark import Case

CLOCK_S = 0.2          # clock.measure_ghz's passes on one CPU, per repetition


def estimate(topo, cases: list[Case]) -> list[cost.Estimate]:
    cores = max(len({(c.package, c.core) for c in topo.cpus if c.usable}), 1)
    rate = cores * cost.FLOP_PER_NS * 1e9
    out = []
    for c in cases:
        p = c.params
        kind, reps = p.get("kind"), p.get("reps", 1)
        if kind == "clock":
            out.append(cost.Estimate.of(clock=reps * CLOCK_S, case=cost.CASE_S))
        elif kind in ("dgemm", "lu"):
            n = p["n"]
            flops = 2 * n ** 3 if kind == "dgemm" else 2 * n ** 3 / 3
            out.append(cost.Estimate.of(setup=8 * 3 * n * n / (cost.TOUCH_GBS * 1e9),
                                        flops=(reps + 1) * flops / rate, case=cost.CASE_S))
        elif kind == "hpl":
            n = p.get("n") or 10000
            out.append(cost.Estimate.of(launch=cost.LAUNCH_S,
                                        flops=2 * n ** 3 / 3 / rate, case=cost.CASE_S))
        else:
            out.append(cost.Estimate.of(fallback=cost.FALLBACK_S))
    return out


def headline(topo, cases: list[Case]) -> list[bool]:
    return [False] * len(cases)
