"""What a c2c case (one CPU pair, its line homed once) will take (numascope.plan's model):
the pair's two pinned threads started, then samples x round trips of a cache line at a
nominal round trip. Headline: one pair per relation (SMT, L3, package, remote: the first
of each, as the quick profile orders them)."""

from __future__ import annotations

from numascope import cost
from numascope.benchmark import Case


def estimate(topo, cases: list[Case]) -> list[cost.Estimate]:
    return [cost.Estimate.of(round_trips=c.params["samples"] * c.params["trips"]
                             * cost.TRIP_NS * 1e-9, case=cost.CASE_S) for c in cases]


def headline(topo, cases: list[Case]) -> list[bool]:
    """The first pair of each relation (and home) among the cases."""
    from numascope.families.c2c.bench import relation
    seen: set[str] = set()
    out = []
    for c in cases:
        p = c.params
        rel = f"{relation(topo, p['a'], p['b'])}/{p.get('home')}"
        out.append(rel not in seen)
        seen.add(rel)
    return out
