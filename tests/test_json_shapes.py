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
    assert run(name, [sys.executable], SHARED) == BEFORE[name]
