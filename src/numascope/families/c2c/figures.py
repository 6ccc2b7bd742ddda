"""Core-to-core latency: a heat map (one-way ns, the median of each pair's samples), one per
home node of the shared line when several were measured, and the pairs' medians by relation
(SMT siblings, same L3, other L3, other package …)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from numascope.plotting.marks import captioned, write_values
from numascope.results.record import BenchResult

FAMILY = "c2c"


def _relations(rs: list[BenchResult], home: object, where: str) -> tuple[str, Figure] | None:
    from numascope.families.c2c.bench import by_relation
    rel = by_relation(rs, None if home == "first-touch" and not where else home)
    if len(rel) < 1:
        return None
    names = list(rel)
    x = list(range(len(names)))
    med = [rel[n]["median"] for n in names]
    fig, ax = plt.subplots(figsize=(max(4.5, 1.3 * len(names) + 2), 3.6))
    ax.bar(x, med, color="tab:cyan")
    ax.errorbar(x, med, yerr=[[m - rel[n]["min"] for n, m in zip(names, med)],
                              [rel[n]["max"] - m for n, m in zip(names, med)]],
                fmt="none", ecolor="black", capsize=3, elinewidth=1)
    write_values(ax, x, med, [rel[n]["max"] - m for n, m in zip(names, med)], fontsize=8)
    ax.set_xticks(x, [f"{n}\n{rel[n]['pairs']} pair{'s' * (rel[n]['pairs'] != 1)}"
                      for n in names], fontsize=8)
    ax.set_ylabel("one-way latency (ns)")
    ax.set_title(f"Core-to-core latency by relation{where}", fontsize=10)
    ax.margins(y=0.15)
    fig.tight_layout()
    return (f"Core-to-core latency by relation{where}", captioned(fig, (
        "Per relation of the two CPUs, the median over its pairs of each pair's median "
        "one-way latency in ns (half a round trip of a cache line); error bars: the lowest "
        "and highest pair median of the relation, not a confidence interval.")))


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    from numascope.families.c2c.bench import homes, matrix
    from numascope.plotting.heatmap import heatmap
    rs = [r for r in results if r.family == FAMILY]
    if not rs:
        return []
    hs = homes(rs)
    out = []
    for h in hs:
        cpus, m = matrix(rs, h)
        labels = [str(c) for c in cpus]
        where = "" if len(hs) == 1 and h == "first-touch" else f", line on node {h}"
        title = f"Core-to-core latency (one-way ns{where})"
        out.append((f"Core-to-core latency{where}", captioned(
            heatmap(labels, labels, m, title, "viridis", "CPU", "CPU", "ns (one-way)"),
            "One-way latency in ns between two CPUs handing a cache line back and forth "
            "(half the round trip); each cell the median of the pair's samples, written in "
            "the tables' rounding (cells are left unwritten beyond 16 CPUs).")))
        rel = _relations(rs, h, where)
        if rel:
            out.append(rel)
    return out
