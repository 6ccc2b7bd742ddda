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

# Where hwloc counts differently by design, only PUs are compared:
#  Bulldozer compute units (hwloc: 1 core per PU), KNL memory-side caches shown as L3,
#  hwloc dropping buggy NUMA info or keeping disallowed packages/nodes under cgroups,
#  outputs that are not plain trees.
PU_ONLY = {"16amd64-4n4c-cgroup-distance-merge", "16amd64-8n2c-cpusets",
           "32amd64-4s2n4c-cgroup2", "40intel64-4n10c+pci-conflicts",
           "4em64t-2c2t-ignore-reorder", "64amd64-4s2n4ca2co", "64intel64-fakeKNL-A2A-cache",
           "64intel64-fakeKNL-SNC4-hybrid", "8em64t-2s2ca2c-buggynuma", "fakeheteromemtiers",
           "fakememinitiators-1np2c+1npp+gi"}
NO_TREE = {"4em64t-2c2t-ignore-reorder"}


@pytest.fixture(scope="session")
def dumps(tmp_path_factory):
    """Each dump extracted once per session: name → root directory."""
    cache: dict[str, object] = {}

    def get(name):
        if name not in cache:
            d = tmp_path_factory.mktemp(re.sub(r"\W", "_", name))
            cache[name] = extract_dump(HWLOC_FIXTURES / f"{name}.tar.bz2", d)
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
    else:
        for line in text.split("\n\n")[0].splitlines():
            for t in re.findall(r"(\w+)(?:\([^)]*\))? L#\d+", line):
                cnt[t] = cnt.get(t, 0) + 1
    return cnt


def our_counts(t) -> dict[str, int]:
    u = set(t.usable_cpus())
    return {"PU": len(u), "Core": sum(1 for c in t.cores if set(c.cpus) & u),
            "Package": sum(1 for p in t.packages if set(p.cpus) & u),
            "NUMANode": sum(1 for n in t.nodes if n.allowed and (not n.cpus or set(n.cpus) & u)),
            "L3Cache": sum(1 for d in t.l3s if set(d.cpus) & u)}


@pytest.mark.parametrize("name", NAMES)
def test_counts_match_hwloc_output(name, topo):
    t = topo(name)
    ours = our_counts(t)
    theirs = {k: hwloc_counts(name).get(k, 0) for k in ours}
    if name in NO_TREE:
        assert ours["PU"] > 0
    elif name in PU_ONLY:
        assert ours["PU"] == theirs["PU"]
    else:
        assert ours == theirs
    assert t.facts["threads"].value == sum(c.online for c in t.cpus)
    assert t.facts["memory_mode"].status in ("known", "ambiguous", "unknown")


def test_sparse_node_ids(topo):
    t = topo("48amd64-4d2n6c-sparse")
    assert t.node_ids() == [0, 1, 2, 33, 34, 45, 72, 73]
    assert t.facts["sparse_node_ids"].value is True
    assert t.facts["sockets"].value == 4 and t.facts["nodes_per_socket"].value == 2
    assert t.facts["memory_mode"].value == "L3-as-NUMA"
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
    assert t.facts["memory_mode"].value == "SNC4"
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
                                  "memorysidecaches", "16em64t-4s2c2t-offlines"])
def test_counts_match_lstopo(name, dumps, topo):
    r = subprocess.run([LSTOPO, "--input", str(dumps(name)), "--of", "xml"],
                       check=False, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        pytest.skip(f"lstopo could not read the dump: {r.stderr.strip()[:200]}")
    cnt: dict[str, int] = {}
    for o in ET.fromstring(r.stdout).iter("object"):
        cnt[o.get("type")] = cnt.get(o.get("type"), 0) + 1
    ours = our_counts(topo(name))
    assert ours == {k: cnt.get(k, 0) for k in ours}
