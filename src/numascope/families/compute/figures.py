"""Measured clock per CPU (alone vs all busy) and measured GFLOP/s against the FLOP/s peak."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure

from numascope.plotting.marks import (
    Medians,
    captioned,
    label,
    median_bars,
)
from numascope.results.record import BenchResult

FAMILY = "compute"
KIND_TEXT = {"dgemm": "dgemm: a matrix product numascope times itself",
             "lu": "lu: an LU factorisation of one matrix, timed by numascope, not the HPL "
                   "benchmark",
             "hpl": "hpl: the HPL benchmark (HPCC's), its own timing"}


def _clock_figure(r: BenchResult) -> Figure | None:
    per = r.params.get("per_cpu") or {}
    if not per:
        return None
    cpus = sorted(per, key=lambda c: int(c))
    x = range(len(cpus))
    fig = Figure(figsize=(max(4.0, 0.3 * len(cpus) + 2), 3.2), layout="constrained")
    ax = fig.add_subplot()
    alone = ax.bar([i - 0.2 for i in x], [per[c]["single_ghz"] or 0 for c in cpus], 0.4,
                   label="alone")
    small = 6 if len(cpus) <= 16 else 5
    ax.bar_label(alone, [label(b.get_height()) for b in alone], fontsize=small, rotation=90,
                 padding=2)
    busy = [per[c]["all_busy_ghz"] or 0 for c in cpus]
    if any(busy):
        bb = ax.bar([i + 0.2 for i in x], busy, 0.4, label="all cores busy")
        ax.bar_label(bb, [label(b.get_height()) for b in bb], fontsize=small, rotation=90,
                     padding=2)
    ax.margins(y=0.2)
    for name, color, what in (("single_ghz", "tab:blue", "alone"),
                              ("all_busy_ghz", "tab:orange", "all busy")):
        if name in r.metrics:       # the tables' figure: the median over CPUs and repetitions
            m = r.metrics[name].median
            ax.axhline(m, color=color, lw=0.8, ls=":", label=f"median {what} {label(m)}")
    if r.params.get("tsc_ghz"):
        ax.axhline(r.params["tsc_ghz"], color="grey", ls="--", lw=1, label="TSC")
    ax.set_xticks(list(x), [str(c) for c in cpus], fontsize=7 if len(cpus) > 32 else 9)
    ax.set_xlabel("CPU")
    ax.set_ylabel("GHz (measured)")
    ax.legend(fontsize=7, loc="lower right")
    return captioned(fig, "Each CPU's clock in GHz measured by timing a dependent add chain: "
                     "alone, and while every CPU runs the chain; dotted lines: the medians "
                     "the tables show (over CPUs and repetitions); dashed: the TSC's rate.")


def _gflops_figure(rs: list[BenchResult]) -> Figure | None:
    rows = [r for r in rs if "gflops" in r.metrics]
    if not rows:
        return None
    fig = Figure(figsize=(max(4.0, 1.1 * len(rows) + 2), 3.2), layout="constrained")
    ax = fig.add_subplot()
    med = Medians()
    drawn = [med.of(r.metrics["gflops"], r.params) for r in rows]
    x = list(range(len(rows)))
    ys = median_bars(ax, x, drawn, fontsize=8, color="tab:green")
    for xi, r, y in zip(x, rows, ys):
        if r.params.get("peak_gflops"):
            ax.annotate(f"{label(100 * y / r.params['peak_gflops'])} % of peak", (xi, y / 2),
                        ha="center", fontsize=7, color="white")
    ax.set_xticks(x, [r.case for r in rows], fontsize=8)
    peaks = {r.params.get("peak_gflops") for r in rows} - {None}
    for p in peaks:
        ax.axhline(p, color="tab:red", ls="--", lw=1, label=f"FP64 peak {label(p)} GFLOP/s")
    ax.set_ylabel("GFLOP/s (FP64, 10^9 FLOP/s), median")
    ax.margins(y=0.15)
    if peaks:
        ax.legend(fontsize=8)
    kinds = {r.params.get("kind") for r in rows}
    what = [KIND_TEXT[k] for k in ("dgemm", "lu", "hpl") if k in kinds]
    return captioned(fig, "FP64 GFLOP/s (" + "; ".join(what) + "), and each one's share of "
                     "the FP64 peak where one is known. " + med.text())


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    rs = [r for r in results if r.family == FAMILY and r.validated]
    drawn = [("Measured core clock", _clock_figure(r)) for r in rs
             if r.params.get("kind") == "clock"]
    drawn.append(("Measured FLOP/s vs peak", _gflops_figure(rs)))
    return [(title, f) for title, f in drawn if f is not None]
