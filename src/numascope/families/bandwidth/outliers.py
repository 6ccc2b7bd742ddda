"""Bandwidth repetitions faster than the others allow: noise to report, never a result.

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
Z_LIMIT 3.5 is Iglewicz and Hoaglin's outlier threshold for the modified z-score. With fewer
than MIN_REPS repetitions nothing is excluded: the MAD of three or four values is too unsteady
to tell noise from signal (numascope run's quick profile takes 5, bw's default --reps more)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

Z_LIMIT = 3.5
MIN_EXCESS = 0.25
MIN_REPS = 5
MAD_TO_SIGMA = 1.4826
RULE = (f"a repetition is excluded as implausible when it is more than {Z_LIMIT} robust "
        f"standard deviations ({MAD_TO_SIGMA} x MAD) and more than {MIN_EXCESS:.0%} above "
        f"the median of its variant's repetitions")


@dataclass
class Screened:
    kept: list[int]          # indices of the repetitions kept, in order
    excluded: list[int]      # indices of the implausible ones
    median: float            # median of all repetitions, the reference of the rule
    limit: float             # GB/s above which a repetition is excluded (inf: none can be)


def screen(gbs: list[float]) -> Screened:
    """Split repetitions (GB/s, in order) into kept and implausibly fast ones."""
    idx = list(range(len(gbs)))
    if len(gbs) < MIN_REPS:
        return Screened(idx, [], statistics.median(gbs) if gbs else float("nan"),
                        float("inf"))
    m = statistics.median(gbs)
    sigma = MAD_TO_SIGMA * statistics.median(abs(v - m) for v in gbs)
    limit = max(m + Z_LIMIT * sigma, (1 + MIN_EXCESS) * m)
    return Screened([i for i in idx if gbs[i] <= limit], [i for i in idx if gbs[i] > limit],
                    m, limit)
