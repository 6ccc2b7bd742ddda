"""The published figures in the terminal (`numascope references`): the table grouped by
publication and setting, each group headed by its citation; and for a stored run, the rows
matching its host (numascope.references.for_host), what they matched on and were normalised
by, and why the other rows of its CPU model do not match."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from numascope.console import UNKNOWN
from numascope.references import how_text
from numascope.report.terminal import _table


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
    said = how_text(how)
    return f"{scope}, {said}" if said else scope


def _value(r) -> str:
    v = f"{r.value:g}" if r.value_high is None else f"{r.value:g}-{r.value_high:g}"
    return f"{v} {r.unit}"


def print_rows(rows: list, console: Any) -> None:
    """The rows by publication (its citation and address), then by setting, in table
    order."""
    pubs: dict[str, dict[str, list]] = {}   # citation -> setting -> rows, in table order
    for r in rows:
        pubs.setdefault(r.citation, {}).setdefault(_setting(r), []).append(r)
    for i, (citation, settings) in enumerate(pubs.items()):
        if i:
            console.print()
        console.print(escape(citation), style="bold")
        url = next(iter(settings.values()))[0].url
        if url:
            console.print(escape(url), overflow="fold")
        for setting, members in settings.items():
            t = _table(setting)
            t.add_column("quantity", no_wrap=True)
            t.add_column("value", justify="right", no_wrap=True)
            t.add_column("scope, how: method", overflow="fold")
            for r in members:
                t.add_row(r.quantity, _value(r),
                          f"[dim]{escape(_scope(r.scope, r.how))}:[/] {escape(r.method)}")
            console.print(t)


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


def print_for_run(run_id: str, host: dict, got: list, same_cpu: list, missed: list,
                  console: Any) -> None:
    """One run: its host in a line, the matching rows in a table (what every match shares
    said once, a row's own notes under it), and the rows of its CPU that do not match."""
    console.print(f"run {escape(run_id)}: {escape(_host_line(host))}", style="bold")
    if got:
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
        console.print(t)
        fields = [f for f in got[0].matched if f in same_fields]
        console.print(f"matched on: {escape(', '.join(fields))}", markup=True)
        for n in shared:
            console.print(f"every row: {escape(n)}", markup=True)
        for m in got:
            own = [n for n in m.notes if n not in shared]
            if own:
                console.print(f"{escape(m.ref.id)}: {escape('; '.join(own))}", markup=True)
        for cite in dict.fromkeys(m.ref.citation for m in got):
            console.print(f"source: {escape(cite)}", markup=True)
    elif not same_cpu:
        console.print("no published figure names this CPU model", markup=False)
    by_reason: dict[str, list[str]] = {}     # rows refused for the same reasons, once
    for r, why in missed:
        by_reason.setdefault("; ".join(why), []).append(r.id)
    for why, ids in by_reason.items():
        console.print(f"not matched ({escape(', '.join(ids))}): {escape(why)}", markup=True)
