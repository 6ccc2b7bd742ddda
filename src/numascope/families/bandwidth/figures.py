"""Bandwidth plots: thread-scaling curves (one line per placement policy, per kernel),
per-domain bars, and one thread per L3 against all cores (the labs' "one core per CCX"
comparison). GB/s in the STREAM convention (GB = 10^9 B). Every point is the median of the
repetitions, the value the tables show, with its interval (plotting.marks)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from numascope.plotting.marks import (
    Medians,
    captioned,
    errorbars,
    label,
    median_bars,
    write_values,
)
from numascope.results.record import BenchResult

FAMILY = "bandwidth"
UNIT = "GB/s (STREAM bytes, GB = 10^9 B)"


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
        med = Medians()
        written: set[tuple[int, float]] = set()
        for i, (pol, rs) in enumerate(sorted(curves.items())):
            rs = sorted(rs, key=lambda r: r.params["threads"])
            x = [r.params["threads"] for r in rs]
            drawn = [med.of(r.metrics["bandwidth"], r.params) for r in rs]
            ys = [d[0] for d in drawn]
            # markers of shrinking size so curves sharing points stay visible
            line, = ax.plot(x, ys, marker="o", ms=9 - 2 * (i % 4), label=pol)
            errorbars(ax, x, ys, [d[1] for d in drawn], [d[2] for d in drawn],
                      ecolor=line.get_color())
            new = [(xi, d) for xi, d in zip(x, drawn) if (xi, d[0]) not in written]
            written |= {(xi, d[0]) for xi, d in new}   # a shared point written once
            write_values(ax, [xi for xi, _ in new], [d[0] for _, d in new],
                         [d[2] for _, d in new], fontsize=6, color=line.get_color())
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("threads")
        ax.set_ylabel(UNIT)
        ax.set_title(f"{kernel}: bandwidth vs threads, by placement policy (median)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(title="policy")
        fig.tight_layout()
        out.append((f"Bandwidth scaling ({kernel})", captioned(fig, (
            f"{kernel} bandwidth in {UNIT} against the number of threads, one line per "
            "placement policy (compact: cores in topology order; spread: round-robin over "
            "NUMA nodes; per-l3: one thread per L3; per-node: one per node). "
            + med.text()))))
    return out


def _domains(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    # per-domain cases, and scaling points that stand for a domain (bench.merged)
    pts = [r for r in results if r.family == FAMILY
           and (r.params.get("sweep") == "per-domain" or r.params.get("domains"))]
    if not pts:
        return []
    kernels = sorted({r.params["kernel"] for r in pts})
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(pts) + 3), 4.5))
    labels, colors = [], []
    med = Medians()
    drawn = [med.of(r.metrics["bandwidth"], r.params) for r in pts]
    cmap = plt.get_cmap("tab10")
    for r in pts:
        labels.append(f"{'/'.join(r.params.get('domains') or [r.params.get('domain', '?')])}"
                      f"\n{r.params['kernel']} {r.params['threads']}T")
        colors.append(cmap(kernels.index(r.params["kernel"]) % 10))
    x = list(range(len(pts)))
    median_bars(ax, x, drawn, color=colors)
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylabel(UNIT)
    ax.set_title("Bandwidth per domain (each package, node, L3 alone)")
    ax.margins(y=0.12)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return [("Bandwidth per domain", captioned(fig, (
        f"Bandwidth in {UNIT} of each domain's cores on the domain's own memory "
        "(S: package, N: NUMA node, L3: one L3 domain), T: threads. " + med.text())))]


def _top(rs: list[BenchResult], policy: str) -> BenchResult | None:
    on = [r for r in rs if policy in (r.params.get("policies") or [r.params.get("policy")])]
    return max(on, key=lambda r: r.params["threads"]) if on else None


def _per_l3(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    """Per kernel, the per-l3 curve's last point (one thread on every L3) beside the
    compact curve's last point (every core the run used)."""
    pts = [r for r in results if r.family == FAMILY and r.params.get("sweep") == "scaling"]
    pairs = []
    for kernel in sorted({r.params["kernel"] for r in pts}):
        rs = [r for r in pts if r.params["kernel"] == kernel]
        one, every = _top(rs, "per-l3"), _top(rs, "compact")
        if one is not None and every is not None and one is not every:
            pairs.append((kernel, one, every))
    if not pairs:
        return []
    fig, ax = plt.subplots(figsize=(max(5, 2.4 * len(pairs) + 2), 4.2))
    med = Medians()
    x, ys, lo, hi, names = [], [], [], [], []
    for i, (kernel, one, every) in enumerate(pairs):
        for j, r in enumerate((one, every)):
            m, b, a = med.of(r.metrics["bandwidth"], r.params)
            x.append(3 * i + j)
            ys.append(m)
            lo.append(b)
            hi.append(a)
            names.append(f"{kernel}\n{'one per L3' if j == 0 else 'all cores'} "
                         f"({r.params['threads']}T)")
        ratio = ys[-2] / ys[-1] if ys[-1] else float("nan")
        ax.annotate(f"{label(100 * ratio)} % of all cores", (3 * i + 0.5, max(ys[-2:])),
                    textcoords="offset points", xytext=(0, 16), ha="center", fontsize=8)
    ax.bar(x, ys, color=["tab:orange", "tab:blue"] * len(pairs))
    errorbars(ax, x, ys, lo, hi)
    write_values(ax, x, ys, hi)
    ax.set_xticks(x, names, fontsize=8)
    ax.set_ylabel(UNIT)
    ax.set_title("One thread per L3 vs all cores")
    ax.margins(y=0.2)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return [("Bandwidth: one thread per L3 vs all cores", captioned(fig, (
        f"Bandwidth in {UNIT} with one thread on every L3 domain (the per-l3 curve's last "
        "point) beside every core the run used (the compact curve's last point); the "
        "percentage is the ratio of the two medians. " + med.text())))]


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    return _scaling(results) + _domains(results) + _per_l3(results)
