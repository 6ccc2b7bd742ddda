"""Across runs: for a report of several runs (e.g. tags nps=1 and nps=4), bars per
configuration for the primary metrics, with the significance `numascope compare` computes
(analysis.compare.compare_runs), written benchstat's way: "~" where the change is not a
significant one, the change in % and the adjusted p value where it is.

A configuration is the runs sharing the same tags (each run on its own when every run has
the same tags); it is named by the tags that differ. Each configuration is compared with the
first one, as `compare A B` would: runs are the samples, each run's value its median, the
bar the median of the runs' values (compare's median_a / median_b), the error bar the
lowest and highest run. Between constants (every run of both sides the same value) compare
makes no test: the change is written with "untested"."""

from __future__ import annotations

import math
import statistics
from typing import TYPE_CHECKING

from numascope.analysis.compare import ALPHA, MIN_RUNS, MetricDiff, compare_runs, smoke_mixed
from numascope.plotting.marks import captioned, errorbars, label
from numascope.results.run import RunRecord

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_PANELS = 9            # metrics drawn per family (significant changes first)
NOT_SIGNIFICANT = "~"


def configurations(runs: list[RunRecord]) -> list[tuple[str, list[RunRecord]]]:
    """(name, runs) per configuration, in the order first seen."""
    keys = [tuple(sorted(r.tags.items())) for r in runs]
    if len(set(keys)) < 2:
        return [(r.run_id, [r]) for r in runs]
    varying = sorted({k for key in keys for k, _ in key
                      if len({dict(kk).get(k) for kk in keys}) > 1})
    groups: dict[tuple, list[RunRecord]] = {}
    for key, r in zip(keys, runs):
        groups.setdefault(key, []).append(r)
    return [(" ".join(f"{k}={dict(key).get(k, '-')}" for k in varying), rs)
            for key, rs in groups.items()]


def mark(d: MetricDiff) -> str:
    """What the bar of the compared side says: "~" unless compare found a significant
    change; the change of constants, which compare does not test, as "untested"."""
    if d.significant:
        return f"{d.change_pct:+.1f} % (p={d.p_adjusted:.2g})"
    if d.verdict == "no spread":
        return f"{d.change_pct:+.1f} % untested"
    return NOT_SIGNIFICANT


def _run_values(runs: list[RunRecord], key: tuple[str, str, str]) -> list[float]:
    """Each run's median of the metric (its values pooled over its results, as compare
    does)."""
    out = []
    for run in runs:
        vals = [v for res in run.results if res.validated and (res.family, res.case) == key[:2]
                for m in res.metrics.values() if m.name == key[2]
                for v in m.values if v is not None and math.isfinite(v)]
        if vals:
            out.append(statistics.median(vals))
    return out


def figures(runs: list[RunRecord]) -> list[tuple[str, Figure]]:
    confs = configurations(runs)
    if len(confs) < 2:
        return []
    _, base = confs[0]
    # a smoke run's numbers measure caches: compare refuses to set it beside a real run
    confs = confs[:1] + [(n, rs) for n, rs in confs[1:] if not smoke_mixed(base, rs)]
    if len(confs) < 2:
        return []
    cmps = [(name, compare_runs(base, rs)) for name, rs in confs[1:]]
    keyed = [{(d.family, d.case, d.metric): d for d in c.diffs} for _, c in cmps]
    keys = [k for k in keyed[0] if all(k in kd for kd in keyed[1:])]
    out = []
    for family in dict.fromkeys(k[0] for k in keys):
        fam = [k for k in keys if k[0] == family]
        # significant changes first, largest first; then the rest in the runs' order
        fam.sort(key=lambda k: (not any(kd[k].significant for kd in keyed),
                                -max(abs(kd[k].change_pct) if kd[k].significant else 0
                                     for kd in keyed)))
        shown = fam[:MAX_PANELS]
        out.append(_figure(family, shown, len(fam) - len(shown), confs, keyed))
    return out


def _figure(family: str, keys: list[tuple[str, str, str]], left: int,
            confs: list[tuple[str, list[RunRecord]]], keyed: list[dict]) -> tuple[str, Figure]:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    cols = min(3, len(keys))
    rows = -(-len(keys) // cols)
    fig = Figure(figsize=(max(4.2 * cols, 6), 3.4 * rows + 0.6))
    names = [n for n, _ in confs]
    for i, key in enumerate(keys):
        ax = fig.add_subplot(rows, cols, i + 1)
        first = keyed[0][key]
        meds = [first.median_a] + [kd[key].median_b for kd in keyed]
        spans = [_run_values(rs, key) for _, rs in confs]
        below = [max(m - min(s), 0.0) if s else 0.0 for m, s in zip(meds, spans)]
        above = [max(max(s) - m, 0.0) if s else 0.0 for m, s in zip(meds, spans)]
        x = list(range(len(meds)))
        ax.bar(x, meds, color=["tab:grey"] + ["tab:blue"] * (len(meds) - 1))
        errorbars(ax, x, meds, below, above)
        marks = [""] + [mark(kd[key]) for kd in keyed]
        for xi, m, a, n, mk in zip(x, meds, above, [len(rs) for _, rs in confs], marks):
            ax.annotate(f"{mk}\n{label(m)} (n={n})" if mk else f"{label(m)} (n={n})",
                        (xi, m + a), textcoords="offset points", xytext=(0, 2),
                        ha="center", va="bottom", fontsize=7)
        ax.set_xticks(x, names, fontsize=7)
        ax.set_ylabel(f"{key[2]} ({first.unit})", fontsize=8)
        ax.set_title(f"{key[1]}"[:60], fontsize=8)
        ax.margins(y=0.2)
    fig.suptitle(f"{family}: each configuration against {names[0]}", fontsize=10)
    fig.tight_layout()
    more = f" {left} more metrics of {family} are in the comparison table." if left else ""
    units = ", ".join(dict.fromkeys(keyed[0][k].unit for k in keys if keyed[0][k].unit))
    return (f"Across runs: {family}", captioned(fig, (
        f"{family} primary metrics per configuration (runs with the same tags), each "
        "compared with the first as numascope compare does: a bar is the median over the "
        "configuration's runs of each run's median (n: runs), its error bar the lowest and "
        "highest run. In a compared bar, \"~\" means no significant change (Welch's t-test "
        f"on the logs of the run medians, Holm-adjusted p below {ALPHA:g} and a change above "
        f"the noise floor; fewer than {MIN_RUNS} runs per side are never significant); "
        "otherwise the change in % and the adjusted p; \"untested\": every run of both "
        f"sides gave one value, so no test applies.{more}"
        + (f" · units: {units}" if units else ""))))
