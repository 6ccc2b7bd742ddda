"""`numascope peak`: theoretical peaks (FLOP/s, DRAM, links) with their formulas, the measured
clock, measured compute (DGEMM, LU, optionally HPL) and the efficiency table."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from numascope.errors import escape_text

NAME = "peak"
HELP = "theoretical peaks vs measured: clock, FLOP/s (DGEMM, LU, HPL), DRAM, links"
ORDER = 60
FLAGS = {"sysfs_root": True}   # beside the TABLE of options.py


def _given(opts: dict[str, Any]) -> dict[str, Any]:
    """The figures the user states for the efficiency table (checked by their options)."""
    given: dict[str, Any] = {}
    for flag, key in (("--dram-gbs", "dram"), ("--link-gbs", "link")):
        if opts[f"{key}_gbs"] is not None:
            given[f"{key}_gbs"], given[f"{key}_by"] = opts[f"{key}_gbs"], flag
    return given


def main(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from numascope.analysis.efficiency import efficiency_table, measured_from
    from numascope.command.runner import finish
    from numascope.errors import UserError
    from numascope.families.compute.bench import Compute, ComputeParams
    from numascope.families.compute.options import TABLE
    from numascope.options import check

    opts = check(TABLE, vars(args))    # every flag checked here, before anything is measured
    given = _given(opts)
    live = args.sysfs_root in ("/", "")
    compute = not opts["no_compute"]
    params = ComputeParams(
        dgemm=(opts["size"],), lu=(opts["size"],), reps=opts["reps"], clock=live,
        clock_ghz=opts["clock_ghz"], hpl=opts["hpl"], hpl_np=opts["hpl_np"],
        hpl_n=opts["hpl_n"], hpl_big=opts["hpl_big"], hpl_layouts=opts["hpl_layouts"] or (),
        memory=opts["memory"], links=opts["links"])
    if not live and (compute or params.runs_hpl):
        raise UserError("measurements need this machine: add --no-compute with --sysfs-root")
    if not compute:
        params = replace(params, dgemm=(), lu=(), hpl=False, hpl_big=False, hpl_n=None,
                         hpl_layouts=())
    from numascope.topology.replay import machine
    with machine(args.sysfs_root) as (topo, tree):
        bench = Compute(params)
        outcome, problems = _measure(bench, topo, quiet=args.json)
        if compute and not outcome.stopped and "dram_gbs" not in given:
            _measure_dram(topo, outcome, problems, quiet=args.json)
        summary = bench.peaks(topo, root=tree)      # the one summary of this run
    table = efficiency_table(summary, given, outcome.results)
    extra = {"peaks": summary, "measured": measured_from(outcome.results, given),
             "efficiency": [r.to_dict() for r in table],
             "problems": [f"{label}: {msg}" for label, msg in problems]}
    return finish(args, NAME, outcome, lambda rs, con: render(con, summary, rs, problems, table),
                  what="measurement", extra=extra)


def _measure(bench: Any, topo: Any, quiet: bool) -> tuple[Any, list[tuple[str, str]]]:
    """Each case through the runner; a case that fails (hpcc missing, a failed check) is a
    problem and the others still run; a stop signal ends the sweep with what finished."""
    from numascope.command.runner import Outcome, measure
    from numascope.console import err
    from numascope.errors import MeasurementError, Unavailable
    out, problems = Outcome(), []
    for case in bench.cases(topo, bench.params):
        try:
            with _status(err, f"measuring {case.label} …", quiet):
                one = measure(bench, topo, [case], label="peak", quiet=quiet)
        except (Unavailable, MeasurementError) as e:
            problems.append((case.label, escape_text(str(e))))
            continue
        out.results += one.results
        if one.stopped:
            out.stopped = one.stopped
            break
    return out, problems


def _status(err: Any, text: str, quiet: bool) -> Any:
    return contextlib.nullcontext() if quiet or not err.is_terminal else err.status(text)


def _measure_dram(topo: Any, outcome: Any, problems: list[tuple[str, str]],
                  quiet: bool) -> None:
    """A STREAM triad on every core, for the DRAM row (its result joins the results)."""
    from numascope.console import err
    from numascope.errors import MeasurementError, Unavailable, UserError
    try:
        from numascope.families.bandwidth import bench as bandwidth
    except ImportError as e:
        problems.append(("DRAM", f"not measured: bandwidth engine not available ({e})"))
        return
    try:
        with _status(err, "measuring STREAM triad, all cores …", quiet):
            outcome.results.append(bandwidth.measure(topo, kernel="triad"))
    except (MeasurementError, Unavailable, UserError) as e:
        problems.append(("DRAM", f"not measured: {escape_text(str(e))}"))
    except KeyboardInterrupt as e:
        outcome.stopped = e


# -- the tables (80 columns) -----------------------------------------------------------------

def _fmt(v: float | None, digits: int = 1) -> str:
    return "unknown" if v is None else f"{v:,.{digits}f}"


def _val(v: float | None, unit: str) -> str:
    return "unknown" if v is None else f"{_fmt(v)} {unit}"


def _table(*cols: str, title: str | None = None) -> Any:
    from rich.table import Table
    t = Table(title=title, title_justify="left")
    for c in cols:
        t.add_column(c, overflow="fold", justify="right" if c in NUMERIC else "left")
    return t


NUMERIC = ("peak", "measured", "efficiency", "alone", "all busy", "best", "median",
           "% of peak", "CPU")
PEAK_NAMES = (("flops", "FP64 FLOP/s"), ("dram", "DRAM bandwidth"),
              ("links", "inter-socket links"))


def render(con: Any, summary: dict[str, Any], results: list, problems: list[tuple[str, str]],
           table: list) -> None:
    from rich.markup import escape
    from rich.text import Text
    t = _table("resource", "peak", "formula (source), or why unknown", title="Theoretical peaks")
    for key, name in PEAK_NAMES:
        p = summary[key]
        how = Text(p["formula"] + (f" ({p['source']})" if p.get("source") else "")) \
            if p["formula"] else Text(p["reason"] or "unknown", style="yellow")
        t.add_row(name, _val(p["value"], p["unit"]), how)
    con.print(t)
    for key, _ in PEAK_NAMES:
        for n in summary[key].get("notes", []):
            con.print(f"  {key}: {n}", style="dim", markup=False)

    c = summary.get("clock")
    if c and c.get("per_cpu"):
        t = _table("CPU", "alone", "all busy", title="Measured core clock (GHz)")
        for cpu, v in c["per_cpu"].items():
            t.add_row(str(cpu), _fmt(v["single_ghz"], 3), _fmt(v["all_busy_ghz"], 3))
        con.print(t)
        tsc = f"TSC {c['tsc_ghz']:.3f} GHz; " if c.get("tsc_ghz") else ""
        con.print(f"  {tsc}{c['method']}", style="dim", markup=False)
        for n in c.get("notes", []):
            con.print(f"  {n}", style="yellow", markup=False)

    rows = [r for r in results if r.family == "compute" and "gflops" in r.metrics]
    failed = [(label, msg) for label, msg in problems if label != "DRAM"]
    if rows or failed:
        t = _table("case", "best", "median", "% of peak", "check",
                   title="Measured compute (GFLOP/s)")
        notes: list[str] = []
        for r in rows:
            pct = r.metrics.get("pct_of_peak")
            res = r.metrics.get("residual")
            t.add_row(Text(r.case), _fmt(r.metrics["gflops"].best), _fmt(r.metrics["gflops"].median),
                      _fmt(pct.best if pct else None),
                      f"residual {res.max:.2g} < 16" if res else "passed")
            notes += [f"{r.case}: {n}" for n in r.notes]
        for label, _ in failed:
            t.add_row(Text(label), "unknown", "unknown", "unknown", "failed")
        con.print(t)
        for n in dict.fromkeys(notes):
            con.print(f"  {n}", style="dim", markup=False)

    if table:
        t = _table("resource", "measured", "peak", "efficiency", "by, or note",
                   title="Efficiency (measured / theoretical)")
        for r in table:
            pct = "unknown" if r.percent is None else f"{r.percent:.1f} %"
            note = "peak unknown (see above)" if r.note.startswith("peak unknown") else r.note
            by = "; ".join(x for x in (r.measured_by, note) if x)
            t.add_row(r.what, _val(r.measured, r.unit), _val(r.peak, r.unit), pct,
                      Text(by))
        con.print(t)
    from numascope.console import warn
    for label, msg in problems:
        warn(escape(f"{label}: {msg}"))
