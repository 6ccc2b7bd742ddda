"""`numascope run`'s measurement as a person watches it: the run and its store in a line,
the plan (cases, seconds, budget), then on a terminal a bar under each stage and in a log
(or under mpirun) a line as each stage starts; on both, a line as each stage ends. All of
it on standard error, so --json's standard output stays one document."""

from __future__ import annotations

from typing import Any


def measure(store: Any, stages: list, profile: Any, tags: dict[str, str],
            machine: dict[str, str] | None = None, budget: float | None = None) -> Any:
    """Run `stages` of the suite on this machine into the open `store`, the plan calibrated
    by this host's earlier runs there; the RunRecord, whatever ended it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from numascope import suite
    from numascope.console import err, plural
    from numascope.plan import PlanProgress, factors
    topo = suite.load_topology()
    rec, mon = suite.prepare(topo, profile, tags)
    err.print(f"run {rec.run_id} ({profile.name}) → store {store.path}", markup=False)
    if not profile.readable:
        from numascope.profile import SMOKE_NOTE
        err.print(f"  {SMOKE_NOTE}", markup=False)
    live = err.is_terminal
    shown = PlanProgress(None, None)

    def on_plan(plan) -> None:
        limit = f"; budget {budget:g} s" + (": the headline cases first" if
                                             plan.seconds > budget else "") if budget else ""
        err.print(f"  plan: {plural(sum(len(s.cases) for s in plan.stages), 'case')}, about "
                  f"{plan.seconds:.0f} s{limit}", markup=False)
        shown.set_plan(plan)

    def on_start(name: str, cases: int, seconds: float) -> None:
        if not live:        # a log, or under mpirun: a line as each stage starts
            err.print(f"  {name}: {plural(cases, 'case')}, about {seconds:.0f} s", markup=False)

    def on_stage(name: str, status: str) -> None:
        info = rec.stage(name)
        why = f" — {info.reason}" if info.reason else ""
        err.print(f"  {name}: {status} ({plural(info.results, 'result')}, "
                  f"{info.seconds:.1f}s){why}", markup=False)

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("{task.fields[left]}"), console=err,
                  transient=True, disable=not live) as progress:
        shown.p = progress
        return suite.run_suite(topo, rec, mon, store, stages, shown, on_stage,
                               profile=profile, machine=machine,
                               factors=factors(topo, profile, store), budget=budget,
                               on_start=on_start, on_plan=on_plan)
