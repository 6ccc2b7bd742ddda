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
from numascope.console import UNKNOWN, out
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


def _scope(scope: str, how: dict) -> str:
    """The figure's scope and how it was measured (reach, path, kernel, threads: what a
    figure must share to be set beside it)."""
    from numascope.references import how_text
    said = how_text(how)
    return f"{scope}, {said}" if said else scope


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
    if args.table is not None and os.path.lexists(args.table):   # missing: load says it
        from numascope.paths import check_input
        check_input(args.table, "--table")    # a FIFO would block the open for good
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
    if args.run is not None:
        return _for_runs(args, rows)
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
            t.add_column("scope, how: method", overflow="fold")
            for r in members:
                t.add_row(r.quantity, _value(r),
                          f"[dim]{escape(_scope(r.scope, r.how))}:[/] {escape(r.method)}")
            out.print(t)
    return 0


def _host_line(host: dict) -> str:
    d = (host.get("peaks") or {}).get("dram") or {}
    dimms = (f"{d['channels']} channels at {d['mts']} MT/s ({d.get('source') or 'source unknown'})"
             if d.get("status") == "known" else "DIMMs unknown")
    mode = ((host.get("facts") or {}).get("memory_mode") or {})
    return " · ".join([str(host.get("cpu_model") or "CPU unknown"),
                       f"sockets {host.get('packages') or UNKNOWN}",
                       f"{host.get('memory_mode') or 'memory mode unknown'}"
                       + (f" ({mode['status']})" if mode.get("status", "known") != "known"
                          else ""), dimms])


def _for_runs(args: argparse.Namespace, rows: list) -> int:
    """Each selected run: the rows matching its host, and why the rows of its CPU model
    that do not match do not. Exit 1 when no run has a match (as grep)."""
    from rich.markup import escape

    from numascope import references
    from numascope.report.terminal import _table
    from numascope.results.store import Store

    with Store.open(args.store) as st:
        recs = st.load([args.run])
    results, found = [], 0
    for i, rec in enumerate(recs):
        host = rec.host
        got = references.matches(host, rows)
        same_cpu = [r for r in rows if any(references.model_matches(m, host.get("cpu_model"))
                                           for m in r.models)]
        missed = [(r, references.mismatches(host, r)) for r in same_cpu
                  if r.id not in {m.ref.id for m in got}]
        found += len(got)
        results.append({"run_id": rec.run_id, "cpu_model": host.get("cpu_model"),
                        "matches": [m.to_dict() for m in got],
                        "not_matched": [{"id": r.id, "reasons": why} for r, why in missed]})
        if args.json:
            continue
        if i:
            out.print()
        out.print(f"run {escape(rec.run_id)}: {escape(_host_line(host))}", style="bold")
        if got:
            # what every match shares is said once; a row's own notes under the table
            same_fields = set.intersection(*(set(m.matched) for m in got))
            shared = [n for n in got[0].notes if all(n in m.notes for m in got)]
            t = _table()
            t.add_column("quantity", no_wrap=True)
            t.add_column("scope", overflow="fold")
            t.add_column("for this host", justify="right", no_wrap=True)
            t.add_column("published", justify="right", no_wrap=True)
            extra = any(set(m.matched) != same_fields for m in got)
            if extra:
                t.add_column("also matched", overflow="fold")
            for m in got:
                cells = [m.quantity, escape(_scope(m.ref.scope, m.how)),
                         f"{m.value:.4g} {m.unit}",
                         f"{m.ref.value:g} {m.unit}"]
                if extra:
                    cells.append(", ".join(f for f in m.matched if f not in same_fields))
                t.add_row(*cells)
            out.print(t)
            fields = [f for f in got[0].matched if f in same_fields]
            out.print(f"matched on: {escape(', '.join(fields))}", markup=True)
            for n in shared:
                out.print(f"every row: {escape(n)}", markup=True)
            for m in got:
                own = [n for n in m.notes if n not in shared]
                if own:
                    out.print(f"{escape(m.ref.id)}: {escape('; '.join(own))}", markup=True)
            for cite in dict.fromkeys(m.ref.citation for m in got):
                out.print(f"source: {escape(cite)}", markup=True)
        elif not same_cpu:
            out.print("no published figure names this CPU model", markup=False)
        by_reason: dict[str, list[str]] = {}     # rows refused for the same reasons, once
        for r, why in missed:
            by_reason.setdefault("; ".join(why), []).append(r.id)
        for why, ids in by_reason.items():
            out.print(f"not matched ({escape(', '.join(ids))}): {escape(why)}", markup=True)
    if args.json:
        emit(NAME, results)
    if not found:
        what = "this run's host" if len(recs) == 1 else "these runs' hosts"
        sys.stderr.write(f"numascope: no published figure matches {what}\n")
    return 0 if found else 1
