"""Every family command's --json document keeps its shape through refactors: the keys
(nested) of each document on small inputs equal those recorded before the families moved
into folders (tests/data/json_shapes.json, from numascope 7860ae5; tests/json_shapes.py)."""

from __future__ import annotations

import copy
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
    before = expected(name)
    assert same(now, before), (now, before)


def expected(name: str):
    """The recorded shape, less what this host cannot have: `bw`'s DRAM traffic figure
    exists only where this CPU's write-allocate is known (traffic.py:
    unknown on Intel Ice Lake-SP and later, or an unidentified core), and the recorded
    shape came from a host where it was."""
    before = copy.deepcopy(BEFORE[name])
    if name == "bw":
        from numascope import traffic
        from numascope.topology import read_topology
        wa = traffic.write_allocate(traffic.cpu_uarch(read_topology("/")), "ordinary")
        if wa.allocates is None:
            for r in before["results"]:
                del r["metrics"]["dram_bandwidth"]
                r["params"]["dram_bytes_per_element"] = "null"
    return before


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
