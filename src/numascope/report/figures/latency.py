"""Latency plots: the working-set sweep (with the detected levels) and loaded latency."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from numascope.results.record import BenchResult

FAMILY = "latency"


def _sweep(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    idle = [r for r in results if r.family == FAMILY and r.params.get("kind") == "idle"]
    by_mode: dict[str, list[BenchResult]] = {}
    for r in idle:
        by_mode.setdefault(f"{r.params['mode']}, pages {r.params.get('pages', 'none')}",
                           []).append(r)
    if not any(len(v) > 2 for v in by_mode.values()):
        return []
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, rs in sorted(by_mode.items()):
        rs = sorted(rs, key=lambda r: r.params["bytes"])
        x = [r.params["bytes"] for r in rs]
        med = [r.metrics["latency"].median for r in rs]
        lo = [r.metrics["latency"].min for r in rs]
        hi = [r.metrics["latency"].max for r in rs]
        ax.plot(x, med, marker="o", ms=3, label=label)
        ax.fill_between(x, lo, hi, alpha=0.2)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("working set (bytes)")
    ax.set_ylabel("ns per load (median, min-max band)")
    ax.set_title("Idle latency vs working set (pointer chase)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return [("Latency sweep", fig)]


def _loaded(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    pts = [r for r in results if r.family == FAMILY and r.params.get("kind") == "loaded"]
    if not pts:
        return []
    pts.sort(key=lambda r: r.metrics["bandwidth"].median)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot([r.metrics["bandwidth"].median for r in pts],
            [r.metrics["latency"].median for r in pts], marker="o")
    for r in pts:
        ax.annotate(str(r.params["delay"]), (r.metrics["bandwidth"].median,
                                             r.metrics["latency"].median), fontsize=7)
    ax.set_xlabel("loaders' read bandwidth (GB/s)")
    ax.set_ylabel("chaser latency (ns, median)")
    ax.set_title("Loaded latency (labels: injected delay)")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return [("Loaded latency", fig)]


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    return _sweep(results) + _loaded(results)
