"""Core-to-core latency: cache-line ping-pong between pairs of CPUs (`_core.c2c_pingpong`).

One-way latency = round trip / 2, one value per timed sample (median reported). Every pair
is measured on small machines; on big ones a deterministic sample that keeps at least one
pair of each relation (SMT siblings, same L3, same package, other package)."""

from __future__ import annotations

import math
import random
from itertools import combinations
from typing import Any

from numascope.bench.base import Case, core_errors
from numascope.errors import MeasurementError, UserError
from numascope.placement import check_cpus
from numascope.results.record import BenchResult, Metric
from numascope.topology.model import Topology

FAMILY = "c2c"
MAX_PAIRS = 256               # beyond this many pairs, sample
RELATIONS = ("smt", "l3", "package", "remote")


def _core():
    from numascope import _core as core  # lazy: builds the C core on first use
    return core


def relation(topo: Topology, a: int, b: int) -> str:
    """How two CPUs are related: SMT siblings, same L3, same package, or other package."""
    ca, cb = topo.cpu(a), topo.cpu(b)
    if ca.core is not None and ca.core == cb.core:
        return "smt"
    if ca.l3 is not None and ca.l3 == cb.l3:
        return "l3"
    if ca.package is not None and ca.package == cb.package:
        return "package"
    return "remote"


def pairs(topo: Topology, cpus: list[int] | None = None, max_pairs: int = MAX_PAIRS,
          seed: int = 1) -> list[tuple[int, int]]:
    """All pairs (a < b) of `cpus` (default: every usable CPU), or a sample of `max_pairs`
    keeping the first pair of each relation."""
    cpus = sorted(topo.usable_cpus() if cpus is None else cpus)
    check_cpus(topo, cpus)
    if len(cpus) < 2:
        raise UserError("core-to-core latency needs at least two usable CPUs")
    allp = list(combinations(cpus, 2))
    if len(allp) <= max_pairs:
        return allp
    keep: dict[str, tuple[int, int]] = {}
    for p in allp:
        keep.setdefault(relation(topo, *p), p)
    rest = [p for p in allp if p not in keep.values()]
    rng = random.Random(seed)
    chosen = list(keep.values()) + rng.sample(rest, max(0, max_pairs - len(keep)))
    return sorted(chosen)


def pingpong(topo: Topology, a: int, b: int, samples: int = 15,
             trips: int = 2000) -> BenchResult:
    """One-way latency between CPUs a and b (ns), every sample kept."""
    if a == b:
        raise UserError("ping-pong needs two different CPUs")
    check_cpus(topo, [a, b])
    with core_errors("the ping-pong line"):
        r = _core().c2c_pingpong(a, b, samples, trips)
    if not all(math.isfinite(v) and v > 0 for v in r["ns"]):
        raise MeasurementError(f"ping-pong {a}<->{b} measured a non-positive time")
    rel = relation(topo, a, b)
    return BenchResult(
        family=FAMILY, case=f"cpu{a}<->cpu{b}",
        params={"a": a, "b": b, "samples": samples, "round_trips": trips, "relation": rel},
        metrics={
            "latency": Metric("latency", "ns", False, r["ns"],
                              "one-way: round trip / 2, one value per sample"),
            "tsc_cycles": Metric("tsc_cycles", "TSC cycles", False, r["tsc"],
                                 "one-way time-stamp-counter ticks"),
        },
        placement={"cpus": [a, b]})


def matrix(results: list[BenchResult]) -> tuple[list[int], list[list[float]]]:
    """(cpus, M) with M[i][j] the median one-way latency, symmetric, NaN when not measured."""
    rs = [r for r in results if r.family == FAMILY]
    cpus = sorted({r.params["a"] for r in rs} | {r.params["b"] for r in rs})
    idx = {c: i for i, c in enumerate(cpus)}
    m = [[math.nan] * len(cpus) for _ in cpus]
    for r in rs:
        i, j = idx[r.params["a"]], idx[r.params["b"]]
        m[i][j] = m[j][i] = r.metrics["latency"].median
    return cpus, m


def by_relation(results: list[BenchResult]) -> dict[str, dict[str, float]]:
    """Per relation: pairs measured, and min / median / max of the pairs' medians (ns)."""
    out: dict[str, dict[str, float]] = {}
    for rel in RELATIONS:
        v = sorted(r.metrics["latency"].median for r in results
                   if r.family == FAMILY and r.params.get("relation") == rel)
        if v:
            out[rel] = {"pairs": len(v), "min": v[0], "median": v[len(v) // 2], "max": v[-1]}
    return out


class C2C:
    """Core-to-core latency, one case per CPU pair."""

    family = FAMILY

    def cases(self, topo: Topology, cpus: list[int] | None = None, max_pairs: int = MAX_PAIRS,
              samples: int = 15, trips: int = 2000, **_: Any) -> list[Case]:
        return [Case(f"cpu{a}<->cpu{b}", {"a": a, "b": b, "samples": samples, "trips": trips})
                for a, b in pairs(topo, cpus, max_pairs)]

    def measure(self, topo: Topology, case: Case) -> BenchResult:
        p = case.params
        return pingpong(topo, p["a"], p["b"], p.get("samples", 15), p.get("trips", 2000))


def suite_cases(topo: Topology, profile: str) -> list[Case]:
    """quick: up to 16 pairs (one of each relation first); full: up to MAX_PAIRS pairs."""
    if len(topo.usable_cpus()) < 2:
        return []
    return C2C().cases(topo, max_pairs=16 if profile == "quick" else MAX_PAIRS)
