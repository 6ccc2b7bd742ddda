"""Rank/thread layouts (numascope.layouts) on synthetic trees and replayed hwloc dumps: every
rank inside the unit it promises, no CPU twice, only usable CPUs, SMT siblings only when
asked or needed, and one-line errors that say what fits."""

from __future__ import annotations

import json

import pytest
from conftest import hwloc_fixture

from numascope.errors import UserError
from numascope.layouts import check, layout, logical_cores, named
from numascope.topology import read_topology
from numascope.topology.model import (
    Cache,
    Core,
    Cpu,
    L3Domain,
    Node,
    Package,
    PciDevice,
    Topology,
)


def synth(packages: int = 2, l3_per_pkg: int = 2, cores_per_l3: int = 4, smt: int = 1,
          nodes_per_pkg: int = 1, interleaved: bool = False, disallowed: tuple = (),
          offline: tuple = (), devices: tuple = ()) -> Topology:
    """A regular machine. CPU ids: linear (package-major, SMT siblings after all first
    threads, as Intel numbers them) or interleaved over packages (0 on S0, 1 on S1 …)."""
    per_pkg = l3_per_pkg * cores_per_l3
    ncores = packages * per_pkg
    cpus, cores, caches = [], [], []
    l3_cpus: dict[int, list[int]] = {}
    node_cpus: dict[int, list[int]] = {}
    for p in range(packages):
        for lc in range(per_pkg):
            ci = p * per_pkg + lc
            first = (lc * packages + p) if interleaved else ci
            ids = [first + t * ncores for t in range(smt)]
            l3 = p * l3_per_pkg + lc // cores_per_l3
            node = p * nodes_per_pkg + (lc // cores_per_l3) * nodes_per_pkg // l3_per_pkg
            for t, i in enumerate(ids):
                cpus.append(Cpu(i, p, node, l3, ci, t, online=i not in offline,
                                allowed=i not in disallowed))
                l3_cpus.setdefault(l3, []).append(i)
                node_cpus.setdefault(node, []).append(i)
            cores.append(Core(ci, p, lc, tuple(ids)))
            caches.append(Cache(1, "Data", 32 << 10, tuple(ids)))
            caches.append(Cache(2, "Unified", 1 << 20, tuple(ids)))
    cpus.sort(key=lambda c: c.id)
    l3s = [L3Domain(i, 32 << 20, tuple(sorted(v)), i // l3_per_pkg,
                    (i // l3_per_pkg * nodes_per_pkg + (i % l3_per_pkg) * nodes_per_pkg
                     // l3_per_pkg,)) for i, v in sorted(l3_cpus.items())]
    nn = packages * nodes_per_pkg
    nodes = [Node(n, tuple(sorted(node_cpus[n])), 16 << 30, 8 << 30,
                  {m: 10 if m == n else (12 if m // nodes_per_pkg == n // nodes_per_pkg else 32)
                   for m in range(nn)}, (n // nodes_per_pkg,)) for n in range(nn)]
    pkgs = [Package(p, tuple(sorted(c.id for c in cpus if c.package == p)),
                    tuple(range(p * nodes_per_pkg, (p + 1) * nodes_per_pkg)),
                    tuple(range(p * l3_per_pkg, (p + 1) * l3_per_pkg))) for p in range(packages)]
    for c in sorted({x for v in l3_cpus.values() for x in [tuple(sorted(v))]}):
        caches.append(Cache(3, "Unified", 32 << 20, c))
    return Topology("synthetic", cpus, cores, l3s, nodes, pkgs, caches=caches,
                    devices=list(devices))


def unit_of(topo: Topology, unit: str, cpu: int):
    c = topo.cpu(cpu)
    return {"l3": c.l3, "node": c.node, "socket": c.package, "core": c.core}[unit]


def assert_sound(topo: Topology, lay, ranks=None, threads=None) -> None:
    """The promises, checked from the topology itself (not through layouts' own code)."""
    assert check(topo, lay) == []
    usable = {c.id for c in topo.cpus if c.online and c.allowed}
    l1d = {c: cache.cpus for cache in topo.caches if cache.level == 1 and cache.kind == "Data"
           for c in cache.cpus}
    seen: list[int] = []
    for s in lay.slots:
        assert set(s.cpus) <= usable
        seen += s.cpus
        assert len(s.threads) == lay.threads and set(s.threads) <= set(s.cpus)
        if lay.unit in ("l3", "node", "socket"):
            assert len({unit_of(topo, lay.unit, c) for c in s.cpus}) == 1, (lay.unit, s)
        if not lay.smt:        # one thread per core: no two threads share a core (an L1d)
            assert len({l1d.get(c, c) for c in s.threads}) == len(s.threads)
        assert s.nodes == tuple(sorted({topo.cpu(c).node for c in s.cpus}))
    assert len(seen) == len(set(seen)), "a CPU in two ranks"
    assert [s.rank for s in lay.slots] == list(range(lay.ranks))
    if ranks is not None:
        assert lay.ranks == ranks
    if threads is not None:
        assert lay.threads == threads
    json.dumps(lay.to_dict())


SYNTH = {
    "2s-4l3-8c": {"packages": 2, "l3_per_pkg": 4, "cores_per_l3": 8},            # 64 cores
    "2s-8l3-8c-smt": {"packages": 2, "l3_per_pkg": 8, "cores_per_l3": 8, "smt": 2,
                          "nodes_per_pkg": 4},                                # 128c/256t, NPS4
    "2s-interleaved": {"packages": 2, "l3_per_pkg": 1, "cores_per_l3": 6, "interleaved": True},
}
REFUSED: set[tuple] = set()     # (tree, ranks, unit) that must not fit
SHAPES = [{}, {"threads": 4}, {"ranks": 2}, {"ranks": 4, "threads": 2}, {"ranks": 3},
          {"ranks": 8, "unit": "node"}, {"ranks": 2, "unit": "socket"}, {"threads": 6, "unit": "l3"}]


@pytest.mark.parametrize("tree", sorted(SYNTH))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: ",".join(f"{k}={v}" for k, v in
                                                                s.items()) or "default")
def test_synthetic_shapes_are_sound(tree, shape):
    topo = synth(**SYNTH[tree])
    if (tree, shape.get("ranks"), shape.get("unit")) in REFUSED:
        with pytest.raises(UserError, match="domains have"):
            layout(topo, **shape)
        return
    lay = layout(topo, **shape)
    assert_sound(topo, lay, ranks=shape.get("ranks", 1), threads=shape.get("threads"))


def test_one_rank_per_l3_with_threads_inside():
    topo = synth(**SYNTH["2s-4l3-8c"])
    lay = layout(topo, ranks=8)
    assert lay.unit == "l3" and lay.threads == 8 and lay.per_unit == (1,) * 8 and lay.regular
    assert [set(s.cpus) for s in lay.slots] == [set(d.cpus) for d in topo.l3s]


def test_ranks_times_threads_per_l3():
    topo = synth(**SYNTH["2s-8l3-8c-smt"])
    lay = layout(topo, ranks=16, threads=8)
    assert lay.unit == "l3" and not lay.smt and lay.notes == ()
    for s, d in zip(lay.slots, topo.l3s):
        assert set(s.cpus) == set(d.cpus)                 # whole cores: both threads bound
        assert all(topo.cpu(c).smt == 0 for c in s.threads)


def test_too_big_says_what_fits():
    topo = synth(**SYNTH["2s-4l3-8c"])
    with pytest.raises(UserError, match=r"^16 ranks × 8 threads needs 128 CPUs; this machine "
                                        r"has 64 usable cores$"):
        layout(topo, ranks=16, threads=8)
    with pytest.raises(UserError, match=r"^1 rank × 9 threads per L3 needs 9 CPUs in each; "
                                        r"the 8 L3 domains have 8 usable cores each$"):
        layout(topo, ranks=4, threads=9, unit="l3")


def test_threads_alone_spread_over_l3s():
    topo = synth(**SYNTH["2s-8l3-8c-smt"])
    lay = layout(topo, threads=64)
    assert lay.ranks == 1 and lay.unit == "machine" and not lay.smt
    per_l3 = {}
    for c in lay.slots[0].threads:
        per_l3[topo.cpu(c).l3] = per_l3.get(topo.cpu(c).l3, 0) + 1
    assert per_l3 == {i: 4 for i in range(16)}
    # thread i in domain i mod 16 (what OMP_PROC_BIND=spread would do)
    assert [topo.cpu(c).l3 for c in lay.slots[0].threads[:16]] == list(range(16))
    assert_sound(topo, lay, ranks=1, threads=64)


def test_smt_only_when_needed_or_asked():
    topo = synth(**SYNTH["2s-8l3-8c-smt"])
    need = layout(topo, threads=256)
    assert need.smt and any("SMT" in n for n in need.notes)
    assert_sound(topo, need, threads=256)
    asked = layout(topo, ranks=16, threads=16, smt=True)
    assert asked.smt and asked.slots[0].cores == 8
    assert_sound(topo, asked, ranks=16, threads=16)
    with pytest.raises(UserError, match="needs 512 CPUs"):
        layout(topo, ranks=32, threads=16)
    with pytest.raises(UserError, match="needs 256 CPUs; this machine has 128 usable cores"):
        layout(topo, threads=256, smt=False)


def test_interleaved_numbering_keeps_ranks_on_their_socket():
    topo = synth(**SYNTH["2s-interleaved"])
    lay = layout(topo, ranks=2)
    assert lay.unit in ("l3", "socket", "node")
    assert lay.slots[0].cpus == (0, 2, 4, 6, 8, 10) and lay.slots[1].cpus == (1, 3, 5, 7, 9, 11)


def test_cgroup_and_offline_cpus_are_never_used():
    topo = synth(**SYNTH["2s-4l3-8c"], disallowed=tuple(range(8, 16)), offline=(60, 61))
    lay = layout(topo, ranks=7)
    assert_sound(topo, lay, ranks=7)
    assert not set(lay.cpus()) & (set(range(8, 16)) | {60, 61})
    with pytest.raises(UserError, match="this machine has 54 usable cores"):
        layout(topo, threads=55)


def test_near_a_device_puts_rank_and_memory_on_its_node():
    hca = PciDevice("0000:81:00.0", "infiniband", "mlx5_0,ib0", "0x15b3", "0x1017", 3, ())
    unknown = PciDevice("0000:01:00.0", "nvme", "nvme0n1", None, None, None, ())
    topo = synth(**SYNTH["2s-4l3-8c"], nodes_per_pkg=2, devices=(hca, unknown))
    lay = layout(topo, ranks=1, near="mlx5_0")
    assert lay.near_node == 3 and lay.slots[0].nodes == (3,) and lay.slots[0].mem_nodes == (3,)
    two = layout(topo, ranks=2, near="ib0")            # one per socket, its socket first
    assert two.unit == "socket" and two.slots[0].packages == (1,)
    nodes = layout(topo, ranks=2, unit="node", near="ib0")   # its node, then the nearest
    assert [s.nodes for s in nodes.slots] == [(3,), (2,)]
    assert layout(topo, threads=4, near="0000:81:00.0").slots[0].nodes == (3,)
    with pytest.raises(UserError, match="does not say which node"):
        layout(topo, ranks=1, near="nvme0")
    with pytest.raises(UserError, match="no such device"):
        layout(topo, ranks=1, near="mlx5_9")


@pytest.mark.parametrize("kw,says", [
    ({"unit": "rack"}, "unknown unit"), ({"ranks": 0}, "at least 1"),
    ({"threads": -2}, "at least 1"), ({"ranks": 2, "unit": "machine"}, "one process"),
    ({"ranks": 1, "within": "N7"}, "does not exist"), ({"ranks": 3, "threads": 5, "unit": "socket"},
                                                     "2 socket domains have 8 usable cores"),
])
def test_bad_shapes_one_line(kw, says):
    with pytest.raises(UserError, match=says) as e:
        layout(synth(), **kw)
    assert "\n" not in str(e.value)


# -- replayed machines -----------------------------------------------------------------------

# replaying a dump costs seconds: each is read once for test_layouts, test_recipes and
# test_hpl_layouts (they import `replay` from here)
FIXTURES = ["16amd64-8n2c", "8em64t-2s2ca2c", "64amd64-4s2n4ca2co", "16em64t-4s2c2t",
            "16amd64-8n2c-cpusets"]
TOPOS: dict[str, Topology] = {}


def replay(name: str) -> Topology:
    if name not in TOPOS:
        TOPOS[name] = read_topology(hwloc_fixture(name))
    return TOPOS[name]


@pytest.mark.parametrize("name", FIXTURES)
def test_replayed_shapes_are_sound(name):
    topo = replay(name)
    n = len(topo.usable_cpus())
    shapes = [{}, {"threads": 2}, {"ranks": 2}, {"ranks": len(topo.nodes)},
              {"ranks": max(1, n // 2)}, {"ranks": 3, "threads": 1}, {"ranks": n}]
    if topo.l3s:
        shapes.append({"ranks": len(topo.l3s), "unit": "l3"})
    for shape in shapes:
        lay = layout(topo, **shape)
        assert_sound(topo, lay, ranks=shape.get("ranks", 1), threads=shape.get("threads"))


def test_replayed_8_nodes_one_rank_per_node():
    topo = replay("16amd64-8n2c")
    lay = layout(topo, ranks=8)
    assert lay.unit == "node" and lay.threads == 2
    assert [s.node for s in lay.slots] == list(range(8))
    assert [s.mem_nodes for s in lay.slots] == [(i,) for i in range(8)]


def test_hwloc_logical_order():
    """Cores sharing an L2 are neighbours, as lstopo shows this Core 2 Quad pair:
    Package L#0: PU P#0, P#4, P#2, P#6; Package L#1: P#1, P#5, P#3, P#7."""
    topo = replay("8em64t-2s2ca2c")
    assert [c.ids[0] for c in logical_cores(topo)] == [0, 4, 2, 6, 1, 5, 3, 7]


def test_cmt_compute_units_count_as_cores():
    """Opteron 6276: the kernel's thread siblings (0+1) have an L1d each; hwloc and Open MPI
    count 64 cores, and so do the layouts (no 'SMT' note for 64 ranks)."""
    topo = replay("64amd64-4s2n4ca2co")
    assert len(logical_cores(topo)) == 64
    lay = named(topo, "per-core")
    assert lay.ranks == 64 and not lay.smt and lay.notes == ()
    per = named(topo, "per-l3")
    assert (per.ranks, per.threads) == (8, 8)


def test_cgroup_fixture_uses_allowed_cpus_only():
    topo = replay("16amd64-8n2c-cpusets")
    allowed = set(topo.usable_cpus())
    assert len(allowed) < len(topo.cpus)
    lay = layout(topo, ranks=len(allowed))
    assert set(lay.cpus()) == allowed
    with pytest.raises(UserError, match=f"has {len(allowed)} usable cores"):
        layout(topo, ranks=1, threads=len(allowed) + 1)


def test_named_layouts():
    topo = replay("16amd64-8n2c")
    assert named(topo, "per-node").ranks == 8
    assert named(topo, "per-core").ranks == 16
    assert named(topo, "per-socket").ranks == 8
    with pytest.raises(UserError, match="no L3"):
        named(topo, "per-l3")
    with pytest.raises(UserError, match="unknown layout"):
        named(topo, "per-rack")
