"""What a latency case will take (numascope.plan's model): the chase built (its buffer
first-touched, one pointer written per line into a shuffled order, per chain in the arena
layout), walked once in full where it holds under 4 Mi lines in all, then the samples'
dependent loads and the tail pass (distribution.TAIL_GROUPS timed steps) at a nominal
miss latency (a cache-sized buffer's loads at a tenth of it); steady cases run MIN_UNITS
chases and may take their share of the stage's pool; a loaded case adds its loaders'
buffers and its time per delay. Headline: the idle chase (the first one)."""

from __future__ import annotations

from numascope import cost, steady
from numascope.benchmark import Case
from numascope.families.latency import distribution
from numascope.steady import Steady

WALK_LINES = 1 << 22       # chains.c / lat.c: every cycle walked up to this many lines


def _load_ns(topo, p) -> float:
    llc = topo.llc_bytes([p.cpu]) if p.cpu is not None else topo.llc_bytes()
    return cost.LOAD_NS / 10 if llc and (p.bytes or 0) <= llc else cost.LOAD_NS


def _chase(topo, p, chains: int = 1, arena: bool = False) -> dict[str, float]:
    nbytes = p.bytes or 0
    lines = nbytes // p.stride
    ns = _load_ns(topo, p) * 1e-9
    samples = p.samples if isinstance(p.samples, int) else p.samples.per_unit
    steps = max((p.loads or 1 << 18) // chains, 1)
    walked = lines if lines <= WALK_LINES else WALK_LINES // max(chains, 1)
    # one step of N chains: about one miss latency while the core keeps them in flight
    return {"first_touch": nbytes / (cost.TOUCH_GBS * 1e9),
            "build": (chains if arena else 1) * lines * cost.WRITE_NS * 1e-9,
            "walks": (walked + samples * steps + distribution.TAIL_GROUPS) * ns,
            "case": cost.CASE_S}


def estimate(topo, cases: list[Case]) -> list[cost.Estimate]:
    return [_one(topo, c) for c in cases]


def _one(topo, case: Case) -> cost.Estimate:
    p = case.params
    if getattr(p, "kind", "") == "chains":          # chains.ChainsParams
        return cost.Estimate.of(**_chase(topo, p.base, p.chains, p.layout == "arena"))
    parts = _chase(topo, p)
    if p.kind == "loaded":
        loaders = len(p.load_cpus) or 1
        parts["loaders"] = loaders * (p.load_bytes or 0) / (cost.TOUCH_GBS * 1e9) / loaders
    if isinstance(p.samples, Steady):
        parts = {k: v * steady.MIN_UNITS for k, v in parts.items()}
        if p.samples.pool is not None:
            parts["steady_pool"] = p.samples.pool.seconds / max(p.samples.pool.cases, 1)
    return cost.Estimate.of(**parts)


def headline(topo, cases: list[Case]) -> list[bool]:
    """The idle chase on local memory (the first core's first-touch buffer): the first."""
    out, found = [], False
    for c in cases:
        p = c.params
        yes = not found and getattr(p, "kind", "") == "idle" and p.node is None \
            and not c.label.startswith("sweep")
        found = found or yes
        out.append(yes)
    return out
