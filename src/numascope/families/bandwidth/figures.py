"""Bandwidth plots: thread-scaling curves (one line per placement policy, per kernel) and
per-domain bars. GB/s in the STREAM convention (GB = 10^9 B); best of the repetitions
drawn as the line, the min-max range as a band."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from numascope.results.record import BenchResult

FAMILY = "bandwidth"


def _scaling(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    pts = [r for r in results if r.family == FAMILY and r.params.get("sweep") == "scaling"]
    out = []
    for kernel in sorted({r.params["kernel"] for r in pts}):
        curves: dict[str, list[BenchResult]] = {}
        for r in pts:
            if r.params["kernel"] != kernel:
                continue
            # one measured point may stand for several policies (same CPUs chosen)
            for pol in r.params.get("policies") or [r.params.get("policy", "?")]:
                curves.setdefault(pol, []).append(r)
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for i, (pol, rs) in enumerate(sorted(curves.items())):
            rs = sorted(rs, key=lambda r: r.params["threads"])
            x = [r.params["threads"] for r in rs]
            m = [r.metrics["bandwidth"] for r in rs]
            # markers of shrinking size so curves sharing points stay visible
            ax.plot(x, [v.best for v in m], marker="o", ms=9 - 2 * (i % 4), label=pol)
            ax.fill_between(x, [v.min for v in m], [v.max for v in m], alpha=0.15)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("threads")
        ax.set_ylabel("GB/s (STREAM bytes, GB = 10^9 B)")
        ax.set_title(f"{kernel}: bandwidth vs threads, by placement policy (best, min-max band)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(title="policy")
        fig.tight_layout()
        out.append((f"Bandwidth scaling ({kernel})", fig))
    return out


def _domains(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    # per-domain cases, and scaling points that stand for a domain (bench.merged)
    pts = [r for r in results if r.family == FAMILY
           and (r.params.get("sweep") == "per-domain" or r.params.get("domains"))]
    if not pts:
        return []
    kernels = sorted({r.params["kernel"] for r in pts})
    fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(pts) + 3), 4.5))
    labels, values, colors = [], [], []
    cmap = plt.get_cmap("tab10")
    for r in pts:
        labels.append(f"{'/'.join(r.params.get('domains') or [r.params.get('domain', '?')])}"
                      f"\n{r.params['kernel']} {r.params['threads']}T")
        values.append(r.metrics["bandwidth"].best)
        colors.append(cmap(kernels.index(r.params["kernel"]) % 10))
    ax.bar(range(len(values)), values, color=colors)
    ax.set_xticks(range(len(values)), labels, fontsize=7)
    ax.set_ylabel("GB/s (STREAM bytes, GB = 10^9 B), best")
    ax.set_title("Bandwidth per domain (each package, node, L3 alone)")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return [("Bandwidth per domain", fig)]


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    return _scaling(results) + _domains(results)
