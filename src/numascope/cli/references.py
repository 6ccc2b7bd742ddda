"""`numascope references`: the published figures numascope sets beside a run's (the table
shipped in the package, numascope.references), grouped by publication and setting, each
group headed by its citation. --cpu and --quantity filter; a filter that leaves nothing
exits 1 with one line, as grep does when nothing matches. --run RUN shows instead the figures
that match a stored run's host (normalised to it, the fields that matched, what was
normalised) and, for the rows of its CPU model that do not match, why. Each row says how
its figure was measured (reach, path, kernel, threads): a run's figure is set beside it
only where it was measured that way (numascope.references.measured_otherwise)."""

from __future__ import annotations

import argparse
import os
import sys

from numascope.command.flags import add_json, add_store
from numascope.command.output import emit
from numascope.console import out
from numascope.errors import UserError

NAME = "references"
HELP = "list the published reference figures (CPU, settings, value, method, citation)"
ORDER = 86


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cpu", metavar="TEXT",
                   help="only figures whose CPU model, name or family contains TEXT "
                        "(case-insensitive): 7601, naples, 'EPYC 9004'")
    p.add_argument("--quantity", metavar="ID",
                   help="only figures of this quantity (triad_all_cores, idle_latency … "
                        "docs/references.md lists them)")
    p.add_argument("--run", metavar="RUN",
                   help="the figures matching this stored run's host (id, unique prefix, "
                        "'latest' or KEY=VALUE tag), and why the others of its CPU do not")
    add_store(p)
    p.add_argument("--table", metavar="FILE",
                   help="read this CSV instead of the shipped table (to check rows before "
                        "adding them)")
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from numascope import references
    from numascope.report.references_terminal import print_rows

    if args.quantity is not None and args.quantity not in references.QUANTITIES:
        raise UserError(f"--quantity {args.quantity!r} is not a quantity of the table "
                        f"(known: {', '.join(references.QUANTITIES)})")
    if args.table is not None and os.path.lexists(args.table):   # missing: load says it
        from numascope.paths import check_input
        check_input(args.table, "--table")    # a FIFO would block the open for good
    table = references.load(args.table)
    rows = references.select(table, args.cpu, args.quantity)
    if not rows:
        asked = " and ".join(f"{flag} {v!r}" for flag, v in
                             (("--cpu", args.cpu), ("--quantity", args.quantity)) if v)
        if args.json:
            emit(NAME, [])
        sys.stderr.write(f"numascope: no published figure matches {asked} (of {len(table)}; "
                         "`numascope references` lists them all)\n")
        return 1
    if args.run is not None:
        return _for_runs(args, rows)
    if args.json:
        emit(NAME, [r.to_dict() for r in rows])
    else:
        print_rows(rows, out)
    return 0


def _for_runs(args: argparse.Namespace, rows: list) -> int:
    """Each selected run: the rows matching its host, and why the rows of its CPU model
    that do not match do not. Exit 1 when no run has a match (as grep)."""
    from numascope.references import for_host
    from numascope.report.references_terminal import print_for_run
    from numascope.results.store import Store

    with Store.open(args.store) as st:
        recs = st.load([args.run])
    results, found = [], 0
    for i, rec in enumerate(recs):
        got, same_cpu, missed = for_host(rec.host, rows)
        found += len(got)
        results.append({"run_id": rec.run_id, "cpu_model": rec.host.get("cpu_model"),
                        "matches": [m.to_dict() for m in got],
                        "not_matched": [{"id": r.id, "reasons": why} for r, why in missed]})
        if not args.json:
            if i:
                out.print()
            print_for_run(rec.run_id, rec.host, got, same_cpu, missed, out)
    if args.json:
        emit(NAME, results)
    if not found:
        what = "this run's host" if len(recs) == 1 else "these runs' hosts"
        sys.stderr.write(f"numascope: no published figure matches {what}\n")
    return 0 if found else 1
