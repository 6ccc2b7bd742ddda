"""The plotting kit, below the families: what every figure keeps (marks: medians, their
intervals, captions, values written on the plot) and `save_figures`, the one way a
command's `--plot FILE` writes them. A family's `*figures.py` defines

    def figures(results: list[BenchResult]) -> list[tuple[str, matplotlib.figure.Figure]]

returning (title, figure) pairs for whichever of `results` it knows how to draw (its own
family), an empty list otherwise. Commands save them (`--plot FILE`); the HTML report
embeds them (report.figures.render.embed), each with its caption (marks.captioned /
marks.caption_of: the figure's label). Figures draw the tables' medians and write them
(marks). Always use the Agg backend (`matplotlib.use("Agg")` before pyplot).
docs/architecture.md, "Figures"."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _slug(title: str) -> str:
    """A figure's title as a file name part: "Latency distribution" -> latency-distribution."""
    import re
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "figure"


def save_figures(figs: list[tuple[str, Figure]], path: str | Path) -> list[str]:
    """Save the first figure (the one --plot's help names) to `path` (format from its
    extension, PNG when none), further ones beside it named for what they show:
    NAME-latency-distribution.EXT …; returns the paths written.

    Each file is written whole or not at all (a temporary file beside it, then renamed, as
    numascope.atomic does): a disk that fills, or a folder made read-only since the path was
    checked, raises the OSError with no partial file left where the figure was to be (the
    figures saved before it stay; an old file of that name is left as it was)."""
    import matplotlib.pyplot as plt

    p = Path(path)
    written: list[str] = []
    try:
        for i, (title, fig) in enumerate(figs):
            target = p if i == 0 else p.with_name(f"{p.stem}-{_slug(title)}{p.suffix or '.png'}")
            n = 2
            while str(target) in written:        # two figures of one title
                target = p.with_name(f"{p.stem}-{_slug(title)}-{n}{p.suffix or '.png'}")
                n += 1
            _save_atomic(fig, target)
            plt.close(fig)
            written.append(str(target))
    finally:
        for _title, fig in figs:                 # the ones not reached after a failure
            plt.close(fig)
    return written


def _save_atomic(fig: Figure, target: Path) -> None:
    """`fig` saved to `target` through a temporary file beside it (numascope.atomic)."""
    from numascope.atomic import replace_atomic
    fmt = (target.suffix[1:].lower() or "png")
    replace_atomic(target, lambda f: fig.savefig(f, dpi=110, format=fmt))
