"""The report's appendix: the raw facts behind the figures (runs, host and readiness,
noise, stages, repetitions until steady, every result), after the studies' sections."""

from __future__ import annotations

import math

from numascope.console import UNKNOWN, plural
from numascope.families.latency.distribution import THIN_MARK, THIN_NOTE, thin
from numascope.report.kit import e as _e
from numascope.report.kit import num as _num
from numascope.report.kit import status as _status
from numascope.report.kit import table as _table
from numascope.report.kit import tags as _tags
from numascope.results.record import BenchResult
from numascope.results.run import RunRecord
from numascope.steady import MARK, mark, mark_note, summary, verdict_of


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


def _stages_section(runs: list[RunRecord]) -> str:
    rows = [[_e(r.run_id), _e(s.name), _status(s.status), str(s.results), f"{s.seconds:.1f}",
             _e(s.reason)] for r in runs for s in r.stages]
    return _table(["run", "stage", "status", "results", "seconds", "reason"], rows, {3, 4})


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
    note = mark_note([x.params for run in runs for x in run.results])
    return ("<p class='dim'>" + _e(note) + "; the rule and its budget: "
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
