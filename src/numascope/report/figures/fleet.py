"""Fleet figures: for each metric with a flagged node (else the first few), every node's
value in its configuration group, the group median and the practical-gap band around it,
flagged nodes in red. `figures(results)` (the per-run hook of the report) draws nothing:
a fleet figure needs many runs — see fleet_figures(analysis)."""

from __future__ import annotations

from typing import Any

MAX_PANELS = 6


def figures(results: list[Any]) -> list:
    return []


def fleet_figures(analysis: Any, max_panels: int = MAX_PANELS) -> list[tuple[str, Any]]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    flagged = {(f.group, f.metric) for f in analysis.flags if f.kind == "outlier"}
    panels = []
    for g in analysis.groups:
        for key in g.metrics:
            panels.append(((g.label, key) not in flagged, g.label, key))
    panels.sort(key=lambda p: p[0])
    panels = panels[:max_panels]
    if not panels:
        return []
    bad = {(f.group, f.metric, f.run_id) for f in analysis.flags if f.kind == "outlier"}
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 2.6 * len(panels)), squeeze=False)
    for ax, (_, label, key) in zip(axes[:, 0], panels):
        st = next(g for g in analysis.groups if g.label == label).metrics[key]
        pts = [(n["host"], n["metrics"][key]["value"], n["run_id"]) for n in analysis.per_node
               if n["group"] == label and key in n["metrics"]]
        pts.sort()
        xs = list(range(len(pts)))
        colors = ["tab:red" if (label, key, rid) in bad else "tab:blue" for _, _, rid in pts]
        # the points above the band and the line: drawn under them, every node inside the
        # band was hidden and the plot looked as if it held only the flagged ones
        ax.scatter(xs, [v for _, v, _ in pts], s=8 if len(pts) > 100 else 20, c=colors,
                   zorder=3)
        gap = analysis.gap_pct / 100
        from numascope.plotting.marks import label as written
        ax.axhline(st.median, color="k", lw=1, label=f"median {written(st.median)}",
                   zorder=2)
        ax.axhspan(st.median * (1 - gap), st.median * (1 + gap), color="0.85",
                   label=f"median ± {analysis.gap_pct:g} %", zorder=0)
        ax.set_ylabel(f"{key.rpartition('/')[2]} ({st.unit})" if st.unit else key)
        ax.set_title(f"{key} — {label}"[:110], fontsize=8)
        if len(pts) <= 40:
            ax.set_xticks(xs, [h for h, _, _ in pts], rotation=90, fontsize=6)
        else:
            ax.set_xlabel("nodes (sorted by host name); red: flagged")
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    from numascope.plotting.marks import captioned
    return [(f"fleet {analysis.fleet or ''}: node values and the median band", captioned(
        fig, "Each node's value of a metric (its median over the run's repetitions) in its "
        "configuration group, sorted by host name; the line is the group's median (written "
        f"in the legend), the grey band ± {analysis.gap_pct:g} % around it (the practical "
        "gap a node must exceed to be flagged); red: flagged nodes. Panels with a flagged "
        f"node first, at most {max_panels}."))]
