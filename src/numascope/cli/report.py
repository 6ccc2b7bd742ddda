"""`numascope report RUN [RUN…]`: one self-contained HTML file."""

from __future__ import annotations

import argparse

from numascope.command.flags import add_json, add_store
from numascope.command.output import emit
from numascope.console import out

NAME = "report"
HELP = "write a self-contained HTML report of one or several stored runs"
ORDER = 84
SUFFIXES = (".html", ".htm")


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="*", metavar="RUN", default=["latest"],
                   help="run ids (or prefixes), KEY=VALUE tags, 'latest' (the latest complete "
                        "run; default)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="an .html file; default: ./numascope-report-<first run id>.html")
    add_store(p)
    add_json(p)


def main(args: argparse.Namespace) -> int:
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


def check_report_path(output: str | None, flag: str) -> None:
    """UserError (exit 2) unless an HTML report can be written at `output` (or, when None,
    at the default name in the current folder): called before anything is read or run."""
    from numascope.command.output import check_output
    from numascope.errors import UserError
    if output == "-":
        raise UserError(f"{flag} -: the report is a file; give a name ending in .html")
    check_output(output if output is not None else "numascope-report.html",
                 flag if output is not None else "the report (in the current folder)",
                 SUFFIXES)


def write_html(runs, output: str | None):
    """Write the report, turning an unwritable path into a one-line error."""
    from numascope.errors import UserError
    from numascope.report.html import write_report

    path = output if output is not None else f"numascope-report-{runs[0].run_id}.html"
    try:
        return write_report(runs, path)
    except OSError as e:
        from numascope.errors import escape_text
        raise UserError(f"cannot write the report {escape_text(path)}: "
                        f"{e.strerror or type(e).__name__}") from None
