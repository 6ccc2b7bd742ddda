"""Repetitions until the figure is steady (`--reps auto`): the stopping rule.

A case is measured in batches, each batch a real call of the family's measurement. After
each batch the rule looks at the figure's values so far (e.g. the GB/s of every kept
repetition) and stops when the 95 % interval of their median is within ±precision of the
median (converged), or when the case's repetition cap or time budget is spent (not
converged: the record says so, and tables, the report and `compare` mark it).

The interval is the distribution-free one of the median from order statistics: with the
n values sorted s[1..n], [s[k], s[n+1-k]] covers the true median with probability
1 - 2 P(B <= k-1), B ~ Binomial(n, 1/2), whatever the distribution (continuous, the
repetitions independent); k is the largest that keeps that at or above 95 %. Chosen over a
bootstrap because it is exact rather than approximate at small n (a bootstrap of the
median undercovers with a handful of values), needs no random numbers (the same values
always give the same verdict) and costs one sort. It exists from n = 6 on (the extremes of
six values cover the median with 1 - 2/64 = 96.9 %), hence MIN_REPS = 6.

The budget, per case: the first batch (min_reps) always runs; a further batch runs only
when its predicted time (the case's seconds per repetition so far, overheads included, times
the batch) still fits in the case's budget, and the total stays within max_reps. Batches
grow by half the repetitions so far (6, 9, 13, 19 …), so that a call's set-up (allocation,
first touch, warm-up) is paid a few times, not once per repetition.

A command's case (`bw --reps auto`) may take budget_s seconds from its start. A profile's
stage shares one Pool instead, so that the stage keeps its time however many cases the
machine gives it: the time its cases spend after their first batch is at most the pool's
seconds in all. Each case may use the pool's remainder divided by the cases still to come,
so what a steady case leaves is there for the noisy ones after it."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from numascope.errors import UserError
from numascope.options import Option
from numascope.results.record import BenchResult, Metric

CONFIDENCE = 0.95
MIN_REPS = 6                  # the fewest values with a 95 % order-statistics interval
PRECISION = 0.01              # ±1 % of the median, unless --reps auto:P% says otherwise
MAX_REPS = 100                # a command's cap per case (a profile sets its own)
BUDGET_S = 10.0               # a command's seconds per case (a profile sets its own)
AUTO = "auto"
METHOD = ("95 % interval of the median from order statistics (binomial, "
          "distribution-free)")


@dataclass
class Pool:
    """A stage's seconds for repetitions past each case's first batch, shared by its
    `cases` (set once the stage's cases are known)."""

    seconds: float
    cases: int = 1
    spent: float = 0.0
    done: int = 0

    def share(self) -> float:
        """What the next case may spend past its first batch."""
        return max(self.seconds - self.spent, 0.0) / max(self.cases - self.done, 1)

    def spend(self, seconds: float) -> None:
        self.spent += max(seconds, 0.0)
        self.done += 1


@dataclass(frozen=True)
class Steady:
    """The stopping rule of one case: repeat until the interval of the median is within
    ±precision (a fraction: 0.01 is 1 %), at least min_reps, at most max_reps repetitions,
    further batches only within budget_s seconds of the case's start."""

    precision: float = PRECISION
    min_reps: int = MIN_REPS
    max_reps: int = MAX_REPS
    budget_s: float = BUDGET_S
    pool: Pool | None = field(default=None, compare=False, repr=False)   # a profile's stage

    def __str__(self) -> str:
        return f"{AUTO}:{100 * self.precision:g}%"

    def pooled(self, seconds: float) -> Steady:
        """This rule with a fresh pool of `seconds` for one stage (set .pool.cases)."""
        return replace(self, pool=Pool(seconds))


def parse_reps(value: Any, flag: str = "--reps", high: int = 1000,
               noun: str = "repetitions") -> int | Steady:
    """A repetition count from 1 to `high`, or "auto" / "auto:P%" (P from 0.1 to 50, the %
    sign optional): a Steady rule. An int or a Steady passes through, checked."""
    if isinstance(value, Steady):
        if not 0.001 <= value.precision <= 0.5 or value.min_reps < MIN_REPS \
                or value.max_reps < value.min_reps or not value.budget_s > 0:
            raise UserError(f"{flag}: bad stopping rule {value!r}")
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        what = f"{flag}: {noun}" if noun else flag
        if value < 1:
            raise UserError(f"{what} must be at least 1 (got {value})")
        if value > high:
            raise UserError(f"{what} must be at most {high} (got {value})")
        return value
    text = str(value).strip().lower()
    if text.lstrip("+").isdigit():
        return parse_reps(int(text), flag, high, noun)
    word, colon, pct = text.partition(":")
    if word == AUTO:
        if not colon:
            return Steady(max_reps=min(MAX_REPS, high))
        try:
            p = float(pct.strip().removesuffix("%"))
        except ValueError:
            p = math.nan
        if not 0.1 <= p <= 50:
            raise UserError(f"{flag} {value!r}: the precision after auto: is a percentage "
                            "from 0.1 to 50, e.g. auto:0.5%")
        return Steady(precision=p / 100, max_reps=min(MAX_REPS, high))
    raise UserError(f"{flag} {value!r}: expected a count such as 10, or auto (until the "
                    f"median is steady to ±{100 * PRECISION:g} %), or auto:P% such as "
                    "auto:0.5%")


def reps_text(high: int) -> str:
    """The accepted values in the option tables' words."""
    return (f"1 … {high}, or {AUTO}[:P%]: repeat until the 95 % interval of the median is "
            f"within ±P % (default {100 * PRECISION:g} %), {MIN_REPS} to "
            f"{min(MAX_REPS, high)} repetitions, {BUDGET_S:g} s per case")


def reps_option(flag: str = "--reps", help: str = "timed repetitions", default: int = 10,
                high: int = 1000, noun: str = "repetitions") -> Option:
    """The one spelling of a family's repetition count that may be `auto`: N, auto,
    auto:P% (parse_reps)."""
    def rule(value: Any, given: str) -> int | Steady:
        return parse_reps(value, given, high, noun)
    return Option(flag, f"{help}: a count, or auto (until the median is steady, see "
                  "docs/run.md)", default=default, metavar="N", rule=rule,
                  rule_text=reps_text(high), noun=noun)


def pool_cases(reps: int | Steady, cases: int) -> None:
    """Tell a profile's rule how many cases share its stage's pool."""
    if isinstance(reps, Steady) and reps.pool is not None:
        reps.pool.cases = max(cases, 1)


def median_interval(values: list[float], confidence: float = CONFIDENCE
                    ) -> tuple[float, float] | None:
    """The distribution-free `confidence` interval of the median of `values` (order
    statistics, see the module's doc); None when there are too few values for one."""
    n = len(values)
    s = sorted(values)
    tail = (1 - confidence) / 2
    k, below = 0, 0.0             # below = P(B <= k - 1)
    for j in range(n // 2 + 1):
        below += math.comb(n, j) / 2 ** n
        if below > tail + 1e-12:
            break
        k = j + 1
    if k == 0:
        return None
    return s[k - 1], s[n - k]


@dataclass
class Verdict:
    """How a figure's repetitions ended: how many it took and whether it converged."""

    rule: Steady
    reps: int = 0                 # repetitions measured (values may be fewer: outliers)
    values: int = 0               # values the interval was taken over
    batches: int = 0
    seconds: float = 0.0
    budget_s: float = math.nan    # this case's seconds from its start (a pool's share added)
    median: float = math.nan
    low: float = math.nan         # the interval of the median; NaN with too few values
    high: float = math.nan
    converged: bool = False
    stopped: str = ""             # "converged" | "max reps" | "time budget"

    @property
    def half_width(self) -> float:
        """The interval's larger half, relative to the median (NaN without one)."""
        if not (math.isfinite(self.low) and self.median):
            return math.nan
        return max(self.median - self.low, self.high - self.median) / abs(self.median)

    def judge(self, values: list[float]) -> None:
        """The interval and the verdict for the values gathered so far."""
        good = [v for v in values if v is not None and math.isfinite(v)]
        self.values = len(good)
        self.median = statistics.median(good) if good else math.nan
        iv = median_interval(good)
        self.low, self.high = iv if iv else (math.nan, math.nan)
        self.converged = self.half_width <= self.rule.precision   # False for NaN

    def to_dict(self) -> dict[str, Any]:
        return {"rule": str(self.rule), "precision": self.rule.precision,
                "confidence": CONFIDENCE, "method": METHOD, "min_reps": self.rule.min_reps,
                "max_reps": self.rule.max_reps, "budget_s": self.budget_s,
                "reps": self.reps, "values": self.values, "batches": self.batches,
                "seconds": self.seconds, "median": self.median,
                "interval": [self.low, self.high], "half_width": self.half_width,
                "converged": self.converged, "stopped": self.stopped}


def repeat(batch: Callable[[int], list[float]], rule: Steady,
           clock: Callable[[], float] = time.monotonic) -> Verdict:
    """Call `batch(n)` (measure n more repetitions, return the figure's values over all
    batches so far) until the rule stops: converged, max_reps reached, or the next batch
    would not fit the time budget (see the module's doc)."""
    v = Verdict(rule)
    t0 = clock()
    n = rule.min_reps
    first = 0.0
    try:
        while True:
            values = batch(n)
            v.reps += n
            v.batches += 1
            v.seconds = clock() - t0
            if v.batches == 1:
                first = v.seconds
                v.budget_s = first + rule.pool.share() if rule.pool else rule.budget_s
            v.judge(values)
            if v.converged:
                v.stopped = "converged"
                return v
            n = min(max(v.reps // 2, 1), rule.max_reps - v.reps)
            if n < 1:
                v.stopped = "max reps"
                return v
            per_rep = v.seconds / v.reps
            fits = int((v.budget_s - v.seconds) / per_rep) if per_rep > 0 else n
            if fits < 1:
                v.stopped = "time budget"
                return v
            n = min(n, fits)
    finally:
        if rule.pool is not None:
            rule.pool.spend(v.seconds - first)


def gather(measure: Callable[[int], BenchResult], rule: Steady, metric: str, *,
           count: str = "reps", clock: Callable[[], float] = time.monotonic) -> BenchResult:
    """Repeat a family whose every metric holds one value per repetition (latency's
    samples): `measure(n)` is one real measurement of n repetitions; the batches' values are
    joined in the order measured into one result whose params say how many were taken
    (`count`) and the verdict ("steady")."""
    got: list[BenchResult] = []

    def batch(n: int) -> list[float]:
        got.append(measure(n))
        return [x for r in got for x in r.metrics[metric].values]

    v = repeat(batch, rule, clock)
    first = got[0]
    names = [k for k in first.metrics if all(k in r.metrics for r in got)]
    metrics = {k: Metric(m.name, m.unit, m.higher_is_better,
                         [x for r in got for x in r.metrics[k].values], m.note)
               for k, m in first.metrics.items() if k in names}
    params = {**first.params, count: v.reps, "steady": v.to_dict() | {"metric": metric}}
    notes = list(dict.fromkeys(n for r in got for n in r.notes))
    return BenchResult(first.family, first.case, params, metrics, first.placement, notes,
                       all(r.validated for r in got))


def verdict_of(params: dict[str, Any]) -> dict[str, Any] | None:
    """The stored verdict of a result's params (None: fixed repetitions, or an older
    record)."""
    s = params.get("steady") if isinstance(params, dict) else None
    return s if isinstance(s, dict) and "converged" in s else None


def unsteady(params: dict[str, Any]) -> bool:
    """Whether a result's figure was repeated until steady and did not get there."""
    s = verdict_of(params)
    return s is not None and not s["converged"]


# -- how tables, the report and compare say it ------------------------------------------

MARK = "*"
MARK_NOTE = (f"{MARK} = not steady: after its repetitions (n) the 95 % interval of the "
             "median was still wider than the precision asked (auto[:P%]); the case's "
             "repetition cap or time budget ran out first")


def mark(params: dict[str, Any]) -> str:
    """MARK for a result whose figure did not converge, else ""."""
    return MARK if unsteady(params) else ""


def summary(params_list: list[dict[str, Any]]) -> str | None:
    """One line on the results repeated until steady: how many converged; None when none
    was (fixed repetitions, older records)."""
    got = [s for s in map(verdict_of, params_list) if s is not None]
    if not got:
        return None
    ok = sum(1 for s in got if s["converged"])
    rules = ", ".join(dict.fromkeys(str(s.get("rule", AUTO)) for s in got))
    reps = sorted(int(s.get("reps", 0)) for s in got)
    each = f"{reps[0]}" if reps[0] == reps[-1] else f"{reps[0]} to {reps[-1]}"
    line = (f"repetitions until steady ({rules}: 95 % interval of the median within the "
            f"precision): {ok} of {len(got)} figure{'s' if len(got) != 1 else ''} "
            f"converged; {each} repetitions each")
    if ok < len(got):
        line += f"; {len(got) - ok} did not ({MARK})"
    return line
