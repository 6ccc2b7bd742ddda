"""Replay every x86 sysfs dump of hwloc's test suite and check the derived facts, against
hwloc's own expected output and (when installed) Debian's lstopo-no-graphics."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from conftest import HWLOC_FIXTURES

from numascope.topology import read_topology
from numascope.topology.archive import extract_dump

X86 = re.compile(r"amd64|em64t|intel64|i386")
EXTRA = {"memorysidecaches", "offline-cpu0-node0", "fakeheteromemtiers",
         "fakememinitiators-1np2c+1npp+gi"}
NAMES = sorted(p.name[:-8] for p in HWLOC_FIXTURES.glob("*.tar.bz2")
               if X86.search(p.name) or p.name[:-8] in EXTRA) if HWLOC_FIXTURES.is_dir() else []

# Counts where hwloc's .output legitimately differs from us, checked one by one: OUR value
# is asserted (so a change in the reader still fails) with the reason. Every other count
# (PU, Core, Package, NUMANode, L3Cache) must equal hwloc's.
DIFFERS: dict[str, dict[str, tuple[int, str]]] = {
    "16amd64-4n4c-cgroup-distance-merge": {
        "Core": (4, ("the .output was made with Core and L1/L2 filtered out (lstopo on the "
                    "dump shows 4 Cores); we count 4 single-thread cores"))},
    "40intel64-4n10c+pci-conflicts": {
        "Package": (4, ("the dump's hex maps are edited to conflict (cpu3 core_siblings = 0xf"
                       " spans 4 packages); hwloc reads the maps and drops package 3; we read "
                       "physical_package_id: 4 packages")),
        "L3Cache": (4, ("cpu2 index3/shared_cpu_map is edited to 0xf (CPUs of 4 packages) "
                       "while shared_cpu_list keeps 2,6,…,38; hwloc drops that L3, we read the "
                       "list (and note the mismatch): 4 L3s, one per package"))},
    "4em64t-2c2t-ignore-reorder": {
        "Core": (2, "the .output keeps only PU and NUMANode (ignore test); lstopo: 2 Cores"),
        "Package": (1, "filtered out of the .output; lstopo: 1 Package"),
        "L3Cache": (1, "filtered out of the .output; lstopo: 1 L3")},
    "64amd64-4s2n4ca2co": {
        "Core": (32, ("Bulldozer (Opteron 6276): hwloc counts each PU as a Core; we count the "
                     "kernel's thread-sibling groups, i.e. compute units: 32 cores of 2, with "
                     "smt_width saying they are CMT cores (private L1d), not SMT"))},
    "64intel64-fakeKNL-A2A-cache": {
        "L3Cache": (0, ("hwloc shows KNL's MCDRAM memory-side cache as an L3; KNL has no CPU "
                       "L3 (no cache/index3): 0 L3 domains"))},
    "64intel64-fakeKNL-SNC4-hybrid": {
        "L3Cache": (0, ("hwloc shows the 4 MCDRAM memory-side caches (Hybrid50) as L3s; KNL "
                       "has no CPU L3: 0 L3 domains"))},
    "8em64t-2s2ca2c-buggynuma": {
        "NUMANode": (8, ("every node's cpulist is 0-7; hwloc discards the NUMA info and keeps "
                        "one node; we keep the 8 bindable memory nodes, give the CPUs to node 0"
                        " and flag the overlap (memory_mode ambiguous)"))},
}
# differences that come only from the .output's type filters: lstopo on the dump agrees
FILTERED_ONLY = {"16amd64-4n4c-cgroup-distance-merge", "4em64t-2c2t-ignore-reorder"}


# The memory mode hwloc's dumps get, each with why: vendor's names from cpuinfo (EPYC: NPS,
# Xeon from Skylake-SP: SNC), counts for older parts and unknown vendors.
MODES: dict[str, tuple[str, str, str]] = {
    "16amd64-4n4c-cgroup-distance-merge": ("1 node per socket", "known", (
        "Opteron (family 0x10), one die per package: was NPS1|L3-as-NUMA, names of EPYC "
        "settings this CPU never had")),
    "16amd64-8n2c": ("1 node per socket", "known", "Opteron 865 (K8): was NPS1"),
    "16amd64-8n2c-cpusets": ("1 node per socket", "known", "Opteron 865 (K8): was NPS1"),
    "16em64t-4s2c2t": ("one node across sockets", "known", (
        "NetBurst Xeon MP (family 15): front-side bus, UMA by design; was NPS0")),
    "16em64t-4s2c2t-offlines": ("one node across sockets", "known", "as 16em64t-4s2c2t"),
    "16em64t-4s2ca2c-cpusetreorder": ("one node across sockets", "known",
                                      "as 16em64t-4s2c2t"),
    "2amd64-2n": ("1 node per socket", "known", "no cpuinfo: counts; was NPS1"),
    "2i386-2c-nohugepage": ("1 node per socket", "known", "one Core 2: was single-node"),
    "2i386-2t-hugepagesizecount": ("1 node per socket", "known", "one Pentium 4: was single-node"),
    "32amd64-4s2n4c-cgroup2": ("2 nodes per socket", "known", (
        "Opteron 6134 (Magny-Cours): two dies per package, a node each; was L3-as-NUMA")),
    "32em64t-2n8c+1mic": ("1 node per socket", "known", (
        "Xeon E5-2680 (Sandy Bridge-EP, model 45) predates SNC; was NPS1|L3-as-NUMA")),
    "32intel64-2p8co2t+8ve": ("SNC off", "known", (
        "Xeon Silver 4108 (Skylake-SP): one node per socket holding its L3; was "
        "NPS1|L3-as-NUMA")),
    "40intel64-2g2n4c+pci": ("1 node per socket", "known", (
        "Xeon E7-4870 (Westmere-EX, model 47) predates SNC; was NPS1|L3-as-NUMA")),
    "40intel64-4n10c+pci-conflicts": ("1 node per socket", "known", "as 40intel64-2g2n4c"),
    "48amd64-4d2n6c-sparse": ("2 nodes per socket", "known", (
        "Opteron engineering sample (family 0x10, Magny-Cours): a node per die; was "
        "L3-as-NUMA")),
    "4em64t-2c2t-ignore-reorder": ("1 node per socket", "known", "one Westmere: was single-node"),
    "64amd64-4s2n4ca2co": ("2 nodes per socket", "known", (
        "Opteron 6276 (Bulldozer): a node per die; was L3-as-NUMA")),
    "64intel64-fakeKNL-A2A-cache": ("quadrant|hemisphere|all-to-all", "ambiguous", (
        "Xeon Phi with one node: any of three cluster modes (this one is all-to-all); was "
        "single-node")),
    "64intel64-fakeKNL-SNC4-hybrid": ("SNC4", "known", (
        "Xeon Phi has no L3 by design: 4 nodes per socket can only be SNC-4; was ambiguous")),
    "8amd64-4n2c": ("1 node per socket", "known", "Opteron 8218 (K8): was NPS1"),
    "8em64t-2s2ca2c": ("one node across sockets", "known", (
        "Xeon E5345 (Clovertown): front-side bus, UMA by design; was NPS0")),
    "8em64t-2s2ca2c-buggynuma": ("one node across sockets", "ambiguous", (
        "overlapping node cpulists: hedged; was NPS0")),
    "8em64t-2s4c-heterogeneous": ("one node across sockets", "known", "as 8em64t-2s2ca2c"),
    "8em64t-4c2t": ("1 node per socket", "known", "one Nehalem socket; was single-node"),
    "96em64t-4n4d3ca2co": ("4 sockets per node", "known", (
        "Dunnington (front-side bus) boards glued 4 sockets a node; was NPS0")),
    "fakecpuid1f-64intel64-2p4d2n2c2t": ("SNC4", "ambiguous", (
        "QEMU guest: nodes split the L3 but are the hypervisor's; unchanged")),
    "fakeheteromemtiers": ("SNC3", "ambiguous", "QEMU guest: unchanged"),
    "fakememinitiators-1np2c+1npp+gi": ("SNC2", "ambiguous", (
        "Xeon Gold 6230 without L3 in the dump: SNC2 unchecked; unchanged")),
    "memorysidecaches": ("SNC2", "known", "Xeon Gold 6230, nodes split the L3; unchanged"),
    "offline-cpu0-node0": ("mixed", "unknown", (
        "node 0 is offline, so package 0 has no node and package 1 one; unchanged")),
}


@pytest.mark.parametrize("name", NAMES)
def test_memory_mode_names(name, topo):
    assert name in MODES, "every replayed x86 dump has its expected memory mode"
    value, status, why = MODES[name]
    m = topo(name).facts["memory_mode"]
    assert (m.value, m.status) == (value, status), why


@pytest.fixture(scope="session")
def dumps(tmp_path_factory):
    """Each dump extracted once per session: name → root directory."""
    cache: dict[str, object] = {}

    def get(name):
        if name not in cache:
            archive = HWLOC_FIXTURES / f"{name}.tar.bz2"
            if not archive.exists():  # ../shared absent: skip, do not fail
                pytest.skip(f"fixture {archive} not found")
            d = tmp_path_factory.mktemp(re.sub(r"\W", "_", name))
            cache[name] = extract_dump(archive, d)
        return cache[name]
    return get


@pytest.fixture(scope="session")
def topo(dumps):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = read_topology(dumps(name))
        return cache[name]
    return get


def hwloc_counts(name: str) -> dict[str, int]:
    p = HWLOC_FIXTURES / f"{name}.output"
    if not p.exists():
        p = HWLOC_FIXTURES / f"{name}.xml.output"
    text = p.read_text()
    cnt: dict[str, int] = {}
    if text.startswith("<?xml"):
        for o in ET.fromstring(text).iter("object"):
            cnt[o.get("type")] = cnt.get(o.get("type"), 0) + 1
        return cnt
    for line in text.splitlines()[1:]:  # the tree only: it ends where "depth 0:" starts
        if not line.startswith(" "):
            break
        # "Core L#0 (P#0)", "NUMANode(MCDRAM) L#1 (…)", and "PU P#0" in filtered outputs
        for t in re.findall(r"(?:^|\+ )(\w+)(?:\([^)]*\))? [LP]#\d+", line.strip()):
            cnt[t] = cnt.get(t, 0) + 1
    return cnt


def our_counts(t) -> dict[str, int]:
    """Our model seen as hwloc shows it: an object is kept when it holds a usable CPU or an
    allowed NUMA node (hwloc attaches a node to the topmost object with its cpuset)."""
    u = set(t.usable_cpus())
    mem = [n for n in t.nodes if n.allowed]
    pkg_cpus = {p.id: set(p.cpus) for p in t.packages}

    def holds_node(cpus: set[int], pkg: int | None) -> bool:
        return any(n.cpus and set(n.cpus) <= cpus
                   and not (set(n.cpus) == cpus == pkg_cpus.get(pkg)) for n in mem)
    return {"PU": len(u), "Core": sum(1 for c in t.cores if set(c.cpus) & u),
            "Package": sum(1 for p in t.packages
                           if set(p.cpus) & u or any(n.id in p.nodes for n in mem)),
            "NUMANode": len(mem),
            "L3Cache": sum(1 for d in t.l3s
                           if set(d.cpus) & u or holds_node(set(d.cpus), d.package))}


@pytest.mark.parametrize("name", NAMES)
def test_counts_match_hwloc_output(name, topo):
    t = topo(name)
    ours = our_counts(t)
    theirs = hwloc_counts(name)
    differs = DIFFERS.get(name, {})
    for kind, value in ours.items():
        if kind in differs:
            assert value == differs[kind][0], f"{kind}: {differs[kind][1]}"
            assert theirs.get(kind, 0) != value  # still a difference, else drop the entry
        else:
            assert value == theirs.get(kind, 0), kind
    assert t.facts["threads"].value == sum(c.online for c in t.cpus)
    assert t.facts["memory_mode"].status in ("known", "ambiguous", "unknown")


def test_sparse_node_ids(topo):
    t = topo("48amd64-4d2n6c-sparse")
    assert t.node_ids() == [0, 1, 2, 33, 34, 45, 72, 73]
    assert t.facts["sparse_node_ids"].value is True
    assert t.facts["sockets"].value == 4 and t.facts["nodes_per_socket"].value == 2
    assert t.facts["memory_mode"].value == "2 nodes per socket"  # Opteron: no NPS names
    assert set(t.facts["distance_classes"].value) == {"10", "16", "22"}
    assert t.distance(0, 1) == 16 and t.distance(0, 33) == 22


def test_offline_cpus(topo):
    t = topo("16em64t-4s2c2t-offlines")
    assert t.facts["offline_cpus"].value == [2, 5, 13, 14]
    assert 2 not in t.usable_cpus() and len(t.usable_cpus()) == 12


def test_snc_on_memorysidecaches(topo):
    t = topo("memorysidecaches")
    assert t.facts["memory_mode"].value == "SNC2"
    assert t.facts["smt_numbering"].value == "offset"
    assert t.facts["core_numbering"].value == "round-robin across sockets"
    assert set(t.facts["distance_classes"].value) == {"10", "11", "21"}


def test_knl_snc4_with_cpuless_mcdram(topo):
    t = topo("64intel64-fakeKNL-SNC4-hybrid")
    assert (t.facts["memory_mode"].value, t.facts["memory_mode"].status) == ("SNC4", "known")
    assert len(t.facts["cpuless_nodes"].value) == 4


@pytest.mark.parametrize("name, cpus", [("16amd64-8n2c-cpusets", "0-6,12-15"),
                                        ("32amd64-4s2n4c-cgroup2", "0-5"),
                                        ("16amd64-4n4c-cgroup-distance-merge", "0-3")])
def test_cgroup_restrictions(name, cpus, topo):
    from numascope.placement import parse_cpulist
    t = topo(name)
    expect = [c for c in parse_cpulist(cpus) if t.cpu(c).online]
    assert t.usable_cpus() == expect
    assert t.facts["disallowed_cpus"].value


def test_pci_locality_40intel64(topo):
    t = topo("40intel64-2g2n4c+pci")
    ib = next(d for d in t.devices if d.kind == "infiniband")
    assert ib.numa_node == 2 and "qib0" in ib.name and "numa_node = 2" in ib.evidence
    eth = next(d for d in t.devices if d.name == "eth0")
    assert eth.numa_node is None  # -1 in sysfs: unknown, not node 0


def test_pci_locality_mic(topo):
    t = topo("32em64t-2n8c+1mic")
    kinds = {d.kind for d in t.devices}
    assert "coprocessor" in kinds
    for d in t.devices:
        assert d.numa_node is None or d.numa_node in t.node_ids()
    hw = ET.fromstring((HWLOC_FIXTURES / "32em64t-2n8c+1mic.output").read_text()) \
        if (HWLOC_FIXTURES / "32em64t-2n8c+1mic.output").read_text().startswith("<?xml") \
        else None
    if hw is not None:
        mic = next(d for d in t.devices if d.kind == "coprocessor")
        assert mic.numa_node is not None


LSTOPO = shutil.which("lstopo-no-graphics")


@pytest.mark.skipif(LSTOPO is None, reason="lstopo-no-graphics not installed")
@pytest.mark.parametrize("name", ["40intel64-2g2n4c+pci", "48amd64-4d2n6c-sparse",
                                  "memorysidecaches", "16em64t-4s2c2t-offlines",
                                  *sorted(DIFFERS), "16amd64-8n2c-cpusets",
                                  "32amd64-4s2n4c-cgroup2", "fakeheteromemtiers",
                                  "fakememinitiators-1np2c+1npp+gi"])
def test_counts_match_lstopo(name, dumps, topo):
    r = subprocess.run([LSTOPO, "--input", str(dumps(name)), "--of", "xml"],
                       check=False, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        pytest.skip(f"lstopo could not read the dump: {r.stderr.strip()[:200]}")
    cnt: dict[str, int] = {}
    for o in ET.fromstring(r.stdout).iter("object"):
        cnt[o.get("type")] = cnt.get(o.get("type"), 0) + 1
    ours = our_counts(topo(name))
    differs = {} if name in FILTERED_ONLY else DIFFERS.get(name, {})
    assert ours == {k: differs[k][0] if k in differs else cnt.get(k, 0) for k in ours}


def test_buggy_numa_overlap_flagged(topo):
    t = topo("8em64t-2s2ca2c-buggynuma")
    assert t.node(0).cpus == tuple(range(8))
    assert all(not t.node(n).cpus for n in range(1, 8))
    assert set(t.overlapping_nodes) == set(range(1, 8))
    assert t.facts["cpu_nodes"].value == 1
    assert t.facts["memory_mode"].status == "ambiguous"
    assert "overlap" in t.facts["memory_mode"].evidence
    assert "overlap" in t.facts["cpuless_nodes"].evidence


def test_bulldozer_siblings_are_cmt_not_smt(topo):
    t = topo("64amd64-4s2n4ca2co")
    assert t.facts["cores"].value == 32 and t.facts["smt_width"].value == 2
    assert "CMT" in t.facts["smt_width"].evidence
    assert t.facts["memory_mode"].value == "2 nodes per socket"
    assert set(t.facts["distance_classes"].value) == {"10", "16", "22"}
    assert "hex-map" in " ".join(t.notes)  # its L1i/L2 lists disagree with the maps


def test_edited_maps_are_noted(topo):
    t = topo("40intel64-4n10c+pci-conflicts")
    assert any("cpu2/cache/index3/shared_cpu_list" in n for n in t.notes)
    assert t.facts["core_numbering"].value == "round-robin across sockets"
    assert [len(d.cpus) for d in t.l3s] == [10, 10, 10, 10]


def test_vm_memory_mode_is_hedged(topo):
    t = topo("fakeheteromemtiers")
    assert t.facts["memory_mode"].value == "SNC3"
    assert t.facts["memory_mode"].status == "ambiguous"
    assert t.facts["cpuless_nodes"].value == [4, 6, 8, 9]


def test_cgroup_keeps_allowed_memory_nodes(topo):
    t = topo("16amd64-8n2c-cpusets")
    assert t.facts["disallowed_nodes"].value == [0, 5, 6, 7]
    assert t.node(4).allowed and not set(t.node(4).cpus) & set(t.usable_cpus())
