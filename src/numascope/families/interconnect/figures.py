"""Plots of the interconnect family (`numascope net`, the `interconnect` stage of `numascope
run`): a heat map of large-message bandwidth by (rank 0's node, rank 1's node), and latency
and bandwidth by message size for each path. Every title names the buffers (same: OSU's
one buffer per rank; distinct: a buffer per window slot)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from numascope.results.record import BenchResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_LINES = 8


def node_pair_matrix(results: list[BenchResult]) -> tuple[list[int], list[int],
                                                          list[list[float]]]:
    """(rank 0's nodes, rank 1's nodes, bandwidth MB/s [a][b]; NaN where not measured; the
    mean where several cases share a pair)."""
    from numascope.families.interconnect import bench as net
    cells: dict[tuple[int, int], list[float]] = {}
    for r in net.of(results):
        a, b = r.params.get("node_a"), r.params.get("node_b")
        if a is None or b is None or "bandwidth" not in r.metrics:
            continue
        cells.setdefault((a, b), []).append(r.metrics["bandwidth"].median)
    rows = sorted({a for a, _ in cells})
    cols = sorted({b for _, b in cells})
    m = [[sum(cells[(a, b)]) / len(cells[(a, b)]) if (a, b) in cells else math.nan
          for b in cols] for a in rows]
    return rows, cols, m


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from numascope.families.interconnect import bench as net
    from numascope.plotting.marks import captioned, label, wrapped, write_values
    rs = net.of(results)
    if not rs:
        return []
    modes = sorted({net.buffers_of(r) for r in rs})
    buffers = f"{' and '.join(modes)} buffers"
    out = []
    rows, cols, m = node_pair_matrix(rs)
    if rows and cols:
        hosts = rs[0].params.get("hosts") or []
        width = max(4.5, 2.2 + 0.9 * len(cols))
        fig = Figure(figsize=(width, 2.0 + 0.7 * len(rows)))
        ax = fig.add_subplot()
        im = ax.imshow(m, cmap="viridis", aspect="auto")
        cb = fig.colorbar(im, ax=ax, label="MB/s (10^6 B/s)")
        cb.ax.yaxis.get_major_formatter().set_useOffset(False)  # an offset sat on the title
        ax.set_xticks(range(len(cols)), [f"N{c}" for c in cols])
        ax.set_yticks(range(len(rows)), [f"N{a}" for a in rows])
        ax.set_xlabel(f"rank 1's node{' on ' + hosts[1] if hosts else ''}")
        ax.set_ylabel(f"rank 0's node{' on ' + hosts[0] if hosts else ''}")
        finite = [v for row in m for v in row if not math.isnan(v)]
        mid = (max(finite) + min(finite)) / 2 if finite else 0
        for i, row in enumerate(m):
            for j, v in enumerate(row):
                if not math.isnan(v):
                    ax.text(j, i, label(v), ha="center", va="center", fontsize=8,
                            color="black" if v > mid else "white")
        big = max(net.sweep(rs[0], "bw") or {0: 0})
        # wrapped to the figure's width: one line was wider than a 1-2 node map (clipped)
        ax.set_title(wrapped(f"MPI bandwidth by node pair ({net._size(big)} messages, "
                             f"{buffers})", width - 1.2, 10), fontsize=10)
        fig.tight_layout()
        out.append(("Interconnect bandwidth by node pair", captioned(fig, (
            f"MPI point-to-point bandwidth in MB/s (10^6 B/s) of {net._size(big)} messages "
            "(OSU's windowed method), rank 0's NUMA node by rank 1's; each cell the median "
            "of the repetitions (the mean of the medians where several cases share a pair), "
            "written in the tables' rounding."))))
    lines = [r for r in rs if net.sweep(r, "lat") or net.sweep(r, "bw")][:MAX_LINES]
    if lines:
        fig = Figure(figsize=(9, 3.8))
        ax1, ax2 = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
        for r in lines:
            name = str(r.params.get("path") if r.params.get("mode") == "path" else r.case)
            if len(modes) > 1:
                name += f" ({net.buffers_of(r)})"
            for ax, test in ((ax1, "lat"), (ax2, "bw")):
                s = net.sweep(r, test)
                if s:
                    line, = ax.plot(list(s), list(s.values()), "o-", ms=3, label=name)
                    ends = [min(s), max(s)]       # the smallest and largest message
                    write_values(ax, ends, [s[e] for e in ends], fontsize=6,
                                 color=line.get_color())
        for ax, what in ((ax1, "latency (us, half round trip)"), (ax2, "bandwidth (MB/s)")):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("message size (B)")
            ax.set_ylabel(what)
            ax.grid(True, alpha=0.3)
        for ax in (ax1, ax2):
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
                break
        ax1.set_title(f"MPI latency by size ({buffers})", fontsize=10)
        ax2.set_title(f"MPI bandwidth by size ({buffers})", fontsize=10)
        fig.tight_layout()
        out.append(("Interconnect latency and bandwidth by message size", captioned(fig, (
            "MPI latency (us, half a round trip, OSU's method) and bandwidth (MB/s, 10^6 "
            "B/s) by message size in bytes, one line per path or case; each point the "
            "median of the repetitions, the values at the smallest and largest message "
            "written in the tables' rounding."))))
    return out
