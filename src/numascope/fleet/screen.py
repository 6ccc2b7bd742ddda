"""The fleet screen's statistics on one configuration group, vectorised over a nodes x
metrics array (numpy; the normal distribution from the standard library's NormalDist and
math.erfc: scipy.stats cost 0.8 s of import in a report that must take seconds).

Why not "robust z beyond 3.5 on any metric": that rule makes one test per node and metric,
so its false alarms grow with the fleet (57 healthy nodes flagged at 10,000 nodes x 40
metrics). Here the false alarms are controlled per fleet instead:

1. per metric j: median m_j, MAD_j, robust sd s_j = 1.4826 MAD_j; each node's signed
   robust z_ij = (x_ij - m_j) / s_j (the modified z), its worse-% d_ij (how much worse than
   m_j, positive = worse, by the metric's direction) and worse-z w_ij (z_ij, positive =
   worse);
2. a metric's practical floor: f_j = max(gap, K_SPREAD x 100 s_j / |m_j|). The healthy nodes
   of a group are identical runs of the metric, so s_j is its run-to-run spread (with the
   node-to-node spread in it): a metric that varies 10 % cannot flag a node at 6 %;
3. per node and family (its metrics, when it has 2 or more; and "all" over every metric
   when the node has 2 or more families): the median of w_ij over the family, standardised
   again across the group by its own median and MAD (so its null spread is measured, not
   assumed: metrics of one family are correlated) -- a node a little worse on most of a
   family's metrics is found though no single metric is conclusive;
4. one-sided p-values from the normal distribution, p = 1 - Phi(z); a test whose effect is
   under its floor (a metric: d_ij <= f_j; a family: the median of d_ij - f_j <= 0), or
   whose z is under MIN_Z (3.5), gets p = 1: it cannot flag;
5. a node's p-value: min over its k tests x k (Bonferroni inside the node, valid whatever
   the dependence between its tests); over the nodes of the whole fleet, Benjamini-Hochberg
   at Q: with R the largest i where p_(i) <= Q i / N, the nodes with p <= Q R / N are
   flagged, and in each, the tests with p x k <= Q R / N. The expected share of healthy nodes among the
   flagged is at most Q (with no slow node: the chance of any flag at all is at most Q).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

SD_PER_MAD = 1.4826      # MAD x 1.4826 estimates the sd of a normal spread
K_SPREAD = 2.0           # practical floor: K_SPREAD x the metric's robust relative sd
Q = 0.05                 # Benjamini-Hochberg false-discovery rate over the fleet's nodes
MIN_GROUP = 3
# Iglewicz and Hoaglin's limit for one modified z-score: no test flags under it whatever
# the multiple-testing rule allows (BH relaxes as discoveries accrue, and in a small group
# the MAD that scales z is itself uncertain)
MIN_Z = 3.5


@dataclass
class GroupScreen:
    """One group's statistics: arrays over (nodes, metrics) and (nodes, families)."""
    x: np.ndarray            # (n, m) the nodes' values
    median: np.ndarray       # (m,)
    mad: np.ndarray          # (m,)
    z: np.ndarray            # (n, m) signed robust z (NaN: not measured, or group too small)
    pct: np.ndarray          # (n, m) % from the median
    worse: np.ndarray        # (n, m) % worse than the median (positive = worse)
    floor: np.ndarray        # (m,) practical floor, %
    families: list[tuple[str, np.ndarray]]   # name, metric indices
    fam_z: np.ndarray        # (n, f) combined worse-z (positive = worse)
    fam_worse: np.ndarray    # (n, f) median % worse over the family
    p_metric: np.ndarray     # (n, m) one-sided p, 1 where under the floor or untested
    p_family: np.ndarray     # (n, f)

    def tests(self) -> np.ndarray:
        """Tests made per node: its measured metrics and its families."""
        return (np.isfinite(self.z).sum(axis=1) + np.isfinite(self.fam_z).sum(axis=1))

    def node_p(self) -> np.ndarray:
        """Each node's p-value: its smallest test p x its number of tests (Bonferroni)."""
        k = np.maximum(self.tests(), 1)
        pmin = np.minimum(self.p_metric.min(axis=1, initial=1.0),
                          self.p_family.min(axis=1, initial=1.0))
        return np.minimum(pmin * k, 1.0)


def _robust_z(x: np.ndarray, centre: np.ndarray, mad: np.ndarray) -> np.ndarray:
    """(x - centre) / (1.4826 MAD) columnwise; with MAD 0, 0 at the centre and +-inf off."""
    d = x - centre
    with np.errstate(divide="ignore", invalid="ignore"):
        z = d / (SD_PER_MAD * mad)
    zero = (mad == 0) & np.isfinite(d)
    return np.where(zero, np.where(d == 0, 0.0, np.copysign(np.inf, d)), z)


def _centre_mad(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(all="ignore"), _quiet():
        med = np.nanmedian(x, axis=0)
        mad = np.nanmedian(np.abs(x - med), axis=0)
    return med, mad


def _quiet() -> warnings.catch_warnings:
    """np.nanmedian warns on an all-NaN slice (a metric or family a node did not measure)."""
    return warnings.catch_warnings(action="ignore", category=RuntimeWarning)


def screen_group(x: np.ndarray, higher_is_better: np.ndarray, family_of: list[str],
                 gap_pct: float, k_spread: float = K_SPREAD) -> GroupScreen:
    """The statistics of one group: x is (nodes, metrics), NaN where not measured."""
    n, m = x.shape
    med, mad = _centre_mad(x)
    sign = np.where(higher_is_better, -1.0, 1.0)         # worse = below for higher-is-better
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = np.where(med != 0, (x - med) / np.abs(med) * 100, np.nan)
        rel_sd = np.where(med != 0, SD_PER_MAD * mad / np.abs(med) * 100, 0.0)
    worse = pct * sign
    floor = np.maximum(gap_pct, k_spread * np.nan_to_num(rel_sd))
    if n >= MIN_GROUP:
        z = _robust_z(x, med, mad)
    else:
        z = np.full_like(x, np.nan)
    wz = z * sign

    fams: dict[str, list[int]] = {}
    for j, f in enumerate(family_of):
        fams.setdefault(f, []).append(j)
    families = [(f, np.array(ix)) for f, ix in fams.items() if len(ix) >= 2]
    if len(fams) >= 2:
        families.append(("all", np.arange(m)))
    fam_z = np.full((n, len(families)), np.nan)
    fam_worse = np.full((n, len(families)), np.nan)
    fam_excess = np.full((n, len(families)), np.nan)
    measured = np.isfinite(x)
    with np.errstate(all="ignore"), _quiet():
        for c, (_, ix) in enumerate(families):
            # a node with one metric of the family has no combined evidence to give
            enough = measured[:, ix].sum(axis=1) >= 2
            score = np.nanmedian(wz[:, ix], axis=1)
            fam_worse[:, c] = np.nanmedian(worse[:, ix], axis=1)
            fam_excess[:, c] = np.nanmedian(worse[:, ix] - floor[ix], axis=1)
            score = np.where(enough & np.isfinite(score), score, np.nan)
            if n >= MIN_GROUP and np.isfinite(score).sum() >= MIN_GROUP:
                c_med, c_mad = _centre_mad(score[:, None])
                fam_z[:, c] = _robust_z(score[:, None], c_med, c_mad)[:, 0]
    p_metric = _p(wz, worse > floor)
    p_family = _p(fam_z, fam_excess > 0)
    return GroupScreen(x, med, mad, z, pct, worse, floor, families, fam_z, fam_worse,
                       p_metric, p_family)


def _p(wz: np.ndarray, beyond_floor: np.ndarray) -> np.ndarray:
    """One-sided normal p of a worse-z; 1 where untested, under MIN_Z or under the practical
    floor."""
    wz = np.nan_to_num(wz, nan=-np.inf, posinf=np.inf, neginf=-np.inf)
    p = np.ones(wz.shape)
    hit = beyond_floor & (wz > MIN_Z)
    p[hit] = [norm_sf(z) for z in wz[hit]]
    return p


def norm_sf(z: float) -> float:
    """The standard normal's upper tail 1 - Phi(z) = erfc(z / sqrt 2) / 2 (accurate far out,
    where 1 - cdf would round to 0)."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


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
