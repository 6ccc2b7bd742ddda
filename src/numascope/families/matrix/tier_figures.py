"""Memory tiers from a node matrix with a CPU-less tier: each tier's nearest node from each
CPU node, its latency and bandwidth relative to local DRAM (bench.tier_summary)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from numascope.families.matrix.bench import tier_summary
from numascope.plotting.marks import captioned, label
from numascope.results.record import BenchResult


def tier_figure(results: list[BenchResult]) -> Figure | None:
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
    f = tier_figure(results)
    return [("Memory tiers relative to local DRAM", f)] if f is not None else []
