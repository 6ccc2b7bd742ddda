"""What a compression case will take (numascope.plan's model): its data set made once
(a synthetic set generated at a thread's touch rate), each codec setting's compressed store
made once for all its thread counts (the first case of a setting pays it), then per
repetition the decompress+sum and the plain sum of the data by the case's threads; steady
cases run MIN_UNITS units and may take their share of the stage's pool. Headline: the
default codec setting (lz4-5-shuffle) at every thread the case's CPUs give (the most)."""

from __future__ import annotations

from numascope import cost, steady
from numascope.benchmark import Case
from numascope.steady import Steady


def estimate(topo, cases: list[Case]) -> list[cost.Estimate]:
    """Per case, in the cases' order; the data set and a setting's store are charged to
    the first case that needs them, the headline one first (a budget measures it first)."""
    made_data: set[tuple] = set()
    made_store: set[tuple] = set()
    heads = headline(topo, cases)
    order = [i for i, h in enumerate(heads) if h] + [i for i, h in enumerate(heads) if not h]
    out: dict[int, cost.Estimate] = {}
    for i in order:
        c = cases[i]
        p = c.params
        size = p.data.size or 0
        threads = max(p.threads or 1, 1)
        parts: dict[str, float] = {"case": cost.CASE_S}
        if (key := (p.data.name, p.data.path, size)) not in made_data:
            made_data.add(key)
            parts["data"] = size / (cost.TOUCH_GBS * 1e9)
        if (key := (p.data.name, p.data.path, size, p.codec, p.clevel, p.filter)) \
                not in made_store:
            made_store.add(key)
            parts["compression"] = size / (threads * cost.COMPRESS_GBS * 1e9)
        rep = size / (threads * cost.DECOMPRESS_GBS * 1e9) + \
            size / (min(threads * cost.STREAM_GBS, cost.SOCKET_GBS) * 1e9)
        reps = p.reps
        if isinstance(reps, Steady):
            parts["repetitions"] = steady.MIN_UNITS * reps.per_unit * rep
            if reps.pool is not None:
                parts["steady_pool"] = reps.pool.seconds / max(reps.pool.cases, 1)
        else:
            parts["repetitions"] = reps * rep
        out[i] = cost.Estimate.of(**parts)
    return [out[i] for i in range(len(cases))]


def headline(topo, cases: list[Case]) -> list[bool]:
    most = max((c.params.threads or 0 for c in cases), default=0)
    return [(c.params.codec, c.params.clevel, c.params.filter) == ("lz4", 5, "shuffle")
            and (c.params.threads or 0) == most for c in cases]
