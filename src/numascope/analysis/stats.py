"""Statistics for comparing runs, on scipy.stats.

- Welch's two-sample t-test (unequal variances, Welch–Satterthwaite degrees of freedom)
  and its confidence interval of the difference of means; compare applies it to the logs
  of the runs' medians, so the difference is a ratio.
- A one-sample t-test of a mean against 0 (advice's paired ratios, on their logs).
- Holm–Bonferroni step-down adjustment of a family of p-values: scipy has none, and
  statsmodels (multipletests(method="holm")) is too heavy a dependency for ten lines; the
  tests check this one against statsmodels.

The t distribution's tail, quantile and interval are scipy.stats.t's; the means, variances
and standard errors stay in plain floats (compare runs them over thousands of metrics).

Samples without any spread are not tested: no p-value can say whether a difference between
constants is real (fio's bucketed percentiles repeat one value run after run)."""

from __future__ import annotations

import math
import statistics
import warnings
from dataclasses import dataclass


def _sps():
    """scipy.stats, imported on first use: 0.7 s that a command not testing anything (every
    command's --help, the parser) does not pay."""
    from scipy import stats
    return stats



@dataclass
class TTest:
    diff: float       # mean(b) - mean(a) (two samples) or the mean (one sample)
    se: float         # standard error of diff
    df: float         # degrees of freedom (Welch–Satterthwaite for two samples)
    t: float
    p: float          # two-sided; NaN when there is no spread and diff != 0 (not tested)

    @property
    def tested(self) -> bool:
        return math.isfinite(self.p)

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """Confidence interval of diff (scipy.stats.t.interval); (diff, diff) without
        spread."""
        if not 0 < level < 1:
            raise ValueError("level must be in (0, 1)")
        if self.se == 0 or not math.isfinite(self.df):
            return (self.diff, self.diff)
        lo, hi = _sps().t.interval(level, self.df, loc=self.diff, scale=self.se)
        return (float(lo), float(hi))


Welch = TTest


def variance(xs: list[float]) -> float:
    """Sample variance (n - 1) in plain floats: statistics.variance computes exactly with
    fractions, far too slow for thousands of metrics."""
    n = len(xs)
    if n < 2:
        raise ValueError("variance needs at least 2 values")
    m = math.fsum(xs) / n
    return math.fsum((x - m) ** 2 for x in xs) / (n - 1)


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with df degrees of freedom (df may be fractional)."""
    if math.isnan(t):
        return math.nan
    return float(min(1.0, 2 * _sps().t.sf(abs(t), df)))


def t_quantile(p_two_sided: float, df: float) -> float:
    """The t >= 0 with P(|T| >= t) = p_two_sided."""
    if not 0 < p_two_sided < 1:
        raise ValueError("p must be in (0, 1)")
    return float(_sps().t.isf(p_two_sided / 2, df))


def _no_spread(diff: float, df: float) -> TTest:
    """Constants: equal ones do not differ (p = 1); unequal ones are not tested."""
    return TTest(diff, 0.0, df, 0.0 if diff == 0 else math.copysign(math.inf, diff),
                 1.0 if diff == 0 else math.nan)


def welch(a: list[float], b: list[float]) -> TTest:
    """Welch's t-test of mean(b) against mean(a) (scipy.stats.ttest_ind, equal_var=False);
    both need at least 2 values."""
    n1, n2 = len(a), len(b)
    if n1 < 2 or n2 < 2:
        raise ValueError("Welch's test needs at least 2 values per side")
    diff = statistics.fmean(b) - statistics.fmean(a)
    v1, v2 = variance(a) / n1, variance(b) / n2
    se = math.sqrt(v1 + v2)
    if se == 0:
        return _no_spread(diff, n1 + n2 - 2)
    with warnings.catch_warnings():   # one constant side: scipy warns, the test holds
        warnings.simplefilter("ignore", RuntimeWarning)
        r = _sps().ttest_ind(b, a, equal_var=False)
    return TTest(diff, se, float(r.df), float(r.statistic), float(r.pvalue))


def one_sample(xs: list[float]) -> TTest:
    """Student's t-test of mean(xs) against 0 (scipy.stats.ttest_1samp); needs 2 values."""
    n = len(xs)
    if n < 2:
        raise ValueError("a one-sample t-test needs at least 2 values")
    mean = statistics.fmean(xs)
    se = math.sqrt(variance(xs) / n)
    if se == 0:
        return _no_spread(mean, n - 1)
    r = _sps().ttest_1samp(xs, 0.0)
    return TTest(mean, se, n - 1, float(r.statistic), float(r.pvalue))


def pooled_sd(a: list[float], b: list[float]) -> float:
    """Standard deviation pooled over both samples (each about its own mean)."""
    dof = len(a) + len(b) - 2
    if dof < 1:
        return math.nan
    ss = sum((len(x) - 1) * variance(x) for x in (a, b) if len(x) > 1)
    return math.sqrt(ss / dof)


def holm(p_values: list[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the order given: the i-th smallest of m is
    multiplied by (m - i + 1), then made monotone. Rejecting where adjusted < alpha keeps
    the family-wise error rate (any false claim among the m) at most alpha."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out
