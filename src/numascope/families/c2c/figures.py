"""Core-to-core latency heat map (one-way ns, median of samples), one per home node of the
shared line when several were measured."""

from __future__ import annotations

from matplotlib.figure import Figure

from numascope.results.record import BenchResult

FAMILY = "c2c"


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    from numascope.families.c2c.bench import homes, matrix
    from numascope.families.matrix.figures import heatmap
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
        out.append((f"Core-to-core latency{where}",
                    heatmap(labels, labels, m, title, "viridis", "CPU", "CPU")))
    return out
