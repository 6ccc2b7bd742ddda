"""`numascope show RUN`: one stored run as tables (or its full record with --json)."""

from __future__ import annotations

import argparse

from numascope.command.flags import add_json, add_store
from numascope.command.output import emit
from numascope.console import out

NAME = "show"
HELP = ("show one stored run: its summary (the report's headline figures), host, stages, "
        "noise, results (--json: the whole record)")
ORDER = 82


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", help="run id (or unique prefix), 'latest' (the latest complete run), or "
                        "KEY=VALUE tag")
    p.add_argument("--all-metrics", action="store_true",
                   help="every metric of every result, not only the primary one")
    add_store(p)
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from numascope.report.headline_terminal import print_headline
    from numascope.report.terminal import print_run
    from numascope.results.store import Store

    with Store.open(args.store) as st:
        recs = st.load([args.run])
    if args.json:   # results: the selected run records, each whole
        emit(NAME, [r.to_dict() for r in recs])
        return 0
    for i, rec in enumerate(recs):
        if i:
            out.print()
        print_headline(rec, out)      # the HTML report's summary first
        print_run(rec, out, args.all_metrics)
    return 0
