"""Plots of the storage family (`numascope io`, the `storage` stage of `numascope run`):
IOPS and p99 by placement relative to the drive's node, and drive scaling (total IOPS and
IOPS per drive by the number of drives at once). Values are medians of the repetitions,
the tables' figures, written on the bars."""

from __future__ import annotations

from typing import TYPE_CHECKING

from numascope.results.record import BenchResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _placement(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    from matplotlib.figure import Figure

    from numascope.families.storage import bench as io
    from numascope.plotting.marks import Medians, captioned, median_bars, write_values
    by_case = {r.case: r for r in io.of(results, "placement")}
    rows = io.placement_rows(results)
    out = []
    for target in dict.fromkeys(r["target"] for r in rows):
        rs = [r for r in rows if r["target"] == target]
        fig = Figure(figsize=(7.5, 4.2))
        ax = fig.add_subplot()
        labels = [f"{r['where']}\n" + (f"d={r['distance']}" if r["distance"] is not None
                                       else r["role"]) for r in rs]
        x = list(range(len(rs)))
        med = Medians()
        drawn = [med.of(by_case[r["case"]].metrics["iops"], by_case[r["case"]].params)
                 for r in rs]
        median_bars(ax, x, drawn, color="tab:blue")
        ax.set_xticks(x, labels, fontsize=8)
        ax.set_ylabel("IOPS (I/O operations per s), median")
        ax.margins(y=0.15)
        ax2 = ax.twinx()
        p99 = [r["p99_us"] for r in rs]
        ax2.plot(x, p99, "o-", color="tab:red")
        write_values(ax2, x, p99, fontsize=7, color="tab:red")
        ax2.set_ylabel("p99 completion latency (us), median", color="tab:red")
        ax2.margins(y=0.15)
        node = rs[0]["target_node"]
        ax.set_title(f"{target} (node {node if node is not None else 'unknown'}): IOPS and "
                     "p99 by placement", fontsize=10)
        fig.tight_layout()
        out.append((f"Storage placement {target}", captioned(fig, (
            f"fio on {target} with its threads and memory placed on each node (d: SLIT "
            "distance to the drive's node; local: the drive's own node): bars, IOPS; red, "
            "the 99th percentile of completion latency in us (fio's bucketed percentiles). "
            + med.text()))))
    return out


def _scaling(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    from matplotlib.figure import Figure

    from numascope.families.storage import bench as io
    from numascope.plotting.marks import captioned, label, write_values
    srows = io.scaling_rows(results)
    if not srows:
        return []
    fig = Figure(figsize=(10, 4))
    tot, per = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    k = [r["drives"] for r in srows]
    tot.plot(k, [r["iops"] for r in srows], "o-", label="total")
    write_values(tot, k, [r["iops"] for r in srows], fontsize=7)
    tot.plot(k, [srows[0]["per_drive"] * d for d in k], ":", color="grey",
             label="linear (one drive's IOPS x drives)")
    x = list(range(len(srows)))
    bars = per.bar(x, [r["per_drive"] for r in srows], color="tab:blue")
    per.bar_label(bars, [label(r["per_drive"]) + ("" if r["efficiency"] is None else
                                                  f"\n{100 * r['efficiency']:.0f} %")
                         for r in srows], fontsize=7, padding=2)
    for i, r in enumerate(srows):
        if r["knee"]:
            tot.axvline(r["drives"], color="tab:red", ls="--", label="knee")
            bars[i].set_color("tab:red")
    per.set_xticks(x, [str(d) for d in k])
    per.margins(y=0.2)
    for ax in (tot, per):
        ax.set_xlabel("drives at once")
    tot.set_xticks(k)
    tot.set_ylabel("IOPS, all drives (median)")
    per.set_ylabel("IOPS per drive (median total / drives)")
    tot.legend(fontsize=8)
    tot.set_title("Drive scaling: total", fontsize=10)
    per.set_title("IOPS per drive (% of one drive alone)", fontsize=10)
    fig.tight_layout()
    return [("Storage drive scaling", captioned(fig, (
        "The same fio job on 1, 2 … drives at once: left, the total IOPS (median of the "
        "repetitions) against linear scaling from one drive; right, IOPS per drive with "
        f"its share of one drive alone. The knee (red) is the first count below "
        f"{io.KNEE:.0%} of one drive's IOPS per drive.")))]


def _runs(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    """The single jobs (`io` without a study, the storage stage of a quick run): IOPS and
    p99 of each."""
    from matplotlib.figure import Figure

    from numascope.families.storage import bench as io
    from numascope.plotting.marks import Medians, captioned, median_bars, write_values
    rs = [r for r in io.of(results, "run") if "iops" in r.metrics]
    if not rs:
        return []
    fig = Figure(figsize=(max(5.0, 1.6 * len(rs) + 3), 4.0))
    ax = fig.add_subplot()
    med = Medians()
    drawn = [med.of(r.metrics["iops"], r.params) for r in rs]
    x = list(range(len(rs)))
    median_bars(ax, x, drawn, color="tab:blue")
    ax.set_xticks(x, [r.case.replace(" job ", "\njob ", 1) for r in rs], fontsize=7)
    ax.set_ylabel("IOPS (I/O operations per s), median")
    ax.margins(y=0.15)
    if all("clat_p99" in r.metrics for r in rs):
        ax2 = ax.twinx()
        p99 = [r.metrics["clat_p99"].median for r in rs]
        ax2.plot(x, p99, "o", color="tab:red")
        write_values(ax2, x, p99, fontsize=7, color="tab:red")
        ax2.set_ylabel("p99 completion latency (us), median", color="tab:red")
        ax2.margins(y=0.15)
    ax.set_title("Storage: IOPS per fio job", fontsize=10)
    fig.tight_layout()
    return [("Storage jobs", captioned(fig, (
        "Each fio job's IOPS (bars) and the 99th percentile of its completion latency in us "
        "(red, fio's bucketed percentiles). " + med.text())))]


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    import matplotlib
    matplotlib.use("Agg")
    return _runs(results) + _placement(results) + _scaling(results)
