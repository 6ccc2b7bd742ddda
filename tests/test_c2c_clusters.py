"""Clusters from planted core-to-core latency matrices, against planted topologies."""

from __future__ import annotations

import math
import random

from numascope.families.c2c import clusters as cc

# 2 sockets x 2 L3 x 2 cores x 2 SMT threads: cpu = s*8 + l*4 + c*2 + t
LEVELS = {"smt": 10.0, "l3": 30.0, "package": 70.0, "remote": 140.0}


def _where(c: int) -> tuple[int, int, int]:
    return c // 8, c // 4, c // 2     # package, L3, core


def planted(noise: float = 0.05, seed: int = 3) -> tuple[list[int], list[list[float]]]:
    rng = random.Random(seed)
    cpus = list(range(16))
    m = [[math.nan] * 16 for _ in cpus]
    for a in cpus:
        for b in cpus:
            if a < b:
                pa, la, ca = _where(a)
                pb, lb, cb = _where(b)
                base = LEVELS["smt" if ca == cb else "l3" if la == lb else
                              "package" if pa == pb else "remote"]
                m[a][b] = m[b][a] = base * (1 + rng.uniform(-noise, noise))
    return cpus, m


def groups() -> dict[str, list[list[int]]]:
    return {"smt": [[2 * i, 2 * i + 1] for i in range(8)],
            "l3": [list(range(4 * i, 4 * i + 4)) for i in range(4)],
            "package": [list(range(8)), list(range(8, 16))]}


def test_levels_split_at_tolerance():
    assert cc.levels_of([10, 11, 30, 31, 70, math.nan]) == [11, 31, 70]
    assert cc.levels_of([]) == []


def test_planted_matrix_gives_smt_l3_socket_levels_that_agree():
    cpus, m = planted()
    levels = cc.cluster(cpus, m)
    assert [len(lv.clusters) for lv in levels] == [8, 4, 2, 1]
    ags = cc.compare(levels, groups())
    assert all(a.agree for a in ags), ags
    assert [lv.matches for lv in levels] == [["smt"], ["l3"], ["package"], []]


def test_topology_that_disagrees_is_reported():
    cpus, m = planted()
    g = groups()
    # the topology claims CPUs 2,3 share L3 with 4..7 rather than 0,1
    g["l3"] = [[0, 1], [2, 3, 4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]]
    ags = {a.kind: a for a in cc.compare(cc.cluster(cpus, m), g)}
    assert ags["smt"].agree and ags["package"].agree
    l3 = ags["l3"]
    assert not l3.agree and l3.level == 1
    assert (0, 2) in l3.joined and (2, 4) in l3.split and l3.differing == 4 + 8


def test_unmeasured_pairs_do_not_join_clusters():
    cpus = [0, 1, 2]
    m = [[math.nan, 20.0, math.nan], [20.0, math.nan, math.nan], [math.nan] * 3]
    levels = cc.cluster(cpus, m)
    assert [lv.clusters for lv in levels] == [[[0, 1], [2]]]


def test_analyse_skips_a_sampled_matrix():
    from numascope.topology import read_topology
    cpus, m = planted()
    m[0][5] = m[5][0] = math.nan
    got = cc.analyse(read_topology("/"), cpus[:1], [[math.nan]])
    assert "skipped" not in got and got["levels"] == []
    got = cc.analyse(None, cpus, m)  # type: ignore[arg-type]  # skipped before any lookup
    assert got["skipped"].startswith("1 CPU pairs")


def test_many_cpus_cluster_by_level():
    # 4 packages x 8 L3 x 8 CPUs: 256 CPUs, every pair, sparse links updated per merge
    n = 256
    m = [[math.nan if a == b else 10.0 if a // 8 == b // 8 else 50.0 if a // 64 == b // 64
          else 200.0 for b in range(n)] for a in range(n)]
    levels = cc.cluster(list(range(n)), m)
    assert [len(lv.clusters) for lv in levels] == [32, 4, 1]


def _synth(tmp_path):
    from synth_sysfs import machine

    from numascope.topology import read_topology
    return read_topology(str(machine(tmp_path, sockets=2, l3_per_socket=2, cores_per_l3=2,
                                     smt=2)))


def _from_topology(topo, swap: tuple[int, int] | None = None):
    from numascope.families.c2c.bench import relation
    rng = random.Random(5)
    cpus = topo.usable_cpus()
    as_ = {c: c for c in cpus}
    if swap:   # the measured CPU swap[0] behaves as the topology's swap[1] and vice versa
        as_[swap[0]], as_[swap[1]] = swap[1], swap[0]
    m = [[math.nan] * len(cpus) for _ in cpus]
    for i, a in enumerate(cpus):
        for j, b in enumerate(cpus):
            if i < j:
                base = LEVELS[relation(topo, as_[a], as_[b])]
                m[i][j] = m[j][i] = base * (1 + rng.uniform(-0.05, 0.05))
    return cpus, m


def test_analyse_against_a_synthetic_topology_agrees(tmp_path):
    topo = _synth(tmp_path)
    cpus, m = _from_topology(topo)
    got = cc.analyse(topo, cpus, m)
    assert got["agree"] and [a["kind"] for a in got["topology"]] == ["smt", "l3", "package"]
    assert [lv["matches"] for lv in got["levels"]] == [["smt"], ["l3"], ["package"], []]


def test_analyse_reports_cpus_the_topology_places_elsewhere(tmp_path):
    topo = _synth(tmp_path)
    a = topo.usable_cpus()[0]
    b = next(c for c in topo.usable_cpus() if topo.cpu(c).package != topo.cpu(a).package)
    cpus, m = _from_topology(topo, swap=(a, b))
    got = cc.analyse(topo, cpus, m)
    assert not got["agree"]
    assert all(not t["agree"] and t["differing"] > 0 for t in got["topology"])
    assert any(a in p for t in got["topology"] for p in t["split"] + t["joined"])


def test_dies_of_one_l3_each_agree_with_the_l3_level():
    """A replayed Xeon with 2 dies per package (hwloc's fakecpuid1f fixture, die_id in
    sysfs), each die one L3: the die grouping is the L3 grouping, and it agrees."""
    from conftest import hwloc_fixture

    from numascope.families.c2c.bench import relation
    from numascope.topology import read_topology
    topo = read_topology(hwloc_fixture("fakecpuid1f-64intel64-2p4d2n2c2t"))
    dies = {(c.package, c.die) for c in topo.cpus if c.online}
    assert len(dies) == 2 * len({c.package for c in topo.cpus if c.online}), dies
    cpus = topo.usable_cpus()
    groups = cc.topology_groups(topo, cpus)
    assert groups["die"] == groups["l3"] != groups["package"]
    m = [[math.nan if a == b else LEVELS[relation(topo, a, b)] for b in cpus] for a in cpus]
    got = cc.analyse(topo, cpus, m)
    assert got["agree"], got["topology"]
    assert {t["kind"] for t in got["topology"]} == {"smt", "l3", "die", "package"}


def _two_dies_of_two_l3s(tmp_path):
    """2 packages x 2 dies x 2 L3 x 2 cores: die_id written into the synthetic tree."""
    from synth_sysfs import machine

    from numascope.topology import read_topology
    root = machine(tmp_path, sockets=2, l3_per_socket=4, cores_per_l3=2, smt=1)
    topo = read_topology(str(root))
    for c in topo.cpus:
        first = min(d.index for d in topo.l3s if d.package == c.package)
        (root / f"sys/devices/system/cpu/cpu{c.id}/topology/die_id").write_text(
            f"{(c.l3 - first) // 2}\n")
    return read_topology(str(root))


def test_a_die_of_several_l3s_is_its_own_level(tmp_path):
    from numascope.families.c2c.bench import relation
    topo = _two_dies_of_two_l3s(tmp_path)
    cpus = topo.usable_cpus()
    rels = {relation(topo, a, b) for a in cpus for b in cpus if a < b}
    assert rels == {"l3", "die", "package", "remote"}, rels
    groups = cc.topology_groups(topo, cpus)
    assert len(groups["die"]) == 4 and len(groups["l3"]) == 8
    lv = {"smt": 10.0, "l3": 30.0, "die": 50.0, "package": 90.0, "remote": 180.0}
    m = [[math.nan if a == b else lv[relation(topo, a, b)] for b in cpus] for a in cpus]
    got = cc.analyse(topo, cpus, m)
    assert got["agree"], got["topology"]
    assert [x["matches"] for x in got["levels"]] == [["l3"], ["die"], ["package"], []]
    # a machine whose dies do not show in latency: the die grouping disagrees, said so
    flat = [[math.nan if a == b else lv["package" if r == "die" else r]
             for b in cpus for r in [relation(topo, a, b)]] for a in cpus]
    got = cc.analyse(topo, cpus, flat)
    die = next(t for t in got["topology"] if t["kind"] == "die")
    assert not die["agree"] and die["differing"] > 0


def test_one_die_per_package_is_no_grouping(tmp_path):
    topo = _synth(tmp_path)
    assert "die" not in cc.topology_groups(topo, topo.usable_cpus())
