"""`numascope report RUN [RUN…]`: one self-contained HTML file."""

from __future__ import annotations

import argparse

from numascope.cli.runs import add_store
from numascope.console import out

NAME = "report"
HELP = "write a self-contained HTML report of one or several stored runs"
ORDER = 84


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="*", metavar="RUN", default=["latest"],
                   help="run ids (or prefixes), KEY=VALUE tags, 'latest' (default)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="default: ./numascope-report-<first run id>.html")
    add_store(p)


def main(args: argparse.Namespace) -> int:
    from numascope.results.store import Store

    with Store.open(args.store) as st:
        runs = st.load(args.runs or ["latest"])
    path = write_html(runs, args.output)
    out.print(f"report: {path}", markup=False)
    return 0


def write_html(runs, output: str | None):
    """Write the report, turning an unwritable path into a one-line error."""
    from numascope.errors import UserError
    from numascope.report.html import write_report

    path = output or f"numascope-report-{runs[0].run_id}.html"
    try:
        return write_report(runs, path)
    except OSError as e:
        raise UserError(f"cannot write the report {path}: {e.strerror}") from None
