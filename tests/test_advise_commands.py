"""Every numascope command line that `advise` can tell the user to type (its advice rules,
its predictions' "no data" notes, its readiness checks, its recipes) names a command and
flags the real parser knows, and one given whole parses: read from the modules' strings
(f-strings with each {value} a placeholder), so a suggestion no test triggers is checked too.
(`lat --kind loaded` was suggested while the flag is `--loaded`.)"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
from pathlib import Path

import pytest

from numascope.cli import build_parser

MODULES = ["numascope.advice", "numascope.advice.rules", "numascope.advice.configuration",
           "numascope.advice.kinds", "numascope.predict.model", "numascope.predict.plan",
           "numascope.predict.verify", "numascope.cli.advise", "numascope.predict.section",
           "numascope.advice.sections", "numascope.report.advise_terminal",
           "numascope.readiness", "numascope.recipes"]
HOLE = "\x00"          # where an f-string's {value} stands


def _texts(module: str) -> list[tuple[str, bool]]:
    """The module's string literals (implicit concatenation joined, as Python joins it) and
    f-strings with their values as HOLE: (text, whole), whole when it has no HOLE."""
    tree = ast.parse(Path(importlib.import_module(module).__file__).read_text())
    out = []
    parts = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
             for v in ast.walk(node) if v is not node}     # an f-string's pieces: not alone
    for node in ast.walk(tree):
        if id(node) in parts:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.value, True))
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else HOLE
                           for v in node.values)
            out.append((text, HOLE not in text))
    return out


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


PARSER = build_parser()
COMMANDS = _subparsers(PARSER)


def _suggested() -> list[tuple[str, list[str], bool]]:
    """(module, argv, whole) for each `numascope COMMAND --flag …` in the modules' strings:
    the command, then flags and their values, up to the first word that is neither."""
    found = []
    for mod in MODULES:
        for text, whole in _texts(mod):
            for m in re.finditer(r"numascope ([a-z][a-z-]*)((?: +[^ ]+)*)", text):
                cmd = m.group(1)
                if cmd not in COMMANDS:
                    continue
                sub = COMMANDS[cmd]
                flags = {s: a for a in sub._actions for s in a.option_strings}
                argv, want_value = [cmd], False
                for word in m.group(2).split():
                    word = word.rstrip(").;,`'\"")
                    if word.startswith("--"):
                        argv.append(word.split("=", 1)[0] if "=" in word else word)
                        a = flags.get(argv[-1])
                        want_value = a is not None and a.nargs != 0
                        if "=" in word:
                            argv[-1], want_value = word, False
                    elif want_value and word:
                        argv.append(word)
                        want_value = False
                    else:
                        break
                if len(argv) > 1:
                    found.append((mod, argv, whole and HOLE not in " ".join(argv)))
    return found


SUGGESTED = _suggested()


def test_advise_suggests_commands_at_all():
    """The scan finds what it is for (the suggestions below are real ones)."""
    lines = {" ".join(a) for _, a, _ in SUGGESTED}
    assert "run --stage bandwidth --stage matrix" in lines
    assert any(a[:2] == ["lat", "--loaded"] for _, a, _ in SUGGESTED), lines
    assert len(SUGGESTED) >= 5, lines


@pytest.mark.parametrize(("module", "argv", "whole"), SUGGESTED,
                         ids=[" ".join(a).replace(HOLE, "X")[:60] for _, a, _ in SUGGESTED])
def test_every_suggested_command_line_parses(module, argv, whole, capsys):
    sub = COMMANDS[argv[0]]
    known = {s for a in sub._actions for s in a.option_strings}
    flags = [w.split("=", 1)[0] for w in argv[1:] if w.startswith("--")]
    unknown = [f for f in flags if f not in known]
    assert not unknown, f"{module} suggests `numascope {' '.join(argv)}`: no {unknown}"
    if whole:          # no placeholder in it: the real parser takes it as it stands
        try:
            PARSER.parse_args(argv)
        except SystemExit as e:
            pytest.fail(f"{module}: `numascope {' '.join(argv)}` does not parse "
                        f"({e.code}): {capsys.readouterr().err.strip()}")
