"""The BIOS memory mode, named the way the CPU's vendor names it, read off how the NUMA nodes
relate to sockets and L3 domains; "ambiguous" exactly where two modes leave the same picture
in sysfs, with the reason in the evidence.

AMD EPYC (Zen; Hygon's Zen-derived parts too): NPS1/2/4 (nodes per socket), NPS0 (one node
across both sockets), L3-as-NUMA (one node per L3). Intel Xeon: SNC off, SNC2/3/4… (Sub-NUMA
Clustering splits a socket, and its one L3, into nodes), COD (Cluster-on-Die, Haswell- and
Broadwell-EP), node interleaving (one node across sockets). Older parts, virtual CPUs of
other vendors and unknown vendors get counts: "1 node per socket", "one node across
sockets"."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from numascope.topology.lists import format_list
from numascope.topology.model import Fact, Node, Topology

NPS = (1, 2, 4)       # the nodes-per-socket settings EPYC offers besides NPS0
COD_MODELS = (63, 79)  # Haswell-EP, Broadwell-EP: Cluster-on-Die, two nodes per socket
KNL_MODELS = (87, 133)  # Xeon Phi: no L3, SNC2/SNC4 cluster modes
SNC_FIRST_MODEL = 85   # Skylake-SP: the first Xeon with Sub-NUMA Clustering


@dataclass(frozen=True)
class Naming:
    """How the CPU's vendor names memory modes, and why that vendor's names were chosen."""

    kind: str         # "nps" (EPYC), "snc" (Xeon Skylake-SP on), "count" (everything else)
    across: str       # one node across all sockets
    why: str
    knl: bool = False  # Xeon Phi: k nodes per socket without L3 can only be SNC-k
    cod: bool = False  # Haswell/Broadwell-EP: two nodes per socket are Cluster-on-Die
    uma: bool = False  # front-side-bus Xeon: one memory controller hub, UMA by design


def naming(topo: Topology) -> Naming:
    v, fam, mod = topo.cpu_vendor or "", topo.cpu_family, topo.cpu_model_number
    if v == "HygonGenuine":
        return Naming("nps", "NPS0", "Hygon, Zen-derived: AMD's names")
    if v == "AuthenticAMD":
        if fam is None or fam >= 0x17:
            return Naming("nps", "NPS0", f"AMD family {_hex(fam)}, EPYC/Zen: AMD's names")
        return Naming("count", "node interleaving",
                      f"AMD family {_hex(fam)} predates EPYC: no NPS or L3-as-NUMA setting, "
                      "a node is a die with its own memory controller")
    if v == "GenuineIntel":
        if topo.hypervisor:  # the family/model of a virtual CPU are the hypervisor's choice
            return Naming("snc", "node interleaving", "Intel (virtual CPU): Intel's names")
        if fam == 15 or (fam == 6 and mod is not None and (mod <= 23 or mod == 29)):
            return Naming("count", "one node across sockets",
                          f"Intel family {fam} model {mod}: a front-side-bus Xeon, memory "
                          "behind the chipset", uma=True)
        if fam == 6 and mod is not None and mod < SNC_FIRST_MODEL:
            return Naming("count", "node interleaving",
                          f"Intel family 6 model {mod} predates Sub-NUMA Clustering "
                          f"(Skylake-SP, model {SNC_FIRST_MODEL})", cod=mod in COD_MODELS)
        return Naming("snc", "node interleaving", f"Intel family {fam} model {mod}: Intel's "
                      "names", knl=fam == 6 and mod in KNL_MODELS)
    return Naming("count", "one node across sockets",
                  f"vendor {v or 'unknown'}: vendor-neutral names")


def _hex(n: int | None) -> str:
    return "?" if n is None else f"{n:#x}"


def per_socket(k: int) -> str:
    return "1 node per socket" if k == 1 else f"{k} nodes per socket"


def memory_mode(topo: Topology) -> Fact:
    nm = naming(topo)
    nodes = [n for n in topo.nodes if n.cpus]
    if not nodes:
        return Fact(None, "unknown", "no node holds a CPU")
    if any(len(n.packages) > 1 for n in nodes):
        f = _across_sockets(topo, nodes, nm)
    else:
        f = _within_sockets(topo, nodes, nm)
    return Fact(f.value, f.status, f"{f.evidence}; names: {nm.why}")


def _across_sockets(topo: Topology, nodes: list[Node], nm: Naming) -> Fact:
    n_sock = len(topo.packages)
    if len(nodes) == 1:
        why = (" — UMA by design, not a BIOS mode" if nm.uma else
               ": memory interleaved across sockets by the BIOS (or the kernel booted with "
               "numa=off)")
        every = "both" if n_sock == 2 else f"all {n_sock}"
        return Fact(nm.across, "known", f"node {nodes[0].id} holds the CPUs of {every} "
                                        f"packages{why}")
    spans = {len(n.packages) for n in nodes}
    if len(spans) == 1:
        m = spans.pop()
        return Fact(f"{m} sockets per node", "known",
                    f"each of the {len(nodes)} nodes holds the CPUs of {m} packages")
    return Fact("mixed", "unknown", "some nodes span packages, others do not: "
                + ", ".join(f"node{n.id}: S{',S'.join(map(str, n.packages))}" for n in nodes))


def _within_sockets(topo: Topology, nodes: list[Node], nm: Naming) -> Fact:
    per = {len(p.nodes) for p in topo.packages}
    if len(per) != 1:
        return Fact("mixed", "unknown", "packages hold different numbers of nodes: "
                    + ", ".join(f"S{p.id}: {len(p.nodes)}" for p in topo.packages))
    k = per.pop()
    kinds = Counter(_node_vs_l3(topo, set(n.cpus)) for n in nodes)
    ev = f"{k} node(s) per package; "
    if not topo.l3s:
        return _no_l3(k, nm, ev + "no L3 in sysfs")
    if kinds.keys() not in ({"multi"}, {"equal"}, {"smaller"}, {"multi", "equal"}):
        return Fact("mixed", "unknown", ev + "nodes relate to L3 domains in different ways: "
                    + ", ".join(f"{v} {kk}" for kk, v in kinds.items()))
    if nm.kind == "nps":
        return _nps(topo, k, kinds, nodes, ev)
    if kinds.keys() == {"smaller"}:
        if (nm.kind == "snc" and k > 1) or (nm.cod and k == 2):
            name = "COD" if nm.cod else f"SNC{k}"
            return Fact(name, "known", ev + "each node holds only part of an L3 domain: the "
                        "socket is split into clusters")
        return Fact(per_socket(k), "known", ev + "each node holds only part of an L3 domain")
    # every node holds whole L3 domains
    if nm.cod and k == 2 and kinds.keys() == {"equal"}:
        return Fact("COD", "known", ev + "each node is one L3 domain: Cluster-on-Die gives "
                    "each half of the die its own L3 and memory controller")
    if nm.kind == "snc" and k == 1:
        return Fact("SNC off", "known", ev + "the node holds the socket's whole L3(s): no "
                    "Sub-NUMA Clustering")
    tail = (": separate dies (as in Cascade Lake-AP), not Sub-NUMA Clustering"
            if nm.kind == "snc" else "")
    return Fact(per_socket(k), "known", ev + "each node holds whole L3 domains" + tail)


def _nps(topo: Topology, k: int, kinds: Counter, nodes: list[Node], ev: str) -> Fact:
    if kinds.keys() == {"smaller"}:
        return Fact(per_socket(k), "unknown", ev + "each node holds only part of an L3 "
                    "domain, which no NPS or L3-as-NUMA setting does (a virtual machine's or "
                    "fake NUMA layout?)")
    if kinds.keys() == {"equal"}:
        if k in NPS:
            return Fact(f"NPS{k}|L3-as-NUMA", "ambiguous",
                        ev + f"every node is exactly one L3 domain and each socket has {k}: "
                        f"NPS{k} on a part with {k} L3(s) per socket and L3-as-NUMA give the "
                        "same nodes, and sysfs cannot tell them apart")
        return Fact("L3-as-NUMA", "known", ev + f"every node is exactly one L3 domain, and no "
                    f"NPS setting gives {k} nodes per socket")
    l3n = sorted({len(_l3s_of(topo, set(n.cpus))) for n in nodes})
    held = f"each holding whole L3 domains ({'/'.join(map(str, l3n))} per node)"
    if k in NPS:
        return Fact(f"NPS{k}", "known", ev + held + ": more than L3-as-NUMA would give")
    return Fact(per_socket(k), "unknown", ev + held + f", but no NPS setting gives {k} "
                "nodes per socket")


def _no_l3(k: int, nm: Naming, ev: str) -> Fact:
    if nm.kind == "nps":
        if k in NPS:
            return Fact(f"NPS{k}|L3-as-NUMA", "ambiguous", ev + f": cannot tell NPS{k} from "
                        "L3-as-NUMA")
        return Fact("L3-as-NUMA", "ambiguous", ev + f": no NPS setting gives {k} nodes per "
                    "socket, but one node per L3 cannot be checked")
    if k == 1 and nm.knl:
        return Fact("quadrant|hemisphere|all-to-all", "ambiguous", ev + ": one node per "
                    "Xeon Phi is any of its three non-SNC cluster modes")
    if k == 1:
        return Fact("SNC off" if nm.kind == "snc" else per_socket(1), "known", ev)
    if nm.knl:
        return Fact(f"SNC{k}", "known", ev + ", as on every Xeon Phi: its nodes per socket "
                    "are the SNC cluster mode")
    if nm.kind == "snc":
        return Fact(f"SNC{k}", "ambiguous", ev + ": cannot check that the nodes split an L3 "
                    "(SNC) rather than being separate dies")
    if nm.cod and k == 2:
        return Fact("COD", "known", ev + ": two nodes per socket on this Xeon are "
                    "Cluster-on-Die")
    return Fact(per_socket(k), "known", ev)


def _l3s_of(topo: Topology, cpus: set[int]) -> set[int]:
    return {topo.cpu(c).l3 for c in cpus if topo.cpu(c).l3 is not None}


def _node_vs_l3(topo: Topology, cpus: set[int]) -> str:
    online = {c for c in cpus if topo.cpu(c).online}
    l3s = _l3s_of(topo, online)
    if not l3s:
        return "no-l3"
    if len(l3s) == 1:
        l3cpus = set(topo.l3s[next(iter(l3s))].cpus)
        return "equal" if l3cpus == online else "smaller" if online < l3cpus else "other"
    whole = all(set(topo.l3s[i].cpus) <= online for i in l3s)
    return "multi" if whole else "other"


def hedged(topo: Topology, fact: Fact) -> Fact:
    """A BIOS mode read off a virtual machine's, a NUMA-less kernel's or a buggy kernel's
    nodes is only a guess."""
    if topo.overlapping_nodes:
        rep = ", ".join(f"node{n}: {format_list(c)}" for n, c in topo.overlapping_nodes.items())
        return Fact(fact.value, "ambiguous", "node cpulists overlap (CPUs repeated by " + rep
                    + "): the kernel's NUMA description is inconsistent (buggy or fake NUMA), "
                    "each CPU was given to the first node listing it; then: " + fact.evidence)
    if fact.status != "known":
        return fact
    if topo.hypervisor:
        return Fact(fact.value, "ambiguous", "virtual machine: its nodes are the hypervisor's "
                    "virtual NUMA layout, not necessarily the host's BIOS mode; "
                    + fact.evidence)
    if any("shows no NUMA nodes" in x for x in topo.notes) and not naming(topo).uma:
        return Fact(fact.value, "ambiguous", "sysfs shows no NUMA nodes: NUMA is off in the "
                    "kernel (CONFIG_NUMA, numa=off) or in the BIOS, so the BIOS mode cannot "
                    "be read; " + fact.evidence)
    return fact
