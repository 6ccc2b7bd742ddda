"""Compare two runs or two groups of runs: per metric, the change in % of the median, whether
it is significant given the repetitions, and what differs between the two configurations.

Metrics are matched by (family, case, metric name). In a group of several runs the
repetitions of all its runs are pooled. Significance: two-sided Mann–Whitney U on the
repetitions (exact p when small and tie-free, normal approximation otherwise) AND a 95 %
bootstrap interval of the median ratio that excludes 1 — both must agree."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from numascope.analysis.stats import bootstrap_median_ratio, mann_whitney_u, smallest_p
from numascope.results.run import RunRecord

ALPHA = 0.05
# Smallest change worth calling a difference (%): run-to-run variation of whole machines
# (reboots, page placement) is about this size even when repetitions agree more tightly.
MIN_EFFECT_PCT = 1.0
# Host facts worth naming when they differ between A and B.
CONFIG_KEYS = ("hostname", "cpu_model", "microcode", "kernel", "bios_vendor", "bios_version",
               "bios_date", "memory_mode", "memory_gib", "nodes", "l3s", "cpus", "smt",
               "smt_control", "governor", "thp", "numa_balancing", "clock_ghz",
               "topology_digest")


@dataclass
class MetricDiff:
    family: str
    case: str
    metric: str
    unit: str
    higher_is_better: bool
    n_a: int
    n_b: int
    median_a: float
    median_b: float
    change_pct: float             # (median_b - median_a) / median_a * 100
    p_value: float
    test: str                     # "exact" | "normal" | "none"
    ci_low: float                 # bootstrap 95 % interval of median_b / median_a
    ci_high: float
    verdict: str    # "better" | "worse" | "no significant change" | "below threshold" | "too few"

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
    only_a: list[str] = field(default_factory=list)  # "family/case/metric" not in B
    only_b: list[str] = field(default_factory=list)
    method: str = ("Mann-Whitney U two-sided on pooled repetitions (exact when n<=25 "
                   "without ties, else normal approx.) + 95% bootstrap CI of median ratio; "
                   f"significant when p<{ALPHA}, the CI excludes 1 and |change| >= "
                   f"{MIN_EFFECT_PCT}%")

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "method": self.method,
                "config_differences": {k: {"a": va, "b": vb}
                                       for k, (va, vb) in self.config.items()},
                "metrics": [d.to_dict() for d in self.diffs],
                "only_in_a": self.only_a, "only_in_b": self.only_b}


def compare_samples(a: list[float], b: list[float], higher_is_better: bool,
                    min_effect_pct: float = MIN_EFFECT_PCT) -> dict[str, Any]:
    """The statistics of one metric: A's repetitions against B's."""
    ma = statistics.median(a) if a else math.nan
    mb = statistics.median(b) if b else math.nan
    change = (mb - ma) / ma * 100 if ma else math.nan
    test = mann_whitney_u(a, b)
    lo, hi = bootstrap_median_ratio(a, b)
    if len(a) < 2 or len(b) < 2 or smallest_p(len(a), len(b)) >= ALPHA:
        verdict = "too few"  # repetitions: no outcome of the test could be significant
    elif test.p < ALPHA and not (lo <= 1.0 <= hi):
        if abs(change) < min_effect_pct:
            verdict = "below threshold"
        else:
            verdict = "better" if (mb > ma) == higher_is_better else "worse"
    else:
        verdict = "no significant change"
    return {"median_a": ma, "median_b": mb, "change_pct": change, "p_value": test.p,
            "test": test.method, "ci_low": lo, "ci_high": hi, "verdict": verdict}


def _samples(runs: list[RunRecord]) -> dict[tuple[str, str, str], tuple[list[float], str, bool]]:
    out: dict[tuple[str, str, str], tuple[list[float], str, bool]] = {}
    for run in runs:
        for res in run.results:
            if not res.validated:
                continue
            for m in res.metrics.values():
                key = (res.family, res.case, m.name)
                vals, _, _ = out.setdefault(key, ([], m.unit, m.higher_is_better))
                vals.extend(v for v in m.values if v is not None)
    return out


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
    for k in CONFIG_KEYS:
        va, vb = values(a, lambda r, k=k: r.host.get(k)), values(b, lambda r, k=k: r.host.get(k))
        if va != vb:
            diffs[k] = (va, vb)
    return diffs


def compare_runs(a: list[RunRecord], b: list[RunRecord],
                 min_effect_pct: float = MIN_EFFECT_PCT) -> Comparison:
    sa, sb = _samples(a), _samples(b)
    diffs = []
    for key in [k for k in sa if k in sb]:
        (va, unit, hib), (vb, _, _) = sa[key], sb[key]
        st = compare_samples(va, vb, hib, min_effect_pct)
        diffs.append(MetricDiff(key[0], key[1], key[2], unit, hib, len(va), len(vb), **st))
    method = Comparison.method.replace(f">= {MIN_EFFECT_PCT}%", f">= {min_effect_pct}%")
    return Comparison(
        method=method, a=[r.run_id for r in a], b=[r.run_id for r in b], diffs=diffs,
        config=config_differences(a, b),
        only_a=["/".join(k) for k in sa if k not in sb],
        only_b=["/".join(k) for k in sb if k not in sa])
