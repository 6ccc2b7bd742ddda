"""Terminal rendering of runs, lists of runs and comparisons (rich tables).

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
from numascope.results.run import RunRecord
from numascope.results.store import RunSummary

_STATUS_STYLE = {"done": "green", "complete": "green", "skipped": "yellow",
                 "failed": "red", "interrupted": "magenta", "not run": "dim",
                 "running": "cyan"}


def fmt(v: Any, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def tags_text(tags: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in tags.items())


def _st(status: str) -> str:
    return f"[{_STATUS_STYLE.get(status, 'white')}]{escape(status)}[/]"


def runs_table(runs: list[RunSummary]) -> Table:
    t = Table(title="stored runs", title_justify="left")
    t.add_column("run", no_wrap=True)
    t.add_column("UTC", min_width=4)
    for c in ("host", "tags", "mode"):
        t.add_column(c, min_width=4)
    t.add_column("stages")
    t.add_column("res.", justify="right")
    t.add_column("status")
    for r in runs:
        done = sum(1 for s in r.stages if s.get("status") == "done")
        t.add_row(escape(r.run_id), escape(r.started[5:16].replace("T", " ")),
                  escape(r.hostname or "?"), escape(tags_text(r.tags)),
                  escape(r.memory_mode or "?"), f"{done}/{len(r.stages)}",
                  str(r.results), _st(r.status))
    return t


def print_run(rec: RunRecord, console: Console, all_metrics: bool = False) -> None:
    h = rec.host
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    rows = [("run", rec.run_id), ("status", rec.status), ("started", rec.started),
            ("finished", rec.finished), ("profile", rec.profile),
            ("tags", tags_text(rec.tags)), ("host", h.get("hostname")),
            ("cpu", h.get("cpu_model")), ("kernel", h.get("kernel")),
            ("bios", " ".join(str(x) for x in (h.get("bios_vendor"), h.get("bios_version"))
                              if x)),
            ("memory mode", h.get("memory_mode")), ("smt", h.get("smt")),
            ("governor", h.get("governor")), ("thp", h.get("thp")),
            ("numa_balancing", h.get("numa_balancing")), ("clock GHz", h.get("clock_ghz")),
            ("topology", (h.get("topology_digest") or "")[:16])]
    for k, v in rows:
        head.add_row(k, escape(fmt(v)))
    console.print(head)
    console.print(stages_table(rec))
    for w in rec.noise.get("warnings", []):
        console.print(f"[yellow]noise:[/yellow] {escape(w)}")
    console.print(results_table(rec, all_metrics))


def stages_table(rec: RunRecord) -> Table:
    t = Table(title="stages", title_justify="left")
    for c in ("stage", "status", "results", "seconds", "reason"):
        t.add_column(c)
    for s in rec.stages:
        t.add_row(escape(s.name), _st(s.status), str(s.results), f"{s.seconds:.1f}",
                  escape(s.reason))
    return t


def results_table(rec: RunRecord, all_metrics: bool = False) -> Table:
    """Median, range and spread per result; only each result's first (primary) metric
    unless all_metrics. The family is named once per group, so the table fits 80 columns."""
    title = "results (median of the repetitions" + \
        (")" if all_metrics else "; primary metric, --all-metrics for every one)")
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("family", no_wrap=True)
    t.add_column("case · metric", ratio=1)
    t.add_column("median", justify="right", no_wrap=True)
    t.add_column("min–max", justify="right", no_wrap=True)
    t.add_column("spread", justify="right", no_wrap=True)
    t.add_column("n", justify="right", no_wrap=True)
    last_family = None
    for r in rec.results:
        metrics = list(r.metrics.values())
        for m in metrics if all_metrics else metrics[:1]:
            family = "" if r.family == last_family else r.family
            if family and last_family is not None:
                t.add_section()
            last_family = r.family
            t.add_row(escape(family), f"{escape(r.case)} [dim]· {escape(m.name)}[/dim]",
                      f"{fmt(m.median)} {escape(m.unit)}", f"{fmt(m.min)}–{fmt(m.max)}",
                      "–" if not math.isfinite(m.spread) else f"{m.spread:.1%}",
                      str(len(m.values)))
    return t


def print_comparison(cmp: Comparison, console: Console) -> None:
    console.print(f"A: {escape(', '.join(cmp.a))}")
    console.print(f"B: {escape(', '.join(cmp.b))}")
    if cmp.config:
        t = Table(title="what differs between A and B", title_justify="left")
        for c in ("setting", "A", "B"):
            t.add_column(c)
        for k, (va, vb) in cmp.config.items():
            t.add_row(escape(k), escape(", ".join(fmt(v) for v in va)),
                      escape(", ".join(fmt(v) for v in vb)))
        console.print(t)
    else:
        console.print("configurations: no recorded difference (same tags, host facts)")
    t = Table(title="metrics: median of B vs median of A", title_justify="left")
    t.add_column("result")
    t.add_column("metric")
    for c in ("A", "B", "change", "p", "CI B/A"):
        t.add_column(c, justify="right", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    style = {"better": "green", "worse": "red"}
    for d in cmp.diffs:
        t.add_row(f"{escape(d.family)}: {escape(d.case)}", f"{escape(d.metric)} "
                  f"({escape(d.unit)})", fmt(d.median_a), fmt(d.median_b),
                  "–" if not math.isfinite(d.change_pct) else f"{d.change_pct:+.1f}%",
                  fmt(d.p_value, 2), f"{fmt(d.ci_low, 3)}–{fmt(d.ci_high, 3)}",
                  f"[{style.get(d.verdict, 'dim')}]{escape(d.verdict)}[/]")
    console.print(t)
    console.print(f"[dim]{escape(cmp.method)}[/dim]")
    if cmp.only_a or cmp.only_b:
        console.print(f"[dim]{len(cmp.only_a)} metrics only in A, "
                      f"{len(cmp.only_b)} only in B[/dim]")
