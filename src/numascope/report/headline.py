"""The headline figures of a run: one line per figure the labs' studies lead with, each only
when the run measured it. Each family makes its own lines (families/<name>/headline.py,
found through the registry in the studies' order); what a line is lives in
numascope.results.headline. This module collects them and has the verdicts judge them
(numascope.report.verdicts). Rendering is elsewhere (report.summary for the HTML report,
report.headline_terminal for the terminal)."""

from __future__ import annotations

from numascope.results.headline import Headline
from numascope.results.run import RunRecord

__all__ = ["Headline", "headlines"]


def headlines(run: RunRecord, errors: list[str] | None = None) -> list[Headline]:
    """The run's headline figures in the studies' order, each with its verdict. A family
    whose results lack what its lines need (an older or foreign record) gives no line;
    why is appended to `errors` when given."""
    from numascope import families
    from numascope.report.verdicts import judge
    out: list[Headline] = []
    for mod in families.headline_modules():
        try:
            out += mod.lines(run)
        except (KeyError, TypeError, ValueError, ZeroDivisionError, StopIteration) as ex:
            if errors is not None:
                errors.append(f"{mod.__name__.split('.')[-2]}: {type(ex).__name__}: {ex}")
    judge(run, out)
    return out
