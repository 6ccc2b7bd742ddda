"""Each family's option table is declared once (families/<name>/options.py); its docs page
carries the table generated from it, and --help and the checks come from the same rows."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from numascope.command.flags import add_options
from numascope.errors import UserError
from numascope.options import PLACEMENT, Option, Table, check, markdown, render_docs

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_every_generated_option_table_is_current():
    stale = [p.name for p in sorted(DOCS.glob("*.md")) if render_docs(p.read_text()) !=
             p.read_text()]
    assert not stale, f"run scripts/option-docs.py: stale option tables in {stale}"


def test_every_family_with_a_table_has_it_on_a_doc_page():
    from importlib.util import find_spec

    from numascope.families import BUILTIN
    pages = "".join(p.read_text() for p in DOCS.glob("*.md"))
    for folder in BUILTIN:
        mod = f"numascope.families.{folder}.options"
        if find_spec(mod) is not None:
            assert f"<!-- options: {mod} -->" in pages, f"{mod}: no doc page carries it"


def test_a_table_gives_flags_checks_and_docs_from_one_row():
    t = Table("toy", (Option("--stride", "bytes apart", kind="int", default=256, low=64,
                             high=4096, unit="B"),
                      Option("--size", "working set", kind="size", default=4096),
                      Option("--mode", "how", kind="choice", choices=("a", "b"), default="a"),
                      *PLACEMENT.options[:1]))
    p = argparse.ArgumentParser()
    add_options(p, t.options)
    args = p.parse_args(["--stride", "128", "--size", "1M"])
    assert check(t, vars(args)) == {"stride": 128, "size": 1 << 20, "mode": "a", "cpus": None}
    with pytest.raises(UserError, match="--stride must be at least 64 B"):
        check(t, vars(p.parse_args(["--stride", "8"])))
    with pytest.raises(UserError, match="--cpus is empty"):
        check(t, vars(p.parse_args(["--cpus", " "])))
    with pytest.raises(UserError, match="bad size"):
        check(t, vars(p.parse_args(["--size", "lots"])))
    doc = markdown(t)
    assert "| `--stride` | 256 | B | 64 … 4096 |" in doc
    assert "`--mode` | a |  | a \\| b |" in doc


def test_an_option_outside_its_mode_is_refused_naming_the_mode():
    t = Table("toy", (Option("--sweep", "sweep", kind="switch"),
                      Option("--min", "sweep start", kind="int", default=4, only_with="sweep"),
                      Option("--rw", "mode", kind="choice", choices=("read", "mix"),
                             default="read"),
                      Option("--mix", "read share", kind="int", only_with="rw=mix")))
    p = argparse.ArgumentParser()
    add_options(p, t.options)
    assert check(t, vars(p.parse_args(["--sweep", "--min", "8"])))["min"] == 8
    assert check(t, vars(p.parse_args([])))["min"] == 4          # its default is no use of it
    with pytest.raises(UserError, match="--min applies only with --sweep"):
        check(t, vars(p.parse_args(["--min", "8"])))
    with pytest.raises(UserError, match="--mix applies only with --rw mix"):
        check(t, vars(p.parse_args(["--mix", "50"])))
    assert check(t, vars(p.parse_args(["--rw", "mix", "--mix", "50"])))["mix"] == 50


def test_a_mode_may_be_any_of_several_or_the_absence_of_one():
    t = Table("toy", (Option("--a", "a", kind="switch"), Option("--b", "b", kind="switch"),
                      Option("--dry", "dry", kind="switch"),
                      Option("--n", "n", kind="int", only_with="a|b"),
                      Option("--reps", "reps", kind="int", only_with="!dry")))
    p = argparse.ArgumentParser()
    add_options(p, t.options)
    assert check(t, vars(p.parse_args(["--b", "--n", "3"])))["n"] == 3
    with pytest.raises(UserError, match="--n applies only with --a or --b"):
        check(t, vars(p.parse_args(["--n", "3"])))
    with pytest.raises(UserError, match="--reps does not apply with --dry"):
        check(t, vars(p.parse_args(["--dry", "--reps", "2"])))
    assert "only with --a or --b" in markdown(t)
