"""The HTML report's summary in the terminal (`numascope show`, `numascope run`): the run's
headline figures (numascope.report.headline, judged as the HTML summary judges them), one
row each, then the sentences the HTML summary has under its table (report.summary:
readiness, a disturbed run, unsteady or bimodal figures, a missing DRAM peak …).

It reads at 80 columns and uses up to WIDTH on a wider terminal: the numbers' columns are
as wide as their widest value, the figure's name takes the rest, wrapped at words on at
most LABEL_LINES lines (never a word broken). What does not fit there (a name's closing
parenthesis, the fact beside the value) goes to the row's numbered note under the table,
with the verdict's rule and the published figure it was held against (in a column they
took a dozen lines a row). The rule every unjudged figure shares ("no published rule") is
said once. Cells are rich Text, so nothing from a record is markup."""

from __future__ import annotations

import math
import re
import textwrap

from rich.console import Console
from rich.table import Table
from rich.text import Text

from numascope.console import show
from numascope.report.headline import Headline, headlines
from numascope.report.summary import below_table, common_notes
from numascope.results.run import RunRecord

WIDTH = 120
LABEL_LINES = 2
MIN_LABEL = 16              # the figure column's least width
NO_VERDICT = "–"


def interval(h: Headline) -> str:
    """low…high as the tables round them (no spaces: the pair never wraps apart)."""
    if math.isfinite(h.low) and math.isfinite(h.high):
        return f"{show(h.low)}…{show(h.high)}"
    return "–"


def percent(h: Headline) -> str:
    return "–" if h.peak_pct is None else f"{h.peak_pct:.1f} %"


def spread_kind(h: Headline) -> str:
    """What low…high is, short: "CI, 6 alloc." (a 95 % interval over separate
    allocations; "CI, 6 calls": over calls sharing one), "range" (of one allocation's
    repetitions), or the headline's own words."""
    m = re.fullmatch(r"95 % CI, (\S+) (alloc\.|calls)", h.spread)
    if m:
        return f"CI, {m.group(1)} {m.group(2)}"
    if h.spread == "range, 1 alloc.":
        return "range"
    return h.spread


def _lines(text: str, width: int) -> list[str]:
    """`text` wrapped at words (a word longer than the width stays whole)."""
    return textwrap.wrap(text, max(width, 1), break_long_words=False,
                         break_on_hyphens=False) or [""]


MARK_ROOM = 5               # " [nn]": the note's mark, on the name's last line


def fit_label(h: Headline, width: int, room: int | None = None) -> tuple[list[str], str]:
    """(the name's lines in the figure column, what its note opens with): the name and its
    warning mark on at most LABEL_LINES lines at `width`, the last line ending by `room`
    (the note's mark after it). A closing "(…)" that does not fit is left out, and past that
    the words that do not, the line ending in "…"; then the note opens with the whole
    name."""
    mark = " ⚠" if h.warnings else ""
    room = width if room is None else max(room, 1)
    def fits(text: str) -> list[str] | None:
        lines = _lines(text, width)
        if len(lines) > LABEL_LINES or len(lines[-1]) > room:   # the last line: by `room`
            lines = _lines(text, room)
        return lines if len(lines) <= LABEL_LINES else None

    name = h.what
    if fits(name + mark) is None and name.endswith(")") and " (" in name:
        name = name[:name.rindex(" (")]
    lines = fits(name + mark)
    if lines is None:
        words = (name + mark).split()
        kept: list[str] = []
        while words and fits(" ".join([*kept, words[0], "…"])) is not None:
            kept.append(words.pop(0))
        lines = fits(" ".join([*kept, "…"])) or ["…"]
    return lines, (h.what if name != h.what or lines[-1].endswith("…") else "")


def _noted(h: Headline, rest: str, inline: bool) -> bool:
    """Whether a row has a note: a name cut short, its fact beside the value out of the
    table, a verdict or a published figure."""
    return bool(rest or (h.detail and not inline) or h.verdict != NO_VERDICT or h.reference
                or h.reference_other)


def notes_of(lines: list[Headline], rests: list[str] | None = None,
             details: list[bool] | None = None) -> tuple[list[str], list[str]]:
    """(per line the mark of its note, "" for none; the notes in order): its whole name
    where the table shows only part of it (`rests`), its fact beside the value where the
    table has no room for it (`details`: shown in the table), a judged figure's verdict
    with its rule, and its
    published figure (less the notes every published figure shares, said once under the
    table); lines that would say the same share one."""
    common = common_notes(lines)
    marks: list[str] = []
    notes: list[str] = []
    for i, h in enumerate(lines):
        parts = []
        rest = rests[i] if rests else ""
        detail = h.detail if h.detail and not (details and details[i]) else ""
        if rest:
            parts.append(f"{rest}: {detail}." if detail else f"{rest}.")
        elif detail:
            parts.append(detail[0].upper() + detail[1:] + ".")
        if h.verdict != NO_VERDICT:
            parts.append(f"{h.verdict}: {h.rule}.")
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


def _widths(lines: list[Headline]) -> dict[str, int]:
    """Each numbers' column as wide as its widest value (and its head)."""
    kinds = [spread_kind(h) for h in lines]
    return {
        "median": max([len("median"), *(len(f"{show(h.value)} {h.unit}") for h in lines)]),
        "spread": max([len("spread"), *(len(interval(h)) for h in lines),
                       *(min(len(k), 14) for k in kinds)]),
        "n": max([1, *(len(str(h.n)) for h in lines)]),
        "% peak": max([len("% peak"), *(len(percent(h)) for h in lines)]),
        "verdict": max([len("verdict"), *(len(h.verdict) for h in lines)]),
    }


def layout(lines: list[Headline], width: int) -> tuple[int, dict[str, int]]:
    """(the figure column's width, the numbers' columns' widths), contents only, at `width`
    columns: the house table (report.terminal._table) puts an edge space at either side and
    two spaces between columns."""
    cols = _widths(lines)
    label = width - sum(cols.values()) - 2 * (len(cols) + 1)
    return max(label, MIN_LABEL), cols


def headline_table(lines: list[Headline], width: int = 80) -> tuple[Table, list[str]]:
    """One row per headline figure at `width` columns: what (and the mark of its note),
    median, spread (and what it is), n, % of peak, verdict; and the notes."""
    from numascope.report.terminal import _table
    label_w, cols = layout(lines, width)
    fitted, details = [], []
    for h in lines:
        f = fit_label(h, label_w)
        # the fact beside the value on a second line of its own, when there is one free
        inline = bool(h.detail) and len(f[0]) < LABEL_LINES \
            and len(_lines(h.detail, label_w)) == 1
        if _noted(h, f[1], inline):                 # room for the note's mark after it
            f = fit_label(h, label_w, label_w - MARK_ROOM)
            inline = inline and len(f[0]) < LABEL_LINES
        fitted.append(f)
        details.append(inline)
    marks, notes = notes_of(lines, [f[1] for f in fitted], details)
    t = _table("summary: the headline figures (the HTML report's first table)")
    t.add_column("figure", no_wrap=True, width=label_w)
    t.add_column("median", justify="right", no_wrap=True, width=cols["median"])
    t.add_column("spread", no_wrap=True, width=cols["spread"])
    t.add_column("n", justify="right", no_wrap=True, width=cols["n"])
    t.add_column("% peak", justify="right", no_wrap=True, width=cols["% peak"])
    t.add_column("verdict", no_wrap=True, width=cols["verdict"])
    for h, (names, _), mark, inline in zip(lines, fitted, marks, details, strict=True):
        if mark:       # the note's mark after the name (fit_label kept room for it)
            names = [*names[:-1], f"{names[-1]} {mark}"]
        what = Text("\n".join(names))
        if inline:
            what.append(f"\n{h.detail}", style="dim")
        spread = Text(interval(h))
        kind = spread_kind(h) if interval(h) != "–" else ""     # what no spread is: nothing
        if kind:
            spread.append("\n" + "\n".join(_lines(kind, cols["spread"])[:LABEL_LINES]),
                          style="dim")
        t.add_row(what, Text(f"{show(h.value)} {h.unit}"), spread, Text(str(h.n)),
                  Text(percent(h)), Text(h.verdict, style="bold"))
    return t, notes


def _wrapped(text: str, width: int, first: str = "") -> str:
    return "\n".join(textwrap.wrap(text, width, initial_indent=first,
                                   subsequent_indent=" " * len(first),
                                   break_on_hyphens=False, break_long_words=False)) or first


def print_headline(run: RunRecord, console: Console) -> None:
    """The summary of one run: its headline table (or that there is none), the notes of
    its verdicts, then the sentences the HTML summary has under its table."""
    width = min(console.width or 80, WIDTH)
    errors: list[str] = []
    lines = headlines(run, errors)
    notes: list[str] = []
    from numascope.profile import SMOKE_NOTE, readable
    if not readable(run.profile):        # as the HTML summary opens
        console.print(Text(_wrapped(SMOKE_NOTE, width), style="yellow"), width=width)
    if lines:
        table, notes = headline_table(lines, width)
        console.print(table, width=width)
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
