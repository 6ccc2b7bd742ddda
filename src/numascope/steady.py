"""Repetitions until the figure is steady (`--reps auto`): the stopping rule.

The unit of the judgement is an independent measurement, not a repetition. A case is
measured in **units**, each one real call of the family's measurement with its own fresh
allocation, placement and first touch (the C kernel maps its memory in every call), holding
a few repetitions; a unit's value is the median of its repetitions. Repetitions inside one
allocation agree with each other far more closely than separate allocations do (physical
pages, cache colouring, whether transparent huge pages were granted, all differ per
allocation), so an interval over repetitions says "steady" about one page placement, not
about the figure: measured on a 2-vCPU guest, 8 separate `lat --size 1G --samples auto`
invocations all said converged, yet another invocation's median fell inside a run's interval
in 17 of 56 pairs. pyperf spreads its values over processes for that reason (V. Stinner,
pyperf documentation, "Runs, values, warmups, outer and inner loops"), and Kalibera & Jones
show that the variation between executions is the one an interval must take in when it
dominates ("Rigorous Benchmarking in Reasonable Time", ISMM 2013). One family's units are
not fresh allocations: compression builds its store once per setting and its units are
calls over it (`repeat(..., fresh=False)`, recorded as the verdict's "fresh"); every text
of such a verdict says CALLS, not ALLOCATIONS (units_words).

After the first MIN_UNITS units, and after each further group of units, the rule takes the
95 % Student t interval of the mean of the units' medians, mean ± t(0.975, k-1)·s/√k over k
units, and stops when it is within ±precision of that mean (converged), or when the case's
repetition cap or time budget is spent (not converged: the record says so, and tables, the
report and `compare` mark it). This is the interval of Georges, Buytaert & Eeckhout
("Statistically Rigorous Java Performance Evaluation", OOPSLA 2007: one value per
independent VM invocation, Student t below 30 of them). Chosen over the order-statistics
interval of the median (distribution-free, used here before, over repetitions) because that
one exists only from 6 values on, and 6 fresh allocations of a 1 GiB chase cost seconds
each; the t interval exists from 2 units and makes a small count pay in width rather than in
coverage (t = 3.18 at 4 units, 2.57 at 6). It assumes roughly normal unit values, which
medians of several repetitions are more than single repetitions; a skewed or bimodal spread
between allocations inflates s, so such a figure is marked unconverged, not averaged into a
confident number.

At least MIN_UNITS = 4 units. With 2, t(0.975, 1) = 12.7 makes an interval too wide to ever
converge. With 3, the interval works for a normal spread between allocations, but not for
the spread allocations really have, where a minority of them land differently (huge pages
granted or not): simulated (benchmarks/steady_reproducible.py --simulate, 30 % of
allocations 2 or 5 % off, the rule's own repeated looks included), another run's estimate
fell inside a converged 3-unit interval in 73 to 74 % of pairs, a 4-unit one in 79 %, a
6-unit one in 84 % (a normal spread of 2 % judged at ±1 %: 74, 76, 77 %); 4 is the fewest
that keeps the 75 % an honest 95 % interval gives.

What it promises, checked the hard way by benchmarks/steady_reproducible.py: "converged"
means reproducible, so the interval is the one another invocation's estimate (its own k
units) falls in, not the one the true mean does: the two estimates differ by a variance of
2σ²/k, so the half-width is t(0.975, k-1)·s·√(2/k), √2 wider than the mean's interval,
and another run lands inside with probability 95 % when the units are independent. As the
mean's interval it promised 83-89 %, and separate invocations on the shared 2-vCPU
development VM landed inside 60-67 % of converged ones (lat 1G and bw triad at ±5 %, 6
invocations each, Nov 2026): units of one invocation share its moment of the machine.

The budget, per case: the first MIN_UNITS units always run, together at least min_reps
repetitions (rule.per_unit each); a further group of units runs only when its predicted time
(the case's seconds per unit so far, allocation included) still fits in the case's budget,
and the total stays within max_reps. Groups grow by half the units so far (4, then 2, 3, 4,
6 …), so that the interval is looked at a few times, not after every unit.

A command's case (`bw --reps auto`) may take budget_s seconds from its start. A profile's
stage shares one Pool instead, so that the stage keeps its time however many cases the
machine gives it: the time its cases spend after their first units is at most the pool's
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
MIN_UNITS = 4                 # the fewest independent units an interval is taken over
MIN_REPS = 2 * MIN_UNITS      # the fewest repetitions of a case: MIN_UNITS units of 2
PRECISION = 0.01              # ±1 % of the estimate, unless --reps auto:P% says otherwise
MAX_REPS = 100                # a command's cap per case (a profile sets its own)
BUDGET_S = 10.0               # a command's seconds per case (a profile sets its own)
AUTO = "auto"
_METHOD = ("95 % Student t interval where another run's mean of as many units' medians "
           "falls (mean ± t·s·√(2/k); a unit: {})")
METHOD = _METHOD.format("one call with its own allocation and placement")
UNIT = "one call of the C kernel: its own allocation, placement and first touch"
# what the units were, in words: each its own allocation (every family's unit but one), or
# calls over an allocation made once (compress: the store is built once per setting)
ALLOCATIONS = "separate allocations"
CALLS = "separate calls over one allocation"
SHORT = {ALLOCATIONS: "alloc.", CALLS: "calls"}


@dataclass
class Pool:
    """A stage's seconds for units past each case's first MIN_UNITS, shared by its
    `cases` (set once the stage's cases are known); never past `deadline` (a budgeted
    run's end, time.monotonic(); None: none)."""

    seconds: float
    cases: int = 1
    spent: float = 0.0
    done: int = 0
    deadline: float | None = None

    def share(self) -> float:
        """What the next case may spend past its first units."""
        share = max(self.seconds - self.spent, 0.0) / max(self.cases - self.done, 1)
        if self.deadline is not None:
            share = min(share, max(self.deadline - time.monotonic(), 0.0))
        return share

    def spend(self, seconds: float) -> None:
        self.spent += max(seconds, 0.0)
        self.done += 1


@dataclass(frozen=True)
class Steady:
    """The stopping rule of one case: measure units (fresh allocations) of per_unit
    repetitions until the interval over the units' medians is within ±precision (a
    fraction: 0.01 is 1 %); at least min_units units and min_reps repetitions, at most
    max_reps repetitions, further units only within budget_s seconds of the case's start."""

    precision: float = PRECISION
    min_reps: int = MIN_REPS
    max_reps: int = MAX_REPS
    budget_s: float = BUDGET_S
    pool: Pool | None = field(default=None, compare=False, repr=False)   # a profile's stage
    min_units: int = MIN_UNITS

    @property
    def per_unit(self) -> int:
        """Repetitions in each unit: the first min_units units take at least min_reps."""
        return max(1, -(-self.min_reps // self.min_units))

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
                or value.max_reps < value.min_reps or not value.budget_s > 0 \
                or value.min_units < MIN_UNITS:
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
    return (f"1 … {high}, or {AUTO}[:P%]: repeat in separate calls (units) until the 95 % "
            f"interval over them is within ±P % (default {100 * PRECISION:g} %), at least "
            f"{MIN_UNITS} units, {MIN_REPS} to {min(MAX_REPS, high)} repetitions, "
            f"{BUDGET_S:g} s per case")


def reps_option(flag: str = "--reps", help: str = "timed repetitions", default: int = 10,
                high: int = 1000, noun: str = "repetitions") -> Option:
    """The one spelling of a family's repetition count that may be `auto`: N, auto,
    auto:P% (parse_reps)."""
    def rule(value: Any, given: str) -> int | Steady:
        return parse_reps(value, given, high, noun)
    return Option(flag, f"{help}: a count, or auto (until steady over separate calls, "
                  "see docs/run.md)", default=default, metavar="N", rule=rule,
                  rule_text=reps_text(high), noun=noun)


def bound_pools(params: list[Any], deadline: float) -> None:
    """Every stopping rule among cases' params (their `reps` or `samples`) spends its
    stage's pool only until `deadline` (a budgeted run's end)."""
    for p in params:
        for name in ("reps", "samples"):
            rule = getattr(getattr(p, "base", p), name, None)
            if isinstance(rule, Steady) and rule.pool is not None:
                rule.pool.deadline = deadline


def pool_spent(params: list[Any]) -> float:
    """Seconds the stage pools of cases' stopping rules spent (each pool once)."""
    pools = {}
    for p in params:
        for name in ("reps", "samples"):
            rule = getattr(getattr(p, "base", p), name, None)
            if isinstance(rule, Steady) and rule.pool is not None:
                pools[id(rule.pool)] = rule.pool
    return sum(pl.spent for pl in pools.values())


def pool_cases(reps: int | Steady, cases: int) -> None:
    """Tell a profile's rule how many cases share its stage's pool."""
    if isinstance(reps, Steady) and reps.pool is not None:
        reps.pool.cases = max(cases, 1)


def t_interval(values: list[float], confidence: float = CONFIDENCE,
               reproduce: bool = False) -> tuple[float, float] | None:
    """The Student t `confidence` interval of the mean of `values` (independent units; see
    the module's doc); None with fewer than 2. No spread: the interval is the value.
    `reproduce`: the interval another measurement's mean of as many units falls in (the
    difference of two such means has variance 2 s²/k: half-width t·s·√(2/k))."""
    n = len(values)
    if n < 2:
        return None
    mean = math.fsum(values) / n
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    if sd == 0:
        return mean, mean
    from scipy import stats  # on first use: its import costs most of a second

    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd * \
        math.sqrt((2.0 if reproduce else 1.0) / n)
    return mean - half, mean + half


@dataclass
class Verdict:
    """How a figure's units ended: how many units and repetitions it took, the interval
    over the units' medians and whether it converged."""

    rule: Steady
    unit: str = UNIT              # what one unit is, in words
    fresh: bool = True            # each unit its own allocation (False: one reused)
    reps: int = 0                 # repetitions measured (values may be fewer: outliers)
    values: int = 0               # values kept, over all units
    batches: int = 0              # calls of the measurement: one per unit
    seconds: float = 0.0
    budget_s: float = math.nan    # this case's seconds from its start (a pool's share added)
    median: float = math.nan      # of every value kept (the figure the tables show)
    estimate: float = math.nan    # the mean of the units' medians: the interval's centre
    low: float = math.nan         # the interval over the units; NaN with too few
    high: float = math.nan
    converged: bool = False
    stopped: str = ""             # "converged" | "max reps" | "time budget"
    values_per_unit: list[int] = field(default_factory=list)
    unit_medians: list[float] = field(default_factory=list)

    @property
    def units(self) -> int:
        """Units with a value (a unit whose values were all set aside has none)."""
        return len(self.unit_medians)

    @property
    def half_width(self) -> float:
        """The interval's half, relative to its centre (NaN without one)."""
        if not (math.isfinite(self.low) and self.estimate):
            return math.nan
        return (self.high - self.low) / 2 / abs(self.estimate)

    def judge(self, units: list[list[float]]) -> None:
        """The interval and the verdict for the units' values gathered so far."""
        good = [[v for v in u if v is not None and math.isfinite(v)] for u in units]
        self.values_per_unit = [len(u) for u in good]
        self.values = sum(self.values_per_unit)
        flat = [v for u in good for v in u]
        self.median = statistics.median(flat) if flat else math.nan
        self.unit_medians = [statistics.median(u) for u in good if u]
        self.estimate = statistics.fmean(self.unit_medians) if self.unit_medians \
            else math.nan
        iv = t_interval(self.unit_medians, reproduce=True) \
            if self.units >= self.rule.min_units else None
        self.low, self.high = iv if iv else (math.nan, math.nan)
        self.converged = self.half_width <= self.rule.precision   # False for NaN

    def to_dict(self) -> dict[str, Any]:
        method = METHOD if self.fresh else _METHOD.format(self.unit)
        return {"rule": str(self.rule), "precision": self.rule.precision,
                "confidence": CONFIDENCE, "method": method, "min_reps": self.rule.min_reps,
                "max_reps": self.rule.max_reps, "budget_s": self.budget_s,
                "reps": self.reps, "values": self.values, "batches": self.batches,
                "seconds": self.seconds, "median": self.median,
                "interval": [self.low, self.high], "half_width": self.half_width,
                "converged": self.converged, "stopped": self.stopped,
                "unit": self.unit, "fresh": self.fresh, "units": self.units,
                "min_units": self.rule.min_units,
                "reps_per_unit": self.rule.per_unit,
                "values_per_unit": self.values_per_unit,
                "unit_medians": self.unit_medians, "estimate": self.estimate}


def repeat(unit: Callable[[int], list[list[float]]], rule: Steady,
           clock: Callable[[], float] = time.monotonic, what: str = UNIT,
           fresh: bool = True) -> Verdict:
    """Call `unit(n)` (one more independent measurement of n repetitions; returns the
    figure's values of every unit so far, one list per unit) until the rule stops:
    converged, max_reps reached, or the next group of units would not fit the time budget
    (see the module's doc). `what` says in the record what a unit is; `fresh`, whether each
    has its own allocation (False: calls over one allocation, which every text says)."""
    v = Verdict(rule, what, fresh)
    t0 = clock()
    per, more, first = rule.per_unit, rule.min_units, math.nan
    try:
        while True:
            for _ in range(more):
                units = unit(per)
                v.reps += per
                v.batches += 1
            v.seconds = clock() - t0
            if math.isnan(first):          # the first look: the case's budget is set
                first = v.seconds
                v.budget_s = first + rule.pool.share() if rule.pool else rule.budget_s
            v.judge(units)
            if v.converged:
                v.stopped = "converged"
                return v
            more = min(max(v.batches // 2, 1), (rule.max_reps - v.reps) // per)
            if more < 1:
                v.stopped = "max reps"
                return v
            per_unit_s = v.seconds / v.batches
            fits = int((v.budget_s - v.seconds) / per_unit_s) if per_unit_s > 0 else more
            if fits < 1:
                v.stopped = "time budget"
                return v
            more = min(more, fits)
    finally:
        if rule.pool is not None:
            rule.pool.spend(v.seconds - (0.0 if math.isnan(first) else first))


def gather(measure: Callable[[int], BenchResult], rule: Steady, metric: str, *,
           count: str = "reps", clock: Callable[[], float] = time.monotonic
           ) -> tuple[BenchResult, list[BenchResult]]:
    """Repeat a family whose every metric holds one value per repetition (latency's
    samples): `measure(n)` is one real measurement of n repetitions with its own allocation
    (a unit); the units' values are joined in the order measured into one result whose
    params say how many were taken (`count`) and the verdict ("steady"). Returns that
    result and the units' own results (their distributions, say, to combine)."""
    got: list[BenchResult] = []

    def one(n: int) -> list[list[float]]:
        got.append(measure(n))
        return [r.metrics[metric].values for r in got]

    v = repeat(one, rule, clock)
    first = got[0]
    names = [k for k in first.metrics if all(k in r.metrics for r in got)]
    metrics = {k: Metric(m.name, m.unit, m.higher_is_better,
                         [x for r in got for x in r.metrics[k].values], m.note)
               for k, m in first.metrics.items() if k in names}
    params = {**first.params, count: v.reps, "steady": v.to_dict() | {"metric": metric}}
    notes = list(dict.fromkeys(n for r in got for n in r.notes))
    return BenchResult(first.family, first.case, params, metrics, first.placement, notes,
                       all(r.validated for r in got)), got


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
MARK_NOTE = (f"{MARK} = not steady: after its repetitions (n), in {ALLOCATIONS}, "
             "the 95 % interval over the allocations was still wider than the precision "
             "asked (auto[:P%]); the case's repetition cap or time budget ran out first")


def fresh(s: dict[str, Any]) -> bool:
    """Whether a stored verdict's units each had their own allocation: its "fresh"; in a
    record from before it was kept, whether its unit is UNIT (or not recorded)."""
    f = s.get("fresh")
    return f if isinstance(f, bool) else s.get("unit", UNIT) == UNIT


def units_words(verdicts: list[dict[str, Any]], short: bool = False) -> str:
    """What the units of these verdicts were, in words: ALLOCATIONS, CALLS, or both where
    they mix (short: the headline's abbreviation, "alloc." or "calls")."""
    kinds = {fresh(s) for s in verdicts} or {True}
    if len(kinds) == 1:
        words = ALLOCATIONS if kinds == {True} else CALLS
        return SHORT[words] if short else words
    return "alloc. or calls" if short else \
        f"{ALLOCATIONS} or, where a figure's unit says so, {CALLS}"


def mark_note(params_list: list[dict[str, Any]]) -> str:
    """MARK's note in the words of the units that did not converge among `params_list`
    (MARK_NOTE where each had its own allocation)."""
    every = [s for s in map(verdict_of, params_list) if s is not None]
    words = units_words([s for s in every if not s["converged"]] or every)
    if words == ALLOCATIONS:
        return MARK_NOTE
    return (f"{MARK} = not steady: after its repetitions (n), in {words}, the 95 % "
            "interval over its units was still wider than the precision asked (auto[:P%]); "
            "the case's repetition cap or time budget ran out first")


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
    line = (f"repetitions until steady ({rules}: 95 % interval over {units_words(got)} "
            f"within the precision): {ok} of {len(got)} "
            f"figure{'s' if len(got) != 1 else ''} converged; {each} repetitions each")
    units = sorted(int(s["units"]) for s in got if "units" in s)    # older records: none
    if units:
        line += f" in {units[0]}" + ("" if units[0] == units[-1] else f" to {units[-1]}") + \
            " units"
    if ok < len(got):
        line += f"; {len(got) - ok} did not ({MARK})"
    return line
