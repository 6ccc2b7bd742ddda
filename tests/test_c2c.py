"""Core-to-core ping-pong."""

from __future__ import annotations

import math

import pytest
from conftest import hwloc_fixture

from numascope.errors import UserError
from numascope.families.c2c import bench as c2c
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


def test_params_defaults_in_one_place_and_checked():
    p = c2c.C2CParams()
    assert (p.max_pairs, p.samples, p.trips, p.homes) == (c2c.MAX_PAIRS, 15, 2000, (None,))
    for bad in ({"samples": 0}, {"trips": 0}, {"max_pairs": 0}, {"homes": ()}):
        with pytest.raises(UserError):
            c2c.C2CParams(**bad)


def test_suite_cases_read_the_profile():
    from numascope.profile import FULL, QUICK
    t = read_topology(hwloc_fixture("16em64t-4s2c2t"))
    quick, full = c2c.suite_cases(t, QUICK), c2c.suite_cases(t, FULL)
    assert len(quick) == c2c.QUICK_PAIRS and len(full) == 16 * 15 // 2
    assert {c.params["samples"] for c in quick} == {QUICK.samples}
    assert {c.params["samples"] for c in full} == {FULL.samples}


def test_by_relation_median_is_the_true_median():
    from numascope.results.record import BenchResult, Metric
    rs = [BenchResult("c2c", f"p{i}", {"a": 0, "b": i, "relation": "l3"},
                      {"latency": Metric("latency", "ns", False, [v])})
          for i, v in enumerate([10.0, 20.0, 30.0, 40.0], 1)]
    assert c2c.by_relation(rs)["l3"] == {"pairs": 4, "min": 10.0, "median": 25.0, "max": 40.0,
                                         "best": 10.0}
