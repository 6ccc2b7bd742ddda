"""The HTML report: one self-contained file (inline CSS, figures as base64 PNG, no scripts,
no fonts, no network) for one or several runs.

Sections (element ids): runs, host, noise, topology, stages, repetitions (only when a
figure was repeated until steady), figures, efficiency, compression, results (collapsed: every metric of every result), comparison (only with
several runs). Every string from the machine or the user goes through html.escape; figures
are images, so no text from them reaches the DOM.

Efficiency: one table, numascope.peaks.efficiency_table of the peak summary the run stored
(host["peaks"], computed once per run from its measured clock) against the run's measured
figures; the report never computes a peak itself."""

from __future__ import annotations

import base64
import importlib
import io
import math
from html import escape
from pathlib import Path
from typing import Any

from numascope import __version__
from numascope.analysis.compare import compare_runs, smoke_mixed
from numascope.console import UNKNOWN, plural, show
from numascope.families.latency.distribution import THIN_MARK, THIN_NOTE, thin
from numascope.report.topology_html import CSS as TOPO_CSS
from numascope.report.topology_html import topology_html
from numascope.results.record import BenchResult
from numascope.results.run import RunRecord, utc_now
from numascope.steady import MARK, MARK_NOTE, mark, summary, verdict_of

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;
 max-width:1400px}
h1{font-size:22px}h2{font-size:18px;border-bottom:2px solid #ccd;padding-bottom:3px;
 margin-top:28px}h3{font-size:15px}
table{border-collapse:collapse;margin:6px 0 14px;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef}td.num{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#176317}.warn{color:#8a5a00}.bad{color:#a11}.dim{color:#777}
figure{display:inline-block;margin:6px;border:1px solid #ddd;padding:4px}
figure img{max-width:640px}figcaption{font-size:12px;color:#444}
""" + TOPO_CSS

_STATUS_CLASS = {"done": "ok", "complete": "ok", "better": "ok", "skipped": "warn",
                 "interrupted": "warn", "not run": "dim", "failed": "bad", "worse": "bad",
                 "too few": "warn", "below noise": "dim"}


def _e(v: Any) -> str:
    return escape(str(v), quote=True)


def _num(v: Any, digits: int = 4) -> str:
    """A value as every table shows it (numascope.console.show), escaped."""
    return _e(show(v, digits))


def _table(head: list[str], rows: list[list[str]], num_cols: set[int] = frozenset()) -> str:
    """Cells in `rows` must already be escaped HTML."""
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{c}</td>' if i in num_cols else f"<td>{c}</td>"
                         for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _status(s: str) -> str:
    return f'<span class="{_STATUS_CLASS.get(s, "")}">{_e(s)}</span>'


def _tags(tags: dict[str, str]) -> str:
    return _e(" ".join(f"{k}={v}" for k, v in tags.items()))


# -- sections -------------------------------------------------------------------------------

def _runs_section(runs: list[RunRecord]) -> str:
    rows = [[_e(r.run_id), _e(r.started), _e(r.host.get("hostname") or UNKNOWN),
             _tags(r.tags), _e(r.profile), _e(r.host.get("memory_mode") or UNKNOWN),
             _status(r.status),
             str(len(r.results))] for r in runs]
    return _table(["run", "started (UTC)", "host", "tags", "profile", "memory mode", "status",
                   "results"], rows, {7})


_HOST_KEYS = ("hostname", "system", "cpu_model", "microcode", "kernel", "bios_vendor",
              "bios_version", "bios_date", "memory_mode", "memory_gib", "packages", "nodes",
              "l3s", "cores", "cpus", "smt", "smt_control", "governor", "thp", "numa_balancing",
              "clock_ghz", "topology_digest")


def _host_section(runs: list[RunRecord]) -> str:
    """The host facts side by side, then each run's readiness checks (host["readiness"]:
    what was seen, its effect on the measurements, the command that changes it)."""
    rows = [[_e(k)] + [_num(r.host.get(k)) for r in runs] for k in _HOST_KEYS]
    html = _table(["fact"] + [r.run_id for r in runs], rows)
    cls = {"ok": "ok", "warn": "warn", "info": "", "unknown": "dim"}
    for r in runs:
        checks = r.host.get("readiness")
        if not isinstance(checks, list):
            continue
        crows = [[_e(c.get("title") or c.get("id")),
                  (f'<span class="{cls.get(c.get("status"), "")}">'
                  f'{_e(c.get("status"))}</span>'),
                  _e(c.get("value", "")), _e(c.get("effect", "")),
                  f'<code>{_e(c["fix"])}</code>' if c.get("fix") else ""]
                 for c in checks if isinstance(c, dict)]
        warn = sum(1 for c in checks if isinstance(c, dict) and c.get("status") == "warn")
        html += (f"<h3>Readiness · {_e(r.run_id)} · {plural(warn, 'warning')}</h3>"
                 '<p class="dim">as seen when the run started; numascope changes none of '
                 "these itself</p>"
                 + _table(["check", "status", "seen", "effect on measurements",
                           "command to change it"], crows))
    return html


def _noise_section(runs: list[RunRecord]) -> str:
    keys = ("loadavg_start", "loadavg_end", "other_busy_fraction", "steal_fraction",
            "clock_ghz_start", "clock_ghz_end", "clock_drop_fraction")
    rows = [[_e(k)] + [_num(r.noise.get(k)) for r in runs] for k in keys]
    from numascope.families.bandwidth.outliers import bimodal_cases, bimodal_warning
    warns = "".join(f'<li class="warn">{_e(r.run_id)}: {_e(w)}</li>'
                    for r in runs for w in [*r.noise.get("warnings", []),
                                            *map(bimodal_warning, bimodal_cases(r.results))])
    return _table(["indicator"] + [r.run_id for r in runs], rows) + \
        (f"<ul>{warns}</ul>" if warns else '<p class="ok">no disturbance recorded</p>')


def _topology_section(runs: list[RunRecord]) -> str:
    parts, seen = [], set()
    for r in runs:
        digest = r.host.get("topology_digest")
        if digest in seen:
            continue
        seen.add(digest)
        body = topology_html(r.topology)
        facts = r.host.get("facts") or {}
        frows = [[_e(k), _num(f.get("value")), _num(f.get("status"))]
                 for k, f in facts.items()]
        parts.append(f"<h3>{_e(r.host.get('hostname') or r.run_id)} · "
                     f"{_e(r.host.get('cpu_model') or '')}</h3>"
                     + (body or '<p class="dim">no topology recorded</p>')
                     + (_table(["inferred", "value", "status"], frows) if frows else ""))
    return "".join(parts)


def _stages_section(runs: list[RunRecord]) -> str:
    rows = [[_e(r.run_id), _e(s.name), _status(s.status), str(s.results), f"{s.seconds:.1f}",
             _e(s.reason)] for r in runs for s in r.stages]
    return _table(["run", "stage", "status", "results", "seconds", "reason"], rows, {3, 4})


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


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)   # each figure lays itself out (tight or constrained)
    return base64.b64encode(buf.getvalue()).decode()


def _figures_section(runs: list[RunRecord]) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    parts = []
    mods = figure_modules()
    for r in runs:
        figs = []
        for mod in mods:
            if not hasattr(mod, "figures"):
                continue
            try:
                pairs = mod.figures(r.results)
            except Exception as e:  # noqa: BLE001 — shown in the report instead
                parts.append(f'<p class="bad">plots of {_e(mod.__name__)} failed: '
                             f'{_e(type(e).__name__)}: {_e(e)}</p>')
                continue
            for title, fig in pairs:
                figs.append(f'<figure><img alt="{_e(title)}" src="data:image/png;base64,'
                            f'{_png(fig)}"><figcaption>{_e(title)}</figcaption></figure>')
                plt.close(fig)
        if figs:
            parts.append(f"<h3>{_e(r.run_id)} {_tags(r.tags)}</h3>" + "".join(figs))
    return "".join(parts) or '<p class="dim">no plots for these results</p>'


def _peak_rows(run: RunRecord) -> tuple[list[list[str]], str]:
    """The run's efficiency rows, or why there are none."""
    from numascope import peaks as peaks_mod
    summary = run.host.get("peaks")
    if not isinstance(summary, dict):
        return [], f"{run.run_id}: no peak summary stored with this run"
    if "error" in summary:
        return [], f"{run.run_id}: the peaks could not be computed ({summary['error']})"
    try:
        table = peaks_mod.efficiency_table(summary, results=run.results)
    except Exception as e:  # noqa: BLE001 — shown in the report instead
        return [], f"{run.run_id}: efficiency table failed: {type(e).__name__}: {e}"
    return [[_e(run.run_id), _e(row.what), _e(row.measured_by), _num(row.measured),
             _num(row.peak), _e(row.unit),
             "–" if row.percent is None else f"{row.percent:.1f}%", _e(row.note)]
            for row in table], ""


def _efficiency_section(runs: list[RunRecord]) -> str:
    rows, why = [], []
    for r in runs:
        got, reason = _peak_rows(r)
        rows += got
        if reason:
            why.append(f"<li>{_e(reason)}</li>")
    if not rows:
        return ('<p class="dim">no theoretical peak known for these results</p>'
                + (f'<ul class="dim">{"".join(why)}</ul>' if why else ""))
    return (_table(["run", "resource", "measured by", "measured", "peak", "unit",
                    "efficiency", "note"], rows, {3, 4, 6})
            + (f'<ul class="dim">{"".join(why)}</ul>' if why else ""))


def _steady_section(runs: list[RunRecord]) -> str:
    """The figures repeated until steady (--reps auto): per run, how many converged, and
    each one that did not with its interval and what stopped it. Empty without any."""
    parts = []
    for run in runs:
        line = summary([x.params for x in run.results])
        if not line:
            continue
        rows = []
        for x in run.results:
            s = verdict_of(x.params)
            if s is None or s["converged"]:
                continue
            lo, hi = s.get("interval") or (math.nan, math.nan)
            rows.append([_e(x.family), _e(x.case) + MARK, _e(s.get("metric", "")),
                         str(s["reps"]) + (f" in {s['units']} units" if "units" in s else ""),
                         f"{_num(lo)} … {_num(hi)}",
                         _pct(100 * (s.get("half_width") or math.nan)),
                         f"±{_pct(100 * s['precision'])}", _e(s["stopped"]),
                         _num(s.get("seconds"), 3)])
        parts.append(f"<h3>{_e(run.run_id)}</h3><p>{_e(line)}</p>" + (_table(
            ["family", "case", "metric", "reps", "95 % interval",
             "half-width", "asked", "stopped by", "seconds"], rows, {3, 5, 6, 8})
            if rows else ""))
    if not parts:
        return ""
    return ("<p class='dim'>" + _e(MARK_NOTE) + "; the rule and its budget: "
            "docs/run.md</p>" + "".join(parts))


def _result_rows(run: RunRecord, results: list[BenchResult]) -> list[list[str]]:
    """One row per metric; the result's notes (warnings, conventions) on its first row."""
    rows = []
    for res in results:
        for i, m in enumerate(res.metrics.values()):
            rows.append([_e(run.run_id), _e(res.case), _e(m.name),
                         _num(m.median) + (THIN_MARK if m.name in thin(res) else ""),
                         _num(m.min),
                         _num(m.max), "–" if not math.isfinite(m.spread)
                         else f"{m.spread:.1%}", f"{len(m.values)}{mark(res.params)}",
                         _e(m.unit),
                         "↑" if m.higher_is_better else "↓",
                         _e("; ".join(map(str, res.notes))) if i == 0 else ""])
    return rows


_RES_HEAD = ["run", "case", "metric", "median", "min", "max", "spread", "n", "unit", "better",
             "notes"]


def _compression_section(runs: list[RunRecord]) -> str:
    """Per run and data set, the table the labs publish: each codec setting's ratio and
    decompress+sum GB/s (speed-up over plain) per thread count, plain on top, the best
    setting per thread count and the crossover. Every metric stays in "All results"."""
    from numascope.families.compress.bench import summarize
    from numascope.units import format_bytes

    parts = []
    for run in runs:
        cz = [x for x in run.results if x.family == "compress"]
        try:
            summaries = summarize(cz)
        except (KeyError, TypeError, ValueError):  # results without the sweep's parameters
            if cz:
                parts.append(f"<h3>{_e(run.run_id)}</h3>" +
                             _table(_RES_HEAD, _result_rows(run, cz), {3, 4, 5, 6, 7}))
            continue
        for s in summaries:
            head = ["codec-clevel-filter", "ratio", "compress GB/s"] + \
                [f"{t} thread{'s' if t > 1 else ''}" for t in s.threads]
            rows = [["<strong>plain sum</strong>", "1", "–"] +
                    [_num(s.plain.get(t)) for t in s.threads]]
            for row in sorted(s.rows, key=lambda r: -max(r.gbs.values(), default=0)):
                rows.append([_e(row.label), _num(row.ratio, 3), _num(row.compress_gbs, 3)] +
                            [f"{_num(row.gbs[t])} ({_num(row.speedup.get(t), 2)}×)"
                             if t in row.gbs else "–" for t in s.threads])
            best = "; ".join(f"{t}T: {_e(b[0])} {_num(b[1])} GB/s ({_num(b[2], 2)}×)"
                             for t, b in sorted(s.best.items()))
            cross = (f"compressed beats plain from {plural(s.crossover, 'thread')} on"
                     if s.crossover else "no crossover: compressed does not beat plain here")
            notes = "".join(f"<li>{_e(n)}</li>" for n in s.notes)
            parts.append(
                f"<h3>{_e(run.run_id)} · {_e(s.dataset)} ({format_bytes(s.nbytes)} of "
                f"{_e(s.dtype)}, chunks of {format_bytes(s.chunk_bytes)})</h3>"
                + _table(head, rows, set(range(1, len(head))))
                + f"<p>best per thread count: {best}. <strong>{cross}</strong>.</p>"
                + (f"<ul class='dim'>{notes}</ul>" if notes else ""))
    if not parts:
        return '<p class="dim">no compression results</p>'
    return ("<p class='dim'>GB/s of uncompressed-equivalent data (GB = 10^9 B), medians of "
            "paired repetitions; (×) = speed-up over the plain sum with the same threads.</p>"
            + "".join(parts))


def _results_section(runs: list[RunRecord]) -> str:
    """Every metric of every result, by family, collapsed (<details>): the tables above
    summarise, this is the record."""
    fams = dict.fromkeys(x.family for r in runs for x in r.results)  # first-seen order
    parts = []
    for fam in fams:
        rows = [row for r in runs for row in _result_rows(
            r, [x for x in r.results if x.family == fam])]
        parts.append(f"<h3>{_e(fam)}</h3>" + _table(_RES_HEAD, rows, {3, 4, 5, 6, 7}))
    if any(thin(x) for r in runs for x in r.results):
        parts.append(f'<p class="warn">{_e(THIN_NOTE)}</p>')
    if not parts:
        return '<p class="dim">no results</p>'
    n = sum(len(r.results) for r in runs)
    return (f"<details><summary>{_e(plural(n, 'result'))} in "
            f"{_e(plural(len(fams), 'family', 'families'))}, every metric and repetition "
            f"count (click to open)</summary>{''.join(parts)}</details>")


def _pct(v: float, sign: bool = False) -> str:
    return "–" if not math.isfinite(v) else (f"{v:+.1f}%" if sign else f"{v:.1f}%")


def _comparison_section(runs: list[RunRecord]) -> str:
    """Each run against the first, primary metrics. One run per side is never enough for a
    significance claim: the table says "too few" or "below noise" (numascope compare with
    3+ runs per side for a verdict)."""
    base, parts = runs[0], []
    for other in runs[1:]:
        if smoke_mixed([base], [other]):   # refused by numascope compare too
            parts.append(f'<p class="dim">{_e(other.run_id)} not compared with '
                         f"{_e(base.run_id)}: one is a smoke run (its numbers measure "
                         "caches)</p>")
            continue
        cmp = compare_runs([base], [other])
        conf = [[_e(k), _num(va), _num(vb)]
                for k, (va, vb) in cmp.config.items()]
        rows = [[_e(d.family), _e(d.case) + (MARK if d.unsteady else ""), _e(d.metric),
                 f"{_num(d.median_a)} {_e(d.unit)}",
                 f"{_num(d.median_b)} {_e(d.unit)}", _pct(d.change_pct, sign=True),
                 _pct(d.noise_pct), _num(d.p_adjusted, 2), _status(d.verdict)]
                for d in cmp.diffs]
        counts = ", ".join(f"{n} {v}" for v, n in cmp.counts.items() if n) or "no metric"
        parts.append(f"<h3>{_e(other.run_id)} vs {_e(base.run_id)}</h3>"
                     + (_table(["setting", "A", "B"], conf) if conf
                        else "<p>no recorded configuration difference</p>")
                     + _table(["family", "case", "metric", "A", "B", "change", "noise",
                               "p adj.", "verdict"], rows, {3, 4, 5, 6, 7})
                     + f"<p><strong>verdict: {_e(counts)}</strong></p>"
                     + (f'<p class="warn">{MARK} = a figure that did not converge in one of '
                        "the runs (--reps auto): its change is less certain than the "
                        "precision asked</p>" if any(d.unsteady for d in cmp.diffs) else "")
                     + f'<p class="dim">{_e(cmp.method)}</p>')
    return "".join(parts)


def render(runs: list[RunRecord]) -> str:
    if not runs:
        raise ValueError("no runs to report")
    sections = [
        ("runs", "Runs", _runs_section(runs)),
        ("host", "Host and settings", _host_section(runs)),
        ("noise", "Noise during the run", _noise_section(runs)),
        ("topology", "Topology", _topology_section(runs)),
        ("stages", "Stages", _stages_section(runs)),
        ("figures", "Figures", _figures_section(runs)),
        ("efficiency", "Efficiency against theoretical peaks", _efficiency_section(runs)),
        ("compression", "Compression", _compression_section(runs)),
        ("results", "All results", _results_section(runs)),
    ]
    reps = _steady_section(runs)
    if reps:       # figures repeated until steady (--reps auto): did they converge
        sections.insert(5, ("repetitions", "Repetitions until steady", reps))
    from numascope.report.fleet_html import fleet_section
    fleet = fleet_section(runs)
    if fleet:      # runs of a fleet (tag fleet=ID): its outliers, shape and failed nodes
        sections.insert(-1, ("fleet", "Fleet", fleet))
    if len(runs) > 1:
        sections.append(("comparison", "Comparison", _comparison_section(runs)))
    from numascope.profile import SMOKE_NOTE, readable
    smoke = [r.run_id for r in runs if not readable(r.profile)]
    if smoke:
        sections[0] = ("runs", "Runs", f'<p class="warn">{_e(", ".join(smoke))}: '
                       f"{_e(SMOKE_NOTE)}</p>" + sections[0][2])
    nav = " · ".join(f'<a href="#{sid}">{_e(title)}</a>' for sid, title, _ in sections)
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
