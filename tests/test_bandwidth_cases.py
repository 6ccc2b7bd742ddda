"""Bandwidth sweeps, sizing and placement judgement on hand-built topologies (no kernels run)."""

from __future__ import annotations

import pytest

from numascope.errors import MeasurementError, Unavailable, UserError
from numascope.families.bandwidth import bench as bw
from numascope.families.bandwidth import kernels
from numascope.families.bandwidth.bench import BandwidthParams
from numascope.families.bandwidth.family import Bandwidth
from numascope.families.bandwidth.sizes import default_array_bytes, parse_size
from numascope.host import Host
from numascope.memspec import MemorySpec
from numascope.pages import check_placement
from numascope.profile import FULL, QUICK, SMOKE
from numascope.steady import MIN_REPS, Steady
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
    cases = bw.scaling_cases(topo, ["triad"], BandwidthParams(reps=1))
    by = {}
    for c in cases:
        for pol in c.params.policies:
            by[(pol, len(c.params.cpus))] = c.params.cpus
    # compact fills cores in order, SMT siblings (16..31) last
    assert by[("compact", 4)] == (0, 1, 2, 3)
    assert by[("compact", 16)] == tuple(range(16))
    assert by[("compact", 24)][16:] == tuple(range(16, 24))
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
    cases = bw.scaling_cases(topo, ["triad"], BandwidthParams(reps=1))
    keys = [tuple(sorted(c.params.cpus)) for c in cases]
    assert len(keys) == len(set(keys))
    one = [c for c in cases if len(c.params.cpus) == 1]
    assert len(one) == 1 and set(one[0].params.policies) == set(bw.placement.POLICIES)


def test_domain_cases_cover_packages_nodes_l3s():
    topo = synth()
    cases = bw.domain_cases(topo, ["read"], BandwidthParams(reps=1))
    doms = {d: c for c in cases for d in c.params.domains}
    assert set(doms) == {"S0", "S1", "N0", "N1", "N2", "N3"} | {f"L3:{i}" for i in range(8)}
    assert sorted(doms["S1"].params.cpus) == list(topo.packages[1].cpus)
    assert sorted(doms["L3:5"].params.cpus) == list(topo.l3s[5].cpus)
    # a node alone is measured with its memory bound to it, on the page kind asked for
    assert doms["N2"].params.memory == MemorySpec("bind", (2,))
    assert sorted(doms["N2"].params.cpus) == list(topo.node(2).cpus)
    base = BandwidthParams(memory=MemorySpec(pages="none"))
    doms = {d: c for c in bw.domain_cases(topo, ["read"], base) for d in c.params.domains}
    assert doms["N2"].params.memory == MemorySpec("bind", (2,), "none")


def test_suite_profiles():
    topo = synth()
    quick = bw.suite_cases(topo, QUICK)
    full = bw.suite_cases(topo, FULL)
    assert {c.params.kernel for c in quick} == {"triad"}
    assert {c.params.kernel for c in full} == set(bw.KERNELS)
    assert len(full) > len(quick)
    assert {c.params.sweep for c in quick} == {"scaling", "per-domain"}
    # measured profiles: until steady, one time pool shared by the stage's measurements
    for prof, cases in ((QUICK, quick), (FULL, full)):
        (rule,) = {c.params.reps for c in cases}
        assert isinstance(rule, Steady) and rule.max_reps == prof.steady_max
        # never fewer repetitions than the fixed count it replaces
        assert rule.min_reps == max(MIN_REPS, prof.reps, bw.QUICK_REPS)
        assert len({id(c.params.reps.pool) for c in cases}) == 1
        assert rule.pool.seconds == prof.steady_s
        assert cases[0].params.reps.pool.cases == len({c.params.key() for c in cases})
    # smoke: the profile's count, never fewer than the outlier screen needs
    assert {c.params.reps for c in bw.suite_cases(topo, SMOKE)} == \
        {max(SMOKE.reps, bw.QUICK_REPS)}
    assert Bandwidth().suite_cases(topo, QUICK)[0].params == quick[0].params
    with pytest.raises(UserError):
        bw.suite_cases(topo, "huge")


def test_no_two_suite_cases_measure_the_same_placement():
    """One socket, one node: the package and node domains are the all-core compact point;
    listed once (the point stands for the domains too), not as two identical rows."""
    one = synth(packages=1, nodes_per_pkg=1, l3_per_node=1)
    for prof in (QUICK, FULL):
        for topo in (one, synth()):
            cases = bw.suite_cases(topo, prof)
            keys = [c.params.key() for c in cases]
            assert len(keys) == len(set(keys)), [c.label for c in cases]
    top = [c for c in bw.suite_cases(one, QUICK) if c.params.domains]
    assert [c.label for c in top] == [f"triad compact {len(one.cpus)}T"]
    assert set(top[0].params.domains) == {"S0", "N0", "L3:0"}
    # on the 2-socket machine every domain is still measured
    doms = {d for c in bw.suite_cases(synth(), QUICK) for d in c.params.domains}
    assert {"S0", "S1", "N0", "N3", "L3:7"} <= doms


def test_single_case_and_bad_input():
    topo = synth()
    (c,) = bw.build_cases(topo, kernels=["copy"], where="N1", policy="compact", threads=3)
    assert c.params.cpus == (4, 5, 6)       # node 1 holds cores 4-7
    assert c.params.size_bytes == default_array_bytes(topo.llc_bytes([4, 5, 6]))
    with pytest.raises(UserError):
        bw.build_cases(topo, kernels=["nope"])
    with pytest.raises(UserError):
        bw.build_cases(topo, where="N9")
    with pytest.raises(UserError):
        bw.build_cases(topo, threads=0)
    with pytest.raises(UserError):
        bw.build_cases(topo, where="64")
    with pytest.raises(UserError, match="node 7 does not exist"):
        bw.build_cases(topo, memory=MemorySpec("bind", (7,)))
    with pytest.raises(UserError, match="repetitions"):
        bw.build_cases(topo, reps=0)
    with pytest.raises(UserError, match="unknown ISA"):
        bw.build_cases(topo, isa="avx9")
    with pytest.raises(UserError, match="too small"):
        bw.build_cases(topo, size_bytes=256)


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
    # a node reported with no page holds none: not "0 pages elsewhere"
    ok, notes = check_placement({"policy": "bind", "nodes": [1]}, [0], {0: 0, 1: 40},
                                [{1: 40}], 40)
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
    assert max(len(c.params.cpus) for c in cases) == 3
    with pytest.raises(UserError):
        bw.build_cases(topo, scaling=True, threads=0)


def _meminfo(tmp_path, text: str) -> Host:
    (tmp_path / "proc").mkdir(exist_ok=True)
    (tmp_path / "proc" / "meminfo").write_text(text)
    return Host(tmp_path)


def test_hugetlb_pool_checked(tmp_path):
    # each array is its own mapping of whole 2 MiB pages: 3 arrays of 2 MiB + 8 B need 6
    h = _meminfo(tmp_path, "MemAvailable: 1000 kB\nHugePages_Free: 3\nHugepagesize: 2048 kB\n")
    huge = MemorySpec(pages="hugetlb")
    BandwidthParams(kernel="triad", size_bytes=2 * MIB, memory=huge).check_pages(h)
    with pytest.raises(Unavailable, match="hugetlb"):
        BandwidthParams(kernel="triad", size_bytes=2 * MIB + 8, memory=huge).check_pages(h)
    BandwidthParams(kernel="triad", size_bytes=2 * MIB + 8).check_pages(h)   # THP: no pool
    h = _meminfo(tmp_path, "HugePages_Free: 9\nHugepagesize: 1048576 kB\n")
    with pytest.raises(Unavailable, match="default huge page"):
        BandwidthParams(kernel="read", size_bytes=MIB, memory=huge).check_pages(h)


def test_fit_counts_every_array_and_the_bound_nodes(tmp_path):
    h = _meminfo(tmp_path, "MemAvailable: 1048576 kB\n")              # 1 GiB free
    BandwidthParams(kernel="triad", size_bytes=256 * MIB).check_fits(h)  # 768 MiB
    with pytest.raises(UserError, match="free"):
        BandwidthParams(kernel="triad", size_bytes=512 * MIB).check_fits(h)
    BandwidthParams(kernel="read", size_bytes=512 * MIB).check_fits(h)
    node = tmp_path / "sys/devices/system/node/node1"
    node.mkdir(parents=True)
    (node / "meminfo").write_text("Node 1 MemFree:  131072 kB\n")      # 128 MiB on N1
    (node.parent / "node0").mkdir()
    (node.parent / "node0/meminfo").write_text("Node 0 MemFree:  917504 kB\n")
    with pytest.raises(UserError, match="node 1"):
        BandwidthParams(kernel="read", size_bytes=512 * MIB,
                        memory=MemorySpec("bind", (1,))).check_fits(h)


def test_params_are_checked_once_and_resolved():
    topo = synth()
    p = BandwidthParams(kernel="add", cpus=(0, 1), reps=3).checked(topo)
    assert p.size_bytes == default_array_bytes(topo.llc_bytes([0, 1]))
    assert p.arrays == 3 and p.total_bytes == 3 * p.size_bytes
    assert p.checked(topo) == p                         # checking again changes nothing
    assert BandwidthParams().checked(topo).cpus == tuple(bw.placement.select_cpus(topo))
    for bad in ({"kernel": "nope"}, {"cpus": (999,)}, {"reps": 0}, {"nt": "maybe"},
                {"memory": MemorySpec("interleave", (0, 9))}):
        with pytest.raises(UserError):
            BandwidthParams(**bad).checked(topo)
    with pytest.raises(AttributeError):
        p.reps = 5  # type: ignore[misc]  # frozen: a case holds what will be measured


def test_kernel_table_comes_from_the_core():
    from numascope import _core
    rows = {k["name"]: k for k in _core.kernels()}
    assert tuple(rows) == bw.KERNELS
    for name, k in rows.items():
        # STREAM counts 8 B per array touched; a store adds a write-allocate read
        assert k["stream_bytes"] == 8 * k["arrays"] == bw.STREAM_BYTES[name]
        assert k["dram_bytes"] == k["stream_bytes"] + 8 * k["stores"]
        assert k["dram_bytes_nt"] == k["stream_bytes"]
        assert len(k["uses"]) == k["arrays"] == bw.ARRAYS[name]
        assert (k["writes"] in k["uses"]) == bool(k["stores"])
        assert set(k["isas"]) <= set(kernels.ISAS)
    assert set(_core.isa()) <= set(kernels.ISAS) and "scalar" in _core.isa()


def test_one_node_limit():
    from numascope import _core
    from numascope.memspec import MAX_NODES
    assert MAX_NODES == _core.MAX_SPEC_NODES
    too_many = {"policy": "interleave", "nodes": list(range(MAX_NODES + 1))}
    with pytest.raises(ValueError, match=f"at most {MAX_NODES} nodes"):
        _core.mem_probe(too_many, 1 << 20)
    with pytest.raises(UserError, match=f"at most {MAX_NODES} nodes"):
        MemorySpec("interleave", tuple(range(MAX_NODES + 1)))


def test_policies_on_replayed_machines():
    from conftest import hwloc_fixture

    from numascope.topology import read_topology
    common = BandwidthParams(reps=1)
    # 8 NUMA nodes of 2 cores (a 4-socket Opteron): per-node = one CPU on each node
    topo = read_topology(hwloc_fixture("16amd64-8n2c"))
    pts = {(p, len(c.params.cpus)): c.params.cpus
           for c in bw.scaling_cases(topo, ["triad"], common) for p in c.params.policies}
    per_node = pts[("per-node", 8)]
    assert sorted(topo.cpu(c).node for c in per_node) == topo.node_ids()
    assert ("per-node", 9) not in pts
    doms = {d: c for c in bw.domain_cases(topo, ["triad"], common) for d in c.params.domains}
    for n in topo.nodes:
        assert doms[f"N{n.id}"].params.memory == MemorySpec("bind", (n.id,))
        assert sorted(doms[f"N{n.id}"].params.cpus) == sorted(n.cpus)
    # 4 sockets x 2 cores x 2 threads, one L3 per socket: per-l3 = one CPU per socket
    topo = read_topology(hwloc_fixture("16em64t-4s2c2t"))
    pts = {(p, len(c.params.cpus)): c.params.cpus
           for c in bw.scaling_cases(topo, ["triad"], common) for p in c.params.policies}
    assert sorted(topo.cpu(c).package for c in pts[("per-l3", 4)]) == [0, 1, 2, 3]
    # compact takes every core before any SMT sibling
    first8 = pts[("compact", 8)]
    assert all(topo.cpu(c).smt == 0 for c in first8)
