"""Memory tiers: bandwidth over the DRAM:tier page ratio (bw --tier-sweep) and, from a node
matrix with a CPU-less tier, each tier's latency and bandwidth relative to local DRAM."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from numascope.report.figures.marks import Medians, captioned, errorbars, label
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


def tier_figure(results: list[BenchResult]) -> Figure | None:
    from numascope.families.matrix.bench import tier_summary
    from numascope.topology.tiers import DRAM
    rows = [r for r in tier_summary(results) if r["tier"] != DRAM]
    if not rows:
        return None
    metrics = [m for m in ("latency", "bandwidth") if any(r[f"{m}_ratio"] for r in rows)]
    if not metrics:
        return None
    fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 3.8), squeeze=False)
    srcs = sorted({r["src"] for r in rows})
    tiers = list(dict.fromkeys(r["tier"] for r in rows))
    width = 0.8 / max(len(srcs), 1)
    for ax, m in zip(axes[0], metrics):
        for k, s in enumerate(srcs):
            ys = [next((r[f"{m}_ratio"] or 0 for r in rows if r["tier"] == t and r["src"] == s),
                       0) for t in tiers]
            bars = ax.bar([i + k * width for i in range(len(tiers))], ys, width,
                          label=f"from N{s}")
            ax.bar_label(bars, [f"{label(y)}x" if y else "" for y in ys], fontsize=7,
                         padding=2)
        ax.axhline(1, color="k", lw=0.8)
        ax.set_xticks([i + width * (len(srcs) - 1) / 2 for i in range(len(tiers))], tiers,
                      fontsize=8)
        ax.set_ylabel(f"{m} / local DRAM {m} (ratio, x)")
        ax.margins(y=0.15)
        ax.set_title(f"{m.capitalize()}: nearest node of each tier")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return captioned(fig, "Each memory tier's nearest node from each CPU node: its median "
                     "latency and bandwidth divided by the CPU node's local DRAM median "
                     "(unitless; 1: as local DRAM).")


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    drawn = [("Bandwidth over the DRAM:tier page ratio", sweep_figure(results)),
             ("Memory tiers relative to local DRAM", tier_figure(results))]
    return [(title, f) for title, f in drawn if f is not None]
