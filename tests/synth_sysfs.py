"""Build synthetic sysfs/procfs trees in code, for machines no fixture covers.

    root = machine(tmp_path, sockets=2, l3_per_socket=8, cores_per_l3=4, smt=2,
                   nodes_per_socket=4)                       # 2-socket EPYC in NPS4
    topo = read_topology(root)

nodes_per_socket: 0 = one node for the whole machine (NPS0); k = k nodes per socket, each
holding a contiguous share of the socket's cores (k == l3_per_socket gives L3-as-NUMA, and
k > l3_per_socket splits an L3: Sub-NUMA Clustering).
numbering: "linear" (socket by socket), "rr-socket" (consecutive CPUs alternate sockets),
"rr-node" (alternate nodes inside a socket). smt_layout: "offset" (0 and N) or "adjacent"."""

from __future__ import annotations

from pathlib import Path

from numascope.topology.lists import format_list


def _w(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text + "\n")


def machine(root: Path, *, sockets: int = 2, l3_per_socket: int = 8, cores_per_l3: int = 4,
            smt: int = 2, nodes_per_socket: int = 1, numbering: str = "linear",
            smt_layout: str = "offset", vendor: str = "AuthenticAMD",
            model: str = "AMD EPYC 9654 96-Core Processor", node_mem_kb: int = 64 << 20,
            l3_kb: int = 32768) -> Path:
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
        d = f"{base}/cpu{c}"
        _w(root, f"{d}/topology/physical_package_id", str(s))
        _w(root, f"{d}/topology/core_id", str(k))
        _w(root, f"{d}/topology/thread_siblings_list", format_list(sib))
        if c:
            _w(root, f"{d}/online", "1")
        for idx, (lvl, kind, size, shared) in enumerate(
                [(1, "Data", "32K", sib), (1, "Instruction", "32K", sib),
                 (2, "Unified", "1024K", sib), (3, "Unified", f"{l3_kb}K", l3cpus)]):
            cd = f"{d}/cache/index{idx}"
            _w(root, f"{cd}/level", str(lvl))
            _w(root, f"{cd}/type", kind)
            _w(root, f"{cd}/size", size)
            _w(root, f"{cd}/shared_cpu_list", format_list(shared))
            _w(root, f"{cd}/coherency_line_size", "64")
        node_of = node
        _w(root, f"sys/devices/system/node/node{node_of}/cpu{c}/.keep", "")
    _w(root, f"{base}/online", f"0-{ncpu - 1}")
    nodes = sorted({p[2] for p in phys})
    nsock = {n: {p[0] for p in phys if p[2] == n} for n in nodes}
    for n in nodes:
        nd = f"sys/devices/system/node/node{n}"
        cpus = [c for (i, t), c in cpu_of.items() if phys[i][2] == n]
        _w(root, f"{nd}/cpulist", format_list(cpus))
        _w(root, f"{nd}/meminfo", f"Node {n} MemTotal:       {node_mem_kb} kB\n"
                                  f"Node {n} MemFree:        {node_mem_kb // 2} kB")
        row = [10 if m == n else 12 if nsock[m] & nsock[n] else 32 for m in nodes]
        _w(root, f"{nd}/distance", " ".join(map(str, row)))
    _w(root, "sys/devices/system/node/online", format_list(nodes))
    _w(root, "proc/cpuinfo", f"processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: 25\n"
                             f"model\t\t: 17\nmodel name\t: {model}\nflags\t\t: fpu sse2\n")
    _w(root, "proc/meminfo", f"MemTotal: {node_mem_kb * len(nodes)} kB")
    return root


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
