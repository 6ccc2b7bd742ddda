"""Compression plots: decompress+sum GB/s vs threads, plain sum against the best codecs
(one figure per data set), like the published "compression vs the memory wall" plots."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from numascope.results.record import BenchResult

FAMILY = "compress"
TOP = 4                       # best codec settings drawn per data set


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    from numascope.families.compress.bench import summarize
    out = []
    for s in summarize([r for r in results if r.family == FAMILY]):
        top_t = max(s.threads)
        rows = sorted(s.rows, key=lambda r: -r.gbs.get(top_t, 0.0))[:TOP]
        fig, ax = plt.subplots(figsize=(8, 4.5))
        ax.plot(s.threads, [s.plain[t] for t in s.threads], marker="o", color="black",
                lw=2, label="plain sum (uncompressed)")
        for r in rows:
            ts = [t for t in s.threads if t in r.gbs]
            ax.plot(ts, [r.gbs[t] for t in ts], marker="s", ms=4,
                    label=f"{r.label} (ratio {r.ratio:.1f}x)")
        ax.set_xlabel("threads")
        ax.set_ylabel("GB/s of uncompressed data (median)")
        if len(s.threads) > 2:
            ax.set_xscale("log", base=2)
        ax.set_xticks(s.threads)
        ax.set_xticklabels([str(t) for t in s.threads])
        cross = (f"compressed wins from {s.crossover} "
                 f"thread{'' if s.crossover == 1 else 's'}" if s.crossover else "no crossover")
        ax.set_title(f"Sum of {s.dataset} ({s.dtype}, {s.nbytes / 2**20:.0f} MiB): {cross}")
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8)
        fig.tight_layout()
        out.append((f"Compression vs the memory wall: {s.dataset}", fig))
    return out
