"""Where the HTML report goes (`numascope report`, `numascope run`): the path checked before
anything is read or measured, and the write whose refusal is one line, not a traceback."""

from __future__ import annotations

SUFFIXES = (".html", ".htm")


def check_report_path(output: str | None, flag: str) -> None:
    """UserError (exit 2) unless an HTML report can be written at `output` (or, when None,
    at the default name in the current folder): called before anything is read or run."""
    from numascope.errors import UserError
    from numascope.paths import check_output
    if output == "-":
        raise UserError(f"{flag} -: the report is a file; give a name ending in .html")
    check_output(output if output is not None else "numascope-report.html",
                 flag if output is not None else "the report (in the current folder)",
                 SUFFIXES)


def write_html(runs, output: str | None):
    """Write the report, turning an unwritable path into a one-line error."""
    from numascope.errors import UserError, escape_text
    from numascope.report.html import write_report

    path = output if output is not None else f"numascope-report-{runs[0].run_id}.html"
    try:
        return write_report(runs, path)
    except OSError as e:
        raise UserError(f"cannot write the report {escape_text(path)}: "
                        f"{e.strerror or type(e).__name__}") from None
