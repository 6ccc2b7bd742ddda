"""The HTML report's summary in the terminal: `numascope show` prints it first and
`numascope run` last, its numbers those of numascope.report.headline for the recorded real
runs (tests/data) and for a run with verdicts and published figures, its notes the
verdicts' rules and the sentences the HTML summary has under its table; within 100
columns (80 on an 80-column terminal). JSON output is unchanged (tests/test_json_shapes)."""

from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console
from test_report_reader import epyc_7601_run, stored

from numascope import console
from numascope.cli import main
from numascope.console import show
from numascope.report.headline import Headline, headlines
from numascope.report.summary import below_table
from numascope.results.store import Store

# a row's first line: figure [note], median unit, low…high or –, n, % of peak or –, verdict
ROW = re.compile(r"^ (?P<what>.*?) +(?P<med>-?[\d,]+(?:\.\d+)?(?:e[-+]?\d+)?) (?P<unit>\S+) {2,}"
                 r"(?P<spread>\S+) {2,}(?P<n>\d+) {2,}(?P<pct>[\d.]+ %|–) {2,}"
                 r"(?P<verdict>\S.*?)\s*$")
MARK = re.compile(r"\[(\d+)\]")


def _width(monkeypatch, n: int) -> None:
    monkeypatch.setenv("COLUMNS", str(n))
    monkeypatch.setattr(console.out, "_width", n, raising=False)


def _rows(text: str) -> list[tuple[re.Match, list[str]]]:
    """The table's rows, from its rule to the first empty line after it: each row's first
    line (matched) and the figure column's lines (its name, its note's mark)."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip().startswith("────"))
    rows: list[tuple[re.Match, list[str]]] = []
    for ln in lines[start + 1:]:
        if not ln.strip():
            break
        m = ROW.search(ln)
        if m:
            rows.append((m, [m["what"]]))
        elif rows and ln[:rows[-1][0].start("med")].strip():   # (other cells' lines: no name)
            head = rows[-1][0]
            rows[-1][1].append(ln[:head.start("med")].strip())
    return rows


def _flat(text: str) -> str:
    return " ".join(text.split())


def _check(text: str, lines: list[Headline], run, errors: list[str]) -> None:
    """Every headline line printed as a row, in order, with headline.py's numbers; each
    judged one's note holds its rule and published figure; the sentences under the table
    are the HTML summary's."""
    rows = _rows(text)
    assert len(rows) == len(lines) > 0
    notes = dict(re.findall(r"^\[(\d+)\] (.*?)(?=^\[\d+\] |^\S)", text,
                            flags=re.MULTILINE | re.DOTALL))
    for h, (m, names) in zip(lines, rows, strict=True):
        marks = MARK.findall(" ".join(names))
        note_of = marks[-1] if marks else None
        assert (m["med"], m["unit"]) == (show(h.value), h.unit), h.what
        assert float(m["med"].replace(",", "")) == pytest.approx(h.value, rel=6e-4, abs=0.5)
        assert m["spread"] == (f"{show(h.low)}…{show(h.high)}" if h.low == h.low else "–")
        assert int(m["n"]) == h.n
        assert m["pct"] == ("–" if h.peak_pct is None else f"{h.peak_pct:.1f} %")
        assert m["verdict"] == h.verdict
        assert len(names) <= 2 and names[0], names            # a name on at most two lines
        # no word broken: every word shown is one of the name's (or the marks)
        words = set(h.what.split()) | set(h.detail.split()) | {"⚠", "…"}
        assert all(w in words or MARK.fullmatch(w) for ln in names for w in ln.split()), \
            (names, h.what)
        if h.verdict == "–":
            assert "–: no published rule for this figure." in text
            # a published figure measured otherwise is said in the line's note
            assert not h.reference_other or _flat(h.reference_other) in _flat(
                notes[note_of])
        else:
            note = _flat(notes[note_of])
            assert f"{h.verdict}: {_flat(h.rule)}" in note, note
            assert not h.reference or _flat(h.reference) in note
        # a name cut short ("…", or its closing "(…)" left out): its note gives it whole
        named = names[:-1] if len(names) > 1 and names[-1] == h.detail else names
        shown = " ".join(w for ln in named for w in ln.split() if not MARK.fullmatch(w))
        if "…" in shown or shown.removesuffix(" ⚠") != h.what:
            assert _flat(notes[note_of]).startswith(_flat(h.what)), (names, h.what)
    flat = _flat(text)
    sentences = below_table(run, lines, errors)
    assert sentences and all(_flat(s) in flat for s in sentences)


@pytest.mark.parametrize("name", ["quick", "full"])
def test_show_prints_the_summary_first_with_headlines_numbers(name, tmp_path, capsys,
                                                              monkeypatch):
    run = stored(name)
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        st.save_run(run)
    for width in (120, 80):
        _width(monkeypatch, width)
        assert main(["show", run.run_id, "--store", str(db)]) == 0
        text = capsys.readouterr().out
        assert all(len(ln) <= width for ln in text.splitlines())
        assert text.lstrip().startswith("summary: the headline figures")
        assert text.index("summary:") < text.index(run.run_id) < text.index("results (")
        errors: list[str] = []
        lines = headlines(run, errors)
        _check(text, lines, run, errors)
        # the recorded runs' problems: a VM, busy, disturbed, unsteady, no DRAM peak
        flat = _flat(text)
        for said in ("Readiness: virtual machine", "Disturbed run:", "Not steady",
                     "No DRAM peak"):
            assert said in flat


def test_verdicts_rules_and_published_figures_are_numbered_notes():
    """A 2-socket EPYC 7601 run with --memory: verdicts ok, saturates, slower, as
    published, each row's note its rule and the published figure it was held against."""
    run = epyc_7601_run()
    errors: list[str] = []
    lines = headlines(run, errors)
    assert {"ok", "saturates", "slower", "as published"} <= {h.verdict for h in lines}
    for width in (120, 80):
        buf = io.StringIO()
        from numascope.report.headline_terminal import print_headline
        print_headline(run, Console(file=buf, width=width, highlight=False))
        text = buf.getvalue()
        assert all(len(ln) <= width for ln in text.splitlines())
        _check(text, lines, run, errors)
        assert "Published figures: " in _flat(text)     # the notes every match shares


@pytest.mark.parametrize("name", ["quick", "full"])
def test_at_120_columns_the_names_take_the_room(name):
    """The figure column takes what the numbers leave: at 120 columns no name of the
    recorded runs is cut or needs a second line for itself, and the lines use the width."""
    from numascope.report.headline_terminal import fit_label, layout
    run = stored(name)
    lines = headlines(run, [])
    w80, _ = layout(lines, 80)
    w120, _ = layout(lines, 120)
    assert w120 == w80 + 40
    for h in lines:
        names, rest = fit_label(h, w120)
        assert not rest and len(names) <= 2, (h.what, names)
    buf = io.StringIO()
    from numascope.report.headline_terminal import print_headline
    print_headline(run, Console(file=buf, width=120, highlight=False))
    assert max(len(ln) for ln in buf.getvalue().splitlines()) == 120


def test_run_prints_the_summary_after_its_results_and_json_stays_json(tmp_path, capsys,
                                                                     monkeypatch):
    _width(monkeypatch, 100)
    db = tmp_path / "runs.db"
    argv = ["run", "--smoke", "--stage", "bandwidth", "--no-report", "--store", str(db),
            "--all-results"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    with Store.open(db) as st:
        (run,) = st.load(["latest"])
    assert text.index("results (") < text.index("summary: the headline figures")
    from numascope.profile import SMOKE_NOTE
    assert _flat(SMOKE_NOTE) in _flat(text[text.index("results ("):])   # as the HTML says
    errors: list[str] = []
    _check(text[text.index("summary: the headline"):], headlines(run, errors), run, errors)
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)          # one JSON document, nothing else
    assert "summary" not in doc and doc["command"] == "run"
