"""The report's study sections beside the figures: the efficiency table against the
theoretical peaks, the compression table the labs publish, and the comparison of runs."""

from __future__ import annotations

from numascope.analysis.compare import compare_runs, smoke_mixed
from numascope.console import plural
from numascope.report.appendix import _RES_HEAD, _pct, _result_rows
from numascope.report.kit import e as _e
from numascope.report.kit import num as _num
from numascope.report.kit import status as _status
from numascope.report.kit import table as _table
from numascope.results.run import RunRecord
from numascope.steady import MARK


def _peak_rows(run: RunRecord) -> tuple[list[list[str]], str]:
    """The run's efficiency rows, or why there are none."""
    from numascope.analysis import efficiency
    summary = run.host.get("peaks")
    if not isinstance(summary, dict):
        return [], f"{run.run_id}: no peak summary stored with this run"
    if "error" in summary:
        return [], f"{run.run_id}: the peaks could not be computed ({summary['error']})"
    try:
        table = efficiency.efficiency_table(summary, results=run.results)
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


def _comparison_figures(runs: list[RunRecord]) -> str:
    """The across-runs bars (report.figures.comparison: runs grouped by the tags that
    differ, compare's significance written on each bar)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from numascope.plotting.marks import caption_of
    from numascope.report.figures import comparison
    from numascope.report.sections import embed
    parts = []
    try:
        pairs = comparison.figures(runs)
    except Exception as ex:  # noqa: BLE001 — shown in the report instead
        return (f'<p class="bad">the comparison figures failed: {_e(type(ex).__name__)}: '
                f"{_e(ex)}</p>")
    for title, fig in pairs:
        parts.append(embed(title, fig, caption_of(fig)))     # its units in the caption
        plt.close(fig)
    return "".join(parts)


def _comparison_section(runs: list[RunRecord]) -> str:
    """Each run against the first, primary metrics. One run per side is never enough for a
    significance claim: the table says "too few" or "below noise" (numascope compare with
    3+ runs per side for a verdict)."""
    base, parts = runs[0], [_comparison_figures(runs)]
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
