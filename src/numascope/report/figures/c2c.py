"""Core-to-core latency heat map (one-way ns, median of samples)."""

from __future__ import annotations

from matplotlib.figure import Figure

from numascope.results.record import BenchResult

FAMILY = "c2c"


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    from numascope.bench.c2c import matrix
    from numascope.report.figures.matrix import heatmap
    rs = [r for r in results if r.family == FAMILY]
    if not rs:
        return []
    cpus, m = matrix(rs)
    labels = [str(c) for c in cpus]
    fig = heatmap(labels, labels, m, "Core-to-core latency (one-way ns)", "viridis", "CPU", "CPU")
    return [("Core-to-core latency", fig)]
