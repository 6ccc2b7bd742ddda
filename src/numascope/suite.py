"""`numascope run`: its stages and the orchestration of one run.

A stage is a benchmark family (numascope.families), referred to by its class: the class
builds the profile's cases (`suite_cases(topo, profile)`) and measures them. A stage that
cannot run here (Unavailable, no permission, missing tool, found while building its cases:
no --io-dir, no MPI) is skipped with its reason; one whose cases were built and that could
not measure them (fio missing with --io-dir given, no permission part-way) is incomplete,
what it measured kept: asked and not done, so its node is not ok; one that fails validation
is marked failed; Ctrl-C or SIGTERM stops the run and keeps every
result already committed to the store."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from numascope import signals, steady
from numascope.benchmark import Benchmark, Case, run_cases
from numascope.errors import LaunchError, MeasurementError, Unavailable, UserError
from numascope.profile import DEFAULT, Profile
from numascope.profile import profile as _profile
from numascope.results.record import BenchResult
from numascope.results.run import NoiseMonitor, RunRecord, host_facts, utc_now
from numascope.results.store import Store, StoreFull
from numascope.topology.model import Topology

DEFAULT_PROFILE: Profile = DEFAULT


@dataclass(frozen=True)
class Stage:
    name: str                     # short name shown in progress and stored in the record
    title: str                    # what it measures
    bench: type | None            # the family class; None: the topology stage
    options: tuple[tuple[str, Any], ...] = ()   # keyword arguments for the family class

    def load(self, topo: Topology, profile: Profile) -> tuple[Benchmark, list[Case]]:
        """The family's Benchmark (built with this stage's options) and this profile's
        cases."""
        bench = self.bench(**dict(self.options))  # type: ignore[misc]
        return bench, list(bench.suite_cases(topo, _profile(profile)))


def all_stages() -> list[Stage]:
    """The topology stage, then one stage per registered family."""
    from numascope.families import families
    return [Stage("topology", "machine topology, memory mode, devices", None)] + \
        [Stage(c.family, c.title, c) for c in families()]


# -- the stages a command asks for (`numascope run`, `numascope fleet run`) -------------

def chosen(names: list[str] | None, stages: list) -> list:
    """The stages --stage names (the topology stage always runs); UserError for others."""
    if not names:
        return stages
    from numascope.families import ALIASES
    names = [ALIASES.get(n, n) for n in names]
    known = {s.name for s in stages}
    bad = [s for s in names if s not in known]
    if bad:
        raise UserError(f"unknown stage {bad[0]!r}; stages: {', '.join(sorted(known))}")
    return [s for s in stages if s.name in names or s.bench is None]


def with_options(stages: list, args: Any) -> list:
    """Each stage given the values of its family's run options: `--io-dir DIR` becomes the
    storage stage's Storage(io_dir=[DIR]). Every option given is checked now, before
    anything is measured, also one for a stage --stage leaves out (a bad value is bad)."""
    from dataclasses import replace

    from numascope.families import run_options
    checked = {o.name: o.convert(getattr(args, o.name)) for o in run_options()
               if getattr(args, o.name, None) is not None}
    out = []
    for s in stages:
        given = tuple((o.name, checked[o.name]) for o in run_options(s.name)
                      if o.name in checked)
        out.append(replace(s, options=given) if given else s)
    return out


def refuse_left_out(chosen: list, stages: list, args: Any) -> None:
    """A stage's own run option (--io-dir, --bw-sweep) given while --stage leaves that stage
    out would be silently ignored: exit 2, one line (after its value was checked). What is
    said of the machine (--memory, --links) is every run's, whichever stages run."""
    from numascope.families import run_options
    machine = {o.name for o in run_options("compute")}
    names = {s.name for s in chosen}
    for st in stages:
        if st.bench is None or st.name in names:
            continue
        for o in run_options(st.name):
            v = getattr(args, o.name, None)
            if o.name not in machine and (bool(v) if o.kind == "switch" else v is not None):
                raise UserError(f"{o.flag} is for the {st.name} stage, which --stage leaves "
                                f"out: add --stage {st.name}, or leave {o.flag} out")


def machine_options(args: Any) -> dict[str, str]:
    """--memory and --links (the compute family's run options), checked now whichever
    stages run: the run's peak summary uses them (suite.theoretical_peaks)."""
    from numascope.families import run_options
    return {o.name: o.convert(getattr(args, o.name)) for o in run_options("compute")
            if getattr(args, o.name, None) is not None}


def load_topology() -> Topology:
    """This machine's topology (a function so tests can replace it)."""
    from numascope.topology import read_topology  # type: ignore[attr-defined]
    return read_topology("/")


def clock_probe() -> Callable[[], float]:
    """The function that reads the core clock (GHz) at the start and end of a run; a
    function so tests can replace it with a fake."""
    from numascope.clock import measure_ghz
    return measure_ghz


def prepare(topo: Topology, profile: Profile | str, tags: dict[str, str]
            ) -> tuple[RunRecord, NoiseMonitor]:
    """A new run record (its host facts, the clock at the start) and the noise monitor."""
    prof = _profile(profile)
    from numascope.results.plain import to_plain
    probe = clock_probe()
    mon = NoiseMonitor(probe)
    mon.start()
    rec = RunRecord.new(profile=prof.name, tags=tags)
    rec.topology = to_plain(topo)
    rec.host = host_facts(topo, clock_ghz=mon.data.get("clock_ghz_start"))
    return rec, mon


def run_suite(topo: Topology, rec: RunRecord, mon: NoiseMonitor, store: Store,
              stages: list[Stage] | None = None, progress: Any | None = None,
              on_stage: Callable[[str, str], None] | None = None,
              profile: Profile | None = None,
              machine: dict[str, str] | None = None,
              factors: dict[str, tuple] | None = None,
              budget: float | None = None,
              on_start: Callable[[str, int, float], None] | None = None,
              on_plan: Callable[[Any], None] | None = None) -> RunRecord:
    """Run every stage, storing each result as it finishes; returns the final record
    (status complete or interrupted). `on_stage(name, status)` is told about each stage,
    `on_start(name, cases, planned seconds)` when it starts. `machine` is what the user
    said of the machine ({"memory": "12x DDR5-4800", "links": "xgmi:4x16@32"}, checked):
    the run's peaks use it, whichever stages ran. Every stage's cases are built first and
    planned (numascope.plan, calibrated by `factors`: {stage: (measured / modelled, runs,
    pool use)}), `on_plan(plan)` hears the plan, and each stage's record keeps its plan
    beside what it took, per case too.

    With a `budget` (seconds) that the plan exceeds, the headline cases of every stage go
    first, stage by stage, then the others; under any budget a case whose planned seconds
    no longer fit what is left of it is not measured (the stage's plan and reason say so:
    "not measured: budget"), and a later, shorter one may still be.

    A stop signal (Ctrl-C, SIGTERM: a KeyboardInterrupt) ends the run between two units of
    work: the stage running is marked interrupted (its reason names the signal), the ones
    after it "not run", and the record is finished and stored with every result committed
    so far. Committing a result and the final write are held against a second signal
    (signals.deferred), which is raised once they are done.

    A store that fills (StoreFull, from committing a result) ends the run at once: nothing
    more is measured (no result could be kept), the stage running is marked failed with the
    reason, the ones after it "not run", and the record is finished as "failed" if the
    store can still take that one update. StoreFull is raised either way, saying which:
    exit 2, one line."""
    stages = all_stages() if stages is None else stages
    prof = profile or _profile(rec.profile)
    for st in stages:
        rec.stage(st.name)
    clock = _Budget(budget)
    full: StoreFull | None = None
    begun = False

    def keep(info):
        def on_result(res: BenchResult) -> None:
            with signals.deferred():   # a finished result is stored, or not counted
                store.add_result(rec.run_id, res)
                rec.results.append(res)
                info.results += 1
        return on_result

    try:
        with signals.deferred():   # stored as running, so that the end below finds it
            store.begin_run(rec)
            begun = True
        runs = [_StageRun(st) for st in stages]
        plan = _load(runs, topo, rec, prof, factors or {}, budget)
        if on_plan:
            on_plan(plan)
        # headline cases first only where the plan does not fit the budget: a run that
        # fits keeps the stages' order (each case is still admitted against the budget)
        over = budget is not None and plan.seconds > budget - BUDGET_RESERVE_S
        passes = ("headline", "rest") if over else ("all",)
        if budget is not None:      # steady cases add units only until the budget's end
            steady.bound_pools([c.params for r in runs for c in r.cases or []],
                               clock.t0 + budget - BUDGET_RESERVE_S)
            clock.reserved = sum(c.fixed for r in runs if r.plan is not None
                                 for c in r.plan.cases if c.headline)
        for which in passes:
            for r in runs:
                _run_stage(r, topo, rec, prof, keep, progress, on_stage, on_start, clock,
                           which, last=which == passes[-1])
    except KeyboardInterrupt:   # _run_stage marked the stage it stopped, if one ran
        rec.status = "interrupted"
    except StoreFull as e:      # _run_stage marked the stage it stopped
        if not begun:
            raise                # not even the run's row fit: nothing measured, one line
        rec.status, full = "failed", e
    with signals.deferred():
        if rec.status not in ("interrupted", "failed"):
            rec.status = "complete"
        why = "the store is full" if full is not None else "run interrupted"
        for s in rec.stages:
            if s.status == "pending" and s.results:     # a budget's first pass measured it
                s.status, s.reason = "interrupted", f"{why} before its other cases"
            elif s.status == "pending":
                s.status, s.reason = "not run", why
        rec.host["peaks"] = theoretical_peaks(topo, rec, machine)
        if budget is not None:
            rec.host["budget"] = {"seconds": budget, "used": round(clock.used(), 3)}
        # no closing clock reading after a stop: whoever stopped the run wants it over
        rec.noise = mon.stop(clock=rec.status == "complete")
        rec.finished = utc_now()
        if full is None:
            store.finish_run(rec)
        else:
            raise _store_full(store, rec, full)
    return rec


def _store_full(store: Store, rec: RunRecord, full: StoreFull) -> StoreFull:
    """The run's record finished as failed, if the full store still takes that update, and
    the one line saying the store is full, where the run stopped and whether its record is
    final."""
    stopped = next((s.name for s in rec.stages if s.status == "failed"
                    and s.reason == _reason(full)), None)
    where = f" at its {stopped} stage" if stopped else ""
    kept = f"{len(rec.results)} result{'s' if len(rec.results) != 1 else ''} stored"
    try:
        store.finish_run(rec)
    except UserError:       # StoreFull again, most likely: not even that update fit
        return StoreFull(f"{full}; run {rec.run_id} stopped{where}, nothing more measured, "
                         "and its record could not be finalized (it stays 'running' in the "
                         f"store, {kept}); free space, then run again")
    return StoreFull(f"{full}; run {rec.run_id} stopped{where}, nothing more measured: "
                     f"recorded as failed ({kept}); free space, then run again")


# What a budget keeps back for the run's end (its peaks, the record, the report): a case
# is measured only if its plan fits what is left less this.
BUDGET_RESERVE_S = 1.0
BUDGET_REASON = "not measured: budget"


class _Budget:
    """The seconds a budgeted run has left (none: unlimited), the headline cases still to
    come held back for them: `reserved` is their planned seconds."""

    def __init__(self, seconds: float | None):
        self.seconds, self.t0 = seconds, time.monotonic()
        self.reserved = 0.0

    def used(self) -> float:
        return time.monotonic() - self.t0

    def room(self, held: float) -> float:
        """Seconds left for a case, `held` kept back for the headline cases after it."""
        return (self.seconds or 0.0) - BUDGET_RESERVE_S - held - self.used()

    def admit(self, planned: float, headline: bool, params: Any) -> bool:
        """Whether a case of `planned` seconds fits; a steady one's extra units are bound to
        end where the held-back time begins (steady.Pool.deadline)."""
        if self.seconds is None:
            return True
        held = max(self.reserved - (planned if headline else 0.0), 0.0)
        if headline:
            self.reserved = held
        if planned > self.room(held):
            return False
        steady.bound_pools([params], time.monotonic() + self.room(held))
        return True


@dataclass
class _StageRun:
    """One stage across the passes of a run: its family, its cases and their plan."""

    st: Stage
    plan: Any | None = None              # plan.StagePlan
    bench: Any | None = None
    cases: list[Case] | None = None
    over: bool = False                   # skipped, failed or done: no more passes
    left_out: list[str] | None = None
    announced: bool = False              # on_stage was told how it ended

    def planned(self, case: Case) -> float:
        """Its planned seconds a budget cannot take back (plan.CasePlan.fixed)."""
        if self.plan is None:
            return 0.0
        return next((c.fixed for c in self.plan.cases if c.label == case.label), 0.0)

    def headline(self, case: Case) -> bool:
        return self.plan is not None and any(c.label == case.label and c.headline
                                             for c in self.plan.cases)


def _load(runs: list[_StageRun], topo: Topology, rec: RunRecord, profile: Profile,
          factors: dict[str, tuple], budget: float | None) -> Any:
    """Every stage's cases built (a stage that cannot run here is skipped with its reason)
    and planned; the plan, each stage's part of it in its record."""
    from numascope import plan as P
    for r in runs:
        st, info = r.st, rec.stage(r.st.name)
        if st.bench is None:
            r.plan = P.stage_plan(st, topo, None, factors)
            continue
        t0 = time.monotonic()
        try:
            r.bench, r.cases = st.load(topo, profile)
        except (Unavailable, UserError, OSError) as e:
            info.status, info.reason, r.over = "skipped", _reason(e), True
        except KeyboardInterrupt as e:
            info.status = "interrupted"
            info.reason = f"stopped by {signals.name(signals.signum_of(e))}"
            raise
        finally:
            info.seconds += time.monotonic() - t0
        r.plan = P.stage_plan(st, topo, r.cases, factors, info.reason if r.over else "")
        if r.cases is not None:
            r.left_out = []
            info.plan = {"cases": len(r.cases), "seconds": round(r.plan.seconds, 3),
                         "modelled_seconds": round(r.plan.modelled, 3),
                         "modelled_fixed": round(r.plan.modelled_fixed, 3),
                         "modelled_pool": round(r.plan.modelled_pool, 3),
                         "factor": round(r.plan.factor, 4),
                         "pool_use": round(r.plan.pool_use, 4),
                         "calibrated_by": r.plan.calibrated_by}
    return P.Plan([r.plan for r in runs], profile.name, budget)


def _run_stage(r: _StageRun, topo: Topology, rec: RunRecord, profile: Profile,
               keep: Callable[[Any], Any], progress: Any | None,
               on_stage: Callable[[str, str], None] | None,
               on_start: Callable[[str, int, float], None] | None,
               clock: _Budget, which: str = "all", last: bool = True) -> None:
    """One pass over a stage (`which`: all its cases, or its headline ones, or the rest):
    its status and reason set on the record once it is over. A stop signal marks it
    interrupted and propagates (a KeyboardInterrupt) to end the run."""
    st = r.st
    info = rec.stage(st.name)
    if r.over:                           # skipped when its cases were listed
        if on_stage and not r.announced:
            r.announced = True
            on_stage(st.name, info.status)
        return
    t0 = time.monotonic()
    try:
        if st.bench is None:
            info.status, r.over = "done", True
            return
        assert r.cases is not None and r.left_out is not None
        if on_start and which != "rest":
            on_start(st.name, len(r.cases), r.plan.seconds if r.plan else 0.0)
        cases = [c for c in r.cases if which == "all"
                 or (which == "headline") == r.headline(c)]

        def admit(case: Case) -> bool:
            if clock.admit(r.planned(case), r.headline(case), case.params):
                return True
            r.left_out.append(case.label)       # type: ignore[union-attr]
            return False

        def on_case(case: Case, seconds: float) -> None:
            info.case_seconds.append([case.label, seconds])
        try:
            run_cases(r.bench, topo, cases, keep(info), progress, description=st.name,
                      admit=admit, on_case=on_case, derive=last)
            if last:
                info.status, r.over = "done", True
                info.plan["pool_spent"] = round(steady.pool_spent(
                    [c.params for c in r.cases]), 3)
                if r.left_out:
                    info.reason = (f"{BUDGET_REASON}: {len(r.left_out)} of {len(r.cases)} "
                                   "cases")
                    info.plan["left_out"] = list(r.left_out)
        except StoreFull as e:       # no result can be kept: the run ends here
            info.status, info.reason, r.over = "failed", _reason(e), True
            raise
        except (Unavailable, PermissionError, FileNotFoundError) as e:
            # asked (its cases were built) and not done: not "does not apply here"
            info.status, info.reason, r.over = "incomplete", _reason(e), True
        except LaunchError as e:     # the launcher started no rank: nothing was validated
            info.status, info.reason, r.over = "failed", f"launch failed: {e}", True
        except MeasurementError as e:
            info.status, info.reason, r.over = "failed", f"validation failed: {e}", True
        except (UserError, OSError) as e:
            info.status, info.reason, r.over = "failed", _reason(e), True
        except Exception as e:  # noqa: BLE001 — a bug in one family must not lose the others
            info.status, r.over = "failed", True
            info.reason = f"internal error: {type(e).__name__}: {e}"
    except KeyboardInterrupt as e:   # Interrupted from the sweep, or while loading
        info.status = "interrupted"
        info.reason = f"stopped by {signals.name(signals.signum_of(e))}"
        raise
    finally:
        info.seconds += time.monotonic() - t0
        if on_stage and r.over and not r.announced:
            r.announced = True
            on_stage(st.name, info.status)


def theoretical_peaks(topo: Topology, rec: RunRecord, machine: dict[str, str] | None = None
                      ) -> dict[str, Any]:
    """The run's peak summary, computed once (numascope.peaks.run_summary): the one the
    peaks stage computed with the clocks it measured, else one from the run monitor's
    single-CPU clock at the start of the run; DRAM and links from the user's `machine`
    description (--memory, --links) when given, recorded with origin "user"."""
    try:
        from numascope import peaks
        from numascope.results.plain import to_plain
        m = machine or {}
        return to_plain(peaks.run_summary(topo, rec.results, rec.host.get("clock_ghz"),
                                          memory=m.get("memory"), links=m.get("links")))
    except Exception as e:  # noqa: BLE001 — peaks are context; never lose the run for them
        return {"error": f"{type(e).__name__}: {e}"}


def _reason(e: BaseException) -> str:
    """The whole reason on one line (control characters visible), never its first line."""
    from numascope.errors import escape_text
    return escape_text(str(e) or type(e).__name__)
