"""Latency plots: the working-set sweep (with the detected levels), loaded latency and the
distribution of single loads."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from numascope.families.latency import knee
from numascope.families.latency.bench import curves, inversions
from numascope.families.latency.distribution import MIN_BEYOND, THIN_MARK
from numascope.plotting.marks import Medians, captioned, errorbars, label, write_values
from numascope.results.record import BenchResult

FAMILY = "latency"
MAX_WRITTEN = 16   # values written per sweep line (more would overlap)


def _sweep(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    idle = [r for r in results if r.family == FAMILY and r.params.get("kind") == "idle"]
    by_mode: dict[str, list[BenchResult]] = {}
    for r in idle:
        by_mode.setdefault(f"{r.params['mode']}, pages {r.params.get('pages', 'none')}, "
                           f"stride {_stride(r)}", []).append(r)
    if not any(len(v) > 2 for v in by_mode.values()):
        return []
    fig, ax = plt.subplots(figsize=(8, 4.5))
    med, thinned = Medians(), False
    for name, rs in sorted(by_mode.items()):
        rs = sorted(rs, key=lambda r: r.params["bytes"])
        x = [r.params["bytes"] for r in rs]
        drawn = [med.of(r.metrics["latency"], r.params) for r in rs]
        ys = [d[0] for d in drawn]
        line, = ax.plot(x, ys, marker="o", ms=3, label=name)
        errorbars(ax, x, ys, [d[1] for d in drawn], [d[2] for d in drawn],
                  ecolor=line.get_color())
        step = max(1, -(-len(x) // MAX_WRITTEN))
        thinned = thinned or step > 1
        write_values(ax, x[::step], ys[::step], [d[2] for d in drawn][::step], fontsize=6,
                     color=line.get_color())
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("working set (bytes)")
    ax.set_ylabel("ns per load (median)")
    ax.set_title("Idle latency vs working set (pointer chase)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    captioned(fig, "Nanoseconds per dependent load against the working set (bytes, log "
              "scales), one line per mode, page size and stride. " + med.text()
              + (f" At most {MAX_WRITTEN} values are written per line (every k-th point)."
                 if thinned else ""))
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
    meds = Medians()
    for curve in curves(pts):
        mix = curve[0].params.get("mix", "read")
        writes = writes or mix != "read"
        drawn = [meds.of(r.metrics["latency"], r.params) for r in curve]
        med = [d[0] for d in drawn]
        bws = [r.metrics["bandwidth"].median for r in curve]
        lo, hi = [d[1] for d in drawn], [d[2] for d in drawn]
        k = knee.find(list(zip(bws, med)))
        line = ax.errorbar(bws, med, yerr=[lo, hi], marker="o", capsize=3,
                           label=f"mix {mix}, {_loaders(curve[0])}, stride {_stride(curve[0])}"
                                 f": {'no knee' if k is None else f'knee {k.gbs:.1f} GB/s'}")
        for r, b, m in zip(curve, bws, med):
            ax.annotate(f"{label(m)} ns (d {r.params['delay']})", (b, m), fontsize=6,
                        textcoords="offset points", xytext=(3, 3))
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
    head = (f"Loaded latency (labels: median ns, d: injected delay; star: knee, "
            f"+{knee.RISE:.0%} over the curve's lowest latency)")
    if bad:
        ax.set_title(f"{head}\nWARNING: not monotone: "
                     f"{bad} point{'s' if bad != 1 else ''} (red x) below a lower-bandwidth "
                     "point beyond noise",
                     color="red", fontsize=9)
    else:
        ax.set_title(head, fontsize=9)
    ax.set_xlabel("loaders' DRAM traffic (GB/s; write-allocate counted where stores do it)"
                  if writes else "loaders' read bandwidth (GB/s)")
    ax.set_ylabel("chaser latency (ns, median)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    captioned(fig, "The chasing core's latency (ns per load) against the bandwidth the "
              "loader cores draw (GB/s, 10^9 B/s, median of the repetitions), one curve per "
              "mix, loader count and stride; d: the delay injected between the loaders' "
              "accesses (larger: less traffic). " + meds.text())
    return [("Loaded latency" + (" (not monotone)" if bad else ""), fig)]


MAX_CURVES = 8     # distributions drawn in one figure (a sweep: evenly spaced sizes)


def _label(r: BenchResult) -> str:
    if r.params.get("kind") == "loaded":
        return f"delay {r.params.get('delay')}"
    return r.case


def _thinned(rs: list[BenchResult]) -> list[BenchResult]:
    if len(rs) <= MAX_CURVES:
        return rs
    step = (len(rs) - 1) / (MAX_CURVES - 1)
    return [rs[round(i * step)] for i in range(MAX_CURVES)]


def _distribution(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    """The share of loads slower than x, against x (both log): the tail the medians hide,
    p99 where a curve crosses 10^-2, p99.9 where it crosses 10^-3."""
    rs = [r for r in results if r.family == FAMILY and "latency" in r.distributions]
    if not rs:
        return []
    rs = _thinned(sorted(rs, key=lambda r: (r.params.get("kind") != "idle",
                                            r.params.get("bytes") or 0,
                                            r.params.get("delay") or 0)))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    groups, few = set(), False
    for r in rs:
        d = r.distributions["latency"]
        counts, edges = d["counts"], d["edges"]
        n = sum(counts)
        if not n:
            continue
        xs, ys, left = [], [], n
        for c, hi in zip(counts, edges[1:]):
            left -= c
            if hi > 0 and left > 0:
                xs.append(hi)
                ys.append(left / n)
        groups.add(d.get("loads_per_group", 1))
        line, = ax.step(xs, ys, where="post", label=_label(r))
        q, thin = d.get("quantiles", {}), d.get("thin") or []
        for name, share in (("latency_p99", 1e-2), ("latency_p999", 1e-3)):
            if name in q:       # hollow: fewer than MIN_BEYOND timed groups beyond (thin)
                few = few or name in thin
                ax.plot([q[name]], [share], "o", ms=4, color=line.get_color(),
                        mfc="none" if name in thin else line.get_color())
                ax.annotate(label(q[name]), (q[name], share), textcoords="offset points",
                            xytext=(3, 3), fontsize=6, color=line.get_color())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.axhline(1e-2, color="grey", lw=0.6, ls=":")
    ax.axhline(1e-3, color="grey", lw=0.6, ls=":")
    ax.set_xlabel("ns per load" + ("" if groups <= {1} else " (groups of several loads "
                                   "where a load is short)"))
    ax.set_ylabel("share of loads slower (fraction, log)")
    ax.set_title("Latency distribution (dots: p99 at 10^-2, p99.9 at 10^-3"
                 + (f"; hollow: fewer than {MIN_BEYOND} groups beyond, {THIN_MARK})"
                    if few else ")"))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    captioned(fig, "Share of single loads slower than x ns (log scales), from the histogram "
              "of every load timed; dots: the 99th percentile (where a curve crosses 10^-2) "
              "and the 99.9th (10^-3), their ns written beside them in the tables' "
              "rounding.")
    return [("Latency distribution", fig)]


# figures() draws these modules' figures too (the report draws each module once)
INCLUDES = ("numascope.families.latency.chains_figures",)


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    from numascope.families.latency import chains_figures  # lat --chains
    # the mode's own figure first (--plot FILE holds it), the distribution beside it
    return (chains_figures.figures(results) + _sweep(results) + _loaded(results)
            + _distribution(results))
