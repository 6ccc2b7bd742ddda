"""Memory tiers: bandwidth over the DRAM:tier page ratio (bw --tier-sweep). Each tier's
latency and bandwidth relative to local DRAM, from a node matrix, is the matrix family's
(matrix/tier_figures.py)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from numascope.plotting.marks import Medians, captioned, errorbars, label
from numascope.results.record import BenchResult


def sweep_figure(results: list[BenchResult]) -> Figure | None:
    from numascope.families.bandwidth.tiers import summary
    rows = summary(results)
    if not rows:
        return None
    # summary() keeps the results' order: its rows and the sweep's results pair up
    res = [r for r in results if r.params.get("sweep") == "tier-ratio"]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    med = Medians()
    for kernel in dict.fromkeys(r["kernel"] for r in rows):
        pts = sorted((100 * (r["achieved_dram_share"] if r["achieved_dram_share"] is not None
                             else r["dram_share"]), r["ratio"], med.of(x.metrics["bandwidth"],
                                                                       x.params))
                     for r, x in zip(rows, res) if r["kernel"] == kernel)
        xs = [p[0] for p in pts]
        ys = [p[2][0] for p in pts]
        line, = ax.plot(xs, ys, marker="o", label=f"{kernel}")
        errorbars(ax, xs, ys, [p[2][1] for p in pts], [p[2][2] for p in pts],
                  ecolor=line.get_color())
        for x, ratio, (y, _, above) in pts:
            ax.annotate(f"{label(y)}\n{ratio}", (x, y + above), textcoords="offset points",
                        xytext=(0, 4), ha="center", va="bottom", fontsize=6)
    r0 = rows[0]
    ax.set_xlabel(f"share of pages on DRAM node N{r0['dram_node']} (%, measured), the rest "
                  f"on N{r0['tier_node']}")
    ax.set_ylabel("GB/s (10^9 B/s, STREAM bytes), median")
    ax.set_title("Bandwidth over the DRAM:tier interleave ratio")
    ax.set_xlim(-5, 105)
    ax.margins(y=0.15)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return captioned(fig, "Bandwidth in GB/s (STREAM bytes) with the pages interleaved "
                     "between a DRAM node and a memory tier in the ratio written under each "
                     "value (DRAM:tier), against the share of pages found on DRAM. "
                     + med.text())


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    f = sweep_figure(results)
    return [("Bandwidth over the DRAM:tier page ratio", f)] if f is not None else []
