"""Terminal and JSON output shared by every command, and the words values are shown in:
one spelling of an unknown value, yes/no for booleans, plurals that agree."""

from __future__ import annotations

import math
import sys
from typing import Any

from rich.console import Console

from numascope.results.plain import to_plain

__all__ = ["UNKNOWN", "err", "out", "plural", "print_json", "show", "to_plain", "warn"]

# A rank under a parallel launcher writes to the launcher's pseudo-terminal (Open MPI's
# I/O forwarding uses one), not to the user's: whether mpirun's or srun's own output is a
# terminal or a file is unknown here, so such a rank writes plain text (no colour, no
# progress bars), as a pipe gets; FORCE_COLOR still forces colour.
LAUNCHER_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_PROCID",
                 "MV2_COMM_WORLD_SIZE")


def _plain_under_launcher() -> dict[str, Any]:
    import os
    if os.environ.get("FORCE_COLOR") or not any(os.environ.get(v) for v in LAUNCHER_VARS):
        return {}
    return {"force_terminal": False, "no_color": True}


out = Console(highlight=False, **_plain_under_launcher())
err = Console(stderr=True, highlight=False, **_plain_under_launcher())

UNKNOWN = "unknown"   # how every table spells a value that was not recorded or not read


def show(v: Any, digits: int = 4) -> str:
    """A value as a table shows it: None → "unknown", booleans → yes/no, floats to
    `digits` significant digits, NaN/inf (nothing to compute) → "–"."""
    if v is None:
        return UNKNOWN
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "–"
        if 10 ** digits <= abs(v) < 1e12:   # 41,160 IO/s, not 4.116e+04
            return f"{v:,.0f}"
        return f"{v:.{digits}g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(show(x, digits) for x in v)
    return str(v)


def plural(n: int, word: str, words: str | None = None) -> str:
    """"1 run", "2 runs", "0 runs" (`words` when the plural is not word + s)."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def print_json(obj: Any) -> None:
    # json.dumps(..., indent=2)'s text, written faster (numascope.jsontext)
    from numascope.jsontext import dumps
    sys.stdout.write(dumps(to_plain(obj)) + "\n")


def warn(msg: str) -> None:
    """A warning on standard error, one line: `msg` is printed as it is (no markup), its
    control characters shown escaped (numascope.errors.escape_text), as an error's are."""
    from rich.markup import escape

    from numascope.errors import escape_text
    err.print(f"[yellow]warning:[/yellow] {escape(escape_text(msg))}", markup=True,
              highlight=False)
