"""A synthetic 2-socket machine with two CPU-less CXL nodes, kernel memory tiers, HMAT and
weighted-interleave weights: the sysfs a tiered server shows (Linux >= 6.9)."""

from __future__ import annotations

from pathlib import Path

from synth_sysfs import machine

# node → SLIT row over nodes 0..3: N2 is a CXL expander on socket 0, N3 on socket 1
DIST = {0: [10, 32, 14, 36], 1: [32, 10, 36, 14], 2: [14, 36, 10, 40], 3: [36, 14, 40, 10]}


def _w(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text + "\n")


def tiered(root: Path, *, weights: bool = True, auto_name: str = "__auto_type") -> Path:
    root = machine(root, sockets=2, l3_per_socket=1, cores_per_l3=2, smt=1)
    nd = "sys/devices/system/node"
    for n in (2, 3):
        _w(root, f"{nd}/node{n}/cpulist", "")
        _w(root, f"{nd}/node{n}/meminfo", f"Node {n} MemTotal:       {128 << 20} kB\n"
                                          f"Node {n} MemFree:        {100 << 20} kB")
    for n, row in DIST.items():
        _w(root, f"{nd}/node{n}/distance", " ".join(map(str, row)))
    _w(root, f"{nd}/online", "0-3")
    tiers = "sys/devices/virtual/memory_tiering"
    _w(root, f"{tiers}/memory_tier4/nodelist", "0-1")
    _w(root, f"{tiers}/memory_tier22/nodelist", "2-3")
    # HMAT: N2 seen from N0 (both access classes), N3 from N1 (access0 only), same figures
    for k in (0, 1):
        d = root / f"{nd}/node2/access{k}/initiators"
        d.mkdir(parents=True)
        (d / "node0").symlink_to("../../../node0")
        for f, v in (("read_latency", 250), ("write_latency", 300),
                     ("read_bandwidth", 30000), ("write_bandwidth", 25000)):
            _w(root, f"{nd}/node2/access{k}/initiators/{f}", str(v))
    d = root / f"{nd}/node3/access0/initiators"
    d.mkdir(parents=True)
    (d / "node1").symlink_to("../../../node1")
    _w(root, f"{nd}/node3/access0/initiators/read_latency", "250")
    _w(root, f"{nd}/node3/access0/initiators/read_bandwidth", "30000")
    # node0 as an initiator: its access0 lists targets only
    (root / f"{nd}/node0/access0/targets").mkdir(parents=True)
    if weights:
        wi = "sys/kernel/mm/mempolicy/weighted_interleave"
        for n, w in ((0, 3), (1, 3), (2, 1), (3, 1)):
            _w(root, f"{wi}/node{n}", str(w))
        _w(root, f"{wi}/{auto_name}", "true")
    return root
