"""One rule for values, on every command: each option that takes a value, given an empty
string, is exit 2 with one line before anything is measured — found by walking the parser,
so a new option is covered the day it is added."""

from __future__ import annotations

import argparse

import pytest

from numascope import benchmark
from numascope.cli import build_parser, main
from numascope.command import runner


def _leaves(p: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, p
        return
    seen = set()
    for name, sp in subs[0].choices.items():
        if id(sp) not in seen:             # an alias is the same parser
            seen.add(id(sp))
            yield from _leaves(sp, (*path, name))


def _cases():
    for path, p in _leaves(build_parser()):
        positionals = [a for a in p._actions if not a.option_strings and a.nargs != "?"
                       and a.nargs != "*" and not isinstance(a, argparse._SubParsersAction)]
        # a value for each required positional: a run selection or a folder
        pos = ["latest"] * len(positionals)
        for a in p._actions:
            if a.option_strings and a.nargs != 0 and a.dest not in ("help", "version"):
                flag = next((s for s in a.option_strings if s.startswith("--")),
                            a.option_strings[0])
                yield pytest.param([*path, *pos, flag, ""], id=" ".join([*path, flag]))


@pytest.fixture
def nothing_measured(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("measured despite an empty value")
    monkeypatch.setattr(benchmark, "run_cases", refuse)
    monkeypatch.setattr(runner, "run_cases", refuse)


@pytest.mark.parametrize("argv", list(_cases()))
def test_an_empty_value_is_one_line_and_exit_2(argv, nothing_measured, capsys, tmp_path,
                                                monkeypatch):
    monkeypatch.chdir(tmp_path)                  # nothing may be written, but if it were …
    monkeypatch.setenv("NUMASCOPE_STORE", str(tmp_path / "runs.db"))
    assert main(argv) == 2, argv
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("numascope: error:"), err
    assert list(tmp_path.iterdir()) == [], "an empty value wrote something"
