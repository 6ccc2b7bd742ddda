"""Memory tiers read from sysfs under a root: synthetic tiered machines, hwloc's HMAT dumps,
this host; `numascope topo` shows them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import hwloc_fixture
from tiers_sysfs import tiered

from numascope.topology import read_topology
from numascope.topology.export import topology_to_dict
from numascope.topology.tiers import DRAM, nearest_cpuless, tier_names, tiers


def _topo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "numascope", "topo", *args],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def cxl(tmp_path):
    return read_topology(tiered(tmp_path))


def test_kernel_tiers_hmat_and_weights_are_read(cxl):
    tg = cxl.tiering
    assert tg.kernel_tiers == {4: (0, 1), 22: (2, 3)}
    assert [a.access for a in tg.access[2]] == [0, 1]
    assert tg.access[2][0].initiators == (0,) and tg.access[2][0].read_latency_ns == 250
    assert tg.access[2][1].write_bandwidth_mbs == 25000
    assert tg.access[3][0].initiators == (1,) and tg.access[3][0].write_latency_ns is None
    assert 0 not in tg.access          # an initiator's accessK lists only targets
    assert tg.weighted_interleave and tg.interleave_weights == {0: 3, 1: 3, 2: 1, 3: 1}
    assert tg.interleave_auto is True


def test_upstream_auto_name_and_missing_weighted_interleave(tmp_path):
    t = read_topology(tiered(tmp_path / "a", auto_name="auto"))
    assert t.tiering.interleave_auto is True
    t = read_topology(tiered(tmp_path / "b", weights=False))
    assert not t.tiering.weighted_interleave and t.tiering.interleave_weights == {}
    assert t.tiering.interleave_auto is None


def test_dram_and_cpuless_groups(cxl):
    ts = tiers(cxl)
    assert [(t.name, t.kind, t.nodes) for t in ts] == [
        (DRAM, "dram", (0, 1)), ("CPU-less 1", "cpuless", (2, 3))]
    cx = ts[1]
    assert cx.distance == 14 and cx.kernel_tier == 22
    assert cx.distances == {0: (14, 36), 1: (36, 14)}
    assert tier_names(cxl) == {0: DRAM, 1: DRAM, 2: "CPU-less 1", 3: "CPU-less 1"}
    assert nearest_cpuless(cxl, 0) == 2 and nearest_cpuless(cxl, 1) == 3


def test_hmat_fixture_groups_by_distance():
    # hwloc's fake HMAT machine: CPU nodes 0-3 hold no memory; CPU-less memory nodes
    # 5,6,8,9 sit at distance 11 from a CPU node, the NVM nodes 7,10 at 17
    t = read_topology(hwloc_fixture("fakememinitiators-1np2c+1npp+gi"))
    ts = tiers(t)
    assert [(t.nodes, t.distance) for t in ts] == [((5, 6, 8, 9), 11), ((7, 10), 17)]
    acc = {a.access: a for a in t.tiering.access[5]}
    assert acc[0].initiators == (4,) and acc[0].read_latency_ns == 8   # generic initiator
    assert acc[1].initiators == (0,) and acc[1].read_bandwidth_mbs == 131072
    assert t.tiering.access[7][1].initiators == (0, 2)
    assert not t.tiering.weighted_interleave


def test_hmat_splits_nodes_slit_cannot_tell_apart():
    # flat SLIT (all 20): HBM node 4 (10 GB/s in HMAT) and NVM nodes 6,8,9 (0.1 GB/s)
    t = read_topology(hwloc_fixture("fakeheteromemtiers"))
    assert [x.nodes for x in tiers(t)] == [(0, 1, 2), (4,), (6, 8, 9)]


def test_json_export(cxl):
    d = topology_to_dict(cxl)["memory_tiers"]
    assert d["tiers"][1]["nodes"] == [2, 3] and d["tiers"][1]["kernel_tier"] == 22
    assert d["kernel_tiers"] == {"4": [0, 1], "22": [2, 3]}
    assert d["hmat"]["2"][0]["read_latency_ns"] == 250
    assert d["weighted_interleave"] == {"available": True,
                                        "weights": {"0": 3, "1": 3, "2": 1, "3": 1},
                                        "auto": True}


def test_topo_shows_tiers_of_a_replayed_machine(tmp_path):
    root = tiered(tmp_path)
    p = _topo("--sysfs-root", str(root))
    assert p.returncode == 0, p.stderr
    assert "Memory tiers" in p.stdout and "CPU-less 1" in p.stdout and "tier22" in p.stdout
    assert "250ns" in p.stdout
    assert "weighted interleave: available, system weights N0:3 N1:3 N2:1 N3:1" in p.stdout
    p = _topo("--sysfs-root", str(root), "--json")
    assert json.loads(p.stdout)["results"][0]["memory_tiers"]["tiers"][0]["name"] == DRAM


def test_topo_says_when_the_kernel_lacks_weighted_interleave(tmp_path):
    p = _topo("--sysfs-root", str(tiered(tmp_path, weights=False)))
    assert p.returncode == 0, p.stderr
    assert "weighted interleave: not in this kernel" in p.stdout


def test_this_host():
    t = read_topology("/")
    ts = tiers(t)
    assert ts[0].name == DRAM and set(ts[0].nodes) <= set(t.node_ids())
    if Path("/sys/kernel/mm/mempolicy/weighted_interleave").is_dir():
        assert t.tiering.weighted_interleave
        for n in t.tiering.interleave_weights:
            w = Path(f"/sys/kernel/mm/mempolicy/weighted_interleave/node{n}").read_text()
            assert t.tiering.interleave_weights[n] == int(w)
