"""CPU clusters from measured core-to-core latencies, compared with the topology.

The pairs' latencies fall into levels (SMT siblings, shared L3, same die, same package,
other package): sorted, a value more than `tol` above the first value of the current level opens
the next level. At each level, clusters merge (complete linkage) while every measured pair
across them is within that level's largest latency. Each level's partition is then set
against the topology's groupings (SMT core, L3 domain, die, package): equal, or the pairs that
differ."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from numascope.topology.model import Topology

# a level spans latencies up to 25 % above its smallest: just under the smallest step of
# the published distance levels 10/16/22/28 (Dell HPC lab, Naples 2018; numascope.sources)
TOLERANCE = 0.25
KINDS = ("smt", "l3", "die", "package")
MAX_LISTED = 8                # differing pairs listed per grouping


@dataclass
class Level:
    max_ns: float
    clusters: list[list[int]]
    matches: list[str] = field(default_factory=list)   # topology groupings equal to it


@dataclass
class Agreement:
    kind: str
    groups: list[list[int]]
    level: int | None         # index of the equal level, else of the closest one
    agree: bool
    split: list[tuple[int, int]]    # together in the topology, apart when measured
    joined: list[tuple[int, int]]   # apart in the topology, together when measured
    differing: int            # pairs in split + joined (all, not only those listed)


def levels_of(values: list[float], tol: float = TOLERANCE) -> list[float]:
    """Upper bound (largest value) of each latency level, ascending."""
    v = sorted(x for x in values if math.isfinite(x))
    bounds: list[float] = []
    start = None
    for x in v:
        if start is None or x > start * (1 + tol):
            start = x
            bounds.append(x)
        else:
            bounds[-1] = x
    return bounds


def cluster(cpus: list[int], m: list[list[float]], tol: float = TOLERANCE) -> list[Level]:
    """Agglomerative clusters of `cpus`, one partition per latency level. Complete linkage
    over measured pairs only: two clusters with no measured pair between them never join."""
    clusters: dict[int, list[int]] = {i: [c] for i, c in enumerate(cpus)}
    link = {(i, j): m[i][j] for i, j in combinations(range(len(cpus)), 2)
            if math.isfinite(m[i][j])}
    out: list[Level] = []
    for bound in levels_of(list(link.values()), tol):
        while link:
            (i, j), d = min(link.items(), key=lambda kv: kv[1])
            if d > bound:
                break
            clusters[i] += clusters.pop(j)
            merged: dict[tuple[int, int], float] = {}
            for (x, y), v in link.items():
                if j in (x, y) or i in (x, y):
                    k = y if x in (i, j) else x
                    if k not in (i, j):
                        key = (min(i, k), max(i, k))
                        merged[key] = max(merged.get(key, v), v)
            link = {kv: v for kv, v in link.items() if not {i, j} & set(kv)} | merged
        out.append(Level(bound, sorted(sorted(c) for c in clusters.values())))
    return out


def topology_groups(topo: Topology, cpus: list[int]) -> dict[str, list[list[int]]]:
    """SMT cores, L3 domains, dies and packages restricted to `cpus` (a CPU with the
    attribute unknown is its own group). A die is (package, die_id); the grouping is left
    out when the kernel reports no die_id, or one die per package (then it is the package)."""
    keys = {"smt": lambda c: c.core, "l3": lambda c: c.l3,
            "die": lambda c: None if c.die is None or c.package is None else (c.package, c.die),
            "package": lambda c: c.package}
    out: dict[str, list[list[int]]] = {}
    for kind, key_of in keys.items():
        g: dict[Any, list[int]] = {}
        for c in cpus:
            key = key_of(topo.cpu(c))
            g.setdefault(("cpu", c) if key is None else key, []).append(c)
        out[kind] = sorted(sorted(x) for x in g.values())
    if out["die"] == out["package"] or all(topo.cpu(c).die is None for c in cpus):
        del out["die"]
    return out


def _together(groups: list[list[int]]) -> set[tuple[int, int]]:
    return {(a, b) for g in groups for a, b in combinations(sorted(g), 2)}


def compare(levels: list[Level], groups: dict[str, list[list[int]]]) -> list[Agreement]:
    """Each topology grouping that groups anything, against the measured levels. A
    grouping equal to a smaller one (one L3 per package …) is compared all the same."""
    out: list[Agreement] = []
    for kind in KINDS:
        g = groups.get(kind)
        if not g or all(len(x) == 1 for x in g):
            continue
        tg = _together(g)
        best: tuple[int, int, set, set] | None = None
        for i, lv in enumerate(levels):
            mg = _together(lv.clusters)
            split, joined = tg - mg, mg - tg
            n = len(split) + len(joined)
            if best is None or n < best[1]:
                best = (i, n, split, joined)
        if best is None:
            out.append(Agreement(kind, g, None, False, [], [], 0))
            continue
        i, n, split, joined = best
        if n == 0:
            levels[i].matches.append(kind)
        out.append(Agreement(kind, g, i, n == 0, sorted(split)[:MAX_LISTED],
                             sorted(joined)[:MAX_LISTED], n))
    return out


def analyse(topo: Topology, cpus: list[int], m: list[list[float]],
            tol: float = TOLERANCE) -> dict[str, Any]:
    """Measured clusters and their agreement with the topology, as JSON-ready data; skipped
    (with the reason) when pairs were sampled, since clusters of a partial matrix would
    differ from the topology for want of measurements."""
    missing = sum(1 for i, j in combinations(range(len(cpus)), 2) if not math.isfinite(m[i][j]))
    if missing:
        return {"tolerance": tol, "skipped": f"{missing} CPU pairs not measured (sampled)"}
    levels = cluster(cpus, m, tol)
    ags = compare(levels, topology_groups(topo, cpus))
    return {
        "tolerance": tol,
        "levels": [{"max_ns": lv.max_ns, "clusters": lv.clusters, "matches": lv.matches}
                   for lv in levels],
        "topology": [{"kind": a.kind, "groups": a.groups, "level": a.level, "agree": a.agree,
                      "split": [list(p) for p in a.split],
                      "joined": [list(p) for p in a.joined], "differing": a.differing}
                     for a in ags],
        "agree": all(a.agree for a in ags),
    }
