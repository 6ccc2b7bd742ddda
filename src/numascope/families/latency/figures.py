"""Latency plots: the working-set sweep (with the detected levels) and loaded latency."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from numascope.families.latency import knee
from numascope.families.latency.bench import curves, inversions
from numascope.results.record import BenchResult

FAMILY = "latency"


def _sweep(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    idle = [r for r in results if r.family == FAMILY and r.params.get("kind") == "idle"]
    by_mode: dict[str, list[BenchResult]] = {}
    for r in idle:
        by_mode.setdefault(f"{r.params['mode']}, pages {r.params.get('pages', 'none')}, "
                           f"stride {_stride(r)}", []).append(r)
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


def _stride(r: BenchResult) -> str:
    # records from before the option: "line" (idle) or nothing (loaded), always 64 B
    return f"{r.params.get('stride', r.params.get('line', 64))} B"


def _loaders(r: BenchResult) -> str:
    n = len(r.params.get("load_cpus") or [])
    return f"{n} loader{'s' if n != 1 else ''}"


def _loaded(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    pts = [r for r in results if r.family == FAMILY and r.params.get("kind") == "loaded"]
    if not pts:
        return []
    fig, ax = plt.subplots(figsize=(7, 4.5))
    bad, writes = 0, False
    for curve in curves(pts):
        mix = curve[0].params.get("mix", "read")
        writes = writes or mix != "read"
        med = [r.metrics["latency"].median for r in curve]
        bws = [r.metrics["bandwidth"].median for r in curve]
        lo = [m - r.metrics["latency"].percentile(5) for m, r in zip(med, curve)]
        hi = [r.metrics["latency"].percentile(95) - m for m, r in zip(med, curve)]
        k = knee.find(list(zip(bws, med)))
        line = ax.errorbar(bws, med, yerr=[lo, hi], marker="o", capsize=3,
                           label=f"mix {mix}, {_loaders(curve[0])}, stride {_stride(curve[0])}"
                                 f": {'no knee' if k is None else f'knee {k.gbs:.1f} GB/s'}")
        for r, b, m in zip(curve, bws, med):
            ax.annotate(str(r.params["delay"]), (b, m), fontsize=7)
        if k is not None:       # the knee: where the curve crosses +RISE over its base
            color = line.lines[0].get_color()
            ax.axvline(k.gbs, color=color, ls="--", lw=1, alpha=0.7)
            ax.plot([k.gbs], [k.line_ns], "*", color=color, ms=14, mec="black")
            ax.annotate(f"knee {k.gbs:.1f} GB/s", (k.gbs, k.line_ns), fontsize=8,
                        xytext=(6, -12), textcoords="offset points", color=color)
        for inv in inversions(curve):   # the points below a lower-bandwidth point
            bad += 1
            ax.plot([inv.high.metrics["bandwidth"].median], [inv.high.metrics["latency"].median],
                    "x", color="red", ms=10, mew=2)
    head = (f"Loaded latency (labels: injected delay; star: knee, +{knee.RISE:.0%} "
            "over the curve's lowest latency)")
    if bad:
        ax.set_title(f"{head}\nWARNING: not monotone: "
                     f"{bad} point{'s' if bad != 1 else ''} (red x) below a lower-bandwidth "
                     "point beyond noise",
                     color="red", fontsize=9)
    else:
        ax.set_title(head, fontsize=9)
    ax.set_xlabel("loaders' DRAM traffic (GB/s; write-allocate counted where stores do it)"
                  if writes else "loaders' read bandwidth (GB/s)")
    ax.set_ylabel("chaser latency (ns, median, p5-p95 bars)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return [("Loaded latency" + (" (not monotone)" if bad else ""), fig)]


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    from numascope.families.latency import chains_figures  # lat --chains
    return _sweep(results) + _loaded(results) + chains_figures.figures(results)
