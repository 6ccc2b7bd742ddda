"""The topology model: plain dataclasses, no I/O. Readers fill it, everything else reads it.

Names follow hwloc: Package (socket), NUMANode (Node here), L3 domain (CCX on AMD), Core,
PU (Cpu here: one hardware thread, identified by its OS index)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Cpu:
    """One hardware thread (hwloc PU), by OS index."""

    id: int
    package: int | None       # physical_package_id
    node: int | None          # NUMA node id, None when unknown
    l3: int | None            # index into Topology.l3s, None when no L3 is reported
    core: int | None          # index into Topology.cores
    smt: int                  # 0 for the first thread of its core, 1 for its sibling …
    online: bool = True
    allowed: bool = True      # in this process's affinity mask / cgroup cpuset
    die: int | None = None    # die_id within its package (Linux >= 5.2), None when unreported

    @property
    def usable(self) -> bool:
        return self.online and self.allowed


@dataclass(frozen=True)
class Cache:
    level: int
    kind: str                 # "Data", "Instruction", "Unified"
    size_bytes: int
    cpus: tuple[int, ...]     # CPUs sharing it
    line_bytes: int | None = None


@dataclass(frozen=True)
class Core:
    index: int                # index in Topology.cores
    package: int | None
    core_id: int | None       # sysfs core_id (only unique inside a package)
    cpus: tuple[int, ...]


@dataclass(frozen=True)
class L3Domain:
    index: int                # index in Topology.l3s
    size_bytes: int
    cpus: tuple[int, ...]
    package: int | None
    nodes: tuple[int, ...]    # NUMA nodes holding its CPUs


@dataclass(frozen=True)
class Node:
    id: int
    cpus: tuple[int, ...]
    memory_bytes: int | None  # MemTotal of the node, None when unreadable
    free_bytes: int | None
    distances: dict[int, int] = field(default_factory=dict)  # node id → SLIT distance
    packages: tuple[int, ...] = ()
    allowed: bool = True      # in this process's allowed memory nodes (cpuset mems)

    @property
    def cpuless(self) -> bool:
        return not self.cpus

    @property
    def memoryless(self) -> bool:
        return self.memory_bytes == 0


@dataclass(frozen=True)
class Package:
    id: int
    cpus: tuple[int, ...]
    nodes: tuple[int, ...]
    l3s: tuple[int, ...]


@dataclass(frozen=True)
class PciDevice:
    address: str              # e.g. 0000:3b:00.0
    kind: str                 # "infiniband", "nic", "nvme", "gpu", "storage", "other"
    name: str                 # interface/device names (ib0, eth0, nvme0n1 …) or class text
    vendor: str | None
    device: str | None
    numa_node: int | None     # None when the kernel says -1 or nothing (unknown, not node 0)
    local_cpus: tuple[int, ...]
    evidence: str = ""        # where numa_node came from (own file, PCI parent walk …)


@dataclass(frozen=True)
class NodeAccess:
    """One HMAT access class of a memory node (sysfs nodeN/accessK/initiators): what the
    firmware says its best initiators get. access 0: best of any initiator (CPU or generic
    initiator); access 1: best CPU initiator. None where the kernel shows no figure."""

    access: int
    initiators: tuple[int, ...]
    read_latency_ns: int | None = None
    write_latency_ns: int | None = None
    read_bandwidth_mbs: int | None = None     # MB/s, as the kernel reports it
    write_bandwidth_mbs: int | None = None


@dataclass
class MemoryTiering:
    """The kernel's memory-tier view: tiers, HMAT figures and weighted-interleave weights.
    Empty where the kernel (or the replayed dump) exposes none of it."""

    kernel_tiers: dict[int, tuple[int, ...]] = field(default_factory=dict)  # memory_tierN → nodes
    access: dict[int, tuple[NodeAccess, ...]] = field(default_factory=dict)  # node → classes
    weighted_interleave: bool = False          # mempolicy/weighted_interleave exists (>= 6.9)
    interleave_weights: dict[int, int] = field(default_factory=dict)  # node → system weight
    interleave_auto: bool | None = None        # weights set by the kernel from HMAT/CDAT


@dataclass(frozen=True)
class Fact:
    """An inferred property with the evidence for it."""

    value: Any
    status: str               # "known", "ambiguous", "unknown"
    evidence: str


@dataclass
class Topology:
    source: str               # "/" or the path of the replayed dump
    cpus: list[Cpu]
    cores: list[Core]
    l3s: list[L3Domain]
    nodes: list[Node]
    packages: list[Package]
    caches: list[Cache] = field(default_factory=list)
    devices: list[PciDevice] = field(default_factory=list)
    facts: dict[str, Fact] = field(default_factory=dict)
    cpu_model: str | None = None
    cpu_vendor: str | None = None         # proc/cpuinfo vendor_id (GenuineIntel, AuthenticAMD)
    cpu_family: int | None = None
    cpu_model_number: int | None = None
    cpu_stepping: int | None = None
    # proc/cpuinfo flags of the first CPU (None: no cpuinfo): the ISA features that tell a
    # VM's real core when its family/model are the hypervisor's choice (topology.uarch)
    cpu_flags: tuple[str, ...] | None = None
    hypervisor: bool | None = None        # the "hypervisor" cpuinfo flag: a virtual machine
    allowed_evidence: str = ""            # where the allowed CPUs / memory nodes came from
    notes: list[str] = field(default_factory=list)  # how the reader filled gaps
    # node → CPUs its cpulist names that an earlier node already holds (buggy/fake NUMA)
    overlapping_nodes: dict[int, tuple[int, ...]] = field(default_factory=dict)
    tiering: MemoryTiering = field(default_factory=MemoryTiering)

    # -- lookups used everywhere ------------------------------------------------------
    def cpu(self, cpu_id: int) -> Cpu:
        for c in self.cpus:
            if c.id == cpu_id:
                return c
        raise KeyError(cpu_id)

    def node(self, node_id: int) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def usable_cpus(self) -> list[int]:
        return [c.id for c in self.cpus if c.usable]

    def node_ids(self) -> list[int]:
        return [n.id for n in self.nodes]

    def distance(self, a: int, b: int) -> int | None:
        return self.node(a).distances.get(b)

    def llc_bytes(self, cpus: list[int] | None = None) -> int:
        """Total last-level cache of the L3 domains touched by `cpus` (all when None)."""
        if not self.l3s:
            return 0
        if cpus is None:
            return sum(d.size_bytes for d in self.l3s)
        wanted = {self.cpu(c).l3 for c in cpus}
        return sum(d.size_bytes for d in self.l3s if d.index in wanted)

    def cache_bytes(self, level: int, cpu: int | None = None) -> int | None:
        """Size of the level-N data/unified cache seen by `cpu` (the first CPU by default)."""
        for c in self.caches:
            if c.level == level and c.kind != "Instruction" and (cpu is None or cpu in c.cpus):
                return c.size_bytes
        return None
