"""The DRAM:tier ratio sweep on replayed tiered machines, with a fake measurement whose page
locator follows the C core's real granule layout (no second NUMA node needed)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest
from conftest import hwloc_fixture
from tiers_sysfs import tiered

from numascope import _core
from numascope.benchmark import run_cases
from numascope.errors import MeasurementError, Unavailable, UserError
from numascope.families.bandwidth import tiers as bw_tiers
from numascope.families.bandwidth.bench import BandwidthParams
from numascope.memspec import MemorySpec
from numascope.results.record import BenchResult, Metric
from numascope.topology import read_topology

PAGE = 4096


@pytest.fixture
def cxl(tmp_path):
    return read_topology(tiered(tmp_path))


def layout_locator(mem: MemorySpec, nbytes: int, samples: int = 1365) -> dict[int, int]:
    """Where bw_run's evenly spaced move_pages samples land for `mem`: bound pages on their
    node, weighted ones on the node the C core's layout gives their granule."""
    if mem.policy == "bind":
        return {mem.nodes[0]: samples}
    g = _core.weighted_granule(nbytes, mem.pages != "none")
    layout = _core.weighted_layout(list(mem.weights), -(-nbytes // g))
    npages = nbytes // PAGE
    return dict(Counter(mem.nodes[layout[(npages * i // samples) * PAGE // g]]
                        for i in range(samples)))


def all_on_dram(mem: MemorySpec, nbytes: int) -> dict[int, int]:
    return {mem.nodes[0]: 1000}


def fake_measure(locate):
    """bandwidth.run's signature; bandwidth falls with the tier's share of pages."""
    def measure(topo, p: BandwidthParams, label):
        pages = locate(p.memory, p.size_bytes)
        ctx = p.context()
        dram = sum(v for k, v in pages.items() if k == ctx["dram_node"]) / sum(pages.values())
        gbs = [20.0 * dram + 8.0 * (1 - dram)] * p.reps
        return BenchResult("bandwidth", label, {"kernel": p.kernel, **ctx},
                           {"bandwidth": Metric("bandwidth", "GB/s", True, gbs)},
                           {"pages_per_node": pages, "memory": p.memory.to_dict(),
                            "cpus": list(p.cpus)})
    return measure


def test_parse_ratios():
    assert bw_tiers.parse_ratios(None) == ["1:0", "3:1", "1:1", "1:3", "0:1"]
    assert bw_tiers.parse_ratios("3:1, sys,3:1") == ["3:1", "sys"]
    for bad in ("3", "0:0", "a:1", ",", "3:-1"):
        with pytest.raises(UserError):
            bw_tiers.parse_ratios(bad)


def test_picks_the_cpus_node_and_its_nearest_cpuless_node(cxl):
    assert bw_tiers.pick_nodes(cxl, None, [0])[:2] == (0, 2)
    assert bw_tiers.pick_nodes(cxl, "auto", cxl.node(1).cpus)[:2] == (1, 3)
    assert bw_tiers.pick_nodes(cxl, "1,2", [0])[:2] == (1, 2)
    for bad in ("0", "0,0", "0,1,2", "0,9"):
        with pytest.raises(UserError):
            bw_tiers.pick_nodes(cxl, bad, [0])


def test_without_cpuless_node_takes_the_nearest_other_node():
    t = read_topology(hwloc_fixture("16amd64-8n2c"))
    dram, other, how = bw_tiers.pick_nodes(t, None, list(t.node(0).cpus))
    assert dram == 0 and other != 0 and "no CPU-less" in how
    assert t.distance(0, other) == min(t.distance(0, n) for n in t.node_ids() if n)


def test_one_memory_node_is_unavailable():
    t = read_topology("/")
    if len([n for n in t.nodes if not n.memoryless]) > 1:
        pytest.skip("this host has a second memory node")
    with pytest.raises(Unavailable, match="second memory node"):
        bw_tiers.pick_nodes(t, None, t.usable_cpus()[:1])


def test_cases_realise_each_ratio(cxl):
    cases = bw_tiers.sweep_cases(cxl, 0, 2, ["1:0", "3:1", "0:1", "sys"], ["read"], [0])
    mems = [c.params.memory for c in cases]
    assert mems[0] == MemorySpec("bind", (0,))
    assert mems[1] == MemorySpec("weighted-interleave", (0, 2), weights=(3, 1))
    assert mems[2].nodes == (2,)
    assert mems[3] == MemorySpec("weighted-interleave", (0, 2))
    assert mems[3].system_weights == (3, 1)                # checked when the case was built
    assert [c.params.context()["dram_share"] for c in cases] == [1.0, 0.75, 0.0, 0.75]
    assert all(c.params.size_bytes >= bw_tiers.MIN_ARRAY_BYTES for c in cases)
    assert {c.params.context()["sweep"] for c in cases} == {"tier-ratio"}
    huge = bw_tiers.sweep_cases(cxl, 0, 2, ["3:1"], ["read"], [0],
                                BandwidthParams(memory=MemorySpec(pages="none")))
    assert huge[0].params.memory.pages == "none"


def test_system_ratio_needs_the_kernels_policy(tmp_path):
    t = read_topology(tiered(tmp_path, weights=False))
    with pytest.raises(Unavailable, match="no weighted interleave"):
        bw_tiers.sweep_cases(t, 0, 2, ["sys"], ["read"], [0])
    assert "not in this kernel" in bw_tiers.kernel_line(t, 0, 2)
    assert len(bw_tiers.sweep_cases(t, 0, 2, ["3:1"], ["read"], [0])) == 1


@pytest.mark.parametrize("size", [256 << 20, 1 << 30, 64 << 30])
def test_sweep_achieves_every_ratio_with_the_real_layout(cxl, size):
    cases = bw_tiers.sweep_cases(cxl, 0, 2, bw_tiers.parse_ratios(None), ["read"], [0],
                                 BandwidthParams(size_bytes=size, reps=3))
    results = run_cases(bw_tiers.TierSweep(fake_measure(layout_locator)), cxl, cases)
    rows = bw_tiers.summary(results)
    assert [r["ratio"] for r in rows] == ["1:0", "3:1", "1:1", "1:3", "0:1"]
    for r in rows:
        assert abs(r["achieved_dram_share"] - r["dram_share"]) < 0.05, r
    assert rows[0]["median"] > rows[2]["median"] > rows[-1]["median"]


def test_sweep_rejects_a_placement_that_misses_the_ratio(cxl):
    cases = bw_tiers.sweep_cases(cxl, 0, 2, ["1:0", "1:1"], ["read"], [0])
    sweep = bw_tiers.TierSweep(fake_measure(all_on_dram))
    assert sweep.measure(cxl, cases[0]).params["achieved_dram_share"] == 1.0
    with pytest.raises(MeasurementError, match="should hold 50.0%"):
        sweep.measure(cxl, cases[1])


def test_sweep_rejects_unknown_page_locations(cxl):
    case = bw_tiers.sweep_cases(cxl, 0, 2, ["1:1"], ["read"], [0])[0]
    with pytest.raises(MeasurementError, match="page locations unknown"):
        bw_tiers.TierSweep(fake_measure(lambda m, n: {-1: 10})).measure(cxl, case)


def test_sweep_figure(cxl):
    from numascope.families.bandwidth.tier_figures import figures
    cases = bw_tiers.sweep_cases(cxl, 0, 2, ["1:0", "1:1", "0:1"], ["read", "triad"], [0])
    results = run_cases(bw_tiers.TierSweep(fake_measure(layout_locator)), cxl, cases)
    figs = figures(results)
    assert [t for t, _ in figs] == ["Bandwidth over the DRAM:tier page ratio"]


def test_cli_on_this_host():
    t = read_topology("/")
    p = subprocess.run([sys.executable, "-m", "numascope", "bw", "--tier-sweep"],
                       capture_output=True, text=True, timeout=120, check=False)
    if len([n for n in t.nodes if not n.memoryless]) == 1:
        assert p.returncode == 4, p.stderr
        assert p.stderr.strip().count("\n") == 0 and "second memory node" in p.stderr
    p = subprocess.run([sys.executable, "-m", "numascope", "bw", "--tier-sweep", "--scaling"],
                       capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 2 and "Traceback" not in p.stderr
