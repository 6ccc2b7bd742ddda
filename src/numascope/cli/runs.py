"""`numascope runs`: list the runs in the store."""

from __future__ import annotations

import argparse

from numascope.command.flags import add_json, add_store
from numascope.command.output import emit
from numascope.console import out

NAME = "runs"
HELP = "list stored runs (id, time, host, tags, memory mode, stages, status)"
ORDER = 81


def register(p: argparse.ArgumentParser) -> None:
    add_store(p)
    p.add_argument("--tag", action="append", metavar="KEY=VALUE",
                   help="only runs carrying this tag (repeatable)")
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from numascope.report.terminal import runs_table
    from numascope.results.run import parse_tags
    from numascope.results.store import Store, default_path

    want = parse_tags(args.tag, "--tag")
    path = default_path() if args.store is None else args.store
    if args.store is None and not default_path().exists():
        runs = []   # nothing measured yet on this account: an empty list, not an error
    else:
        with Store.open(args.store) as st:
            runs = [r for r in st.list_runs()
                    if all(r.tags.get(k) == v for k, v in want.items())]
            path = st.path
    if args.json:
        emit(NAME, [r.to_dict() for r in runs], store=str(path))
    elif not runs:
        which = " with tags " + " ".join(f"{k}={v}" for k, v in want.items()) if want else ""
        out.print(f"no runs{which} in {path}", markup=False, soft_wrap=True)
    else:
        out.print(runs_table(runs))
    return 0
