"""Inference on synthetic machines: 2-socket EPYC in every NPS mode, L3-as-NUMA, SNC,
numbering and SMT layouts, PCI locality."""

from __future__ import annotations

import pytest
from synth_sysfs import add_pci, machine

from numascope.topology import read_topology


def facts(tmp_path, **kw):
    return read_topology(machine(tmp_path, **kw)).facts


@pytest.mark.parametrize("nps, mode", [(1, "NPS1"), (2, "NPS2"), (4, "NPS4"), (0, "NPS0"),
                                       (8, "L3-as-NUMA")])
def test_epyc_memory_modes(tmp_path, nps, mode):
    f = facts(tmp_path, nodes_per_socket=nps)
    assert f["memory_mode"].value == mode
    assert f["memory_mode"].status == "known"
    assert f["sockets"].value == 2
    assert f["l3_domains"].value == 16
    assert f["cores_per_l3"].value == 4
    assert f["smt_width"].value == 2
    assert f["cpu_nodes"].value == (1 if nps == 0 else 2 * nps)
    if nps:
        assert f["nodes_per_socket"].value == nps


def test_snc_node_smaller_than_l3(tmp_path):
    f = facts(tmp_path, l3_per_socket=1, cores_per_l3=8, nodes_per_socket=2,
              vendor="GenuineIntel", model="Intel Xeon")
    assert f["memory_mode"].value == "SNC2"


def test_one_l3_one_node_per_socket_is_ambiguous(tmp_path):
    f = facts(tmp_path, l3_per_socket=1, cores_per_l3=8, nodes_per_socket=1)
    assert f["memory_mode"].status == "ambiguous"
    assert "L3-as-NUMA" in f["memory_mode"].value and "NPS1" in f["memory_mode"].value


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
