"""What every command writes: output paths checked before anything is measured, one JSON
envelope (docs/json-output.md), one error entry, one line when a stop signal ends a sweep."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

ENVELOPE_VERSION = 1     # the shape of --json output below (docs/json-output.md)


# -- output paths, checked before anything is measured --------------------------------------

def check_output(path: str | None, flag: str, suffixes: tuple[str, ...] = ()) -> Path | None:
    """`path` if a file can be written there: the suffix is one of `suffixes`, the folder
    exists and is writable, and the path is not a folder. UserError (exit 2) otherwise, so a
    bad --plot/--report/-o never costs a measurement. "-" (standard output) passes."""
    from numascope.errors import UserError
    if path is None or path == "-":
        return None if path is None else Path("-")
    p = Path(path)
    if not str(path).strip():
        raise UserError(f"{flag} is empty: give a file name")
    if p.is_dir():
        raise UserError(f"{flag} {path} is a folder: give a file name")
    if suffixes and p.suffix.lower() not in suffixes:
        raise UserError(f"{flag} {path}: the file must end in {' or '.join(suffixes)}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"{flag} {path}: folder {parent} does not exist")
    if p.exists() and not os.access(p, os.W_OK) or not os.access(parent, os.W_OK | os.X_OK):
        raise UserError(f"{flag} {path}: cannot write there (permission denied)")
    return p


# -- the JSON envelope ----------------------------------------------------------------------

def envelope(command: str, results: list[Any] | None = None,
             errors: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """Every command's --json document: what ran, its results, what went wrong, then the
    command's own extra fields (units, summaries …)."""
    return {"schema_version": ENVELOPE_VERSION, "command": command,
            "results": list(results or []), "errors": list(errors or []), **extra}


def error_entry(e: BaseException, kind: str | None = None) -> dict[str, Any]:
    """One entry of an envelope's errors: kind (bad-input, validation, unavailable,
    interrupted, internal), the one-line message and the exit code it gave."""
    from numascope import signals
    from numascope.errors import MeasurementError, Unavailable, UserError
    if kind is None:
        kind = ("bad-input" if isinstance(e, UserError) else
                "validation" if isinstance(e, MeasurementError) else
                "unavailable" if isinstance(e, Unavailable) else
                "interrupted" if isinstance(e, KeyboardInterrupt) else "internal")
    code = (signals.exit_code(e) if isinstance(e, KeyboardInterrupt)
            else getattr(e, "exit_code", 1))
    msg = (f"interrupted ({signals.name(signals.signum_of(e))})"
           if isinstance(e, KeyboardInterrupt) else (str(e).splitlines() or [""])[0])
    return {"kind": kind, "message": msg, "exit_code": code}


def emit(command: str, results: list[Any] | None = None,
         errors: list[dict[str, Any]] | None = None, **extra: Any) -> None:
    from numascope.console import print_json
    print_json(envelope(command, results, errors, **extra))


def report_interrupted(e: BaseException, finished: int, what: str = "case") -> int:
    """Say that a stop signal ended the command and how much finished (printed above, or
    nothing); the exit status: 128 + the signal (130 Ctrl-C, 143 SIGTERM)."""
    from numascope import signals
    from numascope.console import err
    done = f"{finished} {what}{'s' if finished != 1 else ''} finished (shown above)" \
        if finished else "nothing finished"
    err.print(f"interrupted ({signals.name(signals.signum_of(e))}): {done}", markup=False)
    return signals.exit_code(e)
