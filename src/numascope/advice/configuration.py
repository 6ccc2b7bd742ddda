"""Advice on configurations measured in separate runs: runs tagged with different values of
one key (nps=1 and nps=4) are the two sides of a comparison made as `numascope compare`
makes it (analysis.compare: runs are the samples, Welch on the logs of the run medians,
Holm over the primary metrics), with the advice's practical threshold as the smallest
change. With fewer than MIN_RUNS runs on a side there is no verdict: a change beyond the
within-run noise gives an "inconclusive" item with its figures; below it, nothing."""

from __future__ import annotations

from typing import Any

from numascope.advice.kinds import PRACTICAL, Advice, Threshold
from numascope.advice.kinds import rounded as _r
from numascope.analysis.compare import ALPHA, MIN_RUNS, MetricDiff, compare_runs
from numascope.profile import readable
from numascope.results.run import RunRecord

# The bookkeeping tags every run of a fleet carries: they name a node, not a setting.
BOOKKEEPING = ("fleet", "host")
THRESHOLD = Threshold(PRACTICAL.value, PRACTICAL.source + "; and beyond the run-to-run sd of "
                      f"these runs with Holm-adjusted p < {ALPHA} (numascope compare's rule, "
                      "docs/compare.md)")
BASIS = "runs are the samples (one value per run: its median), as numascope compare"
SHOWN = 4       # metrics named in an item's text (all are in its figures)


def _setting(key: str) -> bool:
    return key not in BOOKKEEPING and not key.startswith("slurm_")


def tag_sides(runs: list[RunRecord]) -> list[tuple[str, str, str, list[RunRecord],
                                                   list[RunRecord]]]:
    """(key, value A, value B, runs A, runs B) for every tag key whose values split the
    runs, each pair of values once, in the order the runs came; a split that another key
    already made is not repeated."""
    out, seen = [], set()
    for key in sorted({k for r in runs for k in r.tags if _setting(k)}):
        groups: dict[str, list[RunRecord]] = {}
        for r in runs:
            if key in r.tags:
                groups.setdefault(str(r.tags[key]), []).append(r)
        values = list(groups)
        for i, va in enumerate(values):
            for vb in values[i + 1:]:
                ids = (frozenset(r.run_id for r in groups[va]),
                       frozenset(r.run_id for r in groups[vb]))
                if ids in seen or ids[::-1] in seen:
                    continue
                seen.add(ids)
                out.append((key, va, vb, groups[va], groups[vb]))
    return out


def _name(d: MetricDiff) -> str:
    return f"{d.family} {d.case}" + ("" if d.metric == d.family else f" {d.metric}")


def _figure(d: MetricDiff) -> dict[str, Any]:
    return {"family": d.family, "case": d.case, "metric": d.metric, "unit": d.unit,
            "median_a": _r(d.median_a), "median_b": _r(d.median_b), "runs_a": d.n_a,
            "runs_b": d.n_b, "change_percent": _r(d.change_pct, 3),
            "ratio_low": _r(d.ci_low, 4), "ratio_high": _r(d.ci_high, 4),
            "p_adjusted": _r(d.p_adjusted, 3), "verdict": d.verdict}


def _evidence(d: MetricDiff, side: str, runs: list[RunRecord], median: float,
              n: int) -> dict[str, Any]:
    return {"side": side, "runs": [r.run_id for r in runs], "case": d.case,
            "family": d.family, "metric": d.metric, "median": _r(median), "unit": d.unit,
            "n": n}


def compare_configurations(runs: list[RunRecord]) -> list[Advice]:
    out = []
    measured = [r for r in runs if readable(r.profile)]
    for key, va, vb, a, b in tag_sides(measured):
        la, lb = f"{key}={va}", f"{key}={vb}"
        cmp = compare_runs(a, b, min_effect_pct=100 * PRACTICAL.value)
        few = min(len(a), len(b)) < MIN_RUNS
        hits = [d for d in cmp.diffs if (d.verdict == "too few" if few else d.significant)]
        if not hits:
            continue
        hits.sort(key=lambda d: -abs(d.change_pct))
        ev = [e for d in hits for e in (_evidence(d, la, a, d.median_a, d.n_a),
                                        _evidence(d, lb, b, d.median_b, d.n_b))]
        figs = {"a": la, "b": lb, "runs_a": len(a), "runs_b": len(b),
                "metrics": [_figure(d) for d in hits]}
        ids = [r.run_id for r in a + b]
        more = f" (and {len(hits) - SHOWN} more in the figures)" if len(hits) > SHOWN else ""
        if few:
            n = min(len(a), len(b))
            short = [v for v, side in ((va, a), (vb, b)) if len(side) < MIN_RUNS]
            text = "; ".join(f"{_name(d)}: {d.median_a:.4g} -> {d.median_b:.4g} {d.unit} "
                             f"({d.change_pct:+.1f} %)" for d in hits[:SHOWN])
            out.append(Advice(
                "configuration", f"{lb} against {la}: inconclusive: {n} run"
                f"{'s' if n != 1 else ''}, need {MIN_RUNS}",
                f"{len(a)} against {len(b)} runs: too few for a verdict (at least "
                f"{MIN_RUNS} a side). Changes beyond the within-run noise, unconfirmed: "
                f"{text}{more}. Measure each configuration {MIN_RUNS} times or more, then "
                "advise again.", ev, figs,
                "; ".join(f"numascope run --tag {key}={v}" for v in short), ids,
                THRESHOLD, BASIS))
            continue
        text = "; ".join(
            f"{_name(d)}: {d.median_a:.4g} -> {d.median_b:.4g} {d.unit}, {d.change_pct:+.1f} % "
            f"({d.verdict} in {lb}; 95 % interval of the ratio {d.ci_low:.3f}-"
            f"{d.ci_high:.3f}, Holm-adjusted p = {d.p_adjusted:.2g})" for d in hits[:SHOWN])
        top = hits[0]
        better = sum(d.verdict == "better" for d in hits)
        out.append(Advice(
            "configuration",
            f"{lb} against {la}: {_name(top)} {top.change_pct:+.0f} % ({top.verdict}), "
            f"{better} better, {len(hits) - better} worse",
            f"{BASIS}: {len(a)} against {len(b)} runs, {cmp.tested} metrics tested. {text}"
            f"{more}. Choose the setting by the metrics your codes are bound by.",
            ev, figs, f"numascope compare {la} {lb}", ids, THRESHOLD, BASIS))
    return out
