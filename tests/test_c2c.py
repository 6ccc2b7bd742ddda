"""Core-to-core ping-pong."""

from __future__ import annotations

import math

import pytest
from conftest import hwloc_fixture

from numascope.bench import c2c
from numascope.errors import UserError
from numascope.topology import read_topology


@pytest.fixture(scope="module")
def topo():
    return read_topology("/")


def test_two_cpus_give_positive_finite_latency(topo):
    cpus = topo.usable_cpus()
    if len(cpus) < 2:
        pytest.skip("needs two CPUs")
    r = c2c.pingpong(topo, cpus[0], cpus[1], samples=5, trips=500)
    v = r.metrics["latency"].median
    assert math.isfinite(v) and v > 0
    ids, m = c2c.matrix([r])
    assert ids == cpus[:2] and m[0][1] == m[1][0] == v and math.isnan(m[0][0])


def test_same_cpu_and_unknown_cpu_are_user_errors(topo):
    with pytest.raises(UserError):
        c2c.pingpong(topo, 0, 0)
    with pytest.raises(UserError):
        c2c.pingpong(topo, 0, 4096)


def test_pairs_all_or_sampled_with_every_relation():
    t = read_topology(hwloc_fixture("16em64t-4s2c2t"))
    allp = c2c.pairs(t)
    n = len(t.usable_cpus())
    assert len(allp) == n * (n - 1) // 2
    few = c2c.pairs(t, max_pairs=10)
    assert len(few) == 10
    rels = {c2c.relation(t, a, b) for a, b in allp}
    assert rels <= {c2c.relation(t, a, b) for a, b in few}
    assert "smt" in rels and "remote" in rels


def test_pairs_bad_input():
    t = read_topology("/")
    with pytest.raises(UserError):
        c2c.pairs(t, cpus=[0])
    with pytest.raises(UserError):
        c2c.pairs(t, cpus=[0, 999])
