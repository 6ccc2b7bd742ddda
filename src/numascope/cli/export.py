"""`numascope export RUN… -o FILE`: the format from FILE's extension (.json, .csv,
.parquet; --format overrides), `-o -` for standard output."""

from __future__ import annotations

import argparse

from numascope.cli.runs import add_store
from numascope.command.flags import add_json
from numascope.command.output import emit
from numascope.console import err

NAME = "export"
HELP = ("export stored runs to JSON (full records), CSV or Parquet (one row per metric); "
        "the format follows the file's extension")
ORDER = 85


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="run ids (or prefixes), 'latest' (the latest complete run), or "
                        "KEY=VALUE tags")
    p.add_argument("--output", "-o", required=True, metavar="FILE",
                   help="file to write: .json, .csv or .parquet; - for standard output "
                        "(JSON unless --format says otherwise)")
    p.add_argument("--format", default=None, choices=("json", "csv", "parquet"),
                   help="the format, whatever the file's extension")
    add_store(p)
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from numascope.command.output import check_output
    from numascope.errors import UserError
    from numascope.results.export import SUFFIXES, export, format_for, write_stdout
    from numascope.results.plain import to_plain
    from numascope.results.store import Store
    stdout = args.output == "-"
    if not stdout:   # empty, a folder, a missing folder: said as every command says them
        check_output(args.output, "--output")
    fmt = format_for(args.output, args.format)
    if stdout and fmt == "parquet":
        raise UserError("Parquet is binary: write it to a file (-o runs.parquet)")
    if stdout and args.json and fmt != "json":
        raise UserError(f"--json with -o - prints the records as JSON: leave out --format {fmt}")
    if not stdout:   # a bad path is said before the store is read
        check_output(args.output, "--output", () if args.format else SUFFIXES)
    with Store.open(args.store) as st:
        runs = st.load(args.runs)
    if stdout and args.json:   # the envelope is the export: results = the run records
        emit(NAME, [to_plain(r.to_dict()) for r in runs], format="json")
        return 0
    if stdout:
        write_stdout(runs, fmt)
        return 0
    path = export(runs, fmt, args.output)
    if args.json:
        emit(NAME, [{"path": str(path), "format": fmt, "runs": [r.run_id for r in runs]}])
    else:
        err.print(f"wrote {len(runs)} run{'s' if len(runs) != 1 else ''} to {path} ({fmt})",
                  markup=False)
    return 0
