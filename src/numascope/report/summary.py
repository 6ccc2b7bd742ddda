"""The report's first screen: what the run found (numascope.report.headline's lines), one row
per headline figure, then its problems in a sentence each: readiness warnings, a disturbed
run, bimodal or unsteady figures. Sized to fit 1400x900 with the title and navigation
(tests/test_report_reader.py measures it in Chromium)."""

from __future__ import annotations

import math

from numascope.console import UNKNOWN
from numascope.report.headline import headlines
from numascope.report.kit import e, num, tags
from numascope.report.verdicts import disturbed
from numascope.results.headline import Headline
from numascope.results.run import RunRecord
from numascope.steady import units_words, verdict_of

CSS = """
#summary h2{margin-top:10px}
table.headline{font-size:12.5px;width:100%;table-layout:fixed}
table.headline td,table.headline th{padding:2px 5px;overflow-wrap:anywhere}
table.headline .why{font-size:11px;color:#555}
.v-ok,.v-saturates,.v-wins,.v-as-published{color:#176317;font-weight:600}
.v-low,.v-short,.v-loses,.v-slow,.v-slower,.v-check{color:#a11;font-weight:600}
.v-inconclusive{color:#8a5a00;font-weight:600}
ul.problems{font-size:12.5px;margin:4px 0;padding-left:18px}
p.lede{margin:4px 0;font-size:13px}
"""

_COLS = '<colgroup><col style="width:21%"><col style="width:10%"><col style="width:19%">' \
        '<col style="width:6%"><col style="width:26%"><col style="width:18%"></colgroup>'


def value_text(h: Headline) -> str:
    """The figure as the section tables show it (numascope.console.show, 4 digits)."""
    return f"{num(h.value)} {e(h.unit)}"


def _spread(h: Headline) -> str:
    if math.isfinite(h.low) and math.isfinite(h.high):
        return (f'{num(h.low)} … {num(h.high)} <span class="why">{e(h.spread)}, '
                f"n={h.n}</span>")
    return f'<span class="why">{e(h.spread) + ", " if h.spread else ""}n={h.n}</span>'


def _verdict(h: Headline) -> str:
    cls = "v-" + h.verdict.replace(" ", "-")
    return (f'<span class="{e(cls)}">{e(h.verdict)}</span> '
            f'<span class="why">{e(h.rule)}</span>')


def _row(h: Headline, common: list[str]) -> list[str]:
    what = f'<a href="#{e(h.section)}">{e(h.what)}</a>' + (" ⚠" if h.warnings else "") + \
        (f' <span class="why">{e(h.detail)}</span>' if h.detail else "")
    val = value_text(h)
    pct = "–" if h.peak_pct is None else f"{h.peak_pct:.1f} %"
    own = [n for n in h.reference_notes if n not in common]
    ref = f'<span class="why">{e("; ".join([h.reference, *own]))}</span>' if h.reference else \
        f'<span class="dim">{e(h.reference_other or "none matches this host")}</span>'
    return [what, val, _spread(h), pct, _verdict(h), ref]


_KINDS = {"not steady": " (the 95 % interval over {units} stayed wider than the precision "
                         "asked; its verdict is inconclusive)",
          "repetitions bimodal": " (two modes: memory shared with other work; a disturbed "
                                 "figure)"}


_HEAD = ("figure", "median", "spread", "% of peak", "verdict and rule", "published figure")


def common_notes(lines: list[Headline]) -> list[str]:
    """The published figures' notes that every matched line shares (said once)."""
    refs = [h.reference_notes for h in lines if h.reference]
    return [n for n in refs[0] if all(n in r for r in refs[1:])] if refs else []


def _headline_table(lines: list[Headline]) -> str:
    """The rows carry the case and metric their median comes from (data-case,
    data-metric; none for a derived figure), so a reader can find it in the tables."""
    th = "".join(f"<th>{e(h)}</th>" for h in _HEAD)
    common = common_notes(lines)
    rows = []
    for h in lines:
        attrs = (f' data-key="{e(h.ident)}" data-section="{e(h.section)}"'
                 + (f' data-case="{e(h.source)}" data-metric="{e(h.metric)}"'
                    if h.metric else ""))
        cells = "".join(f'<td class="num">{c}</td>' if i in (1, 3) else f"<td>{c}</td>"
                        for i, c in enumerate(_row(h, common)))
        rows.append(f"<tr{attrs}>{cells}</tr>")
    return (f'<table class="headline">{_COLS}<thead><tr>{th}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def problems(run: RunRecord, lines: list[Headline]) -> list[str]:
    """The run's problems, one sentence each (plain text): readiness warnings, a disturbed
    run, figures that did not converge or were bimodal (one sentence per kind, naming
    them), failed stages, a peak that could not be computed."""
    out = []
    checks = run.host.get("readiness")
    for c in checks if isinstance(checks, list) else []:
        if isinstance(c, dict) and c.get("status") == "warn":
            seen = str(c.get("value", "?")).split(": ")[0]
            out.append(f"Readiness: {c.get('title') or c.get('id')}: {seen} (its effect and "
                       "the command that changes it: appendix).")
    for w in disturbed(run):
        out.append(f"Disturbed run: {w}; a verdict on its figures is inconclusive.")
    kinds: dict[str, list[str]] = {}
    for h in lines:
        for w in h.warnings:
            case, _, what = w.partition(": ")
            kind = what.split(",")[0].split(" (")[0]
            if case not in kinds.setdefault(kind, []):
                kinds[kind].append(case)
    for kind, cases in kinds.items():
        # the units in the words of the verdicts named (compression's: calls on one store)
        units = units_words([v for r in run.results if r.case in cases
                             for v in [verdict_of(r.params)] if v and not v["converged"]])
        why = _KINDS.get(kind, "").replace("{units}", units)
        out.append(f"{kind[0].upper() + kind[1:]}{why}: {', '.join(cases)}.")
    for s in run.stages:
        if s.status in ("failed", "interrupted", "incomplete"):
            out.append(f"Stage {s.name} {s.status}: {s.reason}.")
    left = [(s.name, len(s.plan.get("left_out", [])), s.plan.get("cases"))
            for s in run.stages if s.plan.get("left_out")]
    if left:       # a budget's choice: recorded, never a failure, never silent
        budget = (run.host.get("budget") or {}).get("seconds")
        within = f" (a budget of {budget:g} s)" if budget else ""
        out.append(f"Not measured{within}: " + ", ".join(
            f"{name} {k} of {n} cases" for name, k, n in left) + "; the headline cases "
            "went first (docs/plan.md).")
    dram = (run.host.get("peaks") or {}).get("dram") or {}
    if isinstance(dram, dict) and dram.get("value") is None and \
            any(h.key == "triad_all_cores" for h in lines):
        out.append("No DRAM peak, so no % of peak for the triad: the DIMMs are unknown "
                   f"({str(dram.get('reason') or 'no reason recorded').split(';')[0]}).")
    return out


def _lede(run: RunRecord) -> str:
    h = run.host
    bits = [h.get("hostname") or UNKNOWN, h.get("cpu_model") or UNKNOWN,
            (f"{h.get('packages') or '?'} socket(s), {h.get('nodes') or '?'} NUMA "
             f"node(s), {h.get('cores') or '?'} cores"), f"memory mode {h.get('memory_mode') or UNKNOWN}",
            f"{run.profile} run {run.run_id} ({run.status})"]
    t = f" · tags {tags(run.tags)}" if run.tags else ""
    return f'<p class="lede">{" · ".join(e(b) for b in bits)}{t}</p>'


def below_table(run: RunRecord, lines: list[Headline], errors: list[str]) -> list[str]:
    """The sentences under the headline table (plain text): the run's problems, the
    families that gave no line, the notes every published figure shares."""
    probs = problems(run, lines) + [f"No headline line from {x} (the results lack what it "
                                    "needs)." for x in errors]
    notes = common_notes(lines)
    if notes:
        probs.append("Published figures: " + "; ".join(notes) + ".")
    return probs


def _one(run: RunRecord) -> str:
    errors: list[str] = []
    lines = headlines(run, errors)
    if not lines:
        body = '<p class="dim">no headline figure: this run measured none of them</p>'
    else:
        body = _headline_table(lines)
    probs = below_table(run, lines, errors)
    plist = "".join(f"<li>{e(p)}</li>" for p in probs)
    return (_lede(run) + body + (f'<ul class="problems warn">{plist}</ul>' if probs else
                                 '<p class="ok">no readiness warning, disturbance or '
                                 "unsteady figure</p>"))


def _changes(runs: list[RunRecord]) -> list[dict[tuple[str, str], str]]:
    """Per run after the first: (case, metric) -> its change against the first and
    compare's verdict ("too few" with one run a side: see the comparison section)."""
    from numascope.analysis.compare import compare_runs, smoke_mixed
    out = []
    for other in runs[1:]:
        if smoke_mixed([runs[0]], [other]):
            out.append({})
            continue
        out.append({(d.case, d.metric): f"{d.change_pct:+.1f} % ({d.verdict})"
                    for d in compare_runs([runs[0]], [other]).diffs
                    if math.isfinite(d.change_pct)})
    return out


def _several(runs: list[RunRecord]) -> str:
    """Several runs: one row per headline figure, a column per run (its median and
    verdict, and after the first its change against the first with compare's verdict);
    the comparison section holds the whole comparison."""
    per = [{h.ident: h for h in headlines(r)} for r in runs]
    changes = [{}, *_changes(runs)]
    keys = list(dict.fromkeys(k for p in per for k in p))
    rows = []
    for k in keys:
        first = next(p[k] for p in per if k in p)
        cells = [f'<a href="#{e(first.section)}">{e(first.what)}</a>']
        for p, ch in zip(per, changes, strict=True):
            h = p.get(k)
            change = ch.get((h.source, h.metric)) if h is not None else None
            cells.append("–" if h is None else f"{value_text(h)} {_verdict_word(h)}"
                         + (f'<br><span class="why">{e(change)}</span>' if change else ""))
        rows.append(f'<tr data-key="{e(k)}">' + "".join(
            f'<td class="num">{c}</td>' if i else f"<td>{c}</td>"
            for i, c in enumerate(cells)) + "</tr>")
    head = ["figure"] + [f"{r.run_id} {' '.join(f'{a}={b}' for a, b in r.tags.items())}"
                         for r in runs]
    probs = [f"{r.run_id}: {p}" for r in runs for p in problems(r, [])]
    plist = "".join(f"<li>{e(p)}</li>" for p in probs[:8])
    more = f"<li>{len(probs) - 8} more in the appendix</li>" if len(probs) > 8 else ""
    return ('<p class="lede">medians of each run; after the first, the change against it '
            'and compare\'s verdict ("too few" with one run a side; 3 a side are needed): '
            '<a href="#comparison">Comparison</a></p>'
            f'<table class="headline"><thead><tr>{"".join(f"<th>{e(x)}</th>" for x in head)}'
            f'</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            + (f'<ul class="problems warn">{plist}{more}</ul>' if probs else ""))


def _verdict_word(h: Headline) -> str:
    return f'<span class="{e("v-" + h.verdict.replace(" ", "-"))}">{e(h.verdict)}</span>'


def summary_section(runs: list[RunRecord]) -> str:
    return _one(runs[0]) if len(runs) == 1 else _several(runs)
