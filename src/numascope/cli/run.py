"""`numascope run`: the default suite on this machine, stored and reported."""

from __future__ import annotations

import argparse

from numascope.cli.runs import add_store
from numascope.command.flags import add_json
from numascope.command.output import emit
from numascope.console import err, out

NAME = "run"
HELP = ("measure this machine: topology, peaks, bandwidth, latency, matrices, compression; "
        "store the run and write the HTML report")
ORDER = 5
_ENVELOPE_KEYS = ("schema_version", "command", "results", "errors")


def register(p: argparse.ArgumentParser) -> None:
    from numascope.command.flags import add_profile
    add_profile(p, "under a minute on a small machine (the default)",
                "every sweep, more repetitions (much longer)")
    p.add_argument("--tag", action="append", metavar="KEY=VALUE",
                   help="label the run, e.g. --tag nps=4 (repeatable, each key once); "
                        "select it later with nps=4")
    p.add_argument("--stage", action="append", metavar="NAME",
                   help="run only these stages (repeatable; see --list-stages)")
    p.add_argument("--list-stages", action="store_true", help="list the stages and exit")
    from numascope.command.flags import add_options
    from numascope.families import run_options
    add_options(p, run_options())          # what a family's stage takes (--io-dir …)
    rep = p.add_mutually_exclusive_group()
    rep.add_argument("--report", metavar="FILE",
                     help="HTML report path (default ./numascope-report-<run id>.html)")
    rep.add_argument("--no-report", action="store_true", help="do not write the HTML report")
    add_store(p)
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from numascope import suite
    from numascope.profile import profile as get_profile
    from numascope.results.run import parse_tags
    from numascope.results.store import Store
    if args.list_stages:
        return _list_stages(args, suite.all_stages())
    stages = _with_options(_stages(args.stage, suite.all_stages()), args)
    machine = _machine(args)
    tags = parse_tags(args.tag, "--tag")
    profile = get_profile(args.profile or suite.DEFAULT_PROFILE)
    if not args.no_report:   # a bad report path never costs a measurement
        from numascope.cli.report import check_report_path
        check_report_path(args.report, "--report")
    store = Store.open(args.store, write=True)   # refuse a bad store before measuring
    try:
        rec = _measure(suite, store, stages, profile, tags, machine)
    finally:
        store.close()
    return _finish(args, rec)


def _list_stages(args: argparse.Namespace, stages: list) -> int:
    if args.json:
        emit(NAME, [{"name": s.name, "title": s.title} for s in stages])
    else:
        for st in stages:
            out.print(f"{st.name:10} {st.title}", markup=False)
    return 0


def _stages(names: list[str] | None, stages: list) -> list:
    """The stages --stage names (the topology stage always runs); UserError for others."""
    from numascope.errors import UserError
    if not names:
        return stages
    from numascope.families import ALIASES
    names = [ALIASES.get(n, n) for n in names]
    known = {s.name for s in stages}
    bad = [s for s in names if s not in known]
    if bad:
        raise UserError(f"unknown stage {bad[0]!r}; stages: {', '.join(sorted(known))}")
    return [s for s in stages if s.name in names or s.bench is None]


def _with_options(stages: list, args: argparse.Namespace) -> list:
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


def _machine(args: argparse.Namespace) -> dict[str, str]:
    """--memory and --links (the compute family's run options), checked now whichever
    stages run: the run's peak summary uses them (suite.theoretical_peaks)."""
    from numascope.families import run_options
    return {o.name: o.convert(getattr(args, o.name)) for o in run_options("compute")
            if getattr(args, o.name, None) is not None}


def _measure(suite, store, stages: list, profile, tags: dict[str, str],
             machine: dict[str, str] | None = None):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from numascope.console import plural
    topo = suite.load_topology()
    rec, mon = suite.prepare(topo, profile, tags)
    err.print(f"run {rec.run_id} ({profile.name}) → store {store.path}", markup=False)
    if not profile.readable:
        from numascope.profile import SMOKE_NOTE
        err.print(f"  {SMOKE_NOTE}", markup=False)

    def on_stage(name: str, status: str) -> None:
        info = rec.stage(name)
        why = f" — {info.reason}" if info.reason else ""
        err.print(f"  {name}: {status} ({plural(info.results, 'result')}, "
                  f"{info.seconds:.1f}s){why}", markup=False)

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=True) as progress:
        return suite.run_suite(topo, rec, mon, store, stages, progress, on_stage,
                               profile=profile, machine=machine)


def _finish(args: argparse.Namespace, rec) -> int:
    from numascope import signals
    from numascope.cli.report import write_html
    from numascope.command.output import error_entry
    from numascope.report.headline_terminal import print_headline
    from numascope.report.terminal import print_run

    report = None if args.no_report else write_html([rec], args.report)
    interrupted = rec.status == "interrupted"
    failed = [s for s in rec.stages if s.status == "failed"]
    code = signals.exit_code() if interrupted else 3 if failed else 0
    if args.json:
        errors = [error_entry(KeyboardInterrupt())] if interrupted else []
        errors += [{"kind": "validation" if s.reason.startswith("validation") else "internal",
                    "message": f"stage {s.name}: {s.reason}", "exit_code": 3} for s in failed]
        d = rec.to_dict(with_results=False)
        d["record_schema_version"] = d.pop("schema_version")
        extra = {k: v for k, v in d.items() if k not in _ENVELOPE_KEYS}
        emit(NAME, [r.to_dict() for r in rec.results], errors, **extra,
             report=str(report) if report else None)
    else:
        print_run(rec, out)
        print_headline(rec, out)      # the HTML report's summary, last: what the run found
        if report:
            out.print(f"report: {report}", markup=False)
    from numascope.console import warn
    from numascope.peaks import disagreements
    for note in disagreements(rec.host.get("peaks")):   # said, not only recorded
        warn(f"--memory: {note}")
    if interrupted:
        err.print(f"interrupted ({signals.name(signals.signum_of(None))}): the finished "
                  "results are stored and reported", markup=False)
    return code
