"""`numascope run`: the default suite on this machine, stored and reported."""

from __future__ import annotations

import argparse

from numascope.cli._common import add_json
from numascope.cli.runs import add_store
from numascope.console import err, out, print_json

NAME = "run"
HELP = ("measure this machine: topology, peaks, bandwidth, latency, matrices, compression; "
        "store the run and write the HTML report")
ORDER = 5


def register(p: argparse.ArgumentParser) -> None:
    prof = p.add_mutually_exclusive_group()
    prof.add_argument("--quick", dest="profile", action="store_const", const="quick",
                      help="about a minute on a small machine (the default)")
    prof.add_argument("--full", dest="profile", action="store_const", const="full",
                      help="every sweep, more repetitions (much longer)")
    p.add_argument("--tag", action="append", metavar="KEY=VALUE",
                   help="label the run, e.g. --tag nps=4 (repeatable); compare by tag later")
    p.add_argument("--stage", action="append", metavar="NAME",
                   help="run only these stages (repeatable; see --list-stages)")
    p.add_argument("--list-stages", action="store_true", help="list the stages and exit")
    p.add_argument("--report", metavar="FILE",
                   help="HTML report path (default ./numascope-report-<run id>.html)")
    p.add_argument("--no-report", action="store_true", help="do not write the HTML report")
    add_store(p)
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from numascope import signals, suite
    from numascope.cli.report import write_html
    from numascope.errors import UserError
    from numascope.report.terminal import print_run
    from numascope.results.run import parse_tags
    from numascope.results.store import Store

    if args.list_stages:
        for st in suite.all_stages():
            out.print(f"{st.name:10} {st.title}", markup=False)
        return 0
    stages = suite.all_stages()
    if args.stage:
        known = {s.name for s in stages}
        bad = [s for s in args.stage if s not in known]
        if bad:
            raise UserError(f"unknown stage {bad[0]!r}; stages: {', '.join(sorted(known))}")
        stages = [s for s in stages if s.name in args.stage or s.bench is None]
    tags = parse_tags(args.tag)
    profile = args.profile or suite.DEFAULT_PROFILE
    store = Store.open(args.store, write=True)   # refuse a bad store before measuring
    try:
        topo = suite.load_topology()
        rec, mon = suite.prepare(topo, profile, tags)
        err.print(f"run {rec.run_id} ({profile}) → store {store.path}", markup=False)

        def on_stage(name: str, status: str) -> None:
            info = rec.stage(name)
            why = f" — {info.reason}" if info.reason else ""
            err.print(f"  {name}: {status} ({info.results} results, {info.seconds:.1f}s){why}",
                      markup=False)

        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=err, transient=True) as progress:
            rec = suite.run_suite(topo, rec, mon, store, stages, progress, on_stage)
    finally:
        store.close()
    report = None
    if not args.no_report:
        report = write_html([rec], args.report)
    if args.json:
        d = rec.to_dict()
        d["report"] = str(report) if report else None
        print_json(d)
    else:
        print_run(rec, out)
        if report:
            out.print(f"report: {report}", markup=False)
    if rec.status == "interrupted":
        err.print(f"interrupted ({signals.name(signals.signum_of(None))}): the finished "
                  "results are stored and reported", markup=False)
        return signals.exit_code()
    return 3 if any(s.status == "failed" for s in rec.stages) else 0
