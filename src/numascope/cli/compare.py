"""`numascope compare A B`: is B different from A, metric by metric, and why might it be?"""

from __future__ import annotations

import argparse

from numascope.cli._common import add_json
from numascope.cli.runs import add_store
from numascope.console import out, print_json

NAME = "compare"
HELP = ("compare two runs or groups of runs (ids, KEY=VALUE tags such as nps=1, or "
        "comma-separated ids): change in percent, significance with runs as the samples "
        "(3+ runs per side), configuration differences")
ORDER = 83


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="A", help="baseline: run id, 'latest', KEY=VALUE, or id,id,…")
    p.add_argument("b", metavar="B", help="the other side, same forms")
    p.add_argument("--family", action="append",
                   help="only these families (repeatable); fewer metrics tested, more power")
    p.add_argument("--all-metrics", action="store_true",
                   help="every metric (variants, derived figures), not only each case's "
                        "primary one; all of them count in the multiplicity correction")
    p.add_argument("--min-effect", type=float, default=1.0, metavar="PCT",
                   help="smallest change in %% called a difference (default 1)")
    p.add_argument("--significant", action="store_true",
                   help="list only significant changes")
    add_store(p)
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from numascope.analysis.compare import compare_runs
    from numascope.errors import UserError
    from numascope.report.terminal import print_comparison
    from numascope.results.store import Store

    with Store.open(args.store) as st:
        a, b = st.load([args.a]), st.load([args.b])
    if {r.run_id for r in a} & {r.run_id for r in b}:
        raise UserError("A and B select some of the same runs; pick disjoint groups")
    if args.min_effect < 0:
        raise UserError("--min-effect must be >= 0")
    cmp = compare_runs(a, b, args.min_effect, all_metrics=args.all_metrics,
                       families=args.family)
    if args.significant:
        cmp.diffs = [d for d in cmp.diffs if d.significant]
    if args.json:
        print_json(cmp.to_dict())
    else:
        print_comparison(cmp, out)
    return 0
