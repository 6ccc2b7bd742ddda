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

# a row's first line: ... median unit, low…high or –, n, % of peak or –, verdict [note]
ROW = re.compile(r"(?P<med>-?[\d,]+(?:\.\d+)?(?:e[-+]?\d+)?) (?P<unit>\S+) {2,}"
                 r"(?P<spread>\S+) {2,}(?P<n>\d+) {2,}(?P<pct>[\d.]+ %|–) {2,}"
                 r"(?P<verdict>\S.*?)(?: \[(?P<note>\d+)\])?\s*$")


def _width(monkeypatch, n: int) -> None:
    monkeypatch.setenv("COLUMNS", str(n))
    monkeypatch.setattr(console.out, "_width", n, raising=False)


def _rows(text: str) -> list[re.Match]:
    """The table's rows: from its rule to the first empty line after it."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip().startswith("────"))
    body = []
    for ln in lines[start + 1:]:
        if not ln.strip():
            break
        body.append(ln)
    return [m for m in map(ROW.search, body) if m]


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
    for h, m in zip(lines, rows, strict=True):
        assert (m["med"], m["unit"]) == (show(h.value), h.unit), h.what
        assert float(m["med"].replace(",", "")) == pytest.approx(h.value, rel=6e-4, abs=0.5)
        assert m["spread"] == (f"{show(h.low)}…{show(h.high)}" if h.low == h.low else "–")
        assert int(m["n"]) == h.n
        assert m["pct"] == ("–" if h.peak_pct is None else f"{h.peak_pct:.1f} %")
        assert m["verdict"] == h.verdict
        if h.verdict == "–":
            assert "–: no published rule for this figure." in text
            # a published figure measured otherwise is said in the line's note
            assert (m["note"] is None) == (not h.reference_other)
            assert not h.reference_other or _flat(h.reference_other) in _flat(
                notes[m["note"]])
        else:
            note = _flat(notes[m["note"]])
            assert note.startswith(f"{h.verdict}: {_flat(h.rule)}"), note
            assert not h.reference or _flat(h.reference) in note
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
    for width in (100, 80):
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
    for width in (100, 80):
        buf = io.StringIO()
        from numascope.report.headline_terminal import print_headline
        print_headline(run, Console(file=buf, width=width, highlight=False))
        text = buf.getvalue()
        assert all(len(ln) <= width for ln in text.splitlines())
        _check(text, lines, run, errors)
        assert "Published figures: " in _flat(text)     # the notes every match shares


def test_run_prints_the_summary_after_its_results_and_json_stays_json(tmp_path, capsys,
                                                                     monkeypatch):
    _width(monkeypatch, 100)
    db = tmp_path / "runs.db"
    argv = ["run", "--smoke", "--stage", "bandwidth", "--no-report", "--store", str(db)]
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
