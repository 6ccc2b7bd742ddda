"""Statistics for comparing repetitions, without scipy.

- Mann–Whitney U (two-sided): exact p-value from the permutation distribution of U when
  both samples are small and have no ties; otherwise the normal approximation with tie
  correction and continuity correction.
- Bootstrap confidence interval of the ratio of medians (B / A), percentile method, with a
  fixed seed so the same data give the same interval.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass
from functools import lru_cache

EXACT_MAX = 25   # exact U distribution when both samples are at most this large, no ties


@dataclass
class MWU:
    u: float          # U statistic of the first sample
    p: float          # two-sided p-value
    method: str       # "exact" or "normal"


def _ranks(values: list[float]) -> tuple[list[float], list[int]]:
    """Mid-ranks (1-based) and the sizes of tie groups."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    ties: list[int] = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        mid = (i + j) / 2 + 1
        for k in range(i, j + 1):
            ranks[order[k]] = mid
        ties.append(j - i + 1)
        i = j + 1
    return ranks, ties


@lru_cache(maxsize=256)
def _u_counts(n1: int, n2: int) -> tuple[int, ...]:
    """Number of arrangements giving each U = 0 … n1*n2 (classic recurrence)."""
    # f[i][j][u]: built row by row; memory n1*n2*(n1*n2) is fine for n <= EXACT_MAX.
    prev = [[1] + [0] * 0 for _ in range(n2 + 1)]  # i = 0: only U = 0
    for i in range(1, n1 + 1):
        cur = [[1]]  # j = 0: only U = 0
        for j in range(1, n2 + 1):
            a, b = prev[j], cur[j - 1]   # a: shift by j (i-th x is above all j ys), b: no shift
            size = i * j + 1
            row = [0] * size
            for u, c in enumerate(b):
                row[u] += c
            for u, c in enumerate(a):
                row[u + j] += c
            cur.append(row)
        prev = cur
    return tuple(prev[n2])


def smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided p-value the exact rank test can give with n1 and n2 samples
    (all of one side above all of the other): with 3 vs 3 it is 0.1, so no difference
    between two such runs can ever be called significant at 5 %."""
    return min(1.0, 2 / math.comb(n1 + n2, n1)) if n1 and n2 else 1.0


def mann_whitney_u(a: list[float], b: list[float]) -> MWU:
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return MWU(math.nan, math.nan, "none")
    ranks, ties = _ranks(list(a) + list(b))
    r1 = sum(ranks[:n1])
    u1 = r1 - n1 * (n1 + 1) / 2
    has_ties = any(t > 1 for t in ties)
    if not has_ties and n1 <= EXACT_MAX and n2 <= EXACT_MAX:
        counts = _u_counts(n1, n2)
        total = sum(counts)
        u = min(u1, n1 * n2 - u1)
        tail = sum(counts[: int(u) + 1]) / total
        return MWU(u1, min(1.0, 2 * tail), "exact")
    n = n1 + n2
    mu = n1 * n2 / 2
    tie_term = sum(t ** 3 - t for t in ties) / (n * (n - 1)) if n > 1 else 0.0
    var = n1 * n2 / 12 * ((n + 1) - tie_term)
    if var <= 0:
        return MWU(u1, 1.0, "normal")
    z = (abs(u1 - mu) - 0.5) / math.sqrt(var)
    p = math.erfc(max(z, 0.0) / math.sqrt(2))
    return MWU(u1, min(1.0, p), "normal")


def bootstrap_median_ratio(a: list[float], b: list[float], level: float = 0.95,
                           rounds: int = 2000, seed: int = 12345) -> tuple[float, float]:
    """Percentile bootstrap interval of median(b) / median(a)."""
    if not a or not b:
        return (math.nan, math.nan)
    rng = random.Random(seed)
    ratios = []
    for _ in range(rounds):
        ma = statistics.median(rng.choices(a, k=len(a)))
        mb = statistics.median(rng.choices(b, k=len(b)))
        if ma:
            ratios.append(mb / ma)
    if not ratios:
        return (math.nan, math.nan)
    ratios.sort()
    lo = ratios[int((1 - level) / 2 * (len(ratios) - 1))]
    hi = ratios[int((1 + level) / 2 * (len(ratios) - 1))]
    return (lo, hi)
