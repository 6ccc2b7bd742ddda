"""The `lat --chains` plot: loads per ns (and GB/s) against chains in lockstep, one line per
series, the knee marked and ns per load beside it."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from numascope.families.latency import mlp
from numascope.families.latency.chains import describe, knee_of, series
from numascope.plotting.marks import Medians, captioned, errorbars, write_values
from numascope.results.record import BenchResult


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    groups = [rs for rs in series(results) if len(rs) > 1]
    if not groups:
        return []
    fig, (ax, lat) = plt.subplots(1, 2, figsize=(11, 4.5))
    med = Medians()
    for rs in groups:
        n = [r.params["chains"] for r in rs]
        drawn = [med.of(r.metrics["loads_per_ns"], r.params) for r in rs]
        lpn = [d[0] for d in drawn]
        k = knee_of(rs)
        tag = f" (≈ {k.outstanding:.1f} in flight)" if k and k.reached else \
            (f" (≥ {k.outstanding:.1f} in flight)" if k else "")
        line, = ax.plot(n, lpn, marker="o", label=describe(rs) + tag)
        c = line.get_color()
        errorbars(ax, n, lpn, [d[1] for d in drawn], [d[2] for d in drawn], ecolor=c)
        write_values(ax, n, lpn, [d[2] for d in drawn], fontsize=6, color=c)
        ldrawn = [med.of(r.metrics["latency"], r.params) for r in rs]
        lns = [d[0] for d in ldrawn]
        lat.plot(n, lns, marker="o", color=c)
        errorbars(lat, n, lns, [d[1] for d in ldrawn], [d[2] for d in ldrawn], ecolor=c)
        write_values(lat, n, lns, [d[2] for d in ldrawn], fontsize=6, color=c)
        if k and k.reached:
            ax.axvline(k.knee, color=c, ls=":", alpha=0.7)
            ax.annotate(f"knee {k.knee}", (k.knee, max(lpn)), fontsize=8,
                        textcoords="offset points", xytext=(4, -12))
    counts = sorted({r.params["chains"] for rs in groups for r in rs})
    for a in (ax, lat):
        a.set_xscale("log", base=2)
        a.set_xticks(counts, [str(c) for c in counts])
        a.set_xlabel("independent chains walked in lockstep")
        a.grid(True, which="both", alpha=0.3)
    ax.set_ylabel("loads per ns (median)")
    sec = ax.secondary_yaxis("right", functions=(lambda v: v * mlp.LINE,
                                                 lambda v: v / mlp.LINE))
    sec.set_ylabel(f"GB/s at {mlp.LINE} B per load")
    ax.set_title(f"Memory-level parallelism (knee: next count adds < {mlp.GAIN:.0%})",
                 fontsize=10)
    ax.legend(fontsize=7)
    lat.set_ylabel("ns per load of each chain (median)")
    lat.set_title("Latency each chain sees", fontsize=10)
    fig.tight_layout()
    return [("Memory-level parallelism", captioned(fig, (
        "Left: loads completed per ns (right axis: GB/s at "
        f"{mlp.LINE} B per load) against the number of independent pointer chains one core "
        "walks in lockstep; the knee is where one more chain adds less than "
        f"{mlp.GAIN:.0%}, and the misses in flight there are loads per ns x latency. Right: "
        "ns per load each chain sees. " + med.text())))]
