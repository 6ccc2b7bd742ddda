"""A heat map with every cell's value written: the node-to-node matrices (matrix) and the
core-to-core latencies (c2c) draw theirs with it."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from numascope.plotting.marks import label, wrapped


def heatmap(rows: list[str], cols: list[str], m: list[list[float]], title: str, cmap: str,
            xlabel: str, ylabel: str, unit: str = "", fmt: str | None = None) -> Figure:
    """A heat map with every cell's value written (up to 16 x 16; the tables' rounding
    unless `fmt` is given), its title wrapped to the figure's width, the colour bar
    labelled with `unit`."""
    n = max(len(rows), len(cols))
    w = min(3 + 0.6 * n, 14)
    fig, ax = plt.subplots(figsize=(w, min(2 + 0.5 * n, 12)))
    im = ax.imshow(m, cmap=cmap)
    ax.set_xticks(range(len(cols)), cols, fontsize=8)
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(wrapped(title, w - 1.5, 10), fontsize=10)
    finite = [v for row in m for v in row if not math.isnan(v)]
    mid = (max(finite) + min(finite)) / 2 if finite else 0.0
    dark = cmap.endswith("_r")
    if n <= 16:
        for i, row in enumerate(m):
            for j, v in enumerate(row):
                if not math.isnan(v):
                    light = (v > mid) != dark       # viridis is light at its top
                    ax.text(j, i, fmt.format(v) if fmt else label(v), ha="center",
                            va="center", fontsize=7, color="black" if light else "white")
    cb = fig.colorbar(im, ax=ax, shrink=0.8)
    cb.ax.yaxis.get_major_formatter().set_useOffset(False)   # "+1.2e4" above, on the title
    if unit:
        cb.set_label(unit, fontsize=8)
    fig.tight_layout()
    return fig
