"""`numascope report RUN [RUN…]`: one self-contained HTML file."""

from __future__ import annotations

import argparse

from numascope.command.flags import add_json, add_store
from numascope.command.output import emit
from numascope.console import out

NAME = "report"
HELP = "write a self-contained HTML report of one or several stored runs"
ORDER = 84


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="*", metavar="RUN", default=["latest"],
                   help="run ids (or prefixes), KEY=VALUE tags, 'latest' (the latest complete "
                        "run; default)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="an .html file; default: ./numascope-report-<first run id>.html")
    add_store(p)
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from numascope.report.output import check_report_path, write_html
    from numascope.results.store import Store

    check_report_path(args.output, "--output")   # before the store is read
    with Store.open(args.store) as st:
        runs = st.load(args.runs or ["latest"])
    path = write_html(runs, args.output)
    if args.json:
        emit(NAME, [{"path": str(path), "runs": [r.run_id for r in runs]}])
    else:
        out.print(f"report: {path}", markup=False)
    return 0
