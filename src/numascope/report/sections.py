"""The report's sections in the studies' order (topology and memory mode, bandwidth, latency,
core-to-core, compute and HPL, compression, storage, interconnect), each opening with its
families' figures and a table of the medians of their primary metrics.

Figures: each figure module (report.html.figure_modules) belongs to the section of its
family (the package it lives in); a module of no known family gets a section of its own
after the studies' ones. A figure is embedded by `embed`, the one place that turns a figure
into markup."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from numascope.analysis.primary import primary_metrics
from numascope.report.kit import e, num, table, tags
from numascope.report.topology_html import topology_html
from numascope.results.run import RunRecord
from numascope.steady import fresh, mark, verdict_of


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    families: tuple[str, ...]


def studies() -> tuple[Section, ...]:
    """The study sections in the studies' order, each family's SECTION (its folder's
    __init__.py, through the registry): bandwidth, latency (with the matrices), core to
    core, compute and HPL, compression, storage, interconnect."""
    from numascope import families
    return tuple(Section(sid, title, fams) for sid, title, fams in families.sections())


def family_of(module_name: str) -> str:
    """'numascope.families.latency.chains_figures' -> 'latency'; a folder family's module
    ('toy_family.figures') -> its package; the fleet's -> 'fleet'."""
    parts = module_name.split(".")
    if parts[:2] == ["numascope", "families"] and len(parts) > 2:
        return parts[2]
    if module_name.startswith("numascope.report.figures."):
        return parts[-1]
    return parts[0] if len(parts) > 1 else module_name


def embed(title: str, fig: Any, caption: str) -> str:
    """One figure as markup: the only place that renders a figure (report.figures.render:
    inline SVG with its text as text, PNG where the SVG would be large)."""
    from numascope.report.figures import render
    return render.embed(title, fig, caption)


def caption(title: str, run: RunRecord, units: list[str], several: bool, own: str = ""
            ) -> str:
    """The figure's caption: its module's own (a figure's label, where it set one), its
    run when the report has several, the units of its family's primary metrics."""
    who = f" · run {run.run_id}" + (f" ({' '.join(f'{k}={v}' for k, v in run.tags.items())})"
                                    if run.tags else "") if several else ""
    # the title is shown in bold above the caption (render.embed): not said twice
    return (own or "") + who + (f" · units: {', '.join(units)}" if units else "")


def _units(results: list[Any]) -> list[str]:
    out = []
    for r in results:
        for name in primary_metrics(r.family, list(r.metrics)):
            u = r.metrics[name].unit
            if u and u not in out:
                out.append(u)
    return out


def figures_html(mods: list[Any], runs: list[RunRecord]) -> str:
    """The figures of these modules for every run, each with its caption."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    parts = []
    for r in runs:
        for mod in mods:
            if not hasattr(mod, "figures"):
                continue
            try:
                pairs = mod.figures(r.results)
            except Exception as ex:  # noqa: BLE001 — shown in the report instead
                parts.append(f'<p class="bad">plots of {e(mod.__name__)} failed: '
                             f'{e(type(ex).__name__)}: {e(ex)}</p>')
                continue
            fam = family_of(mod.__name__)
            units = _units([x for x in r.results if x.family == fam])
            for title, fig in pairs:
                own = fig.get_label() if isinstance(fig.get_label(), str) else ""
                parts.append(embed(title, fig, caption(title, r, units, len(runs) > 1,
                                                       own)))
                plt.close(fig)
    return "".join(parts)


def _spread(m: Any, params: dict[str, Any]) -> str:
    s = verdict_of(params)
    iv = (s or {}).get("interval") or []
    if s and s.get("metric", m.name) == m.name and len(iv) == 2 and \
            all(isinstance(v, (int, float)) and math.isfinite(v) for v in iv):
        over = "allocations" if fresh(s) else "calls over one allocation"
        return f"{num(iv[0])} … {num(iv[1])} (95 %, {s.get('units', '?')} {over})"
    if len(m.values) > 1:
        return f"{num(m.min)} … {num(m.max)} (range)"
    return "–"


def medians_table(runs: list[RunRecord], families: tuple[str, ...]) -> str:
    """The medians of the primary metrics of these families' results: the figures the
    summary and the figures show, with their spread and n (every metric: the appendix)."""
    rows = []
    for r in runs:
        seen: dict[str, int] = {}
        for x in r.results:
            if x.family not in families:
                continue
            # a case name measured twice in one run (latency's sweep repeats its DRAM
            # point under the same name): the later ones are numbered, not merged
            seen[x.case] = seen.get(x.case, 0) + 1
            case = x.case if seen[x.case] == 1 else f"{x.case} (measured again, #{seen[x.case]})"
            for name in primary_metrics(x.family, list(x.metrics)):
                m = x.metrics[name]
                rows.append(([e(r.run_id)] if len(runs) > 1 else []) +
                            [e(case), e(name), num(m.median) + mark(x.params),
                             _spread(m, x.params), str(len(m.values)), e(m.unit)])
    if not rows:
        return ""
    head = (["run"] if len(runs) > 1 else []) + ["case", "metric", "median", "spread", "n",
                                                 "unit"]
    k = 1 if len(runs) > 1 else 0
    return table(head, rows, {k + 2, k + 4}, "medians")


# -- topology ---------------------------------------------------------------------------------

def fact_text(name: str, value: Any) -> str:
    """An inferred fact in words; distance classes as "10: each node to itself (8);
    32: 0↔4, 0↔5, 0↔6 … (16 pairs)"."""
    if name == "distance_classes" and isinstance(value, dict):
        out = []
        for d, pairs in value.items():
            pairs = [p for p in pairs if isinstance(p, (list, tuple)) and len(p) == 2] \
                if isinstance(pairs, list) else []
            if pairs and all(a == b for a, b in pairs):
                out.append(f"{d}: each node to itself ({len(pairs)})")
                continue
            shown = ", ".join(f"{a}↔{b}" for a, b in pairs[:3])
            more = f" … ({len(pairs)} pairs)" if len(pairs) > 3 else ""
            out.append(f"{d}: {shown}{more}")
        return "; ".join(out) or "none"
    if isinstance(value, list):
        return ", ".join(map(str, value)) if value else "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def topology_section(runs: list[RunRecord]) -> str:
    parts, seen = [], set()
    for r in runs:
        digest = r.host.get("topology_digest")
        if digest in seen:
            continue
        seen.add(digest)
        body = topology_html(r.topology)
        facts = r.host.get("facts") or {}
        frows = [[e(k.replace("_", " ")), e(fact_text(k, f.get("value"))),
                  e(f.get("status"))] for k, f in facts.items() if isinstance(f, dict)]
        mode = r.host.get("memory_mode")
        parts.append(f"<h3>{e(r.host.get('hostname') or r.run_id)} · "
                     f"{e(r.host.get('cpu_model') or '')} · memory mode "
                     f"{e(mode or 'unknown')}</h3>"
                     + (body or '<p class="dim">no topology recorded</p>')
                     + (table(["inferred", "value", "status"], frows) if frows else ""))
    return "".join(parts)


def run_heading(run: RunRecord) -> str:
    return f"<h3>{e(run.run_id)} {tags(run.tags)}</h3>"
