"""numascope's statistics agree with the libraries that define them: Welch's and the
one-sample t-test and their intervals with scipy.stats, Holm's adjustment with statsmodels'
multipletests(method="holm"), the fleet screen's Benjamini-Hochberg cut-off with
multipletests(method="fdr_bh"), and its median absolute deviation with
scipy.stats.median_abs_deviation. statsmodels is a test dependency only."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from scipy import stats as sps

from numascope.analysis.stats import (
    holm,
    one_sample,
    pooled_sd,
    t_quantile,
    t_two_sided_p,
    variance,
    welch,
)
from numascope.fleet import screen

multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests

SEEDS = range(8)


def _samples(seed: int) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(seed)
    a = rng.normal(0.0, rng.uniform(0.1, 2), rng.integers(2, 12))
    b = rng.normal(rng.uniform(-1, 1), rng.uniform(0.1, 2), rng.integers(2, 12))
    return a.tolist(), b.tolist()


def _interval(r, level: float, diff: float, se: float) -> tuple[float, float]:
    """scipy's own interval of a t-test result (scipy >= 1.11 for ttest_ind), else the
    textbook diff -+ t_(1-(1-level)/2, df) se."""
    if hasattr(r, "confidence_interval"):
        ci = r.confidence_interval(level)
        return (ci.low, ci.high)
    h = sps.t.ppf(1 - (1 - level) / 2, r.df) * se
    return (diff - h, diff + h)


@pytest.mark.parametrize("seed", SEEDS)
def test_welch_is_scipy_ttest_ind_unequal_var(seed):
    a, b = _samples(seed)
    w = welch(a, b)
    r = sps.ttest_ind(b, a, equal_var=False)
    assert w.t == pytest.approx(r.statistic, rel=1e-12)
    assert w.p == pytest.approx(r.pvalue, rel=1e-12)
    assert w.df == pytest.approx(r.df, rel=1e-12)
    assert w.diff == pytest.approx(np.mean(b) - np.mean(a), rel=1e-12, abs=1e-15)
    assert w.t == pytest.approx(w.diff / w.se, rel=1e-12)
    for level in (0.9, 0.95, 0.99):
        assert w.interval(level) == pytest.approx(_interval(r, level, w.diff, w.se),
                                                  rel=1e-10)


@pytest.mark.parametrize("seed", SEEDS)
def test_one_sample_is_scipy_ttest_1samp(seed):
    xs = _samples(seed)[1]
    t = one_sample(xs)
    r = sps.ttest_1samp(xs, 0.0)
    assert (t.t, t.p, t.df) == pytest.approx((r.statistic, r.pvalue, r.df), rel=1e-12)
    assert t.interval(0.95) == pytest.approx(_interval(r, 0.95, t.diff, t.se), rel=1e-10)


def test_interval_without_spread_and_bad_level():
    t = welch([1.0, 1.0], [2.0, 2.0])
    assert t.interval() == (1.0, 1.0) and not t.tested
    with pytest.raises(ValueError):
        welch([1.0, 2.0], [2.0, 3.5]).interval(1.0)


@pytest.mark.parametrize("df", [1, 2.5, 9, 40.3, 1e6])
def test_t_tail_and_quantile_are_scipy_t(df):
    for t in (0.0, 0.5, 2.0, 7.0):
        assert t_two_sided_p(t, df) == pytest.approx(2 * sps.t.sf(t, df), rel=1e-12)
        assert t_two_sided_p(-t, df) == t_two_sided_p(t, df)
    for p in (0.001, 0.05, 0.5):
        assert t_quantile(p, df) == pytest.approx(sps.t.ppf(1 - p / 2, df), rel=1e-10)


@pytest.mark.parametrize("seed", SEEDS)
def test_variance_and_pooled_sd(seed):
    a, b = _samples(seed)
    assert variance(a) == pytest.approx(statistics.variance(a), rel=1e-12)
    assert variance(b) == pytest.approx(np.var(b, ddof=1), rel=1e-12)
    pooled = ((len(a) - 1) * np.var(a, ddof=1) + (len(b) - 1) * np.var(b, ddof=1)) \
        / (len(a) + len(b) - 2)
    assert pooled_sd(a, b) == pytest.approx(math.sqrt(pooled), rel=1e-12)


def _p_vectors():
    rng = np.random.default_rng(2024)
    for m in (1, 2, 3, 5, 10, 40, 200):
        yield rng.uniform(0, 1, m)                            # all nulls
        yield rng.uniform(0, 0.02, m)                         # all small
        yield np.concatenate([rng.uniform(0, 1e-4, m // 2 + 1), rng.uniform(0, 1, m)])
    yield np.array([0.01, 0.04, 0.03, 0.005])                 # test_compare's example
    yield np.array([0.01, 0.01, 0.02, 0.02, 0.5, 0.5, 1.0])   # ties and a 1
    yield np.array([0.0, 0.3, 0.0, 0.9])                      # exact zeros


@pytest.mark.parametrize("p", list(_p_vectors()), ids=lambda p: f"m{len(p)}")
def test_holm_is_statsmodels_holm(p):
    ours = holm(p.tolist())
    theirs = multipletests(p, alpha=0.05, method="holm")[1]
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)


def test_holm_of_nothing():
    assert holm([]) == []


@pytest.mark.parametrize("p", list(_p_vectors()), ids=lambda p: f"m{len(p)}")
@pytest.mark.parametrize("q", [0.05, 0.1])
def test_screen_bh_cutoff_flags_what_statsmodels_fdr_bh_rejects(p, q):
    reject = multipletests(p, alpha=q, method="fdr_bh")[0]
    cut = screen.bh_cutoff(p, q)
    if not reject.any():
        assert cut is None
    else:
        assert cut is not None
        np.testing.assert_array_equal(p <= cut, reject)


def test_screen_bh_cutoff_ignores_nan():
    p = np.array([0.001, np.nan, 0.004, 0.6, np.nan, 0.02])
    finite = p[np.isfinite(p)]
    reject = multipletests(finite, alpha=0.05, method="fdr_bh")[0]
    np.testing.assert_array_equal(finite <= screen.bh_cutoff(p), reject)


@pytest.mark.parametrize("seed", SEEDS)
def test_screen_median_and_mad_are_scipy_median_abs_deviation(seed):
    rng = np.random.default_rng(seed)
    x = rng.lognormal(3, 0.2, (25, 6))
    x[rng.uniform(size=x.shape) < 0.1] = np.nan               # metrics some nodes lack
    g = screen.screen_group(x, np.ones(6, bool), ["a", "a", "b", "b", "c", "c"], 5.0)
    np.testing.assert_allclose(g.median, np.nanmedian(x, axis=0), rtol=1e-14)
    np.testing.assert_allclose(
        g.mad, sps.median_abs_deviation(x, axis=0, nan_policy="omit"), rtol=1e-14)
    # 1.4826 MAD is scipy's scale="normal" to the 5 digits the screen uses
    assert screen.SD_PER_MAD == pytest.approx(
        sps.median_abs_deviation([0.0, 1.0], scale="normal") / 0.5, rel=1e-5)
