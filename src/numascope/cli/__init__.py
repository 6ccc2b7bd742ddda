"""The `numascope` command line. Each command is a module in this package with

    NAME = "topo"; HELP = "…"; ORDER = 10
    def register(parser: argparse.ArgumentParser) -> None   # add its options
    def main(args: argparse.Namespace) -> int               # thin: call the library, print

Commands are found by scanning this package and the families' folders (each family's
command.py), so adding one touches no other file.

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

_json_command: str | None = None   # set when --json was asked for: errors are JSON too


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: object, **kw: object) -> None:
        # no prefixes of long options: `--thread` for `--threads` would also make a typo of a
        # future option silently mean an existing one
        kw.setdefault("allow_abbrev", False)
        super().__init__(*args, **kw)  # type: ignore[arg-type]

    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints usage too)
        _fail(message, "bad-input", 2)
        raise SystemExit(2)


def _fail(message: str, kind: str, code: int) -> None:
    """The one-line error on standard error and, with --json, the envelope on standard
    output carrying it (so a script reading JSON is never handed nothing).

    The message is whole, never cut, and one line: control characters (an ESC, a newline a
    user put in a file name) are shown escaped (\\x1b, \\n) by numascope.errors.escape_text.
    The JSON envelope's message is that same line, character for character, so a script
    sees what a person sees (JSON would escape the characters anyway)."""
    from numascope.errors import escape_text
    message = escape_text(message)
    sys.stderr.write(f"numascope: error: {message}\n")
    if _json_command is not None:
        from numascope.command.output import emit
        emit(_json_command, [], [{"kind": kind, "message": message, "exit_code": code}])


def _commands() -> list:
    """This package's commands (topo, run, report …) and each family's (bw, lat …)."""
    from numascope.families import command_modules
    mods = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "register") and hasattr(mod, "main"):
            mods.append(mod)
    return sorted(mods + command_modules(), key=lambda m: (getattr(m, "ORDER", 100), m.NAME))


def _family_flags(mod, p: argparse.ArgumentParser) -> None:
    """A family command's flags: the TABLE of options.py beside its command.py, and what its
    FLAGS ask of the kit (plot=, sysfs_root=)."""
    from numascope.command.flags import add_family
    table = importlib.import_module(mod.__name__.rsplit(".", 1)[0] + ".options").TABLE
    add_family(p, table, **getattr(mod, "FLAGS", {}))


def _family_alias(mod) -> list[str]:
    """A family's command answers to the family's one name too (`numascope latency` is
    `numascope lat`, `storage` is `io`, `interconnect` is `net`, `compute` is `peak`)."""
    parts = mod.__name__.split(".")
    folder = parts[-2] if len(parts) > 2 and parts[-3] == "families" else None
    return [folder] if folder and folder != mod.NAME else []


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser; with `only` (the command word typed), the options of that
    command alone: the others are listed (top-level help and an unknown command's error read
    the same) but not built, which cost ~0.3 s of each start (fleet's and run's imports)."""
    p = _Parser(prog="numascope", description="Characterize NUMA and multi-chiplet servers.")
    p.add_argument("--version", action="version", version=f"numascope {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for mod in _commands():
        aliases = _family_alias(mod)
        sp = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP, aliases=aliases)
        if only is not None and only not in (mod.NAME, *aliases):
            continue
        if hasattr(mod, "register"):
            mod.register(sp)
        else:                 # a family's command: its flags are its option table's
            _family_flags(mod, sp)
        sp.set_defaults(_main=mod.main)
    return p


def main(argv: list[str] | None = None) -> int:
    with signals.handled():   # SIGINT and SIGTERM: stop between units of work
        try:
            return _main(argv)
        except KeyboardInterrupt as e:   # a command that did not report what finished
            sys.stderr.write(f"numascope: interrupted ({signals.name(signals.signum_of(e))})\n")
            return signals.exit_code(e)


def _canonical(word: str) -> str:
    """The command's own name for a family's name typed in its place (latency -> lat)."""
    from numascope.families import BUILTIN, command_modules
    if word in BUILTIN:
        for mod in command_modules():
            if mod.__name__.split(".")[-2] == word:
                return mod.NAME
    return word


def _value_flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """dest -> how the user gives it (its long flag, or its name for a positional), for every
    option of every command and subcommand that takes a value."""
    out: dict[str, str] = {}
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sp in a.choices.values():
                out.update(_value_flags(sp))
        elif a.option_strings and a.nargs != 0 and a.dest not in (argparse.SUPPRESS, "help"):
            longs = [s for s in a.option_strings if s.startswith("--")]
            out.setdefault(a.dest, (longs or a.option_strings)[0])
    return out


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace
                    ) -> argparse.ArgumentParser | None:
    """The subparser of the command given (its `_main`): options of other commands may share
    a dest with it (`references --run` and `show`'s positional `run`)."""
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sp in a.choices.values():
                if sp._defaults.get("_main") is args._main:
                    return sp
    return None


def _refuse_empty(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """One rule for every command: an option given an empty (or blank) value is an error,
    never "not given" (`--store ''` does not mean the default store). A family's table
    options say it in their own words when checked (numascope.options), positionals in
    their command's."""
    flags = _value_flags(_command_parser(parser, args) or parser)
    mod = args._main.__module__
    if ".families." in mod:
        table = importlib.import_module(mod.rsplit(".", 1)[0] + ".options").TABLE
        flags = {d: f for d, f in flags.items() if d not in {o.name for o in table}}
    for dest, value in vars(args).items():
        values = value if isinstance(value, list) else [value]
        if dest in flags and any(isinstance(v, str) and not v.strip() for v in values):
            raise UserError(f"{flags[dest]} is empty: give a value, or leave {flags[dest]} out")


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """The command line, run selections (RUN …) taken after options too: `fleet baseline
    save gold --store f.db host=a host=b` (argparse fills a RUN… list before the options and
    calls the words after them unrecognized; its parse_intermixed_args refuses
    subcommands). Any other word left over is the usual one-line error."""
    args, extra = parser.parse_known_args(argv)
    if extra and isinstance(getattr(args, "runs", None), list) and \
            not any(w.startswith("-") for w in extra) and "--" not in argv:
        given = [w for w in argv if w in args.runs]
        args.runs = (given if given else []) + extra
        return args
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _main(argv: list[str] | None) -> int:
    global _json_command
    argv = sys.argv[1:] if argv is None else list(argv)
    word = next((a for a in argv if not a.startswith("-")), "")   # the command typed
    _json_command = _canonical(word) if "--json" in argv else None
    parser = build_parser(only=word)
    try:
        args = _parse(parser, argv)
    except SystemExit as e:   # --help, --version (0) or a bad flag (2, said in one line)
        return int(e.code or 0)
    if not getattr(args, "_main", None):
        parser.print_help()
        return 2
    try:
        _refuse_empty(parser, args)
        return int(args._main(args) or 0)
    except (UserError, MeasurementError, Unavailable) as e:
        from numascope.command.output import error_entry
        entry = error_entry(e)
        _fail(entry["message"], entry["kind"], e.exit_code)
        return e.exit_code
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug, not the user's fault: one line unless asked for more;
        # exit 70 (EX_SOFTWARE), never 1: a health check reads 1 as "out of the baseline"
        if os.environ.get("NUMASCOPE_DEBUG"):
            raise
        from numascope.errors import escape_text
        what = escape_text(f"{type(e).__name__}: {e}")
        sys.stderr.write(f"numascope: internal error: {what} "
                         "(set NUMASCOPE_DEBUG=1 for the traceback)\n")
        from numascope.errors import CRASH_EXIT
        if _json_command is not None:
            from numascope.command.output import emit
            emit(_json_command, [], [{"kind": "internal", "exit_code": CRASH_EXIT,
                                      "message": what}])
        return CRASH_EXIT
