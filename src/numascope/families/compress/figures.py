"""Compression plots: decompress+sum GB/s vs threads, plain sum against the best codecs
(one figure per data set), like the published "compression vs the memory wall" plots.
Every point is a median, the compression table's value, written on the figure."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from numascope.plotting.marks import Medians, captioned, errorbars, write_values
from numascope.results.record import BenchResult

FAMILY = "compress"
TOP = 4                       # best codec settings drawn per data set
UNIT = "GB/s of uncompressed data (10^9 B/s)"


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    from numascope.families.compress.bench import combo_label, summarize
    mine = [r for r in results if r.family == FAMILY]
    out = []
    for s in summarize(mine):
        of = {(combo_label(r.params["codec"], r.params["clevel"], r.params["filter"]),
               r.params["threads"]): r for r in mine
              if r.params["dataset"] == s.dataset and r.params["source"] == s.source}
        top_t = max(s.threads)
        rows = sorted(s.rows, key=lambda r: -r.gbs.get(top_t, 0.0))[:TOP]
        fig, ax = plt.subplots(figsize=(8, 4.5))
        plain = [s.plain[t] for t in s.threads]
        ax.plot(s.threads, plain, marker="o", color="black", lw=2,
                label="plain sum (uncompressed)")
        write_values(ax, s.threads, plain, fontsize=6)
        med = Medians()
        for r in rows:
            ts = [t for t in s.threads if t in r.gbs and (r.label, t) in of]
            drawn = [med.of(of[(r.label, t)].metric("decompress_sum"),
                            of[(r.label, t)].params) for t in ts]
            ys = [d[0] for d in drawn]
            line, = ax.plot(ts, ys, marker="s", ms=4, label=f"{r.label} (ratio {r.ratio:.1f}x)")
            errorbars(ax, ts, ys, [d[1] for d in drawn], [d[2] for d in drawn],
                      ecolor=line.get_color())
            write_values(ax, ts, ys, [d[2] for d in drawn], fontsize=6,
                         color=line.get_color())
        ax.set_xlabel("threads")
        ax.set_ylabel(f"{UNIT}, median")
        if len(s.threads) > 2:
            ax.set_xscale("log", base=2)
        ax.set_xticks(s.threads)
        ax.set_xticklabels([str(t) for t in s.threads])
        cross = (f"compressed wins from {s.crossover} "
                 f"thread{'' if s.crossover == 1 else 's'}" if s.crossover else "no crossover")
        ax.set_title(f"Sum of {s.dataset} ({s.dtype}, {s.nbytes / 2**20:.0f} MiB): {cross}")
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
        ax.margins(y=0.12)
        ax.legend(fontsize=8)
        fig.tight_layout()
        out.append((f"Compression vs the memory wall: {s.dataset}", captioned(fig, (
            f"Summing {s.dataset} in {UNIT} against threads: the plain sum of the "
            f"uncompressed array (black, the median over its cases) and the {TOP} fastest "
            "codec settings at the most threads, decompressing and summing each block; the "
            "crossover is the fewest threads from which the best codec beats the plain sum. "
            + med.text()))))
    return out
