"""Build synthetic sysfs/procfs trees in code, for machines no fixture covers.

    root = machine(tmp_path, sockets=2, l3_per_socket=8, cores_per_l3=4, smt=2,
                   nodes_per_socket=4)                       # 2-socket EPYC in NPS4

nodes_per_socket: 0 = one node for the whole machine (NPS0, node interleaving); k = k nodes
per socket, each holding a contiguous share of the socket's cores (k == l3_per_socket gives
L3-as-NUMA, and k > l3_per_socket splits an L3: Sub-NUMA Clustering).
numbering: "linear" (socket by socket), "rr-socket" (consecutive CPUs alternate sockets),
"rr-node" (alternate nodes inside a socket). smt_layout: "offset" (0 and N) or "adjacent".
vendor, family, model_number, model, flags and hypervisor fill proc/cpuinfo (EPYC 9654 by
default); l1d_kb, l2_kb and l3_kb size the caches.
Every cpu list is written with its hex-map twin too, so that hwloc (lstopo --input) reads
the same tree; lstopo_counts() gives its object counts."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from numascope.topology.lists import format_list

LSTOPO = shutil.which("lstopo-no-graphics")


def _w(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text + "\n")


def _map(cpus: list[int], ncpu: int) -> str:
    """The kernel's cpumap: 32-bit hex words, most significant first."""
    value = sum(1 << c for c in cpus)
    words = [(value >> (32 * i)) & 0xFFFFFFFF for i in range((ncpu + 31) // 32)]
    return ",".join(f"{w:08x}" for w in reversed(words))


def _cpus(root: Path, rel: str, cpus: list[int], ncpu: int, list_name: str,
          map_name: str) -> None:
    _w(root, f"{rel}/{list_name}", format_list(cpus))
    _w(root, f"{rel}/{map_name}", _map(cpus, ncpu))


def machine(root: Path, *, sockets: int = 2, l3_per_socket: int = 8, cores_per_l3: int = 4,
            smt: int = 2, nodes_per_socket: int = 1, numbering: str = "linear",
            smt_layout: str = "offset", vendor: str = "AuthenticAMD",
            model: str = "AMD EPYC 9654 96-Core Processor", family: int = 25,
            model_number: int = 17, hypervisor: bool = False, node_mem_kb: int = 64 << 20,
            l3_kb: int = 32768, l1d_kb: int = 32, l2_kb: int = 1024,
            flags: str = "fpu sse2") -> Path:
    root = Path(root)
    cores_per_socket = l3_per_socket * cores_per_l3
    phys = []  # (socket, l3 global, node, local core index)
    for s in range(sockets):
        for k in range(cores_per_socket):
            l3 = s * l3_per_socket + k // cores_per_l3
            node = 0 if nodes_per_socket == 0 else \
                s * nodes_per_socket + k * nodes_per_socket // cores_per_socket
            phys.append((s, l3, node, k))
    if numbering == "linear":
        order = sorted(range(len(phys)), key=lambda i: (phys[i][0], phys[i][3]))
    elif numbering == "rr-socket":
        order = sorted(range(len(phys)), key=lambda i: (phys[i][3], phys[i][0]))
    elif numbering == "rr-node":
        per_node = cores_per_socket // max(nodes_per_socket, 1)
        order = sorted(range(len(phys)),
                       key=lambda i: (phys[i][0], phys[i][3] % per_node, phys[i][2]))
    else:
        raise ValueError(numbering)
    ncores = len(phys)
    cpu_of: dict[tuple[int, int], int] = {}
    for rank, i in enumerate(order):
        for t in range(smt):
            cpu_of[(i, t)] = rank + t * ncores if smt_layout == "offset" else rank * smt + t
    ncpu = ncores * smt
    base = "sys/devices/system/cpu"
    for (i, t), c in cpu_of.items():
        s, l3, node, k = phys[i]
        sib = [cpu_of[(i, x)] for x in range(smt)]
        l3cpus = [cpu_of[(j, x)] for j in range(ncores) if phys[j][1] == l3 for x in range(smt)]
        pkg = [cpu_of[(j, x)] for j in range(ncores) if phys[j][0] == s for x in range(smt)]
        d = f"{base}/cpu{c}"
        _w(root, f"{d}/topology/physical_package_id", str(s))
        _w(root, f"{d}/topology/core_id", str(k))
        _cpus(root, f"{d}/topology", sib, ncpu, "thread_siblings_list", "thread_siblings")
        _cpus(root, f"{d}/topology", pkg, ncpu, "core_siblings_list", "core_siblings")
        if c:
            _w(root, f"{d}/online", "1")
        for idx, (lvl, kind, size, shared) in enumerate(
                [(1, "Data", f"{l1d_kb}K", sib), (1, "Instruction", "32K", sib),
                 (2, "Unified", f"{l2_kb}K", sib), (3, "Unified", f"{l3_kb}K", l3cpus)]):
            cd = f"{d}/cache/index{idx}"
            _w(root, f"{cd}/level", str(lvl))
            _w(root, f"{cd}/type", kind)
            _w(root, f"{cd}/size", size)
            _cpus(root, cd, shared, ncpu, "shared_cpu_list", "shared_cpu_map")
            _w(root, f"{cd}/coherency_line_size", "64")
        _w(root, f"sys/devices/system/node/node{node}/cpu{c}/.keep", "")
    _w(root, f"{base}/online", f"0-{ncpu - 1}")
    _w(root, f"{base}/possible", f"0-{ncpu - 1}")
    nodes = sorted({p[2] for p in phys})
    nsock = {n: {p[0] for p in phys if p[2] == n} for n in nodes}
    for n in nodes:
        nd = f"sys/devices/system/node/node{n}"
        cpus = [c for (i, t), c in cpu_of.items() if phys[i][2] == n]
        _cpus(root, nd, cpus, ncpu, "cpulist", "cpumap")
        _w(root, f"{nd}/meminfo", f"Node {n} MemTotal:       {node_mem_kb} kB\n"
                                  f"Node {n} MemFree:        {node_mem_kb // 2} kB")
        row = [10 if m == n else 12 if nsock[m] & nsock[n] else 32 for m in nodes]
        _w(root, f"{nd}/distance", " ".join(map(str, row)))
    _w(root, "sys/devices/system/node/online", format_list(nodes))
    _w(root, "sys/devices/system/node/possible", format_list(nodes))
    flags += " hypervisor" if hypervisor else ""
    _w(root, "proc/cpuinfo", f"processor\t: 0\nvendor_id\t: {vendor}\n"
                             f"cpu family\t: {family}\nmodel\t\t: {model_number}\n"
                             f"model name\t: {model}\nflags\t\t: {flags}\n")
    _w(root, "proc/meminfo", f"MemTotal: {node_mem_kb * len(nodes)} kB")
    return root


def lstopo_counts(root: Path) -> dict[str, int] | None:
    """hwloc's object counts (PU, Core, Package, NUMANode, L3Cache …) for the tree at root,
    None when lstopo-no-graphics is not installed or cannot read it."""
    if LSTOPO is None:
        return None
    r = subprocess.run([LSTOPO, "--input", str(root), "--of", "xml"], check=False,
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return None
    cnt: dict[str, int] = {}
    for o in ET.fromstring(r.stdout).iter("object"):
        cnt[o.get("type")] = cnt.get(o.get("type"), 0) + 1
    return cnt


def add_pci(root: Path, addr: str, *, pci_class: str, numa_node: str, cls: str | None = None,
            name: str | None = None, local_cpulist: str | None = None) -> None:
    """A PCI function under a root bridge, with an optional class device (net/ib0 …)."""
    root = Path(root)
    dev = f"sys/devices/pci0000:00/{addr}"
    _w(root, f"{dev}/class", pci_class)
    _w(root, f"{dev}/vendor", "0x15b3")
    _w(root, f"{dev}/device", "0x101b")
    _w(root, f"{dev}/numa_node", numa_node)
    if local_cpulist is not None:
        _w(root, f"{dev}/local_cpulist", local_cpulist)
    bus = root / "sys/bus/pci/devices"
    bus.mkdir(parents=True, exist_ok=True)
    (bus / addr).symlink_to(f"../../../devices/pci0000:00/{addr}")
    if cls and name:
        (root / dev / cls / name).mkdir(parents=True)
        cdir = root / "sys/class" / cls
        cdir.mkdir(parents=True, exist_ok=True)
        (cdir / name).symlink_to(f"../../devices/pci0000:00/{addr}/{cls}/{name}")
