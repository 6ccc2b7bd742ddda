"""Every family command's --json document keeps its shape through refactors: the keys
(nested) of each document on small inputs equal those recorded before the families moved
into folders (tests/data/json_shapes.json, from numascope 7860ae5; tests/json_shapes.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import SHARED
from json_shapes import COMMANDS, run

BEFORE = json.loads((Path(__file__).parent / "data" / "json_shapes.json").read_text())


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_json_document_has_the_shape_it_had(name):
    if not (SHARED / "fixtures").is_dir():
        pytest.skip("../shared/fixtures not found")
    now = run(name, [sys.executable], SHARED)
    assert same(now, BEFORE[name]), (now, BEFORE[name])


def same(a, b) -> bool:
    """The same shape, where a null on either side (a figure this run had no value for,
    such as a crossover that did not happen) matches whatever the other side had."""
    if a == "null" or b == "null":
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b
