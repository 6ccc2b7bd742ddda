"""`numascope export RUN… -o FILE`: the format from FILE's extension (.json, .csv,
.parquet, .yml for a kerncraft machine file; --format overrides), `-o -` for standard
output."""

from __future__ import annotations

import argparse

from numascope.command.flags import add_json, add_store
from numascope.command.output import emit
from numascope.console import err

NAME = "export"
HELP = ("export stored runs to JSON (full records), CSV or Parquet (one row per metric), or "
        "one run as a kerncraft machine file; the format follows the file's extension")
ORDER = 85


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="run ids (or prefixes), 'latest' (the latest complete run), or "
                        "KEY=VALUE tags")
    p.add_argument("--output", "-o", required=True, metavar="FILE",
                   help="file to write: .json, .csv, .parquet or .yml (kerncraft); - for "
                        "standard output (JSON unless --format says otherwise)")
    p.add_argument("--format", default=None, choices=("json", "csv", "parquet", "kerncraft"),
                   help="the format, whatever the file's extension; kerncraft: one run as "
                        "a kerncraft machine file (docs/json-output.md)")
    p.add_argument("--base", default=None, metavar="FILE",
                   help="--format kerncraft: a kerncraft machine file giving what numascope "
                        "does not measure (in-core model, ports, cache transfer rates), for "
                        "a CPU numascope has no kerncraft data for")
    add_store(p)
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from numascope.command.output import check_output
    from numascope.errors import UserError
    from numascope.paths import check_input
    from numascope.results.export import SUFFIXES, export, format_for, write_stdout
    from numascope.results.plain import to_plain
    from numascope.results.store import Store
    stdout = args.output == "-"
    if not stdout:   # empty, a folder, a missing folder: said as every command says them
        check_output(args.output, "--output")
    fmt = format_for(args.output, args.format)
    if args.base is not None and fmt != "kerncraft":
        raise UserError(f"--base is for --format kerncraft, not {fmt}")
    if args.base is not None:   # before the store is read; a FIFO would block the open
        check_input(args.base, "--base")
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
        write_stdout(runs, fmt, args.base)
        return 0
    path = export(runs, fmt, args.output, args.base)
    if args.json:
        emit(NAME, [{"path": str(path), "format": fmt, "runs": [r.run_id for r in runs]}])
    else:
        err.print(f"wrote {len(runs)} run{'s' if len(runs) != 1 else ''} to {path} ({fmt})",
                  markup=False)
    if fmt == "kerncraft":
        _say_warnings(path)
    return 0


def _say_warnings(path) -> None:
    """What the written kerncraft file lacks or where kerncraft misreads it, one line each."""
    from numascope.results.kerncraft_yaml import warnings
    for w in warnings(path.read_text()):
        err.print(f"{path}: {w}", markup=False)
