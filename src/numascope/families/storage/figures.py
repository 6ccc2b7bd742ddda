"""Plots of the storage family (`numascope io`, the `storage` stage of `numascope run`):
IOPS and p99 by placement relative to the drive's node, and drive scaling."""

from __future__ import annotations

from typing import TYPE_CHECKING

from numascope.results.record import BenchResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from numascope.families.storage import bench as io
    out = []
    rows = io.placement_rows(results)
    for target in dict.fromkeys(r["target"] for r in rows):
        rs = [r for r in rows if r["target"] == target]
        fig = Figure(figsize=(7, 4))
        ax = fig.add_subplot()
        labels = [f"{r['where']}\n" + (f"d={r['distance']}" if r["distance"] is not None
                                       else r["role"]) for r in rs]
        x = range(len(rs))
        ax.bar(x, [r["iops"] for r in rs], color="tab:blue")
        ax.set_xticks(list(x), labels, fontsize=8)
        ax.set_ylabel("IOPS")
        ax2 = ax.twinx()
        ax2.plot(list(x), [r["p99_us"] for r in rs], "o-", color="tab:red")
        ax2.set_ylabel("p99 completion latency (us)", color="tab:red")
        node = rs[0]["target_node"]
        ax.set_title(f"{target} (node {node if node is not None else 'unknown'}): IOPS and "
                     "p99 by placement", fontsize=10)
        fig.tight_layout()
        out.append((f"Storage placement {target}", fig))
    srows = io.scaling_rows(results)
    if srows:
        fig = Figure(figsize=(7, 4))
        ax = fig.add_subplot()
        k = [r["drives"] for r in srows]
        ax.plot(k, [r["iops"] for r in srows], "o-", label="total")
        ax.plot(k, [r["per_drive"] for r in srows], "s-", label="per drive")
        ax.plot(k, [srows[0]["per_drive"] * d for d in k], ":", color="grey", label="linear")
        for r in srows:
            if r["knee"]:
                ax.axvline(r["drives"], color="tab:red", ls="--", label="knee")
        ax.set_xlabel("drives at once")
        ax.set_ylabel("IOPS")
        ax.set_xticks(k)
        ax.legend()
        ax.set_title("Drive scaling", fontsize=10)
        fig.tight_layout()
        out.append(("Storage drive scaling", fig))
    return out
