"""The fleet screen's statistics, vectorised over each configuration group's nodes x metrics
array (numpy; the normal and t tails and the digamma functions in fleet.special, on the
standard library: scipy.stats cost 0.8 s of import in a report that must take seconds).

Why not "robust z beyond 3.5 on any metric": one test per node and metric, so false alarms
grow with the fleet (57 healthy nodes of 10,000); and in a small group the MAD that scales
z is itself a guess (with 3 nodes it is the smaller gap: 339 of 900 healthy nodes flagged in
300 groups of 3). Here, per metric j of group g (n nodes measured):

1. the spread, with strength borrowed across groups. The group's robust relative variance
   s_g^2 = (c_n 1.4826 MAD / |median|)^2 counts as d_n degrees of freedom; c_n and d_n are
   set, per n, by a seeded simulation of normal groups (mad_constants) so that log s_g^2
   has the mean and variance of a scaled chi-square with d_n df. Where more than half the
   nodes agree exactly (quantised values: the MAD's exact fit, a MAD of 0), 1.2533 x their
   mean absolute deviation from the median stands in, with 0.88 (n - 1) df: a node alone off
   among n - 1 in agreement has t ~ 0.8 n / sqrt(1 + kappa) whatever its gap, so two in
   agreement do not flag a third (t 1.9) and nine flag a tenth (t 7.4). (The rounding
   variance h^2 / 12 of the smallest step h it replaces took the odd node's own gap for h,
   and held its t under 3.46 however far off it was.) Over the groups, the metric's prior s0^2, d0
   is fitted as limma does (Smyth 2004: its hyperparameters from the moments of log s_g^2),
   and the moderated variance is s~^2 = (d0 s0^2 + d_n s_g^2) / (d0 + d_n): a group of 3
   takes its spread mostly from the fleet, a group of 10,000 from itself. A metric no
   other group measured (a group alone) takes its prior from its group's other metrics;
2. each node's moderated t, t_ij = (x_ij - median of the group's other nodes) / (|m_j| s~
   sqrt(1 + kappa_{n-1})), kappa_k the variance of the median of k standard normals (the
   other nodes' median is independent of the node: a slow node does not hide itself),
   referred to Student's t with d0 + d_n df (not the normal tail); w_ij = t_ij turned so
   that positive is worse (the metric's direction), d_ij the % worse than the group median;
3. a metric's practical floor: f_j = max(gap, K_SPREAD x 100 s~): a metric that varies 10 %
   cannot flag a node at 6 %;
4. per node and family (its metrics, when it has 2 or more; and "all" over every metric
   when the node has 2 or more families): the median of w_ij over the family, screened again
   the same way (its spread moderated across the groups by family, not relative) -- a node
   a little worse on most of a family's metrics is found though no one metric is conclusive;
5. one-sided p-values from the t tail; a test under its floor (a metric: d_ij <= f_j; a
   family: the median of d_ij - f_j <= 0), or whose t is under MIN_Z (a fixed `--z` limit:
   that limit, as given), gets p = 1;
6. a node's p-value: min over its k tests x k (Bonferroni inside the node); over the fleet's
   nodes, Benjamini-Hochberg at Q: with R the largest i where p_(i) <= Q i / N, the nodes
   with p <= Q R / N are flagged, and in each, the tests with p x k <= Q R / N.
A group of fewer than MIN_GROUP measured nodes is not judged ("inconclusive"): with two
nodes, which one is off cannot be told.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from numascope.fleet.special import digamma, t_sf, trigamma, trigamma_inv

# MAD x 1.4826 estimates the sd of a normal spread (1 / Phi^-1(3/4); Rousseeuw and Croux,
# "Alternatives to the median absolute deviation", JASA 88, 1993)
SD_PER_MAD = 1.4826
# the mean absolute deviation (from the median) x sqrt(pi / 2) estimates the same sd: the
# modified z-score's scale where the MAD is 0 (IBM Cognos Analytics 11.1, "Modified z score")
SD_PER_MEAN_AD = 1.253314
# ... and it is 1 / (pi - 2) = 88 % as efficient as the sd (Fisher, "A mathematical
# examination of the methods of determining the accuracy of an observation by the mean
# error, and by the mean square error", MNRAS 80, 1920): its variance counts 0.88 (n - 1) df
MEAN_AD_EFFICIENCY = 1 / (math.pi - 2)
# practical floor: a node must be worse than K_SPREAD x the metric's relative sd. A healthy
# node's own repeat lands within 1.96, "or nearly 2", sd of the centre 95 % of the time
# (Fisher, "Statistical Methods for Research Workers", 1925, the 5 % point of the normal):
# an effect under 2 sd could be the node's own run-to-run noise
K_SPREAD = 2.0
# Benjamini-Hochberg false-discovery rate over the fleet's nodes (Benjamini and Hochberg,
# "Controlling the false discovery rate", JRSS B 57, 1995: q = 0.05 in their worked example)
Q = 0.05
# the fewest nodes judged: a median resists one bad node only from three on (its breakdown
# point floor((n-1)/2) / n; Rousseeuw and Leroy, "Robust regression and outlier detection",
# Wiley 1987); with two nodes, which one is off cannot be told
MIN_GROUP = 3
# Iglewicz and Hoaglin's limit for one modified z-score ("How to detect and handle
# outliers", ASQC Basic References in Quality Control vol. 16, 1993): no test flags
# under it whatever the multiple-testing rule allows (BH relaxes as discoveries accrue)
MIN_Z = 3.5
FLOOR_ULP = 1e-9     # a relative margin for "beyond the floor" (the % is a float division)
# the small-sample constants of the MAD (c_n, d_n, kappa): simulated per group size up to
# SIM_MAX_N with SIM_REPS seeded normal groups (docs/sources.md, "Fleet"); beyond, their
# large-n forms scaled from the SIM_MAX_N values: c_n - 1 and kappa as 1 / n, d_n as n (the
# MAD's asymptotic efficiency 0.37: Rousseeuw and Croux 1993)
SIM_REPS = 40_000
SIM_MAX_N = 60
SIM_CHUNK = 5_000


@dataclass
class Prior:
    """Per metric key (and per family name) the fleet's prior spread s0^2 and its df d0
    (0: no prior, a group on its own; inf: the groups share one spread)."""
    metric: dict[str, tuple[float, float]] = field(default_factory=dict)
    family: dict[str, tuple[float, float]] = field(default_factory=dict)


@dataclass
class GroupScreen:
    """One group's statistics: arrays over (nodes, metrics) and (nodes, families)."""
    x: np.ndarray            # (n, m) the nodes' values
    median: np.ndarray       # (m,)
    mad: np.ndarray          # (m,)
    z: np.ndarray            # (n, m) signed moderated t (NaN: not measured, group too small)
    pct: np.ndarray          # (n, m) % from the median
    worse: np.ndarray        # (n, m) % worse than the median (positive = worse)
    floor: np.ndarray        # (m,) practical floor, %
    families: list[tuple[str, np.ndarray]]   # name, metric indices
    fam_z: np.ndarray        # (n, f) combined worse-t (positive = worse)
    fam_worse: np.ndarray    # (n, f) median % worse over the family
    p_metric: np.ndarray     # (n, m) one-sided p, 1 where under the floor or untested
    p_family: np.ndarray     # (n, f)
    spread: np.ndarray = field(default_factory=lambda: np.zeros(0))   # (m,) s~, % of median
    df: np.ndarray = field(default_factory=lambda: np.zeros(0))       # (m,) the t's df
    inconclusive: bool = False   # fewer than MIN_GROUP nodes: not judged

    def tests(self) -> np.ndarray:
        """Tests made per node: its measured metrics and its families."""
        return (np.isfinite(self.z).sum(axis=1) + np.isfinite(self.fam_z).sum(axis=1))

    def node_p(self) -> np.ndarray:
        """Each node's p-value: its smallest test p x its number of tests (Bonferroni)."""
        k = np.maximum(self.tests(), 1)
        pmin = np.minimum(self.p_metric.min(axis=1, initial=1.0),
                          self.p_family.min(axis=1, initial=1.0))
        return np.minimum(pmin * k, 1.0)


def _quiet() -> warnings.catch_warnings:
    """np.nanmedian warns on an all-NaN slice (a metric or family a node did not measure)."""
    return warnings.catch_warnings(action="ignore", category=RuntimeWarning)


def nanmedian(x: np.ndarray, axis: int) -> np.ndarray:
    """np.nanmedian, through np.median when nothing is NaN (np.nanmedian of a small array
    goes through masked arrays: most of the screen's time in a fleet of small groups)."""
    if not np.isnan(x).any():
        return np.median(x, axis=axis)
    with np.errstate(all="ignore"), _quiet():
        return np.nanmedian(x, axis=axis)


def _centre_mad(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    med = nanmedian(x, 0)
    return med, nanmedian(np.abs(x - med), 0)


# -- the MAD's small-sample constants ------------------------------------------------------

@functools.lru_cache(maxsize=256)
def mad_constants(n: int) -> tuple[float, float, float]:
    """(c_n, d_n, kappa) for a group of n: (c_n 1.4826 MAD)^2 has, for normal data, the mean
    log of a scaled chi-square with d_n df of sigma^2 and its variance of log; kappa is the
    variance of the median of the other n - 1 nodes (sigma 1). Simulated, seeded by n."""
    if n > SIM_MAX_N:
        c, d, kappa = mad_constants(SIM_MAX_N)
        r = (SIM_MAX_N - 1) / (n - 1)
        return 1 + (c - 1) * r, d / r, kappa * r
    rng = np.random.default_rng(1000 + n)
    logs, others = [], []
    for _ in range(SIM_REPS // SIM_CHUNK):     # in chunks: a few MB at a time
        z = rng.standard_normal((SIM_CHUNK, n))
        med = np.median(z, axis=1, keepdims=True)
        s2 = (SD_PER_MAD * np.median(np.abs(z - med), axis=1)) ** 2
        logs.append(np.log(s2[s2 > 0]))
        others.append(np.median(z[:, 1:], axis=1) if n > 1 else np.zeros(SIM_CHUNK))
    log_s2 = np.concatenate(logs)
    d = 2 * trigamma_inv(float(np.var(log_s2)))
    # E log(s^2) = log sigma^2 + digamma(d/2) - log(d/2) for a scaled chi-square
    c = math.exp((digamma(d / 2) - math.log(d / 2) - float(np.mean(log_s2))) / 2)
    return c, d, float(np.var(np.concatenate(others)))


def _constants(n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    c, d, k = np.ones(n.shape), np.zeros(n.shape), np.ones(n.shape)
    for v in np.unique(n):
        if v >= 2:
            at = n == v
            c[at], d[at], k[at] = mad_constants(int(v))
    return c, d, k


# -- per group -----------------------------------------------------------------------------

def loo_median(x: np.ndarray) -> np.ndarray:
    """Along axis 0, each value's median of the other finite values (NaN for a NaN value or
    a column of one)."""
    n = x.shape[0]
    order = np.argsort(x, axis=0, kind="stable")           # NaN last
    ys = np.take_along_axis(x, order, axis=0)
    rank = np.empty_like(order)
    arange = np.arange(n).reshape((n,) + (1,) * (x.ndim - 1))
    np.put_along_axis(rank, order, np.broadcast_to(arange, x.shape), axis=0)
    c = np.isfinite(x).sum(axis=0)                        # (m,)
    lo, hi = np.maximum((c - 2) // 2, 0), np.maximum((c - 1) // 2, 0)
    ilo = np.minimum(lo[None, :] + (lo[None, :] >= rank), n - 1)
    ihi = np.minimum(hi[None, :] + (hi[None, :] >= rank), n - 1)
    out = (np.take_along_axis(ys, ilo, axis=0) + np.take_along_axis(ys, ihi, axis=0)) / 2
    return np.where(np.isfinite(x) & (c >= 2)[None, :], out, np.nan)


@dataclass
class _Spread:
    """A group's columns before moderation: centre, MAD, measured count, own variance (in
    the scale the t uses: relative or absolute), its df, and kappa."""
    med: np.ndarray
    mad: np.ndarray
    n: np.ndarray
    s2: np.ndarray
    d: np.ndarray
    kappa: np.ndarray
    raw_zero: np.ndarray     # the MAD was 0 (not used to fit the prior)


def _spread(x: np.ndarray, relative: bool) -> _Spread:
    med, mad = _centre_mad(x)
    n = np.isfinite(x).sum(axis=0)
    c, d, kappa = _constants(n)
    with np.errstate(divide="ignore", invalid="ignore"), _quiet():
        scale = np.where(med != 0, np.abs(med), np.nan) if relative else np.ones(med.shape)
        s2 = (c * SD_PER_MAD * mad / scale) ** 2
        # the MAD's exact fit: more than half the nodes agree exactly (rounded values), the
        # MAD is 0 and the mean absolute deviation stands for it (module doc, step 1)
        mean_ad = np.nanmean(np.abs(x - med), axis=0)
        s2 = np.where(mad == 0, (SD_PER_MEAN_AD * mean_ad / scale) ** 2, s2)
    s2 = np.where(np.isfinite(s2), s2, np.nan)
    # the mean absolute deviation's df: its efficiency for a normal sd is 1 / (pi - 2)
    d = np.where(mad == 0, (n - 1) * MEAN_AD_EFFICIENCY, d)
    return _Spread(med, mad, n, s2, np.where(n >= MIN_GROUP, d, 0.0), kappa, mad == 0)


def fit_prior(s2: list[float], d: list[float]) -> tuple[float, float]:
    """(s0^2, d0) from the groups' variances s2 with their df d, as limma's fitFDist (Smyth
    2004): e_g = log s_g^2 - digamma(d_g/2) + log(d_g/2); trigamma(d0/2) = the mean of
    (e_g - mean e)^2 G/(G-1) - trigamma(d_g/2). When the groups' differences are sampling
    alone (d0 infinite), they share one spread: the df-weighted pooled variance, with their
    summed df (d0 is never more than the groups measured)."""
    pairs = [(v, k) for v, k in zip(s2, d) if k > 0 and v > 0 and math.isfinite(v)]
    if len(pairs) < 2:
        return 0.0, 0.0
    e = [math.log(v) - digamma(k / 2) + math.log(k / 2) for v, k in pairs]
    g = len(e)
    mean = sum(e) / g
    rhs = sum((ei - mean) ** 2 for ei in e) / (g - 1) - sum(trigamma(k / 2)
                                                            for _, k in pairs) / g
    total = sum(k for _, k in pairs)
    if rhs <= 0:
        return sum(v * k for v, k in pairs) / total, total
    d0 = min(2 * trigamma_inv(rhs), total)
    return math.exp(mean + digamma(d0 / 2) - math.log(d0 / 2)), d0


def _priors(sp: _Spread, names: list[str], fleet: dict[str, tuple[float, float]]
            ) -> tuple[np.ndarray, np.ndarray]:
    """(s0^2, d0) per (group, column): the fleet's prior for the name where other groups
    gave one, else one fitted across the group's own columns (its other metrics: limma's
    own setting, Smyth 2004, where the genes lend each other their spread) -- a group
    alone, or a metric only its group measured."""
    s0 = np.array([fleet.get(k, (0.0, 0.0))[0] for k in names], dtype=float)
    d0 = np.array([fleet.get(k, (0.0, 0.0))[1] for k in names], dtype=float)
    s0, d0 = np.broadcast_to(s0, sp.s2.shape).copy(), np.broadcast_to(d0, sp.s2.shape).copy()
    lack = d0 == 0
    for b in np.nonzero(lack.any(axis=-1))[0]:
        use = (sp.n[b] >= MIN_GROUP) & ~sp.raw_zero[b] & np.isfinite(sp.s2[b])
        s0[b, lack[b]], d0[b, lack[b]] = fit_prior(sp.s2[b, use].tolist(),
                                                   sp.d[b, use].tolist())
    return s0, d0


def _moderate(sp: _Spread, s0: np.ndarray, d0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(s~^2, df) per column."""
    s2 = np.nan_to_num(sp.s2)
    with np.errstate(invalid="ignore", divide="ignore"):
        mod = np.where(d0 > 0, (d0 * s0 + sp.d * s2) / (d0 + sp.d), s2)
    return mod, d0 + sp.d


def _t(x: np.ndarray, sp: _Spread, s2: np.ndarray, relative: bool) -> np.ndarray:
    """The moderated t of every value: its distance from the median of the other nodes, in
    units of the spread that distance has."""
    e = x - loo_median(x)
    scale = np.abs(sp.med) if relative else np.ones(sp.med.shape)
    sd = scale * np.sqrt(s2 * (1 + sp.kappa))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = e / sd
    zero = (sd == 0) & np.isfinite(e)
    t = np.where(zero, np.where(e == 0, 0.0, np.copysign(np.inf, e)), t)
    judged = (sp.n >= MIN_GROUP) & (scale != 0)       # a median of 0 has no relative spread
    return np.where(judged[None, :], t, np.nan)


def _p(wt: np.ndarray, df: np.ndarray, beyond_floor: np.ndarray, min_z: float = MIN_Z
       ) -> np.ndarray:
    """One-sided t p of a worse-t; 1 where untested, under min_z or under the floor."""
    wt = np.nan_to_num(wt, nan=-np.inf, posinf=np.inf, neginf=-np.inf)
    p = np.ones(wt.shape)
    hit = beyond_floor & (wt > min_z)
    dfs = np.broadcast_to(df, wt.shape)
    p[hit] = [t_sf(float(t), float(v)) for t, v in zip(wt[hit], dfs[hit])]
    return p


@dataclass
class GroupInput:
    """One group to screen: its nodes x metrics values, directions, metric keys (what
    pools a metric across groups) and the family of each metric."""
    x: np.ndarray
    higher_is_better: np.ndarray
    keys: list[str]
    family_of: list[str]


def _families(family_of: list[str], m: int) -> list[tuple[str, np.ndarray]]:
    fams: dict[str, list[int]] = {}
    for j, f in enumerate(family_of):
        fams.setdefault(f, []).append(j)
    out = [(f, np.array(ix)) for f, ix in fams.items() if len(ix) >= 2]
    if len(fams) >= 2:
        out.append(("all", np.arange(m)))
    return out


def _batches(groups: list[GroupInput]) -> list[list[int]]:
    """Indices of the groups that stack into one (nodes, groups, metrics) array: the same
    node count, metrics, directions and families (a fleet of 3,000 groups of 3 is then a
    few numpy calls, not 3,000 of each)."""
    by: dict[tuple, list[int]] = {}
    for i, g in enumerate(groups):
        key = (g.x.shape[0], tuple(g.keys), tuple(bool(h) for h in g.higher_is_better),
               tuple(g.family_of))
        by.setdefault(key, []).append(i)
    return list(by.values())


def screen_fleet(groups: list[GroupInput], gap_pct: float, k_spread: float = K_SPREAD,
                 prior: Prior | None = None, min_z: float = MIN_Z
                 ) -> tuple[list[GroupScreen], Prior]:
    """Every group screened, each metric's (and family's) spread moderated over the groups;
    `prior` given (a second look at the same fleet): that one, not refitted. A test's p is
    1 under `min_z` (least_z: MIN_Z, or a fixed limit's own value). The arrays are (nodes,
    groups, metrics): a batch of same-shaped groups at once."""
    batches = _batches(groups)
    xs = [np.stack([groups[i].x for i in ix], axis=1) for ix in batches]
    heads = [groups[ix[0]] for ix in batches]
    spreads = [_spread(x, relative=True) for x in xs]
    fit = prior is None
    prior = prior or Prior()
    if fit:
        prior.metric = _fit_by_name(spreads, [h.keys for h in heads])
    stage = []
    for x, h, sp in zip(xs, heads, spreads):
        s2, df = _moderate(sp, *_priors(sp, h.keys, prior.metric))
        sign = np.where(h.higher_is_better, -1.0, 1.0)
        t = _t(x, sp, s2, relative=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            pct = np.where(sp.med != 0, (x - sp.med) / np.abs(sp.med) * 100, np.nan)
        spread_pct = 100 * np.sqrt(s2)
        floor = np.maximum(gap_pct, k_spread * np.nan_to_num(spread_pct))
        fams = _families(h.family_of, x.shape[-1])
        score, fam_worse, fam_excess = _family_scores(x, t * sign, pct * sign, floor, fams)
        stage.append((t, pct, sign, s2, df, floor, fams, score, fam_worse, fam_excess))
    fam_spreads = [_spread(st[7], relative=False) for st in stage]
    if fit:
        prior.family = _fit_by_name(fam_spreads, [[f for f, _ in st[6]] for st in stage])
    out: list[GroupScreen | None] = [None] * len(groups)
    for ix, x, sp, fsp, (t, pct, sign, s2, df, floor, fams, score, fam_worse, fam_excess) in \
            zip(batches, xs, spreads, fam_spreads, stage):
        fs2, fdf = _moderate(fsp, *_priors(fsp, [f for f, _ in fams], prior.family))
        fam_t = _t(score, fsp, fs2, relative=False)
        worse = pct * sign
        # beyond the floor by more than the rounding of the division: a value one step of
        # 5 % off reads 5.000000000000001 % worse, and is not beyond a 5 % floor
        p_m = _p(t * sign, df, worse > floor * (1 + FLOOR_ULP), min_z)
        p_f = _p(fam_t, fdf, fam_excess > gap_pct * FLOOR_ULP, min_z)
        small = sp.n.max(axis=-1, initial=0) < MIN_GROUP
        for b, i in enumerate(ix):
            out[i] = GroupScreen(x[:, b], sp.med[b], sp.mad[b], t[:, b], pct[:, b],
                                 worse[:, b], floor[b], fams, fam_t[:, b], fam_worse[:, b],
                                 p_m[:, b], p_f[:, b], 100 * np.sqrt(s2[b]), df[b],
                                 bool(small[b]))
    return [sc for sc in out if sc is not None], prior


def _fit_by_name(spreads: list[_Spread], names: list[list[str]]
                 ) -> dict[str, tuple[float, float]]:
    """Each name's prior (s0^2, d0) from the groups that measured it with some spread
    (spreads: one per batch, (groups, names) arrays)."""
    got: dict[str, tuple[list[float], list[float]]] = {}
    for sp, ns in zip(spreads, names):
        use = (sp.n >= MIN_GROUP) & ~sp.raw_zero & np.isfinite(sp.s2)
        for j, k in enumerate(ns):
            if use[:, j].any():
                v, d = got.setdefault(k, ([], []))
                v += sp.s2[use[:, j], j].tolist()
                d += sp.d[use[:, j], j].tolist()
    return {k: fit_prior(v, d) for k, (v, d) in got.items()}


def _family_scores(x: np.ndarray, wt: np.ndarray, worse: np.ndarray, floor: np.ndarray,
                   families: list[tuple[str, np.ndarray]]
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per node and family: the median worse-t (NaN for a node with under 2 of its
    metrics), the median % worse, the median % beyond the floors (metrics on the last
    axis)."""
    shape = x.shape[:-1] + (len(families),)
    score = np.full(shape, np.nan)
    fam_worse = np.full(shape, np.nan)
    fam_excess = np.full(shape, np.nan)
    measured = np.isfinite(x)
    with np.errstate(all="ignore"), _quiet():
        for c, (_, ix) in enumerate(families):
            enough = measured[..., ix].sum(axis=-1) >= 2
            s = nanmedian(np.clip(wt[..., ix], -1e6, 1e6), -1)
            score[..., c] = np.where(enough & np.isfinite(s), s, np.nan)
            fam_worse[..., c] = nanmedian(worse[..., ix], -1)
            fam_excess[..., c] = nanmedian(worse[..., ix] - floor[..., ix], -1)
    return score, fam_worse, fam_excess


def screen_group(x: np.ndarray, higher_is_better: np.ndarray, family_of: list[str],
                 gap_pct: float, k_spread: float = K_SPREAD, keys: list[str] | None = None,
                 prior: Prior | None = None, min_z: float = MIN_Z) -> GroupScreen:
    """One group on its own (x: nodes x metrics, NaN where not measured): no other group
    to borrow spread from unless `prior` (the fleet's, from screen_fleet) is given."""
    keys = keys if keys is not None else [f"{f}#{j}" for j, f in enumerate(family_of)]
    g = GroupInput(x, np.asarray(higher_is_better, dtype=bool), keys, family_of)
    return screen_fleet([g], gap_pct, k_spread, prior, min_z)[0][0]


def least_z(fixed_z: float | None) -> float:
    """The t under which no test flags: MIN_Z under the false-discovery rule; a fixed
    limit (`fleet report --z`) is its own, under 3.5 too (its rule is "t > Z", as said)."""
    return MIN_Z if fixed_z is None else fixed_z


def bh_cutoff(node_p: np.ndarray, q: float = Q) -> float | None:
    """The Benjamini-Hochberg cut-off over the nodes' p-values: q R / N for the largest R
    with p_(R) <= q R / N (the nodes with p <= it are exactly the R discoveries), or None
    when there is none (nothing flagged)."""
    p = np.sort(node_p[np.isfinite(node_p)])
    ok = p <= q * np.arange(1, p.size + 1) / max(p.size, 1)
    return q * (int(np.nonzero(ok)[0][-1]) + 1) / p.size if ok.any() else None


def z_for(p: float) -> float:
    """The one-sided normal z whose tail is p (inf for p = 0)."""
    if p <= 0:
        return float("inf")
    return -NormalDist().inv_cdf(p) if p < 1 else float("-inf")
