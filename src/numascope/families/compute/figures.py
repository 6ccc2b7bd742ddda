"""Measured clock per CPU (alone vs all busy) and measured GFLOP/s against the FLOP/s peak."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure

from numascope.results.record import BenchResult

FAMILY = "compute"


def _clock_figure(r: BenchResult) -> Figure | None:
    per = r.params.get("per_cpu") or {}
    if not per:
        return None
    cpus = sorted(per, key=lambda c: int(c))
    x = range(len(cpus))
    fig = Figure(figsize=(max(4.0, 0.3 * len(cpus) + 2), 3.2), layout="constrained")
    ax = fig.add_subplot()
    ax.bar([i - 0.2 for i in x], [per[c]["single_ghz"] or 0 for c in cpus], 0.4, label="alone")
    busy = [per[c]["all_busy_ghz"] or 0 for c in cpus]
    if any(busy):
        ax.bar([i + 0.2 for i in x], busy, 0.4, label="all cores busy")
    if r.params.get("tsc_ghz"):
        ax.axhline(r.params["tsc_ghz"], color="grey", ls="--", lw=1, label="TSC")
    ax.set_xticks(list(x), [str(c) for c in cpus], fontsize=7 if len(cpus) > 32 else 9)
    ax.set_xlabel("CPU")
    ax.set_ylabel("GHz (measured)")
    ax.legend(fontsize=8, loc="lower right")
    return fig


def _gflops_figure(rs: list[BenchResult]) -> Figure | None:
    rows = [r for r in rs if "gflops" in r.metrics]
    if not rows:
        return None
    fig = Figure(figsize=(max(4.0, 1.1 * len(rows) + 2), 3.2), layout="constrained")
    ax = fig.add_subplot()
    ax.bar([r.case for r in rows], [r.metrics["gflops"].best for r in rows], color="tab:green")
    peaks = {r.params.get("peak_gflops") for r in rows} - {None}
    for p in peaks:
        ax.axhline(p, color="tab:red", ls="--", lw=1, label=f"FP64 peak {p:.0f}")
    ax.set_ylabel("GFLOP/s (best)")
    if peaks:
        ax.legend(fontsize=8)
    return fig


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    rs = [r for r in results if r.family == FAMILY and r.validated]
    drawn = [("Measured core clock", _clock_figure(r)) for r in rs
             if r.params.get("kind") == "clock"]
    drawn.append(("Measured FLOP/s vs peak", _gflops_figure(rs)))
    return [(title, f) for title, f in drawn if f is not None]
