"""The figure of an `advise --verify` run: predicted against measured bandwidth, per rank
and in total, each error marked with the prediction's kind (lookup, interpolated, model;
numascope.predict.verify's results: family bandwidth, sweep "verify"). The report finds it
by its name (families.figure_names: modules ending in "figures")."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from numascope.results.record import BenchResult


def figures(results: list[BenchResult]) -> list[tuple[str, Figure]]:
    rs = [r for r in results if r.family == "bandwidth" and r.params.get("sweep") == "verify"
          and "bandwidth" in r.metrics]
    if not rs:
        return []
    rs.sort(key=lambda r: (r.case.endswith("total"), r.params.get("rank", 0)))
    labels = ["total" if r.case.endswith("total") else f"rank {r.params.get('rank')}"
              for r in rs]
    measured = [r.params.get("measured_gbs", r.metrics["bandwidth"].median) for r in rs]
    predicted = [r.params.get("predicted_gbs") for r in rs]
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(rs) + 2), 4))
    x = range(len(rs))
    ax.bar([i - 0.2 for i in x], [p if p is not None else 0 for p in predicted], 0.4,
           label="predicted", color="tab:gray")
    ax.bar([i + 0.2 for i in x], measured, 0.4, label="measured", color="tab:blue")
    for i, r in enumerate(rs):
        m = r.metrics["bandwidth"]
        ax.plot([i + 0.2, i + 0.2], [m.min, m.max], color="black", lw=1)
        e = r.params.get("error_percent")
        if e is not None:
            # the prediction's kind beside its error: a lookup's error is reproducibility
            kind = r.params.get("predicted_kind")
            ax.annotate(f"{e:+.0f} %" + (f"\n{kind}" if kind else ""),
                        (i, max(measured[i], predicted[i] or 0)),
                        ha="center", va="bottom", fontsize=8)
        elif predicted[i] is None:
            ax.annotate("no data", (i - 0.2, 0), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(list(x), labels)
    ax.set_ylabel("GB/s (triad, STREAM bytes, GB = 10^9 B)")
    recipe = rs[0].params.get("recipe", "")
    ax.set_title(f"Predicted vs measured: {recipe}", fontsize=9)
    ax.set_ylim(0, ax.get_ylim()[1] * 1.12)       # room for the error and kind above a bar
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return [("Bandwidth predicted vs measured (advise --verify)", fig)]
