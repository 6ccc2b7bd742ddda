"""Plots, one module per benchmark family. Each module defines

    def figures(results: list[BenchResult]) -> list[tuple[str, matplotlib.figure.Figure]]

returning (title, figure) pairs for whichever of `results` it knows how to draw (its own
family), an empty list otherwise. Commands save them (`--plot FILE`); the HTML report
embeds them. Always use the Agg backend (`matplotlib.use("Agg")` before pyplot)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def save_figures(figs: list[tuple[str, Figure]], path: str | Path) -> list[str]:
    """Save the first figure to `path` (format from its extension, PNG when none), further
    ones beside it as NAME-2.EXT, NAME-3.EXT …; returns the paths written."""
    import matplotlib.pyplot as plt

    p = Path(path)
    written = []
    for i, (_, fig) in enumerate(figs):
        target = p if i == 0 else p.with_name(f"{p.stem}-{i + 1}{p.suffix or '.png'}")
        fig.savefig(target, dpi=110)
        plt.close(fig)
        written.append(str(target))
    return written
