"""Bandwidth repetitions faster than the others allow: noise to report, never a result; and
the limit past which that rule stops excluding and says the run was disturbed instead.

Anything can slow a repetition down (preemption, another process, a frequency drop), but
nothing makes memory faster than it is: the repetitions have a long low tail and a ceiling.
A repetition far above the rest is a broken one (e.g. a timing window that missed work),
not a lucky one, so it is excluded from the statistics and listed in the record instead.

The rule, per variant, on GB/s (one-sided: only fast repetitions are suspect). With m the
median and MAD the median absolute deviation of the repetitions, a repetition v is
implausible when both hold:
    (v - m) / (1.4826 * MAD) > Z_LIMIT       a robust z-score (1.4826 * MAD estimates the
                                             standard deviation of normal noise), and
    v > (1 + MIN_EXCESS) * m                 well above the median, which also decides when
                                             MAD is 0 (identical repetitions).
Z_LIMIT 3.5 is the outlier threshold for the modified z-score of B. Iglewicz and D. C.
Hoaglin, "How to Detect and Handle Outliers" (ASQC Quality Press, 1993). With fewer than
MIN_REPS repetitions nothing is judged: the MAD of three or four values is too unsteady to
tell noise from signal (numascope run's quick profile takes 5, bw's default --reps more).

Exclusion that cannot bias. Broken repetitions are rare and independent; a rule that fires
on many of them has found a disturbed run (memory shared with other work: the repetitions
fall in two modes), and excluding its fast mode would report the slow one as the machine's
figure. So a variant is BIMODAL, nothing of it excluded, when either holds:
  (a) the rule would exclude more than allowed(n) = max(1, floor(MAX_SHARE * n)) of its n
      repetitions;
  (b) its repetitions split into two modes (split() below), each of more than allowed(n)
      repetitions, and every repetition of the fast mode is implausible by the rule above
      taken against the slow mode alone (its median and MAD): the rule's own test, asked of
      a fast mode too large to be its minority (29 fast of 49 put the median in it).
MAX_SHARE 10 %, by a binomial argument: if an undisturbed run breaks each repetition
independently with probability p, it breaks more than allowed(n) of n with probability at
most 1.5 % for p = 1 % (worst at n = 19; 0.4 % for p = 0.5 %), for any n from 5 to 1000.
Measured: 1 implausible of 4,000 triad repetitions (1 thread, 64 MiB arrays, 10 calls x 4
variants x 100) at a quiet moment of the 2-core development VM, Nov 2026; while four other
builds ran, 2.7 % with 1 thread and bimodal variants with 2 (docs/bw.md). And the bias an exclusion can cause is bounded by it: the
median of what is kept after dropping at most 10 % from the top is at worst the 45th
percentile of all repetitions.

The modes: the sorted values cut where the sum of squared deviations from each side's mean
is least (2-means, exact in one dimension: W. D. Fisher, "On Grouping for Maximum
Homogeneity", JASA 53, 1958); no split when all values are equal."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

Z_LIMIT = 3.5
MIN_EXCESS = 0.25
MIN_REPS = 5
MAD_TO_SIGMA = 1.4826
MAX_SHARE = 0.10
RULE = (f"a repetition is excluded as implausible when it is more than {Z_LIMIT} robust "
        f"standard deviations ({MAD_TO_SIGMA} x MAD) and more than {MIN_EXCESS:.0%} above "
        f"the median of its variant's repetitions")
SHARE_RULE = (f"when the rule would exclude more than max(1, {MAX_SHARE:.0%} of the "
              "repetitions), or the repetitions split into two modes (2-means) of more than "
              "that many each with the fast one implausible against the slow one, nothing is "
              "excluded and the case is marked bimodal: a disturbed run")
SOURCE = ("Z 3.5: Iglewicz and Hoaglin, How to Detect and Handle Outliers (1993); "
          f"{MAX_SHARE:.0%}: binomial, an undisturbed run breaking each repetition with "
          "probability 1 % exceeds it with probability <= 1.5 % (numascope.sources)")


@dataclass(frozen=True)
class Mode:
    """One of two modes of a variant's repetitions."""
    median: float
    reps: int
    low: float
    high: float

    def to_dict(self) -> dict[str, Any]:
        return {"median": self.median, "reps": self.reps, "min": self.low, "max": self.high}


@dataclass
class Screened:
    kept: list[int]          # indices of the repetitions kept, in order
    excluded: list[int]      # indices of the implausible ones
    median: float            # median of all repetitions, the reference of the rule
    limit: float             # GB/s above which a repetition is implausible (inf: none can be)
    judged: bool = False     # enough repetitions (MIN_REPS) for the rule
    would_exclude: int = 0   # repetitions above `limit` (excluded unless bimodal)
    allowed: int = 0         # the most the rule may exclude (allowed(n))
    modes: tuple[Mode, Mode] | None = field(default=None)   # (slow, fast) when bimodal

    @property
    def bimodal(self) -> bool:
        return self.modes is not None


def allowed(n: int) -> int:
    """The most repetitions of n the rule may exclude: more is a disturbed run."""
    return max(1, math.floor(MAX_SHARE * n))


def limit_of(gbs: list[float]) -> tuple[float, float]:
    """(median, the GB/s above which a repetition is implausible against these values)."""
    m = statistics.median(gbs)
    sigma = MAD_TO_SIGMA * statistics.median(abs(v - m) for v in gbs)
    return m, max(m + Z_LIMIT * sigma, (1 + MIN_EXCESS) * m)


def split(values: list[float]) -> tuple[list[int], list[int]] | None:
    """(indices of the slow mode, of the fast mode): the cut of the sorted values with the
    least within-mode sum of squares (exact 2-means); None when all values are equal."""
    if len(values) < 2 or min(values) == max(values):
        return None
    order = sorted(range(len(values)), key=values.__getitem__)
    s = [values[i] for i in order]
    n, tot, tot2 = len(s), math.fsum(s), math.fsum(v * v for v in s)
    best, cut, acc, acc2 = math.inf, 1, 0.0, 0.0
    for k in range(1, n):            # slow mode: s[:k]
        acc += s[k - 1]
        acc2 += s[k - 1] ** 2
        if s[k] == s[k - 1]:
            continue                 # equal values stay in one mode
        sse = (acc2 - acc * acc / k) + ((tot2 - acc2) - (tot - acc) ** 2 / (n - k))
        if sse < best:
            best, cut = sse, k
    return sorted(order[:cut]), sorted(order[cut:])


def _mode(gbs: list[float], idx: list[int]) -> Mode:
    v = [gbs[i] for i in idx]
    return Mode(statistics.median(v), len(v), min(v), max(v))


def screen(gbs: list[float]) -> Screened:
    """Split repetitions (GB/s, in order) into kept and implausibly fast ones; nothing
    excluded, and the modes given, when the variant is bimodal (see the module's doc)."""
    idx = list(range(len(gbs)))
    if len(gbs) < MIN_REPS:
        return Screened(idx, [], statistics.median(gbs) if gbs else float("nan"),
                        float("inf"))
    m, limit = limit_of(gbs)
    over = [i for i in idx if gbs[i] > limit]
    most = allowed(len(gbs))
    modes = split(gbs)
    bimodal = len(over) > most
    if not bimodal and modes is not None:
        slow, fast = modes
        if len(slow) > most and len(fast) > most:
            _, slow_limit = limit_of([gbs[i] for i in slow])
            bimodal = all(gbs[i] > slow_limit for i in fast)
    if bimodal and modes is not None:
        return Screened(idx, [], m, limit, True, len(over), most,
                        (_mode(gbs, modes[0]), _mode(gbs, modes[1])))
    out = set(over)
    return Screened([i for i in idx if i not in out], over, m, limit, True, len(over), most)


def bimodal_text(name: str, n: int, s: Screened) -> str:
    """The note of a bimodal variant: its modes, what the rule would have excluded."""
    slow, fast = s.modes or (None, None)
    assert slow is not None and fast is not None
    would = (f"the rule for implausibly fast repetitions would exclude {s.would_exclude} of "
             f"{n}, more than the {s.allowed} a run may have broken" if s.would_exclude
             > s.allowed else f"the fast mode is implausible against the slow one and holds "
             f"more than the {s.allowed} repetitions a run may have broken")
    return (f"{name}: repetitions bimodal, a disturbed run (memory shared with other work?): "
            f"slow mode median {slow.median:.1f} GB/s ({slow.reps} repetitions), fast mode "
            f"median {fast.median:.1f} GB/s ({fast.reps}); {would}, so none is excluded "
            f"and the median is of all {n}")


def bimodal_cases(results: Any) -> list[dict[str, Any]]:
    """Each bandwidth result's bimodal variants (params["bimodal"]) with its case:
    {"case", "variant", "reps", "modes": [slow, fast]} (the record's fields)."""
    out = []
    for r in results:
        if getattr(r, "family", "") != "bandwidth":
            continue
        for b in r.params.get("bimodal") or []:
            if isinstance(b, dict):
                out.append({"case": r.case, **b})
    return out


def bimodal_warning(b: dict[str, Any]) -> str:
    """One line for a bimodal case (bimodal_cases' entries): the case and both modes."""
    slow, fast = (b.get("modes") or [{}, {}])[:2]
    return (f"{b['case']} ({b.get('variant', '?')}): repetitions bimodal, slow mode "
            f"{slow.get('median', math.nan):.1f} GB/s ({slow.get('reps', '?')}), fast mode "
            f"{fast.get('median', math.nan):.1f} GB/s ({fast.get('reps', '?')}): memory "
            "shared with other work")
