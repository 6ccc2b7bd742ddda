"""Terminal rendering of runs, lists of runs and comparisons (rich tables); rendering only
(records are serialised by numascope.results). Every table fits 80 columns: long cells wrap,
nothing is cut. Values are shown by numascope.console.show (None: "unknown", booleans
yes/no).

Every string from the machine or the user is passed through rich's escape(), so a tag like
"[red]" or a device name with brackets prints as itself."""

from __future__ import annotations

import math
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from numascope.analysis.compare import Comparison
from numascope.analysis.primary import primary_metrics
from numascope.console import UNKNOWN, plural, show
from numascope.families.latency.distribution import THIN_MARK, THIN_NOTE, thin
from numascope.profile import SMOKE_NOTE, readable
from numascope.results.run import RunRecord
from numascope.results.store import RunSummary
from numascope.steady import MARK, mark, mark_note, summary, unsteady

_STATUS_STYLE = {"done": "green", "complete": "green", "skipped": "yellow",
                 "incomplete": "yellow", "failed": "red", "interrupted": "magenta",
                 "not run": "dim", "running": "cyan"}


def fmt(v: Any, digits: int = 4) -> str:
    return show(v, digits)


def tags_text(tags: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in tags.items())


def _st(status: str) -> str:
    return f"[{_STATUS_STYLE.get(status, 'white')}]{escape(status)}[/]"


def _table(title: str | None = None, **kw: Any) -> Table:
    """The house table: a rule under the head, one space between columns, no outer edge."""
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                 padding=(0, 1, 0, 0), **kw)


def runs_table(runs: list[RunSummary]) -> Table:
    """One row per run. A host or memory mode shared by every run is named once in the
    title instead of in a column, so the tags (what tells runs apart) get the room."""
    hosts = {r.hostname or UNKNOWN for r in runs}
    modes = {r.memory_mode or UNKNOWN for r in runs}
    same = [f"host {h}" for h in hosts if len(hosts) == 1] + \
        [f"memory mode {m}" for m in modes if len(modes) == 1]
    t = _table(escape("stored runs" + (f" ({', '.join(same)})" if same else "")))
    # the run id is its UTC start time (YYYYmmdd-HHMMSS-…): no column of its own for it
    t.add_column("run (UTC start, id)", no_wrap=True)
    if len(hosts) > 1:
        t.add_column("host", overflow="fold", min_width=4)
    if len(modes) > 1:
        t.add_column("mode", overflow="fold", min_width=4)
    t.add_column("tags", overflow="fold", ratio=1, min_width=8)
    t.add_column("stages", justify="right", no_wrap=True)
    t.add_column("res.", justify="right", no_wrap=True)
    t.add_column("status", no_wrap=True)
    # the room the other columns leave the tags (each column: its widest cell, 2 between)
    fixed = [max(19, *(len(r.run_id) for r in runs)), 6, 4,
             max(max(len(r.status) for r in runs), 6)]
    fixed += [max(4, *(len(r.hostname or UNKNOWN) for r in runs))] if len(hosts) > 1 else []
    fixed += [max(4, *(len(r.memory_mode or UNKNOWN) for r in runs))] if len(modes) > 1 else []
    room = max(8, _console_width() - sum(fixed) - 2 * (len(fixed) + 1))
    for r in runs:
        done = sum(1 for s in r.stages if s.get("status") == "done")
        cells = [escape(r.run_id)]
        if len(hosts) > 1:
            cells.append(escape(r.hostname or UNKNOWN))
        if len(modes) > 1:
            cells.append(escape(r.memory_mode or UNKNOWN))
        t.add_row(*cells, escape(_wrap_tags(r.tags, room)), f"{done}/{len(r.stages)}",
                  str(r.results), _st(r.status))
    return t


def _console_width() -> int:
    from numascope.console import out
    return out.width or 80


def _wrap_tags(tags: dict[str, str], room: int) -> str:
    """The tags in `room` columns: all on one line when they fit, else one tag a line,
    broken between words (a tag value may hold spaces); a word longer than the room broken
    after its separators (= - . _ : / ,), and only one with no separator within the room
    folded: never every few characters, never inside a word that fits."""
    import re
    text = tags_text(tags)
    if len(text) <= room:
        return text
    lines: list[str] = []
    for k, v in tags.items():
        line = ""
        for word in re.split(r"(?<= )", f"{k}={v}"):
            pieces = [word] if len(word.rstrip()) <= room else \
                re.split(r"(?<=[=\-._:/,])", word)
            for piece in pieces:
                while len(piece.rstrip()) > room:   # no separator within the room: fold
                    if line:
                        lines.append(line)
                        line = ""
                    lines.append(piece[:room])
                    piece = piece[room:]
                if line and len(line) + len(piece.rstrip()) > room:
                    lines.append(line)
                    line = ""
                line += piece
        if line:
            lines.append(line)
    return "\n".join(ln.rstrip() for ln in lines)


def print_run(rec: RunRecord, console: Console, all_metrics: bool = False,
              results: bool = True) -> None:
    """A run's host and settings, its stages and noise, and (`results`) every case's
    results table."""
    h = rec.host
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold", no_wrap=True)
    head.add_column(overflow="fold")
    bios = " ".join(str(x) for x in (h.get("bios_vendor"), h.get("bios_version")) if x)
    rows = [("run", rec.run_id), ("status", rec.status), ("started", rec.started),
            ("finished", rec.finished), ("profile", rec.profile),
            ("tags", tags_text(rec.tags) or "none"), ("host", h.get("hostname")),
            ("cpu", h.get("cpu_model")), ("kernel", h.get("kernel")),
            ("bios", bios or None),
            ("memory mode", h.get("memory_mode")), ("smt", h.get("smt")),
            ("governor", h.get("governor")), ("thp", h.get("thp")),
            ("numa_balancing", h.get("numa_balancing")), ("clock GHz", h.get("clock_ghz")),
            ("topology", (h.get("topology_digest") or "")[:16] or None)]
    checks = h.get("readiness")
    if isinstance(checks, list):
        warn = [str(c.get("id")) for c in checks
                if isinstance(c, dict) and c.get("status") == "warn"]
        rows.append(("readiness", f"{len(warn)} of {len(checks)} checks warn"
                     + (f": {', '.join(warn)}" if warn else "")))
    for k, v in rows:
        head.add_row(k, escape(fmt(v)))
    console.print(head)
    if not readable(rec.profile):
        console.print(f"[yellow]{escape(SMOKE_NOTE)}[/yellow]")
    console.print(stages_table(rec))
    for w in rec.noise.get("warnings", []):
        console.print(f"[yellow]noise:[/yellow] {escape(w)}")
    from numascope.families.bandwidth.outliers import bimodal_cases, bimodal_warning
    for b in bimodal_cases(rec.results):     # two modes: a disturbed run (bw_outliers)
        console.print(f"[yellow]disturbed:[/yellow] {escape(bimodal_warning(b))}")
    if not results:
        return
    console.print(results_table(rec, all_metrics))
    for line in steady_lines(rec.results):
        console.print(escape(line))
    if any(m in thin(r) for r in rec.results for m in r.metrics
           if all_metrics or m in primary_metrics(r.family, list(r.metrics))):
        console.print(escape(THIN_NOTE))


def stages_table(rec: RunRecord) -> Table:
    t = _table("stages")
    t.add_column("stage", no_wrap=True)
    t.add_column("status", no_wrap=True)
    t.add_column("results", justify="right", no_wrap=True)
    t.add_column("seconds", justify="right", no_wrap=True)
    t.add_column("reason", overflow="fold", ratio=1)
    for s in rec.stages:
        t.add_row(escape(s.name), _st(s.status), str(s.results), f"{s.seconds:.1f}",
                  escape(s.reason))
    return t


def results_table(rec: RunRecord, all_metrics: bool = False) -> Table:
    """Median, best and spread per result (median first: the figure to quote; best beside
    it: what the machine reached once); only each case's primary metrics (the ones
    compare tests, numascope.analysis.primary) unless all_metrics. The family is named once
    per group and a case once per result, so the table fits 80 columns; a metric is named
    when it is not the family's main one."""
    from numascope.analysis.primary import family_primary
    title = "results (median and best of the repetitions; spread = (max - min) / median; " \
        "n = repetitions" + (")" if all_metrics else "; primary metrics, --all-metrics for "
                             "every one)")
    t = _table(title)
    t.add_column("family", no_wrap=True)
    t.add_column("case · metric", ratio=1, overflow="fold")
    t.add_column("median", justify="right", no_wrap=True)
    t.add_column("best", justify="right", no_wrap=True)
    t.add_column("spread", justify="right", no_wrap=True)
    t.add_column("n", justify="right", no_wrap=True)
    last_family = None
    for r in rec.results:
        prim = primary_metrics(r.family, list(r.metrics))
        main = (family_primary(r.family) or prim)[0]
        shown = [m for m in r.metrics.values() if all_metrics or m.name in prim]
        head = all_metrics and len(shown) > 1   # the case on a row of its own, then metrics
        for i, m in enumerate(shown):
            family = "" if r.family == last_family else r.family
            if family and last_family is not None:
                t.add_section()
            last_family = r.family
            if head and i == 0:
                t.add_row(escape(family), escape(r.case))
                family = ""
            if head:
                case = f"  [dim]·[/dim] {escape(m.name)}"
            else:
                case = escape(r.case) + (f" [dim]· {escape(m.name)}[/dim]"
                                         if m.name != main else "")
            t.add_row(escape(family), case,
                      f"{fmt(m.median)}{THIN_MARK if m.name in thin(r) else ''} "
                      f"{escape(m.unit)}", fmt(m.best),
                      "–" if not math.isfinite(m.spread) else f"{m.spread:.1%}",
                      f"{len(m.values)}{mark(r.params)}")
    return t


def steady_lines(results: list[Any]) -> list[str]:
    """Under the results: how many figures repeated until steady converged (--reps auto,
    the measured profiles' default) and what the mark on n means."""
    line = summary([r.params for r in results])
    if not line:
        return []
    params = [r.params for r in results]
    return [line] + ([mark_note(params)] if any(unsteady(p) for p in params) else [])


# Short words for the table's verdict column (the JSON keeps the full verdict).
_VERDICT_TEXT = {"no significant change": "not significant"}
_VERDICT_STYLE = {"better": "green", "worse": "red", "too few": "yellow"}


def _num(v: float) -> str:
    """At most 7 characters (8 when negative), so that the comparison fits 80 columns;
    thousands separated as the other tables show them (14,652)."""
    a = abs(v)
    if not math.isfinite(v):
        return "–"
    if a == 0 or 0.01 <= a < 1000:
        return f"{v:.4g}" if a >= 1 or a == 0 else f"{v:.3g}"
    if 1000 <= a < 1e6:
        return f"{v:,.0f}"
    mant, exp = f"{v:.1e}".split("e")
    return f"{mant}e{int(exp)}"


def _p(p: float) -> str:
    if not math.isfinite(p):
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _pct(v: float, sign: bool = False) -> str:
    if not math.isfinite(v):
        return "–"
    digits = 0 if abs(v) >= 1000 else 1
    return f"{v:+.{digits}f}%" if sign else f"{v:.{digits}f}%"


def comparison_table(cmp: Comparison) -> Table:
    """Rows grouped by family and metric under a head row naming both, so that a row needs
    only its case; fits 80 columns (long case labels wrap, nothing is cut)."""
    scope = "primary metrics (--all-metrics: all)" if cmp.scope == "primary" else "all metrics"
    # SIMPLE_HEAD draws a space between columns: with right padding only, 2 per boundary
    t = Table(title=f"B vs A: median of the run medians · {scope}", title_justify="left",
              box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0))
    t.add_column("case", ratio=1, min_width=16, overflow="fold")
    for c in ("A", "B", "change", "noise", "p adj."):
        t.add_column(c, justify="right", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    groups = dict.fromkeys((d.family, d.metric, d.unit) for d in cmp.diffs)
    for i, (fam, metric, unit) in enumerate(groups):
        if i:
            t.add_section()
        name = "" if metric == fam else f": {metric}"
        t.add_row(f"[bold]{escape(fam + name)}[/bold]" + (f" ({escape(unit)})" if unit else ""))
        for d in cmp.diffs:
            if (d.family, d.metric, d.unit) == (fam, metric, unit):
                t.add_row(escape(d.case) + (MARK if d.unsteady else ""),
                          _num(d.median_a), _num(d.median_b),
                          _pct(d.change_pct, sign=True), _pct(d.noise_pct), _p(d.p_adjusted),
                          f"[{_VERDICT_STYLE.get(d.verdict, 'dim')}]"
                          f"{escape(_VERDICT_TEXT.get(d.verdict, d.verdict))}[/]")
    return t


def comparison_summary(cmp: Comparison) -> list[str]:
    """The verdict in words: counts, and what to do when there are too few runs."""
    from numascope.analysis.compare import ALPHA, CORRECTION, MIN_RUNS

    counts = {k: v for k, v in cmp.counts.items() if v}
    words = ", ".join(f"{n} {_VERDICT_TEXT.get(k, k)}" for k, n in counts.items()) or "nothing"
    test = (f"{CORRECTION} over {cmp.tested}, family-wise error {ALPHA:.0%}" if cmp.tested
            else "no test")
    lines = [f"verdict: {words} (of {plural(sum(counts.values()), 'metric')}; {test})"]
    na, nb = len(cmp.a), len(cmp.b)
    shaky = [d for d in cmp.diffs if d.unsteady]
    if shaky:
        lines.append(f"{MARK} = {plural(len(shaky), 'figure')} did not converge in some run "
                     "(repeated until steady, --reps auto, and stopped by its budget): its "
                     "medians are less certain than the precision asked; treat a change "
                     "there with care")
    if min(na, nb) < MIN_RUNS:
        lines.append(f"too few runs to claim a change ({na} vs {nb}): run each configuration "
                     f"at least {MIN_RUNS} times, 5 to find a 10 % change; 'too few' = beyond "
                     "the within-run noise, unconfirmed")
    return lines


def print_comparison(cmp: Comparison, console: Console) -> None:
    console.print(f"A: {plural(len(cmp.a), 'run')}: {escape(', '.join(cmp.a))}")
    console.print(f"B: {plural(len(cmp.b), 'run')}: {escape(', '.join(cmp.b))}")
    if cmp.config:
        console.print("what differs between A and B:")
        t = _table()
        t.add_column("setting", overflow="fold")
        for c in ("A", "B"):
            t.add_column(c, overflow="fold", ratio=1)
        for k, (va, vb) in cmp.config.items():
            t.add_row(escape(k), escape(", ".join(fmt(v) for v in va)),
                      escape(", ".join(fmt(v) for v in vb)))
        console.print(t)
    else:
        console.print("configurations: no recorded difference (same tags, host facts)")
    if cmp.diffs:
        console.print(comparison_table(cmp))
    lines = comparison_summary(cmp)
    console.print(f"[bold]{escape(lines[0])}[/bold]")
    for line in lines[1:]:
        console.print(escape(line))
    console.print(f"[dim]{escape(cmp.method)}[/dim]")
    other = cmp.other_method_line()
    if other:
        console.print(f"[bold]{escape(other)}[/bold]")
    if cmp.only_a or cmp.only_b:
        console.print(f"[dim]{plural(len(cmp.only_a), 'metric')} only in A, "
                      f"{len(cmp.only_b)} only in B[/dim]")
