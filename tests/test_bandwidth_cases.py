"""Bandwidth sweeps, sizing and placement judgement on hand-built topologies (no kernels run)."""

from __future__ import annotations

import pytest

from numascope.bench import bandwidth as bw
from numascope.bench.bw_placement import check_placement
from numascope.bench.bw_sizes import (
    check_fits,
    check_hugetlb,
    default_array_bytes,
    parse_size,
)
from numascope.errors import MeasurementError, UserError
from numascope.topology.model import Core, Cpu, L3Domain, Node, Package, Topology

MIB = 1 << 20


def synth(packages: int = 2, nodes_per_pkg: int = 2, l3_per_node: int = 2,
          cores_per_l3: int = 2, smt: int = 2, l3_bytes: int = 32 * MIB) -> Topology:
    """A Rome-like machine: SMT siblings numbered with an offset (0 and ncores)."""
    ncores = packages * nodes_per_pkg * l3_per_node * cores_per_l3
    cpus, cores, l3s, nodes, pkgs = [], [], [], [], []
    core = 0
    for p in range(packages):
        pkg_cpus, pkg_nodes, pkg_l3s = [], [], []
        for nn in range(nodes_per_pkg):
            nid = p * nodes_per_pkg + nn
            node_cpus = []
            for _ in range(l3_per_node):
                li = len(l3s)
                l3_cpus = []
                for _ in range(cores_per_l3):
                    ids = tuple(core + s * ncores for s in range(smt))
                    cores.append(Core(core, p, core, ids))
                    for s, cid in enumerate(ids):
                        cpus.append(Cpu(cid, p, nid, li, core, s))
                    l3_cpus += ids
                    core += 1
                l3s.append(L3Domain(li, l3_bytes, tuple(sorted(l3_cpus)), p, (nid,)))
                pkg_l3s.append(li)
                node_cpus += l3_cpus
            nodes.append(Node(nid, tuple(sorted(node_cpus)), 64 << 30, 60 << 30))
            pkg_nodes.append(nid)
            pkg_cpus += node_cpus
        pkgs.append(Package(p, tuple(sorted(pkg_cpus)), tuple(pkg_nodes), tuple(pkg_l3s)))
    cpus.sort(key=lambda c: c.id)
    return Topology("synthetic", cpus, cores, l3s, nodes, pkgs)


def test_scaling_policies_pick_promised_cpus():
    topo = synth()
    cases = bw.scaling_cases(topo, ["triad"], memory=None, size_bytes=None, reps=1,
                             isa="auto", nt="auto")
    by = {}
    for c in cases:
        for pol in c.params["policies"]:
            by[(pol, len(c.params["cpus"]))] = c.params["cpus"]
    # compact fills cores in order, SMT siblings (16..31) last
    assert by[("compact", 4)] == [0, 1, 2, 3]
    assert by[("compact", 16)] == list(range(16))
    assert by[("compact", 24)][16:] == list(range(16, 24))
    # spread round-robins over the 4 nodes (4 cores = 8 CPUs per node)
    assert [topo.cpu(c).node for c in by[("spread", 4)]] == [0, 1, 2, 3]
    # per-l3: one CPU per L3 domain, 8 at most
    l3s = [topo.cpu(c).l3 for c in by[("per-l3", 8)]]
    assert sorted(l3s) == list(range(8))
    assert ("per-l3", 9) not in by
    # per-node: one CPU per node
    assert sorted(topo.cpu(c).node for c in by[("per-node", 4)]) == [0, 1, 2, 3]
    assert all(len(set(v)) == len(v) for v in by.values())


def test_scaling_merges_identical_points():
    topo = synth()
    cases = bw.scaling_cases(topo, ["triad"], memory=None, size_bytes=None, reps=1,
                             isa="auto", nt="auto")
    keys = [tuple(sorted(c.params["cpus"])) for c in cases]
    assert len(keys) == len(set(keys))
    one = [c for c in cases if len(c.params["cpus"]) == 1]
    assert len(one) == 1 and set(one[0].params["policies"]) == set(bw.placement.POLICIES)


def test_domain_cases_cover_packages_nodes_l3s():
    topo = synth()
    cases = bw.domain_cases(topo, ["read"], memory=None, size_bytes=None, reps=1, isa="auto",
                            nt="auto")
    doms = {d: c for c in cases for d in c.params["domains"]}
    assert set(doms) == {"S0", "S1", "N0", "N1", "N2", "N3"} | {f"L3:{i}" for i in range(8)}
    assert sorted(doms["S1"].params["cpus"]) == list(topo.packages[1].cpus)
    assert sorted(doms["L3:5"].params["cpus"]) == list(topo.l3s[5].cpus)
    # a node alone is measured with its memory bound to it
    assert doms["N2"].params["memory"] == {"policy": "bind", "nodes": [2]}
    assert sorted(doms["N2"].params["cpus"]) == list(topo.node(2).cpus)


def test_suite_profiles():
    topo = synth()
    quick = bw.suite_cases(topo, "quick")
    full = bw.suite_cases(topo, "full")
    assert {c.params["kernel"] for c in quick} == {"triad"}
    assert {c.params["kernel"] for c in full} == set(bw.KERNELS)
    assert len(full) > len(quick)
    assert {c.params["sweep"] for c in quick} == {"scaling", "per-domain"}
    with pytest.raises(UserError):
        bw.suite_cases(topo, "huge")


def test_single_case_and_bad_input():
    topo = synth()
    (c,) = bw.build_cases(topo, kernels=["copy"], where="N1", policy="compact", threads=3)
    assert c.params["cpus"] == [4, 5, 6]       # node 1 holds cores 4-7
    with pytest.raises(UserError):
        bw.build_cases(topo, kernels=["nope"])
    with pytest.raises(UserError):
        bw.build_cases(topo, where="N9")
    with pytest.raises(UserError):
        bw.build_cases(topo, threads=0)
    with pytest.raises(UserError):
        bw.build_cases(topo, where="64")
    with pytest.raises(UserError):
        bw.build_cases(topo, memory={"policy": "bind", "nodes": [7]})
    with pytest.raises(UserError):
        bw.build_cases(topo, reps=0)


def test_sizes():
    assert parse_size("512M") == 512 * MIB
    assert parse_size("2G") == 2 << 30
    assert parse_size("1GiB") == 1 << 30
    assert parse_size("3GB") == 3 * 10**9
    assert parse_size("4096") == 4096
    for bad in ("", "12Q", "-1G", "0", "G"):
        with pytest.raises(UserError):
            parse_size(bad)
    assert default_array_bytes(480 * MIB) == 4 * 480 * MIB
    assert default_array_bytes(0) >= 64 * MIB
    assert default_array_bytes(3 * MIB + 1) % (2 * MIB) == 0
    with pytest.raises(UserError, match="free"):
        check_fits(10 << 30, 8 << 30, "x")
    check_fits(1 << 30, 8 << 30, "x")


def test_llc_sizing_follows_cpus():
    topo = synth(l3_bytes=16 * MIB)
    assert topo.llc_bytes([0, 1]) == 16 * MIB          # one L3
    assert topo.llc_bytes([0, 2]) == 32 * MIB          # two L3s
    assert default_array_bytes(topo.llc_bytes([0, 2])) == 128 * MIB


def test_dram_bytes_convention():
    assert bw.dram_bytes("triad", nt=False) == 32
    assert bw.dram_bytes("triad", nt=True) == 24
    assert bw.dram_bytes("copy", nt=False) == 24
    assert bw.dram_bytes("fill", nt=False) == 16
    assert bw.dram_bytes("read", nt=False) == 8


def test_placement_bind_elsewhere_raises():
    with pytest.raises(MeasurementError, match="elsewhere"):
        check_placement({"policy": "bind", "nodes": [0]}, [0], {0: 10, 1: 30}, [{0: 10, 1: 30}],
                        40)
    ok, notes = check_placement({"policy": "bind", "nodes": [1]}, [0], {1: 40}, [{1: 40}], 40)
    assert ok and not notes


def test_placement_interleave_and_first_touch():
    ok, notes = check_placement({"policy": "interleave", "nodes": [0, 1]}, [0, 0],
                                {0: 39, 1: 1}, [{0: 20}, {0: 19, 1: 1}], 40)
    assert not ok and "uneven" in notes[0]
    with pytest.raises(MeasurementError):
        check_placement({"policy": "interleave", "nodes": [0, 1]}, [0], {2: 5, 0: 5},
                        [{2: 5, 0: 5}], 10)
    # thread 1 runs on node 1 but its pages sit on node 0: flagged, not raised
    ok, notes = check_placement(None, [0, 1], {0: 40}, [{0: 20}, {0: 20}], 40)
    assert not ok and "thread 1" in notes[0]
    ok, notes = check_placement(None, [0, 1], {0: 20, 1: 20}, [{0: 20}, {1: 20}], 40)
    assert ok and not notes
    ok, notes = check_placement(None, [0], {}, [{}], -1)
    assert ok and "unknown" in notes[0]


def test_scaling_respects_max_threads():
    topo = synth()
    cases = bw.build_cases(topo, kernels=["triad"], scaling=True, threads=3, reps=1)
    assert max(len(c.params["cpus"]) for c in cases) == 3
    with pytest.raises(UserError):
        bw.build_cases(topo, scaling=True, threads=0)


def test_hugetlb_pool_checked(tmp_path):
    (tmp_path / "proc").mkdir()
    meminfo = tmp_path / "proc" / "meminfo"
    meminfo.write_text("MemAvailable: 1000 kB\nHugePages_Free: 3\nHugepagesize: 2048 kB\n")
    check_hugetlb(3, 2 * MIB, tmp_path)
    with pytest.raises(UserError, match="hugetlb"):
        check_hugetlb(3, 2 * MIB + 1, tmp_path)
    meminfo.write_text("HugePages_Free: 9\nHugepagesize: 1048576 kB\n")
    with pytest.raises(UserError, match="default huge page"):
        check_hugetlb(1, MIB, tmp_path)


def test_policies_on_replayed_machines():
    from conftest import hwloc_fixture

    from numascope.topology import read_topology
    common = {"memory": None, "size_bytes": None, "reps": 1, "isa": "auto", "nt": "auto"}
    # 8 NUMA nodes of 2 cores (a 4-socket Opteron): per-node = one CPU on each node
    topo = read_topology(hwloc_fixture("16amd64-8n2c"))
    pts = {(p, len(c.params["cpus"])): c.params["cpus"]
           for c in bw.scaling_cases(topo, ["triad"], **common) for p in c.params["policies"]}
    per_node = pts[("per-node", 8)]
    assert sorted(topo.cpu(c).node for c in per_node) == topo.node_ids()
    assert ("per-node", 9) not in pts
    doms = {d: c for c in bw.domain_cases(topo, ["triad"], **common) for d in c.params["domains"]}
    for n in topo.nodes:
        assert doms[f"N{n.id}"].params["memory"] == {"policy": "bind", "nodes": [n.id]}
        assert sorted(doms[f"N{n.id}"].params["cpus"]) == sorted(n.cpus)
    # 4 sockets x 2 cores x 2 threads, one L3 per socket: per-l3 = one CPU per socket
    topo = read_topology(hwloc_fixture("16em64t-4s2c2t"))
    pts = {(p, len(c.params["cpus"])): c.params["cpus"]
           for c in bw.scaling_cases(topo, ["triad"], **common) for p in c.params["policies"]}
    assert sorted(topo.cpu(c).package for c in pts[("per-l3", 4)]) == [0, 1, 2, 3]
    # compact takes every core before any SMT sibling
    first8 = pts[("compact", 8)]
    assert all(topo.cpu(c).smt == 0 for c in first8)
