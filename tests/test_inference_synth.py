"""Inference on synthetic machines: the memory mode in each vendor's words (EPYC NPS0/1/2/4
and L3-as-NUMA, Xeon SNC and node interleaving, others by count) on 1 and 2 sockets, with
hwloc reading the same trees; numbering and SMT layouts, PCI locality."""

from __future__ import annotations

import shutil

import pytest
from rich.console import Console
from synth_sysfs import LSTOPO, add_pci, lstopo_counts, machine

from numascope.topology import read_topology
from numascope.topology.render import render


def facts(tmp_path, **kw):
    return read_topology(machine(tmp_path, **kw)).facts


# Each case: (id, builder arguments, memory_mode value, status, nodes_per_socket).
GENOA = {"family": 25, "model_number": 17, "model": "AMD EPYC 9654 96-Core Processor"}
TURIN = {"family": 26, "model_number": 2, "model": "AMD EPYC 9124-class (synthetic)"}
SPR = {"vendor": "GenuineIntel", "family": 6, "model_number": 143,
       "model": "Intel(R) Xeon(R) Platinum 8480+", "l3_per_socket": 1, "cores_per_l3": 12}
SNB = {**SPR, "model_number": 45, "model": "Intel(R) Xeon(R) CPU E5-2680 0 @ 2.70GHz"}
HSX = {**SPR, "model_number": 63, "model": "Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz"}
OPTERON = {"family": 16, "model_number": 9, "model": "AMD Opteron(tm) Processor 6134",
           "l3_per_socket": 2}
VIA = {"vendor": "CentaurHauls", "family": 6, "model_number": 15, "model": "VIA (synthetic)"}
HYGON = {"vendor": "HygonGenuine", "family": 24, "model_number": 0,
         "model": "Hygon C86 7185 32-core Processor"}

MODES = [
    # AMD EPYC, 8 L3 (CCDs) per socket: NPS1/2/4 hold whole L3s, NPS0 spans the sockets,
    # one node per L3 (8 per socket) is L3-as-NUMA, as no NPS setting gives 8
    *[(f"amd-{s}s-nps{k}", {**GENOA, "sockets": s, "nodes_per_socket": k},
       f"NPS{k}", "known", k) for s in (1, 2) for k in (1, 2, 4)],
    ("amd-2s-nps0", {**GENOA, "nodes_per_socket": 0}, "NPS0", "known", "1/2"),
    *[(f"amd-{s}s-l3-as-numa", {**GENOA, "sockets": s, "nodes_per_socket": 8},
       "L3-as-NUMA", "known", 8) for s in (1, 2)],
    # every node exactly one L3, and 1, 2 or 4 of them per socket: NPSn looks the same
    *[(f"amd-{s}s-{n}l3-ambiguous", {**TURIN, "sockets": s, "l3_per_socket": n,
                                     "nodes_per_socket": n},
       f"NPS{n}|L3-as-NUMA", "ambiguous", n) for s in (1, 2) for n in (1, 2, 4)],
    # the same 4-L3 part in NPS2 and NPS1: nodes hold 2 or 4 L3s, which L3-as-NUMA never does
    ("amd-2s-4l3-nps2", {**TURIN, "l3_per_socket": 4, "nodes_per_socket": 2}, "NPS2",
     "known", 2),
    ("amd-2s-4l3-nps1", {**TURIN, "l3_per_socket": 4, "nodes_per_socket": 1}, "NPS1",
     "known", 1),
    # Hygon (Zen-derived) takes AMD's names and the same ambiguity
    ("hygon-2s-nps4", {**HYGON, "nodes_per_socket": 4}, "NPS4", "known", 4),
    ("hygon-2s-4l3-ambiguous", {**HYGON, "l3_per_socket": 4, "nodes_per_socket": 4},
     "NPS4|L3-as-NUMA", "ambiguous", 4),
    # Intel Xeon (Sapphire Rapids): one L3 per socket; SNC splits it into nodes
    *[(f"intel-{s}s-snc-off", {**SPR, "sockets": s}, "SNC off", "known", 1) for s in (1, 2)],
    *[(f"intel-{s}s-snc{k}", {**SPR, "sockets": s, "nodes_per_socket": k}, f"SNC{k}",
       "known", k) for s in (1, 2) for k in (2, 3, 4)],
    ("intel-2s-interleave", {**SPR, "nodes_per_socket": 0}, "node interleaving", "known",
     "1/2"),
    # Xeons before Skylake-SP have no SNC; Haswell-EP's Cluster-on-Die gives each half of
    # the die its own L3
    ("intel-snb-2s", {**SNB}, "1 node per socket", "known", 1),
    ("intel-snb-2s-interleave", {**SNB, "nodes_per_socket": 0}, "node interleaving",
     "known", "1/2"),
    ("intel-hsx-2s-cod", {**HSX, "l3_per_socket": 2, "cores_per_l3": 6,
                          "nodes_per_socket": 2}, "COD", "known", 2),
    # AMD before EPYC (Magny-Cours: two dies per package), and another vendor: counts
    ("opteron-4s-2n", {**OPTERON, "sockets": 4, "nodes_per_socket": 2},
     "2 nodes per socket", "known", 2),
    ("via-2s-1n", {**VIA}, "1 node per socket", "known", 1),
    ("via-2s-2n", {**VIA, "nodes_per_socket": 2}, "2 nodes per socket", "known", 2),
    ("via-2s-0n", {**VIA, "nodes_per_socket": 0}, "one node across sockets", "known", "1/2"),
    # a virtual machine's nodes say nothing sure about the host's BIOS
    ("vm-amd-nps4", {**GENOA, "nodes_per_socket": 4, "hypervisor": True}, "NPS4",
     "ambiguous", 4),
    ("vm-intel-1s", {**SPR, "sockets": 1, "hypervisor": True}, "SNC off", "ambiguous", 1),
    # no BIOS mode splits an L3 on AMD: a VM's or fake layout, named by count only
    ("amd-split-l3", {**GENOA, "l3_per_socket": 1, "cores_per_l3": 8,
                      "nodes_per_socket": 2}, "2 nodes per socket", "unknown", 2),
]


@pytest.mark.parametrize("kw, mode, status, nps", [m[1:] for m in MODES],
                         ids=[m[0] for m in MODES])
def test_memory_modes(tmp_path, kw, mode, status, nps):
    f = facts(tmp_path, **kw)
    assert (f["memory_mode"].value, f["memory_mode"].status) == (mode, status), \
        f["memory_mode"].evidence
    assert f["nodes_per_socket"].value == nps
    assert f["sockets"].value == kw.get("sockets", 2)
    if status == "ambiguous":  # the evidence says why
        assert "cannot tell" in f["memory_mode"].evidence or \
            "virtual machine" in f["memory_mode"].evidence


@pytest.mark.skipif(LSTOPO is None, reason="lstopo-no-graphics not installed")
@pytest.mark.parametrize("kw", [m[1] for m in MODES], ids=[m[0] for m in MODES])
def test_mode_trees_match_lstopo(tmp_path, kw):
    """hwloc reads the same synthetic tree: every count the mode rests on agrees."""
    root = machine(tmp_path, **kw)
    t = read_topology(root)
    theirs = lstopo_counts(root)
    assert theirs is not None, "lstopo could not read the synthetic tree"
    ours = {"PU": len(t.cpus), "Core": len(t.cores), "Package": len(t.packages),
            "NUMANode": len(t.nodes), "L3Cache": len(t.l3s)}
    assert ours == {k: theirs.get(k, 0) for k in ours}


def test_ambiguity_is_explained(tmp_path):
    ev = facts(tmp_path, **TURIN, l3_per_socket=4, nodes_per_socket=4)["memory_mode"].evidence
    assert "NPS4" in ev and "L3-as-NUMA" in ev and "cannot tell" in ev
    assert "AMD family 0x1a" in ev  # which vendor's names, and why


def test_no_numa_in_sysfs_hedges_the_mode(tmp_path):
    root = machine(tmp_path / "two", **GENOA, nodes_per_socket=4)
    shutil.rmtree(root / "sys/devices/system/node")
    f = read_topology(root).facts
    assert (f["memory_mode"].value, f["memory_mode"].status) == ("NPS0", "ambiguous")
    assert "no NUMA nodes" in f["memory_mode"].evidence
    root = machine(tmp_path / "one", **SPR, sockets=1, nodes_per_socket=2)
    shutil.rmtree(root / "sys/devices/system/node")
    f = read_topology(root).facts
    assert (f["memory_mode"].value, f["memory_mode"].status) == ("SNC off", "ambiguous")


def test_family_model_printed_in_order(tmp_path):
    topo = read_topology(machine(tmp_path, **TURIN))
    assert topo.facts["cpu_family_model"].value == [26, 2]
    console = Console(record=True, width=200)
    render(topo, console)
    out = console.export_text()
    assert "family 26, model 2" in out and "2,26" not in out


@pytest.mark.parametrize("numbering, expect", [("linear", "linear"),
                                               ("rr-socket", "round-robin across sockets"),
                                               ("rr-node", "round-robin across nodes")])
def test_core_numbering(tmp_path, numbering, expect):
    f = facts(tmp_path, nodes_per_socket=2, numbering=numbering)
    assert f["core_numbering"].value == expect
    assert f["memory_mode"].value == "NPS2"  # numbering does not change the mode


@pytest.mark.parametrize("layout", ["offset", "adjacent"])
def test_smt_layout(tmp_path, layout):
    topo = read_topology(machine(tmp_path, smt_layout=layout))
    assert topo.facts["smt_numbering"].value == layout
    core0 = topo.cores[0].cpus
    assert core0 == ((0, 64) if layout == "offset" else (0, 1))


def test_no_smt(tmp_path):
    assert facts(tmp_path, smt=1)["smt_numbering"].value == "no SMT"


def test_distance_classes(tmp_path):
    f = facts(tmp_path, nodes_per_socket=2)
    classes = f["distance_classes"].value
    assert set(classes) == {"10", "12", "32"}
    assert [0, 1] in classes["12"] and [0, 2] in classes["32"] and [3, 3] in classes["10"]


def test_pci_locality_and_unknown(tmp_path):
    root = machine(tmp_path, nodes_per_socket=2)
    add_pci(root, "0000:41:00.0", pci_class="0x020000", numa_node="3", cls="net", name="eth0")
    add_pci(root, "0000:42:00.0", pci_class="0x0c0600", numa_node="-1", cls="infiniband",
            name="mlx5_0")
    topo = read_topology(root)
    by = {d.name: d for d in topo.devices}
    assert by["eth0"].numa_node == 3 and by["eth0"].kind == "nic"
    assert by["mlx5_0"].numa_node is None and by["mlx5_0"].kind == "infiniband"
    assert "-1" in by["mlx5_0"].evidence
    assert topo.facts["devices_unknown_locality"].value == ["mlx5_0"]


def test_minus_one_with_local_cpus_of_one_node(tmp_path):
    root = machine(tmp_path, nodes_per_socket=2)
    node1 = read_topology(root).node(1).cpus
    add_pci(root, "0000:43:00.0", pci_class="0x010802", numa_node="-1", cls="nvme",
            name="nvme0", local_cpulist=",".join(map(str, node1)))
    d = read_topology(root).devices[0]
    assert d.kind == "nvme" and d.numa_node == 1 and "local_cpulist" in d.evidence


def test_function_without_numa_node_file_takes_its_bridges(tmp_path):
    root = machine(tmp_path, nodes_per_socket=2)
    add_pci(root, "0000:40:01.0", pci_class="0x060400", numa_node="2")  # a PCIe bridge
    fn = root / "sys/devices/pci0000:00/0000:40:01.0/0000:44:00.0"
    fn.mkdir(parents=True)
    (fn / "class").write_text("0x010802\n")  # NVMe, and no numa_node file of its own
    (root / "sys/bus/pci/devices/0000:44:00.0").symlink_to(
        "../../../devices/pci0000:00/0000:40:01.0/0000:44:00.0")
    (fn / "nvme/nvme0").mkdir(parents=True)
    (root / "sys/class/nvme").mkdir(parents=True, exist_ok=True)
    (root / "sys/class/nvme/nvme0").symlink_to(
        "../../devices/pci0000:00/0000:40:01.0/0000:44:00.0/nvme/nvme0")
    by = {d.name: d for d in read_topology(root).devices}
    assert by["nvme0"].numa_node == 2
    assert "upstream bridge 0000:40:01.0" in by["nvme0"].evidence
