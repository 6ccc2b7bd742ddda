"""NUMA matrix orchestration on replayed topologies, with a fake executor."""

from __future__ import annotations

import pytest
from conftest import hwloc_fixture

from numascope.errors import UserError
from numascope.families.matrix import bench as mx
from numascope.profile import FULL, QUICK, SMOKE
from numascope.results.record import Metric
from numascope.topology import read_topology


class Recorder:
    """A fake executor: records what it was asked and answers distance-shaped numbers."""

    def __init__(self, topo):
        self.topo = topo
        self.asked: list[tuple[tuple[int, ...], int]] = []

    def __call__(self, cpus, node):
        self.asked.append((tuple(cpus), node))
        src = self.topo.cpu(cpus[0]).node
        d = self.topo.distance(src, node) or 10
        return {"latency": Metric("latency", "ns", False, [10.0 * d]),
                "bandwidth": Metric("bandwidth", "GB/s", True, [1000.0 / d])}


@pytest.fixture(scope="module")
def eight():
    return read_topology(hwloc_fixture("16amd64-8n2c"))


def test_asks_exactly_the_8x8_pairs(eight):
    rec = Recorder(eight)
    results = mx.run_matrix(eight, rec)
    assert sorted(n for _, n in rec.asked) == sorted(list(range(8)) * 8)
    pairs = {(eight.cpu(c[0]).node, n) for c, n in rec.asked}
    assert pairs == {(i, j) for i in range(8) for j in range(8)}
    assert len(rec.asked) == 64
    for cpus, _ in rec.asked:     # every CPU of the source node, none of any other
        assert set(cpus) == set(eight.node(eight.cpu(cpus[0]).node).cpus)
    src, dst, m = mx.table(results, "latency")
    assert src == dst == list(range(8))
    assert m[0][0] == 100.0 and m[0][1] == 200.0


def test_ratio_per_distance_class(eight):
    results = mx.run_matrix(eight, Recorder(eight))
    r = {x["distance"]: x for x in mx.ratios_by_distance(results, "latency")}
    assert r[10]["pairs"] == 8 and r[10]["ratio"] == pytest.approx(1.0)
    assert r[20]["pairs"] == 56 and r[20]["ratio"] == pytest.approx(2.0)
    b = {x["distance"]: x for x in mx.ratios_by_distance(results, "bandwidth")}
    assert b[20]["ratio"] == pytest.approx(0.5)


def test_cpuless_and_memoryless_nodes(eight):
    import dataclasses
    nodes = list(eight.nodes)
    nodes[7] = dataclasses.replace(nodes[7], cpus=())                # memory target only
    nodes[6] = dataclasses.replace(nodes[6], memory_bytes=0)         # CPU source only
    t = dataclasses.replace(eight, nodes=nodes)
    pairs = mx.pairs(t)
    assert {i for i, _ in pairs} == set(range(7))
    assert {j for _, j in pairs} == {0, 1, 2, 3, 4, 5, 7}
    assert len(pairs) == 7 * 7
    with pytest.raises(UserError, match="no usable CPU"):
        mx.pairs(t, src=[7])
    with pytest.raises(UserError, match="no memory"):
        mx.pairs(t, dst=[6])


def test_unknown_node_is_user_error(eight):
    with pytest.raises(UserError, match="does not exist"):
        mx.pairs(eight, src=[9])


def test_this_machine_suite_quick_is_node_0s_row():
    topo = read_topology("/")
    cases = mx.suite_cases(topo, QUICK)
    assert [c.label for c in cases] == [f"N{mx.sources(topo)[0]}->N{j}"
                                        for j in mx.targets(topo)]
    assert cases[0].params.params.bytes == mx.lat.quick_dram_size(topo, topo.usable_cpus()[0])
    full = mx.suite_cases(topo, FULL)
    assert len(full) == len(mx.sources(topo)) * len(mx.targets(topo))


def test_quick_and_smoke_measure_the_first_row_to_every_node(eight):
    """The local/remote gap in a quick run: node 0 to each of the 8 nodes (full: 64 pairs);
    smoke: the same row on its fixed working set, for latency and bandwidth alike."""
    quick = mx.suite_cases(eight, QUICK)
    assert [c.label for c in quick] == [f"N0->N{j}" for j in range(8)]
    smoke = mx.suite_cases(eight, SMOKE)
    assert [c.label for c in smoke] == [c.label for c in quick]
    p = smoke[0].params.params
    assert (p.bytes, p.bw_bytes, p.samples) == (SMOKE.working_set, SMOKE.working_set,
                                                SMOKE.samples)
    assert len(mx.suite_cases(eight, FULL)) == 64


def test_quick_row_reaches_cpuless_memory(tmp_path):
    """Two sockets with a CXL expander each: node 0's row runs to both CPU-less nodes."""
    from tiers_sysfs import tiered
    topo = read_topology(tiered(tmp_path))
    assert [c.label for c in mx.suite_cases(topo, QUICK)] == ["N0->N0", "N0->N1", "N0->N2",
                                                              "N0->N3"]


def test_real_latency_executor_on_this_machine():
    topo = read_topology("/")
    ex = mx.default_executor(topo, mx.MatrixParams(what=("latency",), bytes=4 << 20,
                                                   samples=2))
    res = mx.run_matrix(topo, ex, src=mx.sources(topo)[:1], dst=mx.targets(topo)[:1])
    assert len(res) == 1 and res[0].metrics["latency"].median > 0


def test_params_resolve_rows_and_columns(eight):
    p = mx.MatrixParams(rows=(0, 3), cols=(5,)).checked(eight)
    assert p.rows == (0, 3) and p.cols == (5,)
    assert mx.MatrixParams().checked(eight).rows == tuple(range(8))
    cases = mx.Matrix().cases(eight, mx.MatrixParams(rows=(1,), cols=(2, 4)))
    assert [c.label for c in cases] == ["N1->N2", "N1->N4"]
    assert all(c.params.params.rows == (1,) for c in cases)


@pytest.mark.parametrize("kw,msg", [
    ({"what": ("nosuch",)}, "unknown matrix"),
    ({"mode": "zigzag"}, "unknown chase mode"),
    ({"stride": 100}, "power of two"),
    ({"samples": 0}, "samples must be at least 1"),
    ({"bw_bytes": 8}, "too small"),
    ({"rows": (9,)}, "does not exist"),
    ({"cols": (9,)}, "does not exist"),
    ({"bytes": 64, "what": ("latency",)}, "too small"),
])
def test_bad_params_are_user_errors_when_cases_are_built(eight, kw, msg):
    with pytest.raises(UserError, match=msg):
        mx.Matrix().cases(eight, mx.MatrixParams(**kw))


def test_matrix_measures_through_cases_with_a_fake_executor(eight):
    from numascope.benchmark import run_cases
    rec = Recorder(eight)
    b = mx.Matrix(rec)
    res = run_cases(b, eight, b.cases(eight, mx.MatrixParams(rows=(0,), cols=(0, 1))))
    assert [r.case for r in res] == ["N0->N0", "N0->N1"]
    assert res[1].placement["memory"] == {"policy": "bind", "nodes": [1], "pages": "none"}


def _render(results, what=mx.METRICS) -> str:
    import io

    from rich.console import Console

    from numascope.families.matrix.command import _print, _print_tiers
    buf = io.StringIO()
    c = Console(file=buf, width=80, color_system=None)
    _print(results, {m: mx.ratios_by_distance(results, m) for m in what}, what, c)
    _print_tiers(mx.tier_summary(results), what, c)
    return buf.getvalue()


def test_eight_node_matrices_fit_80_columns(eight):
    res = mx.run_matrix(eight, Recorder(eight))
    for r in res:      # four-digit latencies: the widest cells a matrix shows
        r.metrics["latency"].values = [v * 12.345 for v in r.metrics["latency"].values]
    text = _render(res)
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80, text
    assert "N7" in text and "2469.0" in text and "…" not in text
    assert "True" not in text.split() and "False" not in text.split()
