"""The working-set figure of `bw --sweep`: bandwidth by working set (one curve per kernel,
median with the min-max band), the plateaus and their GB/s written on it, the caches' sizes
as vertical lines, and, when the same results hold a latency sweep (`lat --sweep`, the run's
latency stage), latency by working set on a second axis. One figure per thread count."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from numascope.families.bandwidth import sweep
from numascope.plotting.marks import captioned
from numascope.results.record import BenchResult
from numascope.units import format_bytes


def _latency(results: list[BenchResult]) -> tuple[str, list[tuple[int, float]]] | None:
    """The idle latency sweep among the results (the TLB-friendly chase when both modes
    ran): its label and (working set, median ns) points; None with fewer than 3 sizes."""
    idle = [r for r in results if r.family == "latency" and r.params.get("kind") == "idle"]
    modes = {r.params.get("mode") for r in idle}
    mode = "tlb" if "tlb" in modes else min(modes, key=str, default=None)
    pts = sorted((r.params["bytes"], r.metrics["latency"].median) for r in idle
                 if r.params.get("mode") == mode)
    if len({b for b, _ in pts}) < 3:
        return None
    return f"latency ({mode} chase, 1 thread, median)", pts


def _plateaus(results: list[BenchResult], kernel: str, threads: int,
              curve: list[BenchResult]) -> list[tuple[str, int, int, float]]:
    """(name, first, last, GB/s) of the curve's plateaus: the recorded ones, or found
    again from the points where none was recorded (a sweep stopped early)."""
    rec = [r for r in results if sweep.is_plateau(r) and r.params["kernel"] == kernel
           and r.params["threads"] == threads]
    if rec:
        return [(r.params["plateau"], *r.params["working_set_range"],
                 r.metrics["bandwidth"].median) for r in rec]
    found, _ = sweep.plateaus_of(curve)
    return [(p.name, p.first, p.last, p.gbs) for p in found]


def _figure(results: list[BenchResult], threads: int,
            curves: dict[tuple[str, int], list[BenchResult]]) -> Figure:
    fig, ax = plt.subplots(figsize=(9, 5))
    caps: dict[str, int] = {}
    for (kernel, _), curve in sorted(curves.items()):
        x = [r.params["working_set"] for r in curve]
        m = [r.metrics["bandwidth"] for r in curve]
        line, = ax.plot(x, [v.median for v in m], marker="o", ms=3, label=f"{kernel} (GB/s)")
        ax.fill_between(x, [v.min for v in m], [v.max for v in m], alpha=0.15,
                        color=line.get_color())
        for name, lo, hi, gbs in _plateaus(results, kernel, threads, curve):
            ax.hlines(gbs, lo, hi, colors=line.get_color(), lw=3, alpha=0.6)
            ax.annotate(f"{name} {gbs:.1f}", (lo * (hi / lo) ** 0.5, gbs), fontsize=7,
                        xytext=(0, 4), textcoords="offset points", ha="center",
                        color=line.get_color())
        caps.update(curve[0].params.get("level_bytes") or {})
    xs = [r.params["working_set"] for c in curves.values() for r in c]
    lo, hi = min(xs) / 1.15, max(xs) * 1.15
    for name, size in caps.items():
        if lo <= size <= hi:          # a cache beyond the range measured is not drawn
            ax.axvline(size, color="gray", ls="--", lw=1)
            ax.annotate(f"{name} {format_bytes(size)}", (size, 0.02),
                        xycoords=("data", "axes fraction"), rotation=90, va="bottom",
                        ha="right", fontsize=7, color="gray")
    ax.set_xscale("log", base=2)
    ax.set_xlim(lo, hi)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v)))
    ax.set_xlabel(f"working set (bytes, all arrays of {threads} thread"
                  f"{'s' if threads != 1 else ''})")
    ax.set_ylabel("bandwidth, GB/s (10^9 B/s, STREAM bytes; median, min-max band)")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="major", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    lat = _latency(results)
    if lat is not None:
        label, pts = lat
        ax2 = ax.twinx()
        h, = ax2.plot([b for b, _ in pts], [ns for _, ns in pts], color="black", ls=":",
                      marker="s", ms=3, label=label)
        ax2.set_yscale("log")
        ax2.set_ylabel("latency, ns per load")
        handles.append(h)
        labels.append(label)
    ax.legend(handles, labels, fontsize=8, loc="upper right")
    ax.set_title(f"Bandwidth by working set, {threads} thread{'s' if threads != 1 else ''} "
                 "(bars: plateaus and their GB/s; dashed: cache sizes for these threads)",
                 fontsize=9)
    fig.tight_layout()
    return fig


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    by_threads: dict[int, dict[tuple[str, int], list[BenchResult]]] = {}
    for key, curve in sweep.curves(results).items():
        by_threads.setdefault(key[1], {})[key] = curve
    return [(f"Bandwidth by working set ({t}T)", captioned(_figure(results, t, cs), CAPTION))
            for t, cs in sorted(by_threads.items())]


CAPTION = ("Each point is the median of one working set's repetitions (one call; the band "
           "spans their min and max); a bar is a plateau found by bw --sweep, its GB/s the "
           "median of its points' medians; dashed lines are the topology's cache sizes for "
           "these threads. GB = 10^9 B.")
