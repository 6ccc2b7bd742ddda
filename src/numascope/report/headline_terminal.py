"""The HTML report's summary in the terminal (`numascope show`, `numascope run`): the run's
headline figures (numascope.report.headline, judged as the HTML summary judges them), one
row each, then the sentences the HTML summary has under its table (report.summary:
readiness, a disturbed run, unsteady or bimodal figures, a missing DRAM peak …).

At most WIDTH columns (fewer on a narrower terminal). The table holds each figure's verdict
word; its rule and published figure follow the table as a numbered note, wrapped (in a
column of the table they took a dozen lines a row). The rule every unjudged figure shares
("no published rule") is said once. Cells are rich Text, so nothing from a record is
markup."""

from __future__ import annotations

import math
import textwrap

from rich.console import Console
from rich.table import Table
from rich.text import Text

from numascope.console import show
from numascope.report.headline import Headline, headlines
from numascope.report.summary import below_table, common_notes
from numascope.results.run import RunRecord

WIDTH = 100
NO_VERDICT = "–"


def interval(h: Headline) -> str:
    """low…high as the tables round them (no spaces: the pair never wraps apart)."""
    if math.isfinite(h.low) and math.isfinite(h.high):
        return f"{show(h.low)}…{show(h.high)}"
    return "–"


def percent(h: Headline) -> str:
    return "–" if h.peak_pct is None else f"{h.peak_pct:.1f} %"


def notes_of(lines: list[Headline]) -> tuple[list[str], list[str]]:
    """(per line the mark of its note, "" for none; the notes in order): a judged figure's
    verdict with its rule, and its published figure (less the notes every published
    figure shares, said once under the table); lines that would say the same share one."""
    common = common_notes(lines)
    marks: list[str] = []
    notes: list[str] = []
    for h in lines:
        parts = [f"{h.verdict}: {h.rule}."] if h.verdict != NO_VERDICT else []
        if h.reference:
            own = [n for n in h.reference_notes if n not in common]
            parts.append(f"Published figure: {'; '.join([h.reference, *own])}.")
        elif h.reference_other:
            parts.append(f"Published figure: {h.reference_other}.")
        text = " ".join(parts)
        if text and text not in notes:
            notes.append(text)
        marks.append(f"[{notes.index(text) + 1}]" if text else "")
    return marks, notes


def headline_table(lines: list[Headline], marks: list[str]) -> Table:
    """One row per headline figure: what (and a fact beside it), median, spread (and what
    it is), n, % of peak, verdict with the mark of its note."""
    from numascope.report.terminal import _table
    t = _table("summary: the headline figures (the HTML report's first table)")
    t.add_column("figure", overflow="fold", min_width=12)
    t.add_column("median", justify="right", no_wrap=True)
    t.add_column("spread", overflow="fold", max_width=18)   # the room goes to the names
    t.add_column("n", justify="right", no_wrap=True)
    t.add_column("% peak", justify="right", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    for h, mark in zip(lines, marks, strict=True):
        what = Text(h.what + (" ⚠" if h.warnings else ""))
        if h.detail:
            what.append(f"\n{h.detail}", style="dim")
        spread = Text(interval(h))
        if h.spread:
            spread.append(f"\n{h.spread}", style="dim")
        verdict = Text(h.verdict, style="bold")
        if mark:
            verdict.append(f" {mark}")
        t.add_row(what, Text(f"{show(h.value)} {h.unit}"), spread, Text(str(h.n)),
                  Text(percent(h)), verdict)
    return t


def _wrapped(text: str, width: int, first: str = "") -> str:
    return "\n".join(textwrap.wrap(text, width, initial_indent=first,
                                   subsequent_indent=" " * len(first),
                                   break_on_hyphens=False)) or first


def print_headline(run: RunRecord, console: Console) -> None:
    """The summary of one run: its headline table (or that there is none), the notes of
    its verdicts, then the sentences the HTML summary has under its table."""
    width = min(console.width or 80, WIDTH)
    errors: list[str] = []
    lines = headlines(run, errors)
    marks, notes = notes_of(lines)
    from numascope.profile import SMOKE_NOTE, readable
    if not readable(run.profile):        # as the HTML summary opens
        console.print(Text(_wrapped(SMOKE_NOTE, width), style="yellow"), width=width)
    if lines:
        console.print(headline_table(lines, marks), width=width)
    else:
        console.print("summary: no headline figure: this run measured none of them",
                      markup=False, width=width)
    for k, n in enumerate(notes, 1):
        console.print(Text(_wrapped(n, width, f"[{k}] ")), width=width)
    dim = [f"{NO_VERDICT}: {r}." for r in sorted({h.rule for h in lines
                                                   if h.verdict == NO_VERDICT})]
    if lines and not any(h.reference or h.reference_other for h in lines):
        dim.append("Published figures: none matches this host.")
    for n in dim:
        console.print(Text(_wrapped(n, width), style="dim"), width=width)
    for p in below_table(run, lines, errors):
        console.print(Text(_wrapped(p, width), style="yellow"), width=width)
