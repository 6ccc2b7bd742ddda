"""What every command writes: output paths checked before anything is measured, one JSON
envelope (docs/json-output.md), one error entry, one line when a stop signal ends a sweep."""

from __future__ import annotations

from typing import Any

from numascope.paths import check_output, check_workdir  # noqa: F401 - the kit's, re-exported

ENVELOPE_VERSION = 1     # the shape of --json output below (docs/json-output.md)


# -- the JSON envelope ----------------------------------------------------------------------

def envelope(command: str, results: list[Any] | None = None,
             errors: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """Every command's --json document: what ran, its results, what went wrong, then the
    command's own extra fields (units, summaries …)."""
    return {"schema_version": ENVELOPE_VERSION, "command": command,
            "results": list(results or []), "errors": list(errors or []), **extra}


def error_entry(e: BaseException, kind: str | None = None) -> dict[str, Any]:
    """One entry of an envelope's errors: kind (bad-input, validation, unavailable,
    interrupted, internal), the message and the exit code it gave. The message is whole
    (never cut at a newline) and one line: control characters escaped (escape_text), the
    same line standard error shows."""
    from numascope import signals
    from numascope.errors import LaunchError, MeasurementError, Unavailable, UserError, escape_text
    if kind is None:
        kind = ("bad-input" if isinstance(e, UserError) else
                "launch" if isinstance(e, LaunchError) else
                "validation" if isinstance(e, MeasurementError) else
                "unavailable" if isinstance(e, Unavailable) else
                "interrupted" if isinstance(e, KeyboardInterrupt) else "internal")
    from numascope.errors import CRASH_EXIT
    code = (signals.exit_code(e) if isinstance(e, KeyboardInterrupt)
            else getattr(e, "exit_code", CRASH_EXIT))
    msg = (f"interrupted ({signals.name(signals.signum_of(e))})"
           if isinstance(e, KeyboardInterrupt) else escape_text(str(e) or type(e).__name__))
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
