"""The HTML report: one self-contained file (inline CSS, figures as base64 PNG, no scripts,
no fonts, no network) for one or several runs, in the order of the labs' studies.

Sections (element ids): summary (the first screen: report.summary), topology, then the
studies' sections that have results (report.sections.studies(): bandwidth, latency, c2c,
compute with the efficiency table (id efficiency), compress with the compression table
(id compression), storage, interconnect), other figures (a family of no study), fleet (runs of
a fleet), comparison (only with several runs), and the appendix: runs, host (with
readiness), noise, stages, repetitions (only when a figure was repeated until steady),
results (collapsed: every metric of every result). Every string from the machine or the user
goes through html.escape; figures are images, so no text from them reaches the DOM.

Efficiency: one table, numascope.analysis.efficiency_table of the peak summary the run stored
(host["peaks"], computed once per run from its measured clock) against the run's measured
figures; the report never computes a peak itself."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from numascope import __version__
from numascope.report import sections as sec
from numascope.report.appendix import (
    _host_section,
    _noise_section,
    _results_section,
    _runs_section,
    _stages_section,
    _steady_section,
)
from numascope.report.kit import e as _e
from numascope.report.studies import _comparison_section, _compression_section, _efficiency_section
from numascope.report.summary import CSS as SUMMARY_CSS
from numascope.report.summary import summary_section
from numascope.report.topology_html import CSS as TOPO_CSS
from numascope.report.topology_html import topology_html  # noqa: F401 — re-exported
from numascope.results.run import RunRecord, utc_now

__all__ = ["_host_section", "_noise_section", "figure_modules", "render", "write_report"]

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;
 max-width:1400px}
h1{font-size:22px}h2{font-size:18px;border-bottom:2px solid #ccd;padding-bottom:3px;
 margin-top:28px}h3{font-size:15px}
table{border-collapse:collapse;margin:6px 0 14px;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef}td.num{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#176317}.warn{color:#8a5a00}.bad{color:#a11}.dim{color:#777}
figure{display:inline-block;vertical-align:top;margin:6px;border:1px solid #ddd;padding:4px}
figure img,figure svg{max-width:640px;height:auto;display:block}figcaption{font-size:12px;color:#444;max-width:640px}\nnav{font-size:13px;line-height:1.6}details>summary{cursor:pointer}\n@media print{nav{display:none}figure{break-inside:avoid}}
""" + TOPO_CSS + SUMMARY_CSS

def figure_modules() -> list[Any]:
    """Every module that draws figures of results: each family's, and the fleet's; a module
    another one draws already (its INCLUDES, e.g. latency's figures include the chains')
    is left out, so that no figure is drawn twice."""
    from numascope.families import figure_names
    mods = []
    for name in figure_names() + ["numascope.report.figures.fleet"]:
        try:
            mods.append(importlib.import_module(name))
        except Exception:  # noqa: BLE001, S112 — a broken plot module must not sink the report
            continue
    included = {n for m in mods for n in getattr(m, "INCLUDES", ())}
    return [m for m in mods if m.__name__ not in included]


def _study(s: sec.Section, runs: list[RunRecord], mods: list[Any]) -> str:
    """A study's section: its figures, its medians, and its own table where it has one;
    empty when no run has a result of its families."""
    if not any(x.family in s.families for r in runs for x in r.results) and \
            s.id != "compute":
        return ""
    own = [m for m in mods if sec.family_of(m.__name__) in s.families]
    html = sec.figures_html(own, runs) + sec.medians_table(runs, s.families)
    if s.id == "compute":
        html += ('<h3 id="efficiency">Efficiency against theoretical peaks</h3>'
                 + _efficiency_section(runs))
    if s.id == "compress":
        html += '<h3 id="compression">Codecs by threads</h3>' + _compression_section(runs)
    return html


def _appendix(runs: list[RunRecord]) -> str:
    parts = [("runs", "Runs", _runs_section(runs)),
             ("host", "Host, settings and readiness", _host_section(runs)),
             ("noise", "Noise during the run", _noise_section(runs)),
             ("stages", "Stages", _stages_section(runs))]
    reps = _steady_section(runs)
    if reps:       # figures repeated until steady (--reps auto): did they converge
        parts.append(("repetitions", "Repetitions until steady", reps))
    parts.append(("results", "All results", _results_section(runs)))
    from numascope.profile import SMOKE_NOTE, readable
    smoke = [r.run_id for r in runs if not readable(r.profile)]
    if smoke:
        parts[0] = ("runs", "Runs", f'<p class="warn">{_e(", ".join(smoke))}: '
                    f"{_e(SMOKE_NOTE)}</p>" + parts[0][2])
    return "".join(f'<div id="{sid}"><h3>{_e(t)}</h3>{h}</div>' for sid, t, h in parts)


def render(runs: list[RunRecord]) -> str:
    if not runs:
        raise ValueError("no runs to report")
    mods = figure_modules()
    sections = [("summary", "Summary", summary_section(runs)),
                ("topology", "Topology and memory mode", sec.topology_section(runs))]
    studies = sec.studies()
    for s in studies:
        html = _study(s, runs, mods)
        if html:
            sections.append((s.id, s.title, html))
    known = {f for s in studies for f in s.families} | {"fleet"}
    other = sec.figures_html([m for m in mods if sec.family_of(m.__name__) not in known],
                             runs)
    if other:
        sections.append(("other", "Other figures", other))
    from numascope.report.fleet_html import fleet_section
    fleet = fleet_section(runs)
    if fleet:      # runs of a fleet (tag fleet=ID): its outliers, shape and failed nodes
        fleet_mods = [m for m in mods if sec.family_of(m.__name__) == "fleet"]
        sections.append(("fleet", "Fleet", sec.figures_html(fleet_mods, runs) + fleet))
    if len(runs) > 1:
        sections.append(("comparison", "Comparison", _comparison_section(runs)))
    sections.append(("appendix", "Appendix: runs, host, readiness, noise, stages, all results",
                     _appendix(runs)))
    from numascope.profile import readable
    if any(not readable(r.profile) for r in runs):
        from numascope.profile import SMOKE_NOTE
        sections[0] = ("summary", "Summary", f'<p class="warn">{_e(SMOKE_NOTE)}</p>'
                       + sections[0][2])
    nav = " · ".join(f'<a href="#{sid}">{_e(title.split(":")[0])}</a>'
                     for sid, title, _ in sections)
    body = "".join(f'<section id="{sid}"><h2>{_e(title)}</h2>{html}</section>'
                   for sid, title, html in sections)
    title = "numascope report: " + ", ".join(r.run_id for r in runs)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{_e(title)}</h1><p class=\"dim\">numascope {_e(__version__)} · "
            f"written {_e(utc_now())} · GB = 10^9 B, GiB = 2^30 B</p><nav>{nav}</nav>"
            f"{body}</body></html>")


def write_report(runs: list[RunRecord], path: str | Path) -> Path:
    """Render and write atomically (temporary file, then rename)."""
    from numascope.atomic import write_atomic
    p = Path(path)
    write_atomic(p, render(runs))
    return p
