"""The matrix's tier summary on a replayed tiered machine, with a fake executor."""

from __future__ import annotations

import pytest
from tiers_sysfs import tiered

from numascope.families.matrix import bench as mx
from numascope.results.record import BenchResult, Metric
from numascope.topology import read_topology
from numascope.topology.tiers import DRAM

# (CPU node, memory node) → (latency ns, read GB/s): local DRAM, remote DRAM, near CXL, far
FIGURES = {(0, 0): (100.0, 50.0), (0, 1): (180.0, 30.0), (0, 2): (250.0, 20.0),
           (0, 3): (400.0, 10.0), (1, 1): (110.0, 40.0), (1, 0): (190.0, 28.0),
           (1, 3): (275.0, 16.0), (1, 2): (420.0, 9.0)}


@pytest.fixture
def cxl(tmp_path):
    return read_topology(tiered(tmp_path))


def executor(topo):
    def run(cpus, node):
        lat, bw = FIGURES[(topo.cpu(cpus[0]).node, node)]
        return {"latency": Metric("latency", "ns", False, [lat]),
                "bandwidth": Metric("bandwidth", "GB/s", True, [bw])}
    return run


def test_pairs_carry_their_tier(cxl):
    results = mx.run_matrix(cxl, executor(cxl))
    assert len(results) == 8                       # 2 CPU nodes x 4 memory nodes
    by = {(r.params["src"], r.params["dst"]): r.params for r in results}
    assert by[(0, 2)]["tier"] == "CPU-less 1" and by[(0, 2)]["dst_cpuless"]
    assert by[(1, 0)]["tier"] == DRAM and not by[(1, 0)]["dst_cpuless"]


def test_summary_nearest_node_and_ratio_to_local_dram(cxl):
    rows = mx.tier_summary(mx.run_matrix(cxl, executor(cxl)))
    got = {(r["tier"], r["src"]): r for r in rows}
    assert [(r["tier"], r["src"]) for r in rows] == [
        (DRAM, 0), (DRAM, 1), ("CPU-less 1", 0), ("CPU-less 1", 1)]
    assert got[(DRAM, 0)]["node"] == 0 and got[(DRAM, 0)]["latency_ratio"] == 1.0
    near0 = got[("CPU-less 1", 0)]
    assert near0["node"] == 2 and near0["distance"] == 14 and near0["nodes"] == [2, 3]
    assert near0["latency"] == 250.0 and near0["latency_ratio"] == pytest.approx(2.5)
    assert near0["bandwidth_ratio"] == pytest.approx(0.4)
    near1 = got[("CPU-less 1", 1)]
    assert near1["node"] == 3 and near1["latency_ratio"] == pytest.approx(2.5)
    assert near1["bandwidth_ratio"] == pytest.approx(0.4)


def test_summary_of_records_stored_before_tiers():
    def r(src, dst, lat):
        return BenchResult("matrix", f"N{src}->N{dst}", {"src": src, "dst": dst,
                                                         "distance": 10 if src == dst else 20},
                           {"latency": Metric("latency", "ns", False, [lat])})
    rows = mx.tier_summary([r(0, 0, 100.0), r(0, 1, 300.0)])   # N1: a target, never a source
    assert [(x["tier"], x["node"], x["latency_ratio"]) for x in rows] == [
        (DRAM, 0, 1.0), ("CPU-less", 1, 3.0)]
    assert rows[1]["bandwidth"] is None and rows[1]["bandwidth_ratio"] is None


def test_one_node_summary_is_local_only():
    t = read_topology("/")
    n0 = t.node_ids()[0]
    res = mx.measure_pair(t, n0, n0, lambda cpus, node: {
        "latency": Metric("latency", "ns", False, [90.0])})
    (row,) = mx.tier_summary([res])
    assert row["tier"] == DRAM and row["latency_ratio"] == 1.0


def test_tier_figure_only_with_a_cpuless_tier(cxl):
    from numascope.families.matrix.tier_figures import figures
    figs = figures(mx.run_matrix(cxl, executor(cxl)))
    assert [t for t, _ in figs] == ["Memory tiers relative to local DRAM"]
    dram_only = [r for r in mx.run_matrix(cxl, executor(cxl)) if r.params["dst"] < 2]
    assert figures(dram_only) == []


def test_tier_table_fits_80_columns(cxl):
    from test_matrix import _render
    text = _render(mx.run_matrix(cxl, executor(cxl)))
    assert "memory tiers" in text and "CPU-less 1" in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80, text
    assert "…" not in text
