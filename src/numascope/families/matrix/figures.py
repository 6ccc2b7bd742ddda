"""NUMA matrix heat maps (idle latency, read bandwidth, misses in flight: source node x
target node, each cell the median of its repetitions, written in the tables' rounding) and
the remote/local ratio per SLIT distance class (the studies' "remote vs local by hop")."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from numascope.plotting.heatmap import heatmap
from numascope.plotting.marks import captioned, label
from numascope.results.record import BenchResult

FAMILY = "matrix"
# metric, title, colour map, unit (the colour bar's), what a cell is
METRICS = (("latency", "Idle latency (ns)", "viridis", "ns", "ns per dependent load"),
           ("bandwidth", "Read bandwidth (GB/s)", "viridis_r", "GB/s (10^9 B/s)",
            "GB/s read by the source node's cores"),
           ("mlp", "Misses in flight per core (matrix --chains)", "viridis_r",
            "misses in flight", "misses one core keeps in flight (loads per ns x latency)"),
           ("mlp_bandwidth", "One core's bandwidth, chains in lockstep (GB/s)", "viridis_r",
            "GB/s (10^9 B/s)", "GB/s of one core walking chains in lockstep"))
CELLS = "Cells are medians of the repetitions, written in the tables' rounding."


def _ratio_figure(results: list[BenchResult]) -> tuple[str, Figure] | None:
    from numascope.families.matrix.bench import ratios_by_distance
    panels = [(m, ratios_by_distance(results, m)) for m in ("latency", "bandwidth")]
    panels = [(m, rows) for m, rows in panels
              if sum(1 for r in rows if r["distance"] is not None) > 1]
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(4.8 * len(panels), 3.8), squeeze=False)
    for ax, (metric, rows) in zip(axes[0], panels):
        rows = [r for r in rows if r["distance"] is not None]
        x = list(range(len(rows)))
        ys = [r["ratio"] for r in rows]
        ax.bar(x, ys, color="tab:purple" if metric == "latency" else "tab:green")
        for xi, r in zip(x, rows):
            ax.annotate(f"{label(r['ratio'])}x", (xi, r["ratio"]), textcoords="offset points",
                        xytext=(0, 3), ha="center", va="bottom", fontsize=8)
        ax.axhline(1, color="black", lw=0.8)
        ax.set_xticks(x, [f"d={r['distance']}\n{r['pairs']} pair{'s' * (r['pairs'] != 1)}"
                          for r in rows], fontsize=8)
        ax.set_xlabel("SLIT distance class (10: local)")
        ax.set_ylabel(f"{metric} / local {metric} (ratio, x)")
        ax.set_title(f"{metric.capitalize()}: remote / local by distance", fontsize=10)
        ax.margins(y=0.15)
    fig.tight_layout()
    return ("NUMA matrix: remote / local by distance", captioned(fig, (
        "Each node pair's median divided by its source node's local median (source = "
        "target), averaged over the pairs of one SLIT distance class; above 1: latency "
        "higher or bandwidth higher than local. Ratios are unitless (x).")))


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    from numascope.families.matrix.bench import table
    rs = [r for r in results if r.family == FAMILY]
    if not rs:
        return []
    out = []
    for metric, title, cmap, unit, cell in METRICS:
        src, dst, m = table(rs, metric)
        if all(math.isnan(v) for row in m for v in row):
            continue
        fig = heatmap([f"N{i}" for i in src], [f"N{j}" for j in dst], m, title, cmap,
                      "memory node", "CPU node", unit)
        out.append((f"NUMA matrix: {metric}", captioned(fig, (
            f"{title}: rows are the node whose CPUs load, columns the node holding the "
            f"memory; each cell: {cell}, the median. {CELLS}"))))
    ratio = _ratio_figure(rs)
    return out + ([ratio] if ratio else [])
