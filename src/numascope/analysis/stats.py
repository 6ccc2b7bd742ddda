"""Statistics for comparing runs, without scipy.

- Welch's two-sample t-test (unequal variances, Welch–Satterthwaite degrees of freedom)
  and its confidence interval of the difference of means; compare applies it to the logs
  of the runs' medians, so the difference is a ratio.
- Student's t distribution: two-sided tail probability through the regularized incomplete
  beta function (continued fraction, Lentz), quantiles by safeguarded Newton steps.
- Holm–Bonferroni step-down adjustment of a family of p-values.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass


@dataclass
class Welch:
    diff: float       # mean(b) - mean(a)
    se: float         # standard error of diff
    df: float         # Welch–Satterthwaite degrees of freedom
    t: float
    p: float          # two-sided

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """Confidence interval of mean(b) - mean(a)."""
        if not math.isfinite(self.df) or self.se == 0:
            return (self.diff, self.diff)
        h = t_quantile(1 - level, self.df) * self.se
        return (self.diff - h, self.diff + h)


def variance(xs: list[float]) -> float:
    """Sample variance (n - 1) in plain floats: statistics.variance computes exactly with
    fractions, far too slow for thousands of metrics."""
    n = len(xs)
    if n < 2:
        raise ValueError("variance needs at least 2 values")
    m = math.fsum(xs) / n
    return math.fsum((x - m) ** 2 for x in xs) / (n - 1)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                    -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < eps:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lbt = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
           + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1 - math.exp(lbt) * _betacf(b, a, 1 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with df degrees of freedom (df may be fractional)."""
    if math.isnan(t):
        return math.nan
    if math.isinf(t):
        return 0.0
    return min(1.0, betainc(df / 2, 0.5, df / (df + t * t)))


def _t_pdf(t: float, df: float) -> float:
    return math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)
                    - 0.5 * math.log(df * math.pi) - (df + 1) / 2 * math.log1p(t * t / df))


def t_quantile(p_two_sided: float, df: float) -> float:
    """The t >= 0 with P(|T| >= t) = p_two_sided: Newton from the normal quantile, kept
    inside a bracket that bisection narrows whenever a step would leave it."""
    if not 0 < p_two_sided < 1:
        raise ValueError("p must be in (0, 1)")
    lo, hi = 0.0, 1.0
    while t_two_sided_p(hi, df) > p_two_sided:
        lo, hi = hi, hi * 4
    t = min(max(statistics.NormalDist().inv_cdf(1 - p_two_sided / 2), lo), hi)
    for _ in range(100):
        f = t_two_sided_p(t, df) - p_two_sided    # decreasing in t
        if abs(f) < 1e-12 * p_two_sided:
            break
        if f > 0:
            lo = t
        else:
            hi = t
        step = t + f / (2 * _t_pdf(t, df))
        t = step if lo < step < hi else (lo + hi) / 2
        if hi - lo < 1e-12 * max(1.0, t):
            break
    return t


def welch(a: list[float], b: list[float]) -> Welch:
    """Welch's t-test of mean(b) against mean(a); both need at least 2 values. Two samples
    without any spread give p = 1 when their means are equal and p = 0 otherwise."""
    n1, n2 = len(a), len(b)
    if n1 < 2 or n2 < 2:
        raise ValueError("Welch's test needs at least 2 values per side")
    diff = statistics.fmean(b) - statistics.fmean(a)
    v1, v2 = variance(a) / n1, variance(b) / n2
    se = math.sqrt(v1 + v2)
    if se == 0:
        return Welch(diff, 0.0, n1 + n2 - 2, math.copysign(math.inf, diff) if diff else 0.0,
                     0.0 if diff else 1.0)
    df = (v1 + v2) ** 2 / (v1 ** 2 / (n1 - 1) + v2 ** 2 / (n2 - 1))
    t = diff / se
    return Welch(diff, se, df, t, t_two_sided_p(t, df))


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
