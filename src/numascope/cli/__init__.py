"""The `numascope` command line. Each command is a module in this package with

    NAME = "topo"; HELP = "…"; ORDER = 10
    def register(parser: argparse.ArgumentParser) -> None   # add its options
    def main(args: argparse.Namespace) -> int               # thin: call the library, print

Commands are found by scanning this package, so adding one touches no other file.

A stop signal (Ctrl-C, SIGTERM) reaches a command as a KeyboardInterrupt (numascope.signals);
a command that measures prints what finished and returns signals.exit_code(e) (130, 143)."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

from numascope import __version__, signals
from numascope.errors import MeasurementError, Unavailable, UserError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints usage too)
        sys.stderr.write(f"numascope: error: {message}\n")
        raise SystemExit(2)


def _commands() -> list:
    mods = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "register") and hasattr(mod, "main"):
            mods.append(mod)
    return sorted(mods, key=lambda m: (getattr(m, "ORDER", 100), m.NAME))


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="numascope", description="Characterize NUMA and multi-chiplet servers.")
    p.add_argument("--version", action="version", version=f"numascope {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for mod in _commands():
        sp = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.register(sp)
        sp.set_defaults(_main=mod.main)
    return p


def main(argv: list[str] | None = None) -> int:
    with signals.handled():   # SIGINT and SIGTERM: stop between units of work
        try:
            return _main(argv)
        except KeyboardInterrupt as e:   # a command that did not report what finished
            sys.stderr.write(f"numascope: interrupted ({signals.name(signals.signum_of(e))})\n")
            return signals.exit_code(e)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_main", None):
        parser.print_help()
        return 2
    try:
        return int(args._main(args) or 0)
    except (UserError, MeasurementError, Unavailable) as e:
        sys.stderr.write(f"numascope: error: {e}\n")
        return e.exit_code
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug, not the user's fault: one line unless asked for more
        if os.environ.get("NUMASCOPE_DEBUG"):
            raise
        sys.stderr.write(
            f"numascope: internal error: {type(e).__name__}: {e} "
            "(set NUMASCOPE_DEBUG=1 for the traceback)\n")
        return 1
