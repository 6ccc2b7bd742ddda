"""`numascope run`: the default suite on this machine, stored and reported."""

from __future__ import annotations

import argparse

from numascope.command.flags import add_json, add_store
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
    p.add_argument("--plan", action="store_true",
                   help="print the stages, their cases and the time each will take, then "
                        "exit (measures nothing; with --sysfs-root, of a replayed machine)")
    p.add_argument("--budget", metavar="DURATION",
                   help="end within this time, e.g. 90s, 2m: the headline cases first, the "
                        "rest while they fit; what is left out is recorded as 'not "
                        "measured: budget' (default: the profile's, quick "
                        f"{_profile_budget('quick')})")
    p.add_argument("--all-results", action="store_true",
                   help="print every case's results before the summary (the store and the "
                        "report always have them)")
    from numascope.command.flags import add_sysfs_root
    add_sysfs_root(p)
    from numascope.command.flags import add_options
    from numascope.families import run_options
    add_options(p, run_options())          # what a family's stage takes (--io-dir …)
    rep = p.add_mutually_exclusive_group()
    rep.add_argument("--report", metavar="FILE",
                     help="HTML report path (default ./numascope-report-<run id>.html)")
    rep.add_argument("--no-report", action="store_true", help="do not write the HTML report")
    add_store(p)
    add_json(p)


def _profile_budget(name: str) -> str:
    from numascope.profile import profile as get_profile
    b = get_profile(name).budget_s
    return f"{b:g} s" if b else "none"


def main(args: argparse.Namespace) -> int:
    from numascope import suite
    from numascope.errors import UserError
    from numascope.profile import profile as get_profile
    from numascope.results.run import parse_tags
    from numascope.results.store import Store
    from numascope.run_progress import measure
    if args.list_stages:
        return _list_stages(args, suite.all_stages())
    stages = suite.with_options(suite.chosen(args.stage, suite.all_stages()), args)
    suite.refuse_left_out(stages, suite.all_stages(), args)
    machine = suite.machine_options(args)
    tags = parse_tags(args.tag, "--tag")
    profile = get_profile(args.profile or suite.DEFAULT_PROFILE)
    budget = _budget(args, profile)
    replayed = args.sysfs_root not in (None, "/")
    if replayed and not args.plan:
        raise UserError("--sysfs-root replays another machine: it goes with --plan only "
                        "(numascope measures the machine it runs on)")
    if args.plan:
        return _plan(args, suite, stages, profile, budget)
    if not args.no_report:   # a bad report path never costs a measurement
        from numascope.report.output import check_report_path
        check_report_path(args.report, "--report")
    store = Store.open(args.store, write=True)   # refuse a bad store before measuring
    try:
        rec = measure(store, stages, profile, tags, machine, budget)
    finally:
        store.close()
    return _finish(args, rec)


def _budget(args: argparse.Namespace, profile) -> float | None:
    """--budget in seconds, else the profile's own (None: unlimited)."""
    from numascope.plan import parse_duration
    if args.budget is not None:
        return parse_duration(args.budget, "--budget")
    return profile.budget_s


def _plan(args: argparse.Namespace, suite, stages: list, profile, budget) -> int:
    from numascope.plan import factors, make_plan, render
    from numascope.topology import read_topology
    if args.sysfs_root not in (None, "/"):     # another machine: never this host's runs
        topo, f = read_topology(args.sysfs_root), {}
    else:
        topo = suite.load_topology()
        f = factors(topo, profile, args.store)
    p = make_plan(topo, profile, stages, f, budget)
    if args.json:
        emit(NAME, [], plan=p.to_dict())
    else:
        render(p, out)
    return 0


def _list_stages(args: argparse.Namespace, stages: list) -> int:
    if args.json:
        emit(NAME, [{"name": s.name, "title": s.title} for s in stages])
    else:
        for st in stages:
            out.print(f"{st.name:10} {st.title}", markup=False)
    return 0


def _finish(args: argparse.Namespace, rec) -> int:
    from numascope import signals
    from numascope.command.output import error_entry
    from numascope.report.headline_terminal import print_headline
    from numascope.report.output import write_html
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
        print_run(rec, out, results=args.all_results)
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
