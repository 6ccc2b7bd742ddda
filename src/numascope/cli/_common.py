"""Options shared by several commands."""

from __future__ import annotations

import argparse


def add_sysfs_root(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sysfs-root", default="/", metavar="DIR",
                   help="read the machine from this root (a directory or a .tar.bz2 dump); "
                        "default: this machine")


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")


def report_interrupted(e: BaseException, finished: int, what: str = "case") -> int:
    """Say that a stop signal ended the command and how much finished (printed above, or
    nothing); the exit status: 128 + the signal (130 Ctrl-C, 143 SIGTERM)."""
    from numascope import signals
    from numascope.console import err
    done = f"{finished} {what}{'s' if finished != 1 else ''} finished (shown above)" \
        if finished else "nothing finished"
    err.print(f"interrupted ({signals.name(signals.signum_of(e))}): {done}", markup=False)
    return signals.exit_code(e)
