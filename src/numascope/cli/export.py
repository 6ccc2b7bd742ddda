"""`numascope export RUN… --format json|csv|parquet --output FILE`."""

from __future__ import annotations

import argparse

from numascope.cli.runs import add_store
from numascope.console import err

NAME = "export"
HELP = "export stored runs to JSON (full records), CSV or Parquet (one row per metric)"
ORDER = 85


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="run ids (or prefixes), 'latest', or KEY=VALUE tags")
    p.add_argument("--format", default="json", choices=("json", "csv", "parquet"))
    p.add_argument("--output", "-o", required=True, metavar="FILE")
    add_store(p)


def main(args: argparse.Namespace) -> int:
    from numascope.results.export import export
    from numascope.results.store import Store

    with Store.open(args.store) as st:
        runs = st.load(args.runs)
    path = export(runs, args.format, args.output)
    err.print(f"wrote {len(runs)} run(s) to {path}", markup=False)
    return 0
