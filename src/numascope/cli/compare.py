"""`numascope compare A B`: is B different from A, metric by metric, and why might it be?"""

from __future__ import annotations

import argparse

from numascope.command.flags import add_json, add_store
from numascope.command.output import emit
from numascope.console import out

NAME = "compare"
HELP = ("compare two runs or groups of runs (ids, KEY=VALUE tags such as nps=1, or "
        "comma-separated ids): change in percent, significance with runs as the samples "
        "(3+ runs per side), configuration differences")
ORDER = 83


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="A",
                   help="baseline: run id, 'latest' (the latest complete run), KEY=VALUE, "
                        "or id,id,…")
    p.add_argument("b", metavar="B", help="the other side, same forms")
    p.add_argument("--family", action="append", metavar="NAME",
                   help="only these families (repeatable); fewer metrics tested, more power")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--all-metrics", action="store_true",
                       help="every metric (variants, derived figures), not only each case's "
                            "primary one; all of them count in the multiplicity correction")
    which.add_argument("--metric", action="append", metavar="NAME",
                       help="only this metric, primary or not (repeatable), e.g. "
                            "--metric latency --metric latency_p999 for the single-load "
                            "tail")
    p.add_argument("--min-effect", type=float, default=1.0, metavar="PCT",
                   help="smallest change in %% called a difference (default 1)")
    p.add_argument("--significant", action="store_true",
                   help="list only significant changes")
    add_store(p)
    add_json(p)


def main(args: argparse.Namespace) -> int:
    import math

    from numascope.analysis.compare import (
        chosen_families,
        chosen_metrics,
        compare_runs,
        smoke_mixed,
        tail_groups_mixed,
    )
    from numascope.errors import UserError
    from numascope.report.terminal import print_comparison
    from numascope.results.store import Store
    if not (math.isfinite(args.min_effect) and args.min_effect >= 0):
        raise UserError(f"--min-effect must be a finite percentage >= 0 (got {args.min_effect:g})")
    with Store.open(args.store) as st:
        a, b = st.load([args.a]), st.load([args.b])
    if {r.run_id for r in a} & {r.run_id for r in b}:
        raise UserError("A and B select some of the same runs; pick disjoint groups")
    smoke = smoke_mixed(a, b)
    if smoke:
        raise UserError(f"{smoke} is a smoke run (small working sets: its numbers measure "
                        "caches); compare smoke runs only with smoke runs")
    fams = chosen_families(args.family, a + b)
    chosen = chosen_metrics(args.metric, a + b, fams)
    mixed = tail_groups_mixed(a, b, args.all_metrics, fams, chosen)
    if mixed:
        raise UserError(mixed)
    cmp = compare_runs(a, b, args.min_effect, all_metrics=args.all_metrics, families=fams,
                       metrics=chosen)
    if args.significant:
        cmp.diffs = [d for d in cmp.diffs if d.significant]
    if args.json:   # results: one entry per metric compared; the rest describes the test
        d = cmp.to_dict()
        emit(NAME, d.pop("metrics"), **d)
    else:
        print_comparison(cmp, out)
    return 0
