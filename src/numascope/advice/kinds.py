"""What every piece of advice is made of: `Advice` (the item with its evidence), `Threshold`
(a rule's threshold with its source) and the thresholds the rules share (PRACTICAL,
L3_SATURATION, QUIET, BIMODAL), with the sources they rest on. Rules and the configuration
comparison (advice.configuration) both stand on this module."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from numascope.families.bandwidth.outliers import MAX_SHARE
from numascope.families.bandwidth.outliers import SOURCE as SHARE_SOURCE
from numascope.sources import by_name, cite

ALPHA = 0.05
MIN_REPS = 3               # repetitions a side needs before any claim inside one run


@dataclass(frozen=True)
class Threshold:
    """A rule's threshold and where its value comes from (shown and recorded with an item)."""
    value: float
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "source": self.source}


# The smallest difference any rule calls an effect.
PRACTICAL = Threshold(0.05, f"{by_name('advice.PRACTICAL').basis} "
                            f"({cite('dell-rome-2019')})")
# One thread per L3 counts as reaching all-core bandwidth within PRACTICAL of it.
L3_SATURATION = Threshold(1 - PRACTICAL.value,
                          f"{by_name('advice.L3_SATURATION').basis} "
                          f"({cite('dell-rome-2019')})")
# The noise check (results.run.noise_warnings) decides which runs are disturbed.
_NOISE = by_name("results.run.noise_warnings (other processes)")
QUIET = Threshold(0.05, "numascope's noise check (results.run.noise_warnings): other "
                        "processes over 5 % of the CPU time, steal over 2 %, a clock drop "
                        f"over 3 %: {_NOISE.basis} ({cite('dell-rome-2019')})")
# A bandwidth case whose repetitions fall in two modes marks its run disturbed too.
BIMODAL = Threshold(MAX_SHARE, "numascope's rule for implausibly fast bandwidth "
                               "repetitions (numascope.families.bandwidth.outliers): "
                               "excluding more than max(1, 10 %) of a case's repetitions, "
                               "or a fast mode that large, is a disturbed run; "
                               + SHARE_SOURCE)
PAIRED = ("within one quiet run: its repetitions are the samples (each repetition times "
          "the plain and the compressed sum, one after the other)")
WITHIN = ("within one quiet run: its repetitions are the samples (each case's repetitions "
          "measured back to back)")


@dataclass
class Advice:
    rule: str                          # the rule that fired (RULES)
    title: str                         # the advice, one line
    detail: str                        # why: the figures in words
    evidence: list[dict[str, Any]]     # run_id, case, metric, median, unit, n …
    figures: dict[str, Any] = field(default_factory=dict)   # the numbers the text cites
    command: str = ""                  # the exact command line, where there is one
    runs: list[str] = field(default_factory=list)
    threshold: Threshold | None = None  # the rule's threshold with its source
    basis: str = ""                    # the samples: within one quiet run, runs, …

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "title": self.title, "detail": self.detail,
                "command": self.command, "runs": list(self.runs), "basis": self.basis,
                "threshold": self.threshold.to_dict() if self.threshold else None,
                "figures": dict(self.figures), "evidence": list(self.evidence)}


def rounded(x: float | None, digits: int = 4) -> float | None:
    """x to `digits` significant digits, None when it is not a finite number."""
    if x is None or not math.isfinite(x):
        return None
    return float(f"{x:.{digits}g}")
