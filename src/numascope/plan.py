"""What a run will measure and how long it will take, before anything runs (`numascope run
--plan`), and the budget a run keeps to (`--budget`). docs/plan.md states the model.

    plan = make_plan(topo, profile, stages, factors=calibration(store, host))
    plan.seconds, plan.stages[0].cases[0].parts       # {"first touch": 0.12, ...}

The cost model: each family's folder estimates its own cases (families/<name>/cost.py:
`estimate(topo, cases) -> [Estimate]`, from what the case moves and repeats: bytes first
touched and streamed, dependent loads, round trips, FLOPs, launches, repetitions and the
stage's steady pool) with the nominal rates below, which no machine needs to meet: the
estimate of a stage is then calibrated by this host's earlier runs of it (the store's runs
of the same host and profile: the median of measured / modelled seconds, less the steady
pools, and the median share of its pools the stage spent). A family without
a cost module costs FALLBACK_S a case, said so.

A case the family calls a headline (`headline(topo, cases) -> [bool]`: the all-core and one-core triad, the
idle latency, the first matrix row, one pair per c2c relation, the default codec at all
threads ...) is measured first under a budget; the rest fill what is left, stage by stage."""

from __future__ import annotations

import importlib
import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from numascope.cost import (  # noqa: F401 - the rates and Estimate, re-exported
    CACHE_GBS,
    CASE_S,
    COMPRESS_GBS,
    DECOMPRESS_GBS,
    FALLBACK_S,
    FLOP_PER_NS,
    LAUNCH_S,
    LOAD_NS,
    POOL,
    SOCKET_GBS,
    STREAM_GBS,
    TOUCH_GBS,
    TRIP_NS,
    WRITE_NS,
    Estimate,
)


@dataclass
class CasePlan:
    label: str
    seconds: float
    parts: dict[str, float]
    headline: bool = False
    modelled: float = 0.0           # before calibration
    modelled_fixed: float = 0.0     # before calibration, less its steady pool share

    @property
    def pool(self) -> float:
        """Its steady pool's share: at most that many seconds of extra units (steady.Pool),
        which a budget's deadline takes back."""
        return self.parts.get(POOL, 0.0)

    @property
    def fixed(self) -> float:
        """Its seconds less what a budget's deadline can take back."""
        return self.seconds - self.pool

    def to_dict(self) -> dict[str, Any]:
        return {"case": self.label, "seconds": round(self.seconds, 3),
                "modelled_seconds": round(self.modelled, 3), "headline": self.headline,
                "parts": self.parts}


@dataclass
class StagePlan:
    name: str
    title: str
    cases: list[CasePlan] = field(default_factory=list)
    factor: float = 1.0             # measured / modelled on this host's earlier runs
    calibrated_by: int = 0          # how many earlier runs the factor comes from
    pool_use: float = 1.0           # the share of its pools those runs spent
    skipped: str = ""               # why it will not run here (no MPI, no --io-dir ...)
    model: str = "family"           # "family": its cost module; "fallback"

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.cases)

    @property
    def modelled(self) -> float:
        return sum(c.modelled for c in self.cases)

    @property
    def modelled_pool(self) -> float:
        """The model's steady pools: the bound on the units past each case's first ones."""
        return sum(c.modelled - c.modelled_fixed for c in self.cases)

    @property
    def modelled_fixed(self) -> float:
        """The model's seconds less its steady pools' (what the factor scales)."""
        return sum(c.modelled_fixed for c in self.cases)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "cases": len(self.cases),
                "seconds": round(self.seconds, 3), "modelled_seconds": round(self.modelled, 3),
                "factor": round(self.factor, 4), "calibrated_by": self.calibrated_by,
                "pool_use": round(self.pool_use, 4), "model": self.model, "skipped": self.skipped,
                "case_plans": [c.to_dict() for c in self.cases]}


@dataclass
class Plan:
    stages: list[StagePlan]
    profile: str
    budget: float | None = None

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.stages)

    def within(self, budget: float | None = None, reserve: float = 1.0
               ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """(stage, case) measured and left out under `budget` (this plan's by default), by
        the rule a budgeted run follows (suite.run_suite): where the plan exceeds it, every
        stage's headline cases first, then the rest, each case only while its planned
        seconds fit what is left (less `reserve`, kept for the run's end)."""
        budget = self.budget if budget is None else budget
        every = [(s.name, c) for s in self.stages for c in s.cases]
        if budget is None:
            return [(n, c.label) for n, c in every], []
        order = every if self.seconds <= budget - reserve else \
            [x for x in every if x[1].headline] + [x for x in every if not x[1].headline]
        kept, out, used = [], [], 0.0
        for name, c in order:
            if used + c.fixed <= budget - reserve:
                kept.append((name, c.label))
                used += c.fixed
            else:
                out.append((name, c.label))
        return kept, out

    def to_dict(self) -> dict[str, Any]:
        kept, out = self.within()
        return {"profile": self.profile, "seconds": round(self.seconds, 3),
                "budget_s": self.budget, "stages": [s.to_dict() for s in self.stages],
                "within_budget": {"cases": len(kept),
                                  "left_out": [f"{n}: {c}" for n, c in out]}}


def cost_module(family: str):
    """The family folder's cost module (families/<folder>/cost.py), or None."""
    from numascope.families import _packages, family_module
    for pkg in _packages():
        bench = importlib.import_module(family_module(pkg))   # where its class lives
        if any(getattr(c, "family", None) == family for c in vars(bench).values()
               if isinstance(c, type)):
            try:
                return importlib.import_module(f"{pkg}.cost")
            except ModuleNotFoundError as e:
                if e.name != f"{pkg}.cost":
                    raise
                return None
    return None


def estimate_cases(family: str, topo, cases: list) -> tuple[list[CasePlan], str]:
    """Each case's modelled seconds and parts, whether it is a headline, and which model."""
    mod = cost_module(family)
    if mod is None:
        ests, heads = [Estimate.of(fallback=FALLBACK_S)] * len(cases), [False] * len(cases)
    else:
        ests, heads = mod.estimate(topo, cases), mod.headline(topo, cases)
    return ([CasePlan(c.label, e.seconds, e.to_dict(), bool(h), e.seconds,
                      e.seconds - e.to_dict().get(POOL, 0.0))
             for c, e, h in zip(cases, ests, heads, strict=True)],
            "family" if mod is not None else "fallback")


def _factor(entry: tuple) -> tuple[float, int, float]:
    """(measured / modelled, runs, pool use) from a calibration entry; an older 2-tuple's
    pools are taken as spent in full."""
    f, n, *rest = entry
    return float(f), int(n), float(rest[0]) if rest else 1.0


def stage_plan(st, topo, cases: list | None, factors: dict[str, tuple],
               skipped: str = "") -> StagePlan:
    """One stage's plan from the cases its family built (None: it will not run, `skipped`
    says why), calibrated by `factors` ({stage: (measured / modelled, runs, pool use)}):
    the fixed parts scaled by the first, each steady pool share by the share of its
    pools the earlier runs spent (the pool is a bound; what a stage spends of it is what
    it takes)."""
    sp = StagePlan(st.name, st.title, skipped=skipped)
    if st.bench is None or cases is None:
        return sp
    sp.cases, sp.model = estimate_cases(st.bench.family, topo, cases)
    f, n, use = _factor(factors.get(st.name, (1.0, 0)))
    if n and math.isfinite(f) and f > 0:
        use = min(max(use, 0.0), 1.0) if math.isfinite(use) else 1.0
        sp.factor, sp.calibrated_by, sp.pool_use = f, n, use
        for c in sp.cases:
            c.parts = {k: round(v * (use if k == POOL else f), 3) for k, v in c.parts.items()}
            c.seconds = sum(c.parts.values())
    return sp


def make_plan(topo, profile, stages: list, factors: dict[str, tuple] | None = None,
              budget: float | None = None) -> Plan:
    """The plan of `stages` (suite.Stage) under `profile` on `topo` (a replayed machine
    too): each stage's cases as its family builds them, estimated and calibrated."""
    from numascope.errors import Unavailable, UserError
    out = []
    for st in stages:
        cases, why = None, ""
        if st.bench is not None:
            try:
                _, cases = st.load(topo, profile)
            except (Unavailable, UserError, OSError) as e:
                why = str(e) or type(e).__name__
        out.append(stage_plan(st, topo, cases, factors or {}, why))
    return Plan(out, getattr(profile, "name", str(profile)), budget)


CALIBRATION_RUNS = 5      # the latest runs of this host and profile a factor comes from


def calibration(runs: list) -> dict[str, tuple[float, int, float]]:
    """{stage: (median measured / modelled seconds, runs, median pool use)} from stored
    runs of this host and profile, newest first (results.store.RunSummary, whose stages
    are plain dicts): each stage done, with a plan recorded and no case left out by a
    budget, counts. The factor is what the stage took less its pools' spending over the
    model's seconds less its pools; the pool use, what its pools spent over their seconds
    (a pool is a bound: a stage whose cases are steady early spends little of it, and a
    plan that counted all of it was that much too long)."""
    ratios: dict[str, list[float]] = {}
    uses: dict[str, list[float]] = {}
    for run in runs:
        for s in run.stages:
            plan = s.get("plan") or {}
            total = plan.get("modelled_seconds") or 0
            modelled = plan.get("modelled_fixed", total) or 0
            pool = plan.get("modelled_pool", total - modelled)
            spent = plan.get("pool_spent", 0.0)
            took = s.get("seconds", 0) - spent
            if s.get("status") == "done" and modelled > 0 and took > 0 \
                    and not plan.get("left_out"):
                r = ratios.setdefault(s["name"], [])
                if len(r) < CALIBRATION_RUNS:
                    r.append(took / modelled)
                    if pool > 0 and "pool_spent" in plan:
                        uses.setdefault(s["name"], []).append(min(spent / pool, 1.0))
    return {k: (statistics.median(v), len(v),
                statistics.median(uses[k]) if uses.get(k) else 1.0)
            for k, v in ratios.items() if v}


def earlier_runs(store, hostname: str | None, profile: str) -> list:
    """This host's complete runs of `profile` in `store`, newest first (their summaries)."""
    return [r for r in reversed(store.list_runs())
            if r.status == "complete" and r.profile == profile
            and (hostname is None or r.hostname == hostname)]


def factors(topo, profile, store) -> dict[str, tuple[float, int, float]]:
    """The calibration of this host's plans by its earlier runs of the profile in `store`
    (an open Store, or a path to open read-only; none there: the nominal model alone)."""
    from numascope.results.run import host_facts
    from numascope.results.store import Store
    host = host_facts(topo).get("hostname")
    try:
        if isinstance(store, Store):
            return calibration(earlier_runs(store, host, profile.name))
        with Store.open(store) as st:
            return calibration(earlier_runs(st, host, profile.name))
    except Exception:   # noqa: BLE001 - no store yet, or an unreadable one: nominal
        return {}


def parse_duration(text: str, flag: str = "--budget") -> float:
    """Seconds from "90", "90s", "2m", "1h30m" (UserError otherwise)."""
    import re

    from numascope.errors import UserError
    t = str(text).strip().lower()
    m = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s?)?", t)
    if not t or not m or not any(m.groups()):
        raise UserError(f"{flag} {text!r}: give a duration such as 90s, 2m or 1h30m")
    h, mi, s = (float(x) if x else 0.0 for x in m.groups())
    total = 3600 * h + 60 * mi + s
    if not total > 0:
        raise UserError(f"{flag} {text!r}: a budget must be longer than 0 s")
    return total


class PlanProgress:
    """A rich Progress (run_cases' progress) that also shows each stage's time left by the
    plan: the planned seconds of its cases not yet done, scaled by how the done ones went
    against theirs (field "left")."""

    def __init__(self, progress, plan: Plan | None):
        self.p = progress
        self.plans: dict[str, StagePlan] = {}
        self.tasks: dict[Any, tuple[StagePlan | None, int]] = {}
        self.t0: dict[Any, float] = {}
        if plan is not None:
            self.set_plan(plan)

    def set_plan(self, plan: Plan) -> None:
        self.plans = {s.name: s for s in plan.stages}

    def add_task(self, description: str, total: int | None = None, **kw: Any) -> Any:
        import time
        sp = self.plans.get(description.split(":")[0])
        task = self.p.add_task(description, total=total, left="", **kw)
        self.tasks[task] = (sp, 0)
        self.t0[task] = time.monotonic()
        self._left(task)
        return task

    def update(self, task: Any, **kw: Any) -> None:
        self.p.update(task, **kw)

    def advance(self, task: Any, n: int = 1) -> None:
        sp, done = self.tasks.get(task, (None, 0))
        self.tasks[task] = (sp, done + n)
        self.p.advance(task, n)
        self._left(task)

    def _left(self, task: Any) -> None:
        import time
        sp, done = self.tasks[task]
        if sp is None or not sp.cases:
            return
        planned_done = sum(c.seconds for c in sp.cases[:done])
        spent = time.monotonic() - self.t0[task]
        pace = spent / planned_done if planned_done > 0 and done else 1.0
        left = pace * sum(c.seconds for c in sp.cases[done:])
        self.p.update(task, left=f"about {left:.0f} s left")


def render(plan: Plan, console) -> None:
    """The plan as a table: each stage, its cases, the seconds planned (and the model's
    own before calibration), what they are spent on; then the total and the budget."""
    from rich.table import Table

    from numascope.console import plural
    t = Table(title=f"plan: numascope run ({plan.profile})", title_justify="left",
              box=None, pad_edge=False, padding=(0, 2, 0, 0))
    for col, just in (("stage", "left"), ("cases", "right"), ("seconds", "right"),
                      ("spent on", "left")):
        t.add_column(col, justify=just, overflow="fold")
    for s in plan.stages:
        if s.skipped:
            t.add_row(s.name, "–", "–", f"not run here: {s.skipped}")
            continue
        if not s.cases:
            t.add_row(s.name, "0", "0", "")
            continue
        parts: dict[str, float] = {}
        for c in s.cases:
            for k, v in c.parts.items():
                parts[k] = parts.get(k, 0.0) + v
        top = ", ".join(f"{k} {v:.1f} s" for k, v in
                        sorted(parts.items(), key=lambda kv: -kv[1])[:3])
        how = (f"x{s.factor:.2f} from {plural(s.calibrated_by, 'earlier run')}"
               + (f", {s.pool_use:.0%} of the pools" if s.modelled_pool > 0 else "")
               if s.calibrated_by else "the nominal model")
        heads = sum(c.headline for c in s.cases)
        t.add_row(s.name, str(len(s.cases)), f"{s.seconds:.1f}",
                  f"{top} ({how}; {heads} headline)")
    console.print(t)
    total = f"total {plan.seconds:.0f} s"
    if plan.budget is not None:
        kept, out = plan.within()
        if not out:
            total += f"; budget {plan.budget:g} s: fits"
        else:
            total += (f"; budget {plan.budget:g} s: the headline cases first, then the rest "
                      f"while they fit: {len(kept)} cases measured, {len(out)} not "
                      "(recorded as 'not measured: budget')")
    console.print(total, markup=False)
