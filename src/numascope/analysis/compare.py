"""Compare two runs or two groups of runs: per metric, the change in % of the median, whether
it is a change at all, and what differs between the two configurations.

Runs are the samples (pyperf's way). Repetitions inside one run share one boot, one page
placement, one clock state: they say how steady that run was, not how the configuration
varies, so each run contributes one value per metric, its median. Metrics are matched by
(family, case, metric name); by default only each case's primary metric (analysis.primary),
or the metrics named (`metrics`: e.g. latency_p999, the single-load tail), or every one.

Per metric, with at least MIN_RUNS runs on each side: Welch's t-test on the logs of the run
medians (so the difference is a ratio), p-values adjusted by Holm–Bonferroni over every
metric tested, so that identical configurations make no claim at all in 95 % of
comparisons. A change counts when the adjusted p < ALPHA and it is at least the noise floor
(the pooled run-to-run standard deviation of the run medians) and the minimum practical
effect. With fewer runs there is no significance claim: the verdict is "too few", or
"below noise" when the change is smaller than the within-run sd of the repetitions.

Sides without spread (every run of both sides gives the same value: fio's bucketed
percentiles, a deterministic count) are not tested, since no p-value can be had from
constants: equal medians are "equal within resolution", different ones "no spread" (the
difference, not tested).

How many runs: 3 per side is the minimum for any claim. Among the ~30 primary metrics of a
quick run with a run-to-run sd of 1.5 %, a 10 % change is found in about 40 % of 3 vs 3
comparisons, 90 % of 4 vs 4 and 98 % of 5 vs 5 (simulated, tests/test_compare.py): take 5."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from numascope.analysis import method as methods
from numascope.analysis.primary import primary_metrics
from numascope.analysis.stats import holm, pooled_sd, variance, welch
from numascope.results.run import RunRecord
from numascope.steady import unsteady

# sources: numascope.sources (Fisher 1925, Holm 1979, Welch 1947; Dell HPC lab 2019)
ALPHA = 0.05
MIN_RUNS = 3
# Smallest change worth calling a difference (%), whatever the statistics say.
MIN_EFFECT_PCT = 1.0
CORRECTION = "Holm-Bonferroni"
VERDICTS = ("better", "worse", "no significant change", "below noise", "too few",
            "equal within resolution", "no spread")
# Host facts worth naming when they differ between A and B.
CONFIG_KEYS = ("hostname", "cpu_model", "microcode", "kernel", "bios_vendor", "bios_version",
               "bios_date", "memory_mode", "memory_gib", "nodes", "l3s", "cpus", "smt",
               "smt_control", "governor", "thp", "numa_balancing", "clock_ghz",
               "topology_digest")


@dataclass
class RunValue:
    """One run's view of one metric."""
    median: float
    sd: float         # relative standard deviation of its repetitions; NaN with fewer than 2
    reps: int
    unsteady: bool = False   # repeated until steady (--reps auto) and did not converge


@dataclass
class MetricDiff:
    family: str
    case: str
    metric: str
    unit: str
    higher_is_better: bool
    primary: bool
    n_a: int                      # runs on each side that have this metric
    n_b: int
    reps_a: int                   # repetitions, all runs together
    reps_b: int
    median_a: float               # median of the runs' medians
    median_b: float
    change_pct: float             # (median_b - median_a) / median_a * 100
    within_sd_a_pct: float        # within-run relative sd of the repetitions, median of runs
    within_sd_b_pct: float
    run_sd_pct: float             # pooled run-to-run sd of the run medians, %; NaN if 1 v 1
    noise_pct: float              # the noise floor a change must reach (see module doc)
    p_value: float                # Welch on log run medians; NaN when too few runs
    ci_low: float                 # 95 % interval of median_b / median_a (unadjusted)
    ci_high: float
    p_adjusted: float = math.nan  # Holm-adjusted over every metric tested
    verdict: str = "too few"
    note: str = ""                # why a metric was not tested (no spread)
    unsteady_a: int = 0           # runs whose figure did not converge (--reps auto)
    unsteady_b: int = 0

    @property
    def unsteady(self) -> bool:
        return bool(self.unsteady_a or self.unsteady_b)

    @property
    def significant(self) -> bool:
        return self.verdict in ("better", "worse")

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["significant"] = self.significant
        return d


@dataclass
class Comparison:
    a: list[str]                  # run ids
    b: list[str]
    diffs: list[MetricDiff]
    config: dict[str, tuple[list[Any], list[Any]]]   # key → (values in A, values in B)
    method: str
    scope: str = "primary"        # "primary" | "all" | "chosen" (the metrics named)
    tested: int = 0               # metrics with a p-value: the size of the correction
    only_a: list[str] = field(default_factory=list)  # "family/case/metric" not in B
    only_b: list[str] = field(default_factory=list)
    # "family/case" -> (methods in A, in B): measured another way, its metrics not compared
    other_method: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    # verdict → number of metrics, over every metric compared (kept when diffs is filtered)
    counts: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "method": self.method, "correction": CORRECTION,
                "alpha": ALPHA, "min_runs": MIN_RUNS, "scope": self.scope,
                "tested": self.tested, "counts": self.counts,
                "config_differences": {k: {"a": va, "b": vb}
                                       for k, (va, vb) in self.config.items()},
                "metrics": [d.to_dict() for d in self.diffs],
                "only_in_a": self.only_a, "only_in_b": self.only_b,
                "other_method": [{"case": k, "a": va, "b": vb}
                                 for k, (va, vb) in self.other_method.items()]}

    def other_method_line(self) -> str | None:
        """One line on the cases left out because A and B measured them another way."""
        if not self.other_method:
            return None
        (k, (va, vb)), more = next(iter(self.other_method.items())), len(self.other_method) - 1
        family, _, case = k.partition("/")
        return (f"not compared, measured another way under one name: {family} case "
                f"'{case}' ({methods.text(set(va))} in A, {methods.text(set(vb))} in B)"
                + (f" and {more} more case{'s' if more != 1 else ''}" if more else "")
                + "; compare runs of one method")


def _pct(x: float) -> float:
    return x * 100 if math.isfinite(x) else math.nan


def _scaled(values: list[float], ref: float) -> tuple[list[float], bool]:
    """Logs when every value is positive (differences are ratios), else values relative
    to |ref|; the flag says which."""
    if all(v > 0 for v in values):
        return [math.log(v) for v in values], True
    return [v / abs(ref) for v in values], False


def _median_sd(runs: list[RunValue]) -> float:
    sds = [r.sd for r in runs if math.isfinite(r.sd)]
    return statistics.median(sds) if sds else math.nan


def _constant(a: list[RunValue], b: list[RunValue]) -> bool:
    """Every run of each side gives one value: nothing to test a difference against."""
    return all(len({r.median for r in side}) == 1 for side in (a, b))


def metric_stats(a: list[RunValue], b: list[RunValue]) -> dict[str, Any]:
    """Everything about one metric except the verdict: medians, spreads, noise floor, p."""
    ma = statistics.median(r.median for r in a)
    mb = statistics.median(r.median for r in b)
    change = (mb - ma) / abs(ma) * 100 if ma else math.nan
    within = [_median_sd(side) for side in (a, b)]
    p, ci = math.nan, (math.nan, math.nan)
    run_sd = math.nan
    if ma:
        xs, log = _scaled([r.median for r in a + b], ma)
        xa, xb = xs[:len(a)], xs[len(a):]
        sd = pooled_sd(xa, xb)
        run_sd = (math.exp(sd) - 1 if log else sd) if math.isfinite(sd) else math.nan
        if len(a) >= MIN_RUNS and len(b) >= MIN_RUNS and not _constant(a, b):
            w = welch(xa, xb)
            lo, hi = w.interval()
            p, ci = w.p, ((math.exp(lo), math.exp(hi)) if log else (1 + lo, 1 + hi))
            if w.diff * (mb - ma) < 0:   # mean and median disagree on the direction
                p = 1.0
    if len(a) >= MIN_RUNS and len(b) >= MIN_RUNS:
        noise = run_sd
    else:  # too few runs to know the run-to-run spread: at least the within-run one
        noise = max((x for x in (*within, run_sd) if math.isfinite(x)), default=math.nan)
    note = ""
    if len(a) >= MIN_RUNS and len(b) >= MIN_RUNS and _constant(a, b):
        by = f"{change:+.3g} %" if math.isfinite(change) else f"{mb - ma:+.4g}"
        note = ("equal within resolution: every run of both sides gave this value"
                if ma == mb else f"no spread: difference {by}, not tested (every run of "
                "each side gave one value)")
    return {"n_a": len(a), "n_b": len(b), "note": note,
            "unsteady_a": sum(r.unsteady for r in a), "unsteady_b": sum(r.unsteady for r in b),
            "reps_a": sum(r.reps for r in a),
            "reps_b": sum(r.reps for r in b), "median_a": ma, "median_b": mb,
            "change_pct": change, "within_sd_a_pct": _pct(within[0]),
            "within_sd_b_pct": _pct(within[1]), "run_sd_pct": _pct(run_sd),
            "noise_pct": _pct(noise), "p_value": p, "ci_low": ci[0], "ci_high": ci[1]}


def verdict(d: MetricDiff, min_effect_pct: float = MIN_EFFECT_PCT) -> str:
    if d.note:                           # constant sides (see _constant): not tested
        return "equal within resolution" if d.median_a == d.median_b else "no spread"
    threshold = max(min_effect_pct, d.noise_pct if math.isfinite(d.noise_pct) else 0.0)
    small = not abs(d.change_pct) >= threshold        # NaN change: nothing to claim
    if d.n_a < MIN_RUNS or d.n_b < MIN_RUNS:
        return "below noise" if small else "too few"
    if not d.p_adjusted < ALPHA:
        return "no significant change"
    if small:
        return "below noise"
    return "better" if (d.change_pct > 0) == d.higher_is_better else "worse"


def _per_run(runs: list[RunRecord], all_metrics: bool, families: set[str] | None,
             names: set[str] | None = None
             ) -> dict[tuple[str, str, str], tuple[str, bool, bool, list[RunValue]]]:
    """(family, case, metric) → (unit, higher_is_better, primary, one RunValue per run);
    the metrics: `names` when given, else every one (all_metrics) or the primary ones."""
    out: dict[tuple[str, str, str], tuple[str, bool, bool, list[RunValue]]] = {}
    for run in runs:
        pooled: dict[tuple[str, str, str], list[float]] = {}
        shaky: set[tuple[str, str, str]] = set()
        for res in run.results:
            if not res.validated or (families and res.family not in families):
                continue
            if unsteady(res.params):
                shaky.update((res.family, res.case, n) for n in res.metrics)
            prim = primary_metrics(res.family, list(res.metrics))
            for m in res.metrics.values():
                if (m.name not in names) if names else (not all_metrics and m.name not in prim):
                    continue
                key = (res.family, res.case, m.name)
                out.setdefault(key, (m.unit, m.higher_is_better, m.name in prim, []))
                pooled.setdefault(key, []).extend(
                    v for v in m.values if v is not None and math.isfinite(v))
        for key, vals in pooled.items():
            if vals:
                mean = statistics.fmean(vals)
                sd = math.sqrt(variance(vals)) / abs(mean) if len(vals) > 1 and mean else math.nan
                out[key][3].append(RunValue(statistics.median(vals), sd, len(vals),
                                            key in shaky))
    return {k: v for k, v in out.items() if v[3]}


def config_differences(a: list[RunRecord], b: list[RunRecord]) -> dict[str, tuple[list, list]]:
    diffs: dict[str, tuple[list, list]] = {}

    def values(runs: list[RunRecord], getter) -> list:
        seen: list = []
        for r in runs:
            v = getter(r)
            if v not in seen:
                seen.append(v)
        return seen

    tag_keys = sorted({k for r in a + b for k in r.tags})
    for k in tag_keys:
        va, vb = values(a, lambda r, k=k: r.tags.get(k)), values(b, lambda r, k=k: r.tags.get(k))
        if va != vb:
            diffs[f"tag:{k}"] = (va, vb)
    va, vb = values(a, lambda r: r.profile), values(b, lambda r: r.profile)
    if va != vb:        # quick and full measure some cases on other sizes
        diffs["profile"] = (va, vb)
    for k in CONFIG_KEYS:
        va, vb = values(a, lambda r, k=k: r.host.get(k)), values(b, lambda r, k=k: r.host.get(k))
        if va != vb:
            diffs[k] = (va, vb)
    return diffs


def method_text(tested: int, min_effect_pct: float) -> str:
    return (f"runs are the samples (one value per run: its median); Welch t-test on the log "
            f"run medians with >= {MIN_RUNS} runs per side, else 'too few'; {CORRECTION} "
            f"over the {tested} metrics tested (family-wise error {ALPHA:.0%}); a change "
            f"counts when adjusted p < {ALPHA} and |change| >= max({min_effect_pct:g}%, "
            "noise), noise = run-to-run sd of the run medians (with too few runs: the larger "
            "within-run sd); sides without spread are not tested: 'equal within "
            "resolution' or 'no spread'; a figure repeated until steady that did not "
            "converge (--reps auto) is compared as it is, and marked")


def smoke_mixed(a: list[RunRecord], b: list[RunRecord]) -> str | None:
    """The first smoke run when A and B set smoke runs (small working sets: their numbers
    measure caches) against measured ones, else None: every difference would be the
    profile's."""
    from numascope.profile import readable
    smoke = [r.run_id for r in a + b if not readable(r.profile)]
    return smoke[0] if smoke and len(smoke) < len(a + b) else None


def tail_groups_mixed(a: list[RunRecord], b: list[RunRecord], all_metrics: bool = False,
                      families: list[str] | None = None,
                      metrics: list[str] | None = None) -> str | None:
    """Why latency tails cannot be compared, or None: a case whose tail metrics
    (latency_p50 ... latency_p999) are among those compared (the metrics named, every one,
    or the primary ones) was timed with different loads per group (A against B, or within
    a side). A group of g loads reads their mean, which smooths the tail: its p99.9 is not
    a single load's."""
    from numascope.families.latency.distribution import QUANTILES
    tails = {name for name, _ in QUANTILES}
    seen: dict[tuple[str, str], tuple[set[int], set[int]]] = {}
    for k, runs in enumerate((a, b)):
        for run in runs:
            for res in run.results:
                if not res.validated or (families and res.family not in families):
                    continue
                names = set(metrics) if metrics else set(res.metrics) if all_metrics \
                    else set(primary_metrics(res.family, list(res.metrics)))
                g = (res.distributions.get("latency") or {}).get("loads_per_group")
                if g is not None and tails & names & set(res.metrics):
                    seen.setdefault((res.family, res.case), (set(), set()))[k].add(g)
    for (family, case), (ga, gb) in seen.items():
        if ga and gb and len(ga | gb) > 1:
            def each(gs: set[int]) -> str:
                return " and ".join(map(str, sorted(gs)))
            return (f"{family} case '{case}': its tails were timed in groups of {each(ga)} "
                    f"load(s) in A and {each(gb)} in B (a group's mean smooths the tail); "
                    "compare tails only at the same loads per group, or leave the "
                    "latency_p* metrics out")
    return None


def _methods(runs: list[RunRecord], families: set[str] | None
             ) -> dict[tuple[str, str], set[str]]:
    """(family, case) -> the methods its validated results were measured with
    (analysis.method; none for a family without one)."""
    out: dict[tuple[str, str], set[str]] = {}
    for run in runs:
        for res in run.results:
            if res.validated and not (families and res.family not in families):
                m = methods.method(res.family, res.params)
                if m:
                    out.setdefault((res.family, res.case), set()).add(m)
    return out


def methods_mixed(a: list[RunRecord], b: list[RunRecord], families: set[str] | None = None
                  ) -> dict[str, tuple[list[str], list[str]]]:
    """"family/case" -> (methods in A, in B) for every case measured by more than one
    method across A and B (or within a side): net's pages and buffers, whose case names
    did not always say them. Its metrics are not one figure and are never compared."""
    ma, mb = _methods(a, families), _methods(b, families)
    return {f"{f}/{c}": (sorted(ma.get((f, c), set())), sorted(mb.get((f, c), set())))
            for f, c in dict.fromkeys([*ma, *mb])
            if methods.differs(ma.get((f, c), set()), mb.get((f, c), set()))}


def metric_names(runs: list[RunRecord], families: list[str] | None = None) -> list[str]:
    """Every metric name the runs' validated results have (in these families), sorted."""
    return sorted({m for r in runs for res in r.results
                   if res.validated and (not families or res.family in families)
                   for m in res.metrics})


def chosen_families(names: list[str] | None, runs: list) -> list[str] | None:
    """--family values as record family names (an old name such as "peaks" works too);
    UserError naming the known ones for anything else."""
    from numascope.errors import UserError
    from numascope.families import by_name, families
    if not names:
        return None
    stored = {res.family for r in runs for res in r.results}
    known = sorted({c.family for c in families()} | stored)
    chosen = []
    for name in names:
        cls = by_name(name.strip())
        fam = cls.family if cls is not None else name.strip()
        if fam not in known:
            from numascope.errors import escape_text
            raise UserError(f"unknown family '{escape_text(name, 60)}'; families: "
                            f"{', '.join(known)}")
        chosen.append(fam)
    return chosen


def chosen_metrics(names: list[str] | None, runs: list, families: list[str] | None
                   ) -> list[str] | None:
    """--metric values, each one the runs have (in the families chosen); UserError naming
    the ones they have for anything else."""
    from numascope.errors import UserError, escape_text
    if not names:
        return None
    known = metric_names(runs, families)
    for name in names:
        if name.strip() not in known:
            raise UserError(f"no metric '{escape_text(name, 60)}' in these runs"
                            f"{' (families ' + ', '.join(families) + ')' if families else ''}"
                            f"; metrics: {', '.join(known) or 'none'}")
    return [n.strip() for n in names]


def compare_runs(a: list[RunRecord], b: list[RunRecord],
                 min_effect_pct: float = MIN_EFFECT_PCT, all_metrics: bool = False,
                 families: list[str] | None = None,
                 metrics: list[str] | None = None) -> Comparison:
    """A against B: per (family, case, metric) of the primary metrics, every metric
    (all_metrics), or the metrics named (`metrics`, whether primary or not)."""
    fams = set(families) if families else None
    names = set(metrics) if metrics else None
    sa, sb = _per_run(a, all_metrics, fams, names), _per_run(b, all_metrics, fams, names)
    mixed = methods_mixed(a, b, fams)
    both = {f"{f}/{c}" for f, c, m in sa if (f, c, m) in sb}
    other = {k: v for k, v in mixed.items() if k in both}
    diffs = []
    for key in [k for k in sa if k in sb and f"{k[0]}/{k[1]}" not in other]:
        (unit, hib, prim, ra), (_, _, _, rb) = sa[key], sb[key]
        diffs.append(MetricDiff(*key, unit, hib, prim, **metric_stats(ra, rb)))
    tested = [d for d in diffs if math.isfinite(d.p_value)]
    for d, p in zip(tested, holm([d.p_value for d in tested])):
        d.p_adjusted = p
    for d in diffs:
        d.verdict = verdict(d, min_effect_pct)
    scope = "chosen" if names else "all" if all_metrics else "primary"
    return Comparison(
        a=[r.run_id for r in a], b=[r.run_id for r in b], diffs=diffs,
        config=config_differences(a, b), method=method_text(len(tested), min_effect_pct),
        scope=scope, tested=len(tested),
        counts={v: sum(1 for d in diffs if d.verdict == v) for v in VERDICTS},
        only_a=["/".join(k) for k in sa if k not in sb],
        only_b=["/".join(k) for k in sb if k not in sa], other_method=other)
