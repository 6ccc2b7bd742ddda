"""`numascope references`: the published figures numascope sets beside a run's (the table
shipped in the package, numascope.references), grouped by publication and setting, each
group headed by its citation. --cpu and --quantity filter; a filter that leaves nothing
exits 1 with one line, as grep does when nothing matches."""

from __future__ import annotations

import argparse
import sys

from numascope.command.flags import add_json
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
    p.add_argument("--table", metavar="FILE",
                   help="read this CSV instead of the shipped table (to check rows before "
                        "adding them)")
    add_json(p)


def _cpu_text(r) -> str:
    return f"{r.cpu_model} {r.cpu_name} {r.cpu_family}".casefold()


def _setting(r) -> str:
    """What the figure was measured on, in one line: CPU, sockets, memory, SMT, links."""
    cpu = " / ".join(r.models) or r.cpu_family
    name = ", ".join(x for x in (r.cpu_name, r.cpu_family if r.models else "") if x)
    parts = [f"{cpu} ({name})" if name else cpu,
             f"{r.sockets} socket{'s' if r.sockets != 1 else ''}"]
    if r.memory_mode:
        parts.append(r.memory_mode)
    if r.channels and r.mts:
        dpc = f", {r.dimms_per_channel} DIMM per channel" if r.dimms_per_channel else ""
        parts.append(f"{r.channels} channels per socket at {r.mts} MT/s{dpc}")
    else:
        parts.append("DIMMs not stated")
    parts.append(f"SMT {r.smt}")
    if r.links:
        parts.append(f"links {r.links}")
    return " · ".join(parts)


def _value(r) -> str:
    v = f"{r.value:g}" if r.value_high is None else f"{r.value:g}-{r.value_high:g}"
    return f"{v} {r.unit}"


def main(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from numascope import references
    from numascope.report.terminal import _table

    if args.quantity is not None and args.quantity not in references.QUANTITIES:
        raise UserError(f"--quantity {args.quantity!r} is not a quantity of the table "
                        f"(known: {', '.join(references.QUANTITIES)})")
    rows = references.load(args.table)
    total = len(rows)
    if args.cpu is not None:
        rows = [r for r in rows if args.cpu.strip().casefold() in _cpu_text(r)]
    if args.quantity is not None:
        rows = [r for r in rows if r.quantity == args.quantity]
    if not rows:
        asked = " and ".join(f"{flag} {v!r}" for flag, v in
                             (("--cpu", args.cpu), ("--quantity", args.quantity)) if v)
        if args.json:
            emit(NAME, [])
        sys.stderr.write(f"numascope: no published figure matches {asked} (of {total}; "
                         "`numascope references` lists them all)\n")
        return 1
    if args.json:
        emit(NAME, [r.to_dict() for r in rows])
        return 0
    pubs: dict[str, dict[str, list]] = {}   # citation -> setting -> rows, in table order
    for r in rows:
        pubs.setdefault(r.citation, {}).setdefault(_setting(r), []).append(r)
    for i, (citation, settings) in enumerate(pubs.items()):
        if i:
            out.print()
        out.print(escape(citation), style="bold")
        url = next(iter(settings.values()))[0].url
        if url:
            out.print(escape(url), overflow="fold")
        for setting, members in settings.items():
            t = _table(setting)
            t.add_column("quantity", no_wrap=True)
            t.add_column("value", justify="right", no_wrap=True)
            t.add_column("scope: method", overflow="fold")
            for r in members:
                t.add_row(r.quantity, _value(r),
                          f"[dim]{escape(r.scope)}:[/] {escape(r.method)}")
            out.print(t)
    return 0
