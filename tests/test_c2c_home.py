"""c2c --home: the shared line bound to a node, verified; sweeps over home nodes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import hwloc_fixture

from numascope.errors import MeasurementError, UserError
from numascope.families.c2c import bench as c2c
from numascope.results.record import BenchResult, Metric
from numascope.topology import read_topology


def _c2c(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "numascope", "c2c", "--samples", "3",
                           "--trips", "200", "--cpus", "0,1", *args],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def topo():
    t = read_topology("/")
    if len(t.usable_cpus()) < 2 or 0 not in c2c.memory_nodes(t):
        pytest.skip("needs two CPUs and memory on node 0")
    return t


def test_home_0_is_bound_and_verified(topo):
    a, b = topo.usable_cpus()[:2]
    r = c2c.pingpong(topo, a, b, samples=3, trips=200, home=0)
    assert r.params["home"] == 0 and r.params["home_node"] == 0
    assert r.case == f"cpu{a}<->cpu{b} home=node0"
    d = c2c.pingpong(topo, a, b, samples=3, trips=200)
    assert d.params["home"] == "first-touch" and d.params["home_node"] == topo.cpu(a).node


def test_line_elsewhere_than_bound_is_a_measurement_error(topo, monkeypatch):
    real = c2c._core()

    class Moved:   # the real ping-pong, but its page reported on another node
        def c2c_pingpong(self, *a):
            r = real.c2c_pingpong(*a)
            r["where"] = {1: 1}
            return r

    monkeypatch.setattr(c2c, "_core", lambda: Moved())
    with pytest.raises(MeasurementError, match="bound to node 0"):
        c2c.pingpong(topo, *topo.usable_cpus()[:2], samples=2, trips=100, home=0)


def test_home_nodes_parsing():
    t = read_topology(hwloc_fixture("16em64t-4s2c2t"))
    assert c2c.home_nodes(t, None) == [None]
    assert c2c.home_nodes(t, "all") == c2c.memory_nodes(t) and len(t.node_ids()) >= 1
    with pytest.raises(UserError, match="does not exist"):
        c2c.home_nodes(t, "99")


def test_cli_home_0_json(topo):
    p = _c2c("--home", "0", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    (r,) = doc["results"]
    assert r["params"]["home"] == 0 and r["params"]["home_node"] == 0
    assert doc["by_home"].keys() == {"0"}
    assert doc["clusters"]["levels"] and "agree" in doc["clusters"]


def test_cli_home_all_sweeps_every_memory_node(topo):
    p = _c2c("--home", "all", "--json")
    assert p.returncode == 0, p.stderr
    got = sorted(r["params"]["home"] for r in json.loads(p.stdout)["results"])
    assert got == sorted(c2c.memory_nodes(topo))


@pytest.mark.parametrize("home", ["99", "x", "0-"])
def test_cli_bad_home_is_one_line_exit_2(topo, home):
    p = _c2c("--home", home)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr


def _res(a: int, b: int, home: int, ns: float) -> BenchResult:
    return BenchResult(family="c2c", case=c2c.case_label(a, b, home),
                       params={"a": a, "b": b, "relation": "remote", "home": home},
                       metrics={"latency": Metric("latency", "ns", False, [ns])})


def test_home_cost_and_matrix_per_home():
    rs = [_res(0, 1, 0, 100.0), _res(0, 1, 1, 160.0), _res(0, 2, 0, 90.0), _res(0, 2, 1, 95.0)]
    cost = c2c.home_cost(rs)
    assert [(c["a"], c["b"], c["worst_home"], c["best_home"]) for c in cost] == \
        [(0, 1, 1, 0), (0, 2, 1, 0)]
    assert cost[0]["extra_ns"] == pytest.approx(60.0)
    assert c2c.matrix(rs, 1)[1][0][1] == 160.0 and c2c.matrix(rs)[1][0][1] == 100.0
    # the median of the pairs' medians (95, 160) is their mean, not the upper middle value
    assert c2c.by_relation(rs, 1)["remote"]["median"] == pytest.approx(127.5)


def test_home_all_on_a_two_node_machine_sweeps_both(tmp_path):
    from synth_sysfs import machine
    t = read_topology(str(machine(tmp_path, sockets=2, l3_per_socket=1, cores_per_l3=2, smt=1)))
    homes = c2c.home_nodes(t, "all")
    assert homes == [0, 1]
    cases = c2c.C2C().cases(t, cpus=[0, 2], homes=homes)
    assert [c.label for c in cases] == ["cpu0<->cpu2 home=node0", "cpu0<->cpu2 home=node1"]
    assert [c.params["home"] for c in cases] == [0, 1]
