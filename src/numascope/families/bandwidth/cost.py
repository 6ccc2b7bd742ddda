"""What a bandwidth case will take (numascope.plan's model): its arrays first-touched by
its threads, then per call warm-up, the pass calibration and the timed repetitions of
every variant, each at least MIN_REP_SECONDS, at a thread's nominal DRAM or cache rate
(a socket's memory capping many threads); a case repeated until steady runs MIN_UNITS
calls and may take its share of the stage's pool. Headlines: the all-core and the
one-core triad (compact, first touch)."""

from __future__ import annotations

from numascope import cost, steady
from numascope.benchmark import Case
from numascope.families.bandwidth import bench
from numascope.steady import Steady


def estimate(topo, cases: list[Case]) -> list[cost.Estimate]:
    return [_one(topo, c) for c in cases]


def _one(topo, case: Case) -> cost.Estimate:
    p = case.params
    threads = max(len(p.cpus), 1)
    fits = bench.shared_cache_bytes(topo, list(p.cpus))
    in_cache = fits is not None and p.total_bytes <= fits[0]
    sockets = len({topo.cpu(c).package for c in p.cpus}) or 1
    rate = threads * cost.CACHE_GBS if in_cache else \
        min(threads * cost.STREAM_GBS, sockets * cost.SOCKET_GBS)
    one_pass = p.elements * bench.STREAM_BYTES[p.kernel] / (rate * 1e9)
    rep = max(p.min_seconds, one_pass)
    nvar = len(bench.variants(p.kernel, p.isa, p.nt, bench.store_choice(topo, p)[0]))
    touch = p.total_bytes / (threads * cost.TOUCH_GBS * 1e9)
    calls, reps, pool = 1, p.reps, 0.0
    if isinstance(p.reps, Steady):
        calls, reps = steady.MIN_UNITS, p.reps.per_unit
        if p.reps.pool is not None:         # at most its share of the stage's pool
            pool = p.reps.pool.seconds / max(p.reps.pool.cases, 1)
    per_call = nvar * (p.warmup * one_pass + 2 * rep + reps * rep)   # 2: calibration
    return cost.Estimate.of(first_touch=calls * touch, repetitions=calls * per_call,
                            steady_pool=pool, case=cost.CASE_S)


def headline(topo, cases: list[Case]) -> list[bool]:
    """The all-core and the one-core triad of the compact scaling curve, first touch."""
    return [_headline(topo, c) for c in cases]


def _headline(topo, case: Case) -> bool:
    p = case.params
    compact = "compact" in (p.policies or ()) or p.policy == "compact"
    threads = len(p.cpus)
    return (p.kernel == "triad" and p.memory.policy == "first-touch" and compact
            and p.sweep == "scaling" and threads in (1, len(topo.usable_cpus())))
