"""PCI devices that matter for placement (NICs, InfiniBand HCAs, NVMe, GPUs …) and their
NUMA locality, read from sys/bus/pci/devices and the class directories under sys/class.

numa_node = -1 (or absent) means the firmware did not say: reported as None ("unknown"),
never as node 0. A class device (net/eth0, block/nvme0n1 …) has no numa_node of its own:
we walk up its sysfs path to the nearest PCI function and use that one's."""

from __future__ import annotations

import os
import re
from pathlib import Path

from numascope.topology.files import Tree
from numascope.topology.model import PciDevice, Topology

PCI_ADDR = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
CLASS_DIRS = ("infiniband", "net", "nvme", "block", "drm", "mic", "dma")

# PCI class code (first 2 or 4 hex digits) → kind
_CLASS_KIND = (("0c06", "infiniband"), ("0108", "nvme"), ("02", "nic"), ("03", "gpu"),
               ("0b40", "coprocessor"), ("12", "accelerator"), ("01", "storage"))
_CLASS_DIR_KIND = {"infiniband": "infiniband", "net": "nic", "drm": "gpu", "mic": "coprocessor",
                   "nvme": "nvme"}
_KIND_RANK = {"infiniband": 0, "gpu": 1, "coprocessor": 1, "nvme": 2, "nic": 3,
              "accelerator": 4, "storage": 5}


def _kind_from_class(code: str | None) -> str | None:
    if not code:
        return None
    c = code.lower().removeprefix("0x")
    for prefix, kind in _CLASS_KIND:
        if c.startswith(prefix):
            return kind
    return None


def _pci_ancestor(real: Path, top: Path) -> Path | None:
    """Nearest directory at or above `real` (inside `top`) named like a PCI function."""
    p = real
    while p != top and top in p.parents:
        if PCI_ADDR.match(p.name):
            return p
        p = p.parent
    return None


def read_devices(tree: Tree, topo: Topology) -> list[PciDevice]:
    top = tree.root.resolve()
    bus = "sys/bus/pci/devices"
    funcs: dict[str, Path] = {}
    for addr in tree.listdir(bus):
        real = Path(os.path.realpath(tree.path(f"{bus}/{addr}")))
        if top in real.parents and real.is_dir():
            funcs[real.name] = real
    names: dict[str, list[str]] = {}
    dir_kind: dict[str, str] = {}
    for cls in CLASS_DIRS:
        for name in tree.listdir(f"sys/class/{cls}"):
            real = Path(os.path.realpath(tree.path(f"sys/class/{cls}/{name}")))
            if top not in real.parents:
                continue  # a link pointing out of the dump: ignore
            anc = _pci_ancestor(real, top)
            if anc is None:
                continue  # virtual device (loop, lo, ram …)
            funcs.setdefault(anc.name, anc)
            if cls == "block" and real.parent.name != "block":
                continue  # a partition (…/block/sda/sda1): the disk is enough
            names.setdefault(anc.name, []).append(name)
            k = _CLASS_DIR_KIND.get(cls)
            if cls == "block" and name.startswith("nvme"):
                k = "nvme"
            if k and _KIND_RANK.get(k, 9) < _KIND_RANK.get(dir_kind.get(anc.name, ""), 9):
                dir_kind[anc.name] = k

    node_sets = {n.id: set(n.cpus) for n in topo.nodes if n.cpus}
    all_cpus = {c.id for c in topo.cpus}
    devices = []
    for addr, path in sorted(funcs.items()):
        rel = str(path.relative_to(top))
        code = tree.read(f"{rel}/class")
        kind = dir_kind.get(addr) or _kind_from_class(code)
        if kind is None and addr not in names:
            continue  # bridges, host bridges, SMBus …: not placement targets
        kind = kind or "other"
        node, evidence = _locality(tree, rel, node_sets, all_cpus)
        local = tree.read_cpus(rel, "local_cpus") or []
        vendor, dev = tree.read(f"{rel}/vendor"), tree.read(f"{rel}/device")
        devices.append(PciDevice(
            address=addr, kind=kind, name=",".join(names.get(addr, [])) or f"{vendor}:{dev}",
            vendor=vendor, device=dev,
            numa_node=node, local_cpus=tuple(local), evidence=evidence))
    devices.sort(key=lambda d: (_KIND_RANK.get(d.kind, 9), d.address))
    return devices


def _locality(tree: Tree, rel: str, node_sets: dict[int, set[int]], all_cpus: set[int]
              ) -> tuple[int | None, str]:
    """numa_node of the PCI function; on -1, a local_cpulist that names exactly one node."""
    raw = tree.read(f"{rel}/numa_node")
    where = tree.where(f"{rel}/numa_node")
    if raw is not None and raw.lstrip("-").isdigit() and int(raw) >= 0:
        return int(raw), f"{where} = {raw}"
    if raw is None:  # no file at all (old kernels, some functions): ask the upstream bridges
        parent = Path(rel).parent
        while PCI_ADDR.match(parent.name):
            up = tree.read(f"{parent}/numa_node")
            if up is not None and up.lstrip("-").isdigit() and int(up) >= 0:
                return int(up), f"{where} missing; upstream bridge {parent.name} numa_node = {up}"
            if up is not None:
                break
            parent = parent.parent
    said = f"{where} = {raw}" if raw is not None else f"{where} missing"
    local = tree.read_cpus(rel, "local_cpus")
    if local and set(local) != all_cpus:
        match = [n for n, s in node_sets.items() if s == set(local)]
        if len(match) == 1:
            return match[0], f"{said}; local_cpulist matches node {match[0]}'s CPUs exactly"
    return None, f"{said} (unknown: the firmware does not say)"
