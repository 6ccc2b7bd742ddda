"""The one path from a command to its measurements: cases in, results out, with the
progress bar, stop signals, notes, plots and the JSON envelope handled the same way for
every command. A command module only parses its flags into cases and renders its table:

    def main(args):
        plot = check_output(args.plot, "--plot", PLOT_SUFFIXES)      # before measuring
        topo = read_topology("/")
        bench = Bandwidth()
        cases = bench.cases(topo, params)
        outcome = measure(bench, topo, cases, label="bw", quiet=args.json)
        save_plot(plot, "bandwidth.figures", outcome)   # a refused write: kept for finish
        return finish(args, "bw", outcome, render=_print)
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from numascope.benchmark import Benchmark, Case, Interrupted, run_cases
from numascope.results.record import BenchResult

PLOT_SUFFIXES = (".png", ".svg")


@dataclass
class Outcome:
    results: list[BenchResult] = field(default_factory=list)
    stopped: Interrupted | None = None     # the stop signal that ended the sweep, if one did
    plan: Any | None = None                # --plan: the cases' plan, nothing measured
    left_out: list[str] = field(default_factory=list)   # --budget: the cases not measured
    budget: float | None = None
    plot_error: str | None = None          # --plot: the figures could not be written (why)


def measure(bench: Benchmark, topo: Any, cases: Iterable[Case], *, label: str,
            quiet: bool = False, args: argparse.Namespace | None = None) -> Outcome:
    """Run the cases in turn under one progress bar (on a terminal, more than one case, not
    `quiet`); a stop signal ends the sweep and is kept on the outcome with what finished.
    With `args.plan` the cases are planned and nothing is measured; with `args.budget`,
    each case is measured only while its plan fits what is left (numascope.plan)."""
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from numascope.console import err
    cases = list(cases)
    out = Outcome()
    want_plan = bool(getattr(args, "plan", False))
    budget_text = getattr(args, "budget", None)
    admit = None
    if want_plan or budget_text is not None:
        from numascope import plan as P
        out.budget = P.parse_duration(budget_text) if budget_text is not None else None
        out.plan, _ = P.estimate_cases(bench.family, topo, cases)
        if want_plan:
            return out
        planned = {c.label: c.fixed for c in out.plan}
        t0 = time.monotonic()

        def admit(case: Case) -> bool:
            if time.monotonic() - t0 + planned.get(case.label, 0.0) <= out.budget:
                return True
            out.left_out.append(case.label)
            return False
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=err, transient=True,
                  disable=quiet or len(cases) < 2 or not err.is_terminal) as prog:
        try:
            out.results = run_cases(bench, topo, cases, progress=prog, description=label,
                                    admit=admit)
        except Interrupted as e:
            out.results, out.stopped = e.results, e
    return out


def print_plan(command: str, outcome: Outcome, console: Any) -> None:
    """A family command's plan: each case, its seconds and what they are spent on."""
    from rich.table import Table
    t = Table(title=f"plan: numascope {command}", title_justify="left", box=None,
              pad_edge=False, padding=(0, 2, 0, 0))
    for col, just in (("case", "left"), ("seconds", "right"), ("spent on", "left")):
        t.add_column(col, justify=just, overflow="fold")
    for c in outcome.plan or []:
        parts = ", ".join(f"{k} {v:.2f} s" for k, v in sorted(c.parts.items(),
                                                              key=lambda kv: -kv[1])[:3])
        t.add_row(c.label, f"{c.seconds:.1f}", parts)
    console.print(t)
    total = sum(c.seconds for c in outcome.plan or [])
    console.print(f"total {total:.0f} s (the nominal model: docs/plan.md)"
                  + (f"; budget {outcome.budget:g} s" if outcome.budget else ""),
                  markup=False)


def warn_notes(results: list[BenchResult], skip: Callable[[str], bool] = lambda n: False) -> None:
    """Each distinct note of the results once, as a warning on standard error."""
    from numascope.console import warn
    for note in dict.fromkeys(n for r in results for n in r.notes):
        if not skip(note):
            warn(note)


def steady_lines(results: list[BenchResult], console: Any) -> None:
    """Under a table with figures repeated until steady (--reps auto): how many converged,
    and what the mark on n means when one did not. Nothing for fixed repetitions."""
    from rich.text import Text

    from numascope.steady import mark_note, summary, unsteady
    params = [r.params for r in results]
    line = summary(params)
    if line:
        console.print(Text(line))
    if any(unsteady(p) for p in params):
        console.print(Text(mark_note(params)))


def save_plot(path: Any, figures: str, outcome: Outcome) -> None:
    """Draw and save the figures of `outcome.results` (numascope.families.<figures>, e.g.
    "latency.figures") to `path`
    (checked before measuring). Matplotlib is imported only here: a second on a fast
    machine, and a command without --plot does not pay it.

    A file system that refuses the figure now (full, made read-only, permission taken
    since the check) leaves no partial file (save_figures writes each whole or not at all)
    and loses no measurement: the reason is kept on the outcome, and `finish` prints the
    results first, then the one line, and exits 2."""
    from numascope.console import err
    if path is None or not outcome.results:
        return
    import importlib

    from numascope.plotting import save_figures
    figs = importlib.import_module(f"numascope.families.{figures}").figures(outcome.results)
    if not figs:
        err.print("nothing to plot for these results", markup=False)
        return
    try:
        written = save_figures(figs, str(path))
    except OSError as e:
        outcome.plot_error = plot_error_text(path, e)
        return
    for p in written:
        err.print(f"plot written to {p}", markup=False)


def plot_error_text(path: Any, e: OSError) -> str:
    """--plot's one line for a figure the file system refused: the path and why."""
    from numascope.errors import escape_text
    from numascope.paths import PATH_SHOWN, os_reason
    return (f"--plot {escape_text(str(path), PATH_SHOWN)}: cannot write the figure "
            f"({os_reason(e)}); no partial file was left")


def finish(args: argparse.Namespace, command: str, outcome: Outcome,
           render: Callable[[list[BenchResult], Any], None], *, what: str = "case",
           extra: dict[str, Any] | None = None) -> int:
    """Print the results (the envelope with --json, else `render(results, console)`), say
    how a stop ended the sweep, and return the exit code (0, or 130/143 after a stop)."""
    from numascope.command.output import emit, error_entry, report_interrupted
    from numascope.console import out, warn
    if outcome.plan is not None and not outcome.results and getattr(args, "plan", False):
        if getattr(args, "json", False):
            emit(command, [], plan={"cases": [c.to_dict() for c in outcome.plan],
                                    "seconds": round(sum(c.seconds for c in outcome.plan), 3),
                                    "budget_s": outcome.budget})
        else:
            print_plan(command, outcome, out)
        return 0
    if outcome.left_out:
        warn(f"not measured (--budget {outcome.budget:g} s): {len(outcome.left_out)} of "
             f"{len(outcome.left_out) + len(outcome.results)} cases: "
             + ", ".join(outcome.left_out))
    failed_plot = None
    if outcome.plot_error:
        from numascope.errors import UserError
        failed_plot = UserError(f"{outcome.plot_error} (the results are above)"
                                if not getattr(args, "json", False) else outcome.plot_error)
    if getattr(args, "json", False):
        errors = [error_entry(outcome.stopped)] if outcome.stopped else []
        if failed_plot is not None:
            errors.append(error_entry(failed_plot))
        more = dict(extra or {})
        if outcome.left_out:
            more["not_measured"] = {"reason": "budget", "budget_s": outcome.budget,
                                    "cases": list(outcome.left_out)}
        emit(command, [r.to_dict() for r in outcome.results], errors, **more)
    else:
        render(outcome.results, out)
    if failed_plot is not None:       # the cli's one line, after the results it keeps
        import sys

        from numascope.errors import escape_text
        sys.stderr.write(f"numascope: error: {escape_text(failed_plot)}\n")
    if outcome.stopped:
        return report_interrupted(outcome.stopped, len(outcome.results), what)
    return failed_plot.exit_code if failed_plot is not None else 0


def rendered_width(table: Any) -> int:
    """A rich table's width laid out without a width limit (within one, rich folds cells
    instead): whether "median (best)" cells fit the console."""
    import io

    from rich.console import Console
    c = Console(file=io.StringIO(), width=10_000, color_system=None)
    c.print(table)
    return max((len(line.rstrip()) for line in c.file.getvalue().splitlines()), default=0)
