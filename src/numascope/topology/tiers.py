"""Memory tiers: DRAM nodes (with CPUs) and CPU-less memory nodes (CXL expanders, HBM, NVM),
grouped the way a tuner places data.

Read from sysfs under the topology reader's root (so dumps replay):
    sys/devices/virtual/memory_tiering/memory_tierN/nodelist   the kernel's tiers (>= 6.1)
    sys/devices/system/node/nodeN/accessK/initiators/           HMAT figures (ACPI 6.3)
    sys/kernel/mm/mempolicy/weighted_interleave/nodeN           weighted interleave (>= 6.9)

Grouping: the nodes with CPUs form the DRAM tier; CPU-less memory nodes are grouped by their
SLIT distance from the nearest CPU node and, where the kernel exposes them, their memory tier
and HMAT read figures."""

from __future__ import annotations

from dataclasses import dataclass, field

from numascope.topology.files import Tree
from numascope.topology.model import MemoryTiering, NodeAccess, Topology

TIER_DIR = "sys/devices/virtual/memory_tiering"
NODE_DIR = "sys/devices/system/node"
WI_DIR = "sys/kernel/mm/mempolicy/weighted_interleave"
# upstream names the switch "auto" (6.16); some 6.18 builds show it as "__auto_type" (the
# attribute's name went through the compiler's `auto` macro)
WI_AUTO = ("auto", "__auto_type")
DRAM = "DRAM"


def read_tiering(tree: Tree, node_ids: list[int]) -> MemoryTiering:
    tiers = {}
    for t in tree.numbered(TIER_DIR, "memory_tier"):
        nodes = tree.read_list(f"{TIER_DIR}/memory_tier{t}/nodelist")
        if nodes is not None:
            tiers[t] = tuple(nodes)
    access = {}
    for n in node_ids:
        classes = tuple(a for k in tree.numbered(f"{NODE_DIR}/node{n}", "access")
                        if (a := _access(tree, n, k)) is not None)
        if classes:
            access[n] = classes
    weights = {n: w for n in tree.numbered(WI_DIR, "node")
               if (w := tree.read_int(f"{WI_DIR}/node{n}")) is not None}
    auto = next((v.strip() in ("true", "1", "Y") for name in WI_AUTO
                 if (v := tree.read(f"{WI_DIR}/{name}")) is not None), None)
    return MemoryTiering(kernel_tiers=tiers, access=access,
                         weighted_interleave=tree.exists(WI_DIR), interleave_weights=weights,
                         interleave_auto=auto)


def _access(tree: Tree, node: int, k: int) -> NodeAccess | None:
    d = f"{NODE_DIR}/node{node}/access{k}/initiators"
    inits = tuple(tree.numbered(d, "node"))
    figures = {f: tree.read_int(f"{d}/{f}") for f in
               ("read_latency", "write_latency", "read_bandwidth", "write_bandwidth")}
    if not inits and all(v is None for v in figures.values()):
        return None   # a pure initiator: its accessK dir lists only targets
    return NodeAccess(access=k, initiators=inits, read_latency_ns=figures["read_latency"],
                      write_latency_ns=figures["write_latency"],
                      read_bandwidth_mbs=figures["read_bandwidth"],
                      write_bandwidth_mbs=figures["write_bandwidth"])


@dataclass(frozen=True)
class Tier:
    name: str                     # "DRAM", "CPU-less 1" (nearest), "CPU-less 2" …
    kind: str                     # "dram" | "cpuless"
    nodes: tuple[int, ...]
    distance: int | None          # SLIT distance from the nearest CPU node (DRAM: 10)
    kernel_tier: int | None       # the kernel's memory_tierN of all its nodes, if one
    # CPU node → SLIT distance to each node of the tier, in `nodes` order
    distances: dict[int, tuple[int | None, ...]] = field(default_factory=dict)


def kernel_tier_of(topo: Topology) -> dict[int, int]:
    return {n: t for t, nodes in topo.tiering.kernel_tiers.items() for n in nodes}


def cpu_nodes(topo: Topology) -> list[int]:
    return [n.id for n in topo.nodes if n.cpus]


def memory_nodes(topo: Topology) -> list[int]:
    return [n.id for n in topo.nodes if not n.memoryless]


def nearest_distance(topo: Topology, node: int) -> int | None:
    ds = [d for c in cpu_nodes(topo) if (d := topo.distance(c, node)) is not None]
    return min(ds) if ds else None


def best_access(topo: Topology, node: int) -> NodeAccess | None:
    """The HMAT class with CPU initiators (access1), else the one of any initiator."""
    acc = {a.access: a for a in topo.tiering.access.get(node, ())}
    return acc.get(1) or acc.get(0)


def tiers(topo: Topology) -> list[Tier]:
    """DRAM first, then the CPU-less groups from nearest to farthest. CPU-less nodes share
    a group when their distance from the nearest CPU node, their kernel memory tier and
    their HMAT read figures (where shown) are the same."""
    ktier = kernel_tier_of(topo)
    cpun = cpu_nodes(topo)
    far = 1 << 30
    groups: dict[tuple, list[int]] = {}
    for n in memory_nodes(topo):
        if topo.node(n).cpus:
            key: tuple = (0,)
        else:
            d = nearest_distance(topo, n)
            a = best_access(topo, n)
            lat = a.read_latency_ns if a and a.read_latency_ns is not None else far
            bw = a.read_bandwidth_mbs if a and a.read_bandwidth_mbs is not None else 0
            key = (1, d if d is not None else far, ktier.get(n, -1), lat, -bw)
        groups.setdefault(key, []).append(n)
    out = []
    for key in sorted(groups):
        nodes = tuple(groups[key])
        kt = {ktier.get(n) for n in nodes}
        kernel = kt.pop() if len(kt) == 1 else None
        if key[0] == 0:
            name, kind, dist = DRAM, "dram", None
        else:
            name, kind = f"CPU-less {sum(t.kind == 'cpuless' for t in out) + 1}", "cpuless"
            dist = key[1] if key[1] != far else None
        out.append(Tier(name=name, kind=kind, nodes=nodes, distance=dist, kernel_tier=kernel,
                        distances={c: tuple(topo.distance(c, n) for n in nodes)
                                   for c in cpun}))
    return out


def tier_names(topo: Topology) -> dict[int, str]:
    """Memory node → the name of its tier."""
    return {n: t.name for t in tiers(topo) for n in t.nodes}


def nearest_cpuless(topo: Topology, node: int) -> int | None:
    """The CPU-less memory node closest to `node` (SLIT), lowest id on ties; None if none."""
    cands = [n for t in tiers(topo) if t.kind == "cpuless" for n in t.nodes]
    if not cands:
        return None
    return min(cands, key=lambda n: (topo.distance(node, n) or 1 << 30, n))


def tiers_to_dict(topo: Topology) -> dict:
    """The JSON form: the kernel's view and numascope's grouping."""
    tg = topo.tiering
    return {
        "tiers": [{"name": t.name, "kind": t.kind, "nodes": list(t.nodes),
                   "distance": t.distance, "kernel_tier": t.kernel_tier,
                   "distances": {str(c): list(v) for c, v in t.distances.items()}}
                  for t in tiers(topo)],
        "kernel_tiers": {str(k): list(v) for k, v in tg.kernel_tiers.items()},
        "hmat": {str(n): [{"access": a.access, "initiators": list(a.initiators),
                           "read_latency_ns": a.read_latency_ns,
                           "write_latency_ns": a.write_latency_ns,
                           "read_bandwidth_mbs": a.read_bandwidth_mbs,
                           "write_bandwidth_mbs": a.write_bandwidth_mbs} for a in acc]
                 for n, acc in tg.access.items()},
        "weighted_interleave": {"available": tg.weighted_interleave,
                                "weights": {str(k): v for k, v in
                                            tg.interleave_weights.items()},
                                "auto": tg.interleave_auto},
    }
