"""The fleet section of the HTML report: `fleet_section(runs) -> str`. Runs that belong to a
fleet (tag fleet=…) are analysed per fleet (numascope.fleet.outliers): flagged nodes sorted
by severity, shape outliers, failed nodes, and the figure of every node's value. Returns ""
when no run belongs to a fleet."""

from __future__ import annotations

import base64
import io
import math
from html import escape
from typing import Any


def _e(x: Any) -> str:
    return escape(str(x))


def _num(x: Any) -> str:
    if isinstance(x, float):
        return "–" if not math.isfinite(x) else f"{x:.4g}"
    return _e("–" if x is None else x)


def _png(fig: Any) -> str:
    import matplotlib.pyplot as plt
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def fleet_section(runs: list[Any], with_figures: bool = True) -> str:
    from numascope.fleet.node import hooks_of
    from numascope.fleet.outliers import analyze
    by_fleet: dict[str, list[Any]] = {}
    for r in runs:
        f = r.tags.get("fleet")
        if f:
            by_fleet.setdefault(f, []).append(r)
    if not by_fleet:
        return ""
    parts: list[str] = []   # the report wraps it in its own <section id="fleet"><h2>
    for fid, members in by_fleet.items():
        a = analyze(members, fleet=fid)
        parts.append(f"<h3>fleet {_e(fid)}: {a.nodes} nodes, {len(a.groups)} groups, "
                     f"{len(a.flags)} flagged, {len(a.failed)} not complete</h3>")
        parts.append(f"<p>{_e(a.method())}</p>")
        hooked = [(r.host.get("hostname"), hooks_of(r)) for r in members if hooks_of(r)]
        if hooked:
            parts.append('<p class="bad">Made with test hooks, figures falsified on purpose '
                         "(not a measurement): " + ", ".join(
                             f"{_e(str(h))} ({_e(', '.join(v))})" for h, v in hooked)
                         + "</p>")
        if a.flags:
            parts.append(_rows(
                ["host", "kind", "metric", "value", "reference", "%", "z", "why"],
                [[_e(f.host), _e(f.kind), _e(f.metric), f"{_num(f.value)} {_e(f.unit)}",
                  _num(f.reference), _num(f.pct), _num(f.z), _e(f.why)] for f in a.flags],
                'class="bad"'))
        else:
            parts.append("<p>No node flagged.</p>")
        if a.shape:
            parts.append("<h4>Shape outliers</h4>" + _rows(
                ["host", "field", "value", "expected", "agree"],
                [[_e(s.host), _e(s.field), _num(s.value), _num(s.expected), _e(s.agree)]
                 for s in a.shape]))
        if a.failed:        # failed, interrupted, missing (numascope.fleet.verdict)
            parts.append("<h4>Nodes not complete</h4><ul>" + "".join(
                f"<li>{_e(f['host'])} ({_e(f['status'])}): {_e(f['reason'] or f['status'])}"
                "</li>" for f in a.failed) + "</ul>")
        if with_figures:
            from numascope.report.figures.fleet import fleet_figures
            for title, fig in fleet_figures(a):
                parts.append(f'<figure><img alt="{_e(title)}" src="data:image/png;base64,'
                             f'{_png(fig)}"><figcaption>{_e(title)}</figcaption></figure>')
    return "\n".join(parts)


def _rows(head: list[str], rows: list[list[str]], tr: str = "") -> str:
    """An HTML table: the header, then one row per list of cells (already escaped); `tr`
    the rows' attributes."""
    attrs = f" {tr}" if tr else ""
    return ("<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"
            + "".join(f"<tr{attrs}>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>"
                      for r in rows) + "</table>")
