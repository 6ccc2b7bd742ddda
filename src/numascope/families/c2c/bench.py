"""Core-to-core latency: cache-line ping-pong between pairs of CPUs (`_core.c2c_pingpong`).

One-way latency = round trip / 2, one value per timed sample (median reported). Every pair
is measured on small machines; on big ones a deterministic sample that keeps at least one
pair of each relation (SMT siblings, same L3, same package, other package).

The shared line's home node matters on multi-node machines: `home` binds it to a node
(verified with move_pages; a page elsewhere is a MeasurementError); None leaves it to the
first touch by CPU a, and the node it landed on is recorded either way."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from numascope.benchmark import Case, core_errors
from numascope.errors import MeasurementError, UserError
from numascope.families.c2c.options import TABLE
from numascope.placement import check_cpus, parse_nodes
from numascope.profile import Profile
from numascope.results.record import BenchResult, Metric
from numascope.topology.model import Topology

FAMILY = "c2c"
MAX_PAIRS = TABLE["max_pairs"].default   # beyond this many pairs, sample (options.py)
QUICK_PAIRS = 16              # the quick profile's sample
RELATIONS = ("smt", "l3", "die", "package", "remote")


@dataclass(frozen=True)
class C2CParams:
    """What one c2c sweep measures; the defaults and the rules are the options' (options.py),
    every value checked by them when the params are made (the flag names are the command's)."""

    cpus: tuple[int, ...] | None = None       # CPUs to pair (None: every usable CPU)
    max_pairs: int = TABLE["max_pairs"].default   # beyond this many pairs, a sample
    samples: int = TABLE["samples"].default       # timed samples per pair
    trips: int = TABLE["trips"].default           # round trips per sample
    homes: tuple[int | None, ...] = (None,)   # the line's node per sweep (None: first touch)

    def __post_init__(self) -> None:
        for name in ("max_pairs", "samples", "trips"):
            v, opt = getattr(self, name), TABLE[name]
            if not isinstance(v, int) or isinstance(v, bool):
                raise UserError(f"{opt.flag} must be a whole number (got {v!r})")
            opt.convert(v)
        if not self.homes:
            raise UserError("--membind: no node given")


def _core():
    from numascope import _core as core  # lazy: builds the C core on first use
    return core


def relation(topo: Topology, a: int, b: int) -> str:
    """How two CPUs are related: SMT siblings, same L3, same die (only where a package has
    several dies), same package, or other package."""
    ca, cb = topo.cpu(a), topo.cpu(b)
    if ca.core is not None and ca.core == cb.core:
        return "smt"
    if ca.l3 is not None and ca.l3 == cb.l3:
        return "l3"
    if ca.package is not None and ca.package == cb.package:
        if ca.die is not None and ca.die == cb.die and len(
                {c.die for c in topo.cpus if c.package == ca.package and c.online}) > 1:
            return "die"
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


def memory_nodes(topo: Topology) -> list[int]:
    """Nodes that hold memory and that this process may allocate on."""
    return [n.id for n in topo.nodes if not n.memoryless and n.allowed]


def home_nodes(topo: Topology, text: str | None, flag: str = "--membind"
               ) -> list[int | None]:
    """Where the line lives, one sweep per entry: None (first touch) when not given, "all"
    (every node with memory in turn) or a node list."""
    if text is None:
        return [None]
    if not text.strip():
        raise UserError(f"{flag} is empty: give a node such as 0, a list such as 0,1, or all")
    if text.strip().lower() == "all":
        nodes = memory_nodes(topo)
        if not nodes:
            raise UserError(f"{flag} all: no node with memory is allowed here")
        return list(nodes)
    try:
        ids = parse_nodes(topo, text)
    except UserError as e:
        raise UserError(f"{flag} {text}: {e}") from None
    for n in ids:
        if n not in memory_nodes(topo):
            raise UserError(f"{flag} {n}: node {n} has no memory this process may use")
    return list(ids)


def case_label(a: int, b: int, home: int | None) -> str:
    return f"cpu{a}<->cpu{b}" + ("" if home is None else f" home=node{home}")


def _landed(where: dict[int, int] | None) -> int | None:
    """The node of the line's one page, None when unknown (not present / no move_pages)."""
    if not where or len(where) != 1:
        return None
    (node,) = where
    return node if node >= 0 else None


def pingpong(topo: Topology, a: int, b: int, samples: int = C2CParams.samples,
             trips: int = C2CParams.trips, home: int | None = None) -> BenchResult:
    """One-way latency between CPUs a and b (ns), every sample kept; the shared line on
    node `home` (None: first touch by CPU a)."""
    if a == b:
        raise UserError("ping-pong needs two different CPUs")
    check_cpus(topo, [a, b])
    if home is not None and home not in topo.node_ids():
        raise UserError(f"node {home} does not exist (nodes: {topo.node_ids()})")
    with core_errors("the ping-pong line"):
        r = _core().c2c_pingpong(a, b, samples, trips, -1 if home is None else home)
    if not all(math.isfinite(v) and v > 0 for v in r["ns"]):
        raise MeasurementError(f"ping-pong {a}<->{b} measured a non-positive time")
    landed = _landed(r.get("where"))
    if home is not None and landed != home:
        raise MeasurementError(f"ping-pong {a}<->{b}: the shared line was bound to node {home} "
                               f"but its page is on {r.get('where')} (move_pages)")
    rel = relation(topo, a, b)
    return BenchResult(
        family=FAMILY, case=case_label(a, b, home),
        params={"a": a, "b": b, "samples": samples, "round_trips": trips, "relation": rel,
                "home": "first-touch" if home is None else home, "home_node": landed},
        metrics={
            "latency": Metric("latency", "ns", False, r["ns"],
                              "one-way: round trip / 2, one value per sample"),
            "tsc_cycles": Metric("tsc_cycles", "TSC cycles", False, r["tsc"],
                                 "one-way time-stamp-counter ticks"),
        },
        placement={"cpus": [a, b]})


def homes(results: list[BenchResult]) -> list[Any]:
    """The distinct home settings among results, in order of appearance."""
    seen: list[Any] = []
    for r in results:
        h = r.params.get("home", "first-touch")
        if r.family == FAMILY and h not in seen:
            seen.append(h)
    return seen


def matrix(results: list[BenchResult], home: Any = None, stat: str = "median"
           ) -> tuple[list[int], list[list[float]]]:
    """(cpus, M) with M[i][j] the median one-way latency (stat="best": the lowest sample),
    symmetric, NaN when not measured. With several home nodes among results, `home` picks
    one (default: the first seen)."""
    rs = [r for r in results if r.family == FAMILY]
    hs = homes(rs)
    if len(hs) > 1:
        pick = hs[0] if home is None else home
        rs = [r for r in rs if r.params.get("home", "first-touch") == pick]
    cpus = sorted({r.params["a"] for r in rs} | {r.params["b"] for r in rs})
    idx = {c: i for i, c in enumerate(cpus)}
    m = [[math.nan] * len(cpus) for _ in cpus]
    for r in rs:
        i, j = idx[r.params["a"]], idx[r.params["b"]]
        m[i][j] = m[j][i] = getattr(r.metrics["latency"], stat)
    return cpus, m


def by_relation(results: list[BenchResult], home: Any = None) -> dict[str, dict[str, float]]:
    """Per relation: pairs measured, min / median / max of the pairs' medians, and the best
    (lowest) sample of any of its pairs (ns); only the results with that home when `home`
    is given."""
    out: dict[str, dict[str, float]] = {}
    for rel in RELATIONS:
        rs = [r.metrics["latency"] for r in results
              if r.family == FAMILY and r.params.get("relation") == rel
              and (home is None or r.params.get("home", "first-touch") == home)]
        v = sorted(m.median for m in rs)
        if v:
            out[rel] = {"pairs": len(v), "min": v[0], "median": Metric("", "", False, v).median,
                        "max": v[-1], "best": min(m.best for m in rs)}
    return out


def home_cost(results: list[BenchResult]) -> list[dict[str, Any]]:
    """Pairs measured with the line on more than one node: the fastest and slowest home and
    what the slowest costs over the fastest (ns of the medians), most costly first."""
    per: dict[tuple[int, int], dict[Any, float]] = {}
    for r in results:
        if r.family == FAMILY and isinstance(r.params.get("home"), int):
            per.setdefault((r.params["a"], r.params["b"]), {})[r.params["home"]] = \
                r.metrics["latency"].median
    out = []
    for (a, b), h in per.items():
        if len(h) > 1:
            lo, hi = min(h, key=h.__getitem__), max(h, key=h.__getitem__)
            out.append({"a": a, "b": b, "by_home": {str(k): v for k, v in h.items()},
                        "best_home": lo, "worst_home": hi, "extra_ns": h[hi] - h[lo]})
    return sorted(out, key=lambda x: -x["extra_ns"])


class C2C:
    """Core-to-core latency, one case per CPU pair."""

    family = FAMILY
    # compared by default (numascope compare): one-way ns per cache-line hand-off
    primary = ("latency",)
    title = "core-to-core latency"

    def suite_cases(self, topo: Topology, profile: Profile) -> list[Case]:
        """The cases `numascope run` measures under this profile."""
        return suite_cases(topo, profile)

    def cases(self, topo: Topology, params: C2CParams | None = None, **options: Any
              ) -> list[Case]:
        """One case per pair and home node; `params` or the C2CParams fields as keywords."""
        if params is None:
            if options.get("cpus") is not None:
                options["cpus"] = tuple(options["cpus"])
            if options.get("homes") is not None:
                options["homes"] = tuple(options["homes"])
            params = C2CParams(**{k: v for k, v in options.items() if v is not None})
        ps = pairs(topo, None if params.cpus is None else list(params.cpus), params.max_pairs)
        return [Case(case_label(a, b, h), {"a": a, "b": b, "samples": params.samples,
                                           "trips": params.trips, "home": h})
                for h in params.homes for a, b in ps]

    def finish(self) -> None:
        """Free the last pair's page (each pair keeps its page until the next is placed)."""
        _core().c2c_release()

    def measure(self, topo: Topology, case: Case) -> BenchResult:
        p = case.params
        d = C2CParams()
        return pingpong(topo, p["a"], p["b"], p.get("samples", d.samples),
                        p.get("trips", d.trips), p.get("home"))


def suite_cases(topo: Topology, profile: Profile) -> list[Case]:
    """quick: up to QUICK_PAIRS pairs (one of each relation first); full: up to MAX_PAIRS;
    the profile's samples per pair."""
    if len(topo.usable_cpus()) < 2:
        return []
    return C2C().cases(topo, C2CParams(max_pairs=MAX_PAIRS if profile.dense else QUICK_PAIRS,
                                       samples=profile.samples))
