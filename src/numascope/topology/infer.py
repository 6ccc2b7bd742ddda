"""Inference: what the sysfs facts say about the machine, each stated with its evidence,
and "ambiguous"/"unknown" when sysfs alone cannot decide."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

from numascope.topology import uarch
from numascope.topology.lists import format_list
from numascope.topology.model import Fact, Topology
from numascope.topology.modes import hedged, memory_mode


def known(value: Any, evidence: str) -> Fact:
    return Fact(value, "known", evidence)


def ambiguous(value: Any, evidence: str) -> Fact:
    return Fact(value, "ambiguous", evidence)


def unknown(evidence: str, value: Any = None) -> Fact:
    return Fact(value, "unknown", evidence)


def infer_facts(topo: Topology) -> dict[str, Fact]:
    f: dict[str, Fact] = {}
    f.update(_cpu_identity(topo))
    f.update(_counts(topo))
    f["memory_mode"] = hedged(topo, memory_mode(topo))
    f["core_numbering"] = core_numbering(topo)
    f["smt_numbering"] = smt_numbering(topo)
    f["distance_classes"] = distance_classes(topo)
    f.update(_oddities(topo))
    return f


# -- identity and counts ----------------------------------------------------------------

def _cpu_identity(topo: Topology) -> dict[str, Fact]:
    f = {}
    src = "proc/cpuinfo"
    if topo.cpu_model or topo.cpu_vendor:
        f["cpu_model"] = known(topo.cpu_model, f"{src} 'model name'")
        f["cpu_vendor"] = known(topo.cpu_vendor, f"{src} vendor_id")
        fm = [topo.cpu_family, topo.cpu_model_number]
        hx = "/".join("?" if x is None else f"{x:#x}" for x in fm)
        f["cpu_family_model"] = known(fm, f"{src} 'cpu family' and 'model' ({hx} in hex)")
    else:
        f["cpu_model"] = unknown(f"{src} missing or empty")
    f["microarchitecture"] = microarchitecture(topo)
    if topo.hypervisor is not None:
        f["virtual_machine"] = known(topo.hypervisor, f"{src} flags "
                                     + ("include" if topo.hypervisor else "lack")
                                     + " 'hypervisor'")
    return f


def microarchitecture(topo: Topology) -> Fact:
    """The core, with what decided it (topology.uarch): known from the model number, or from
    ISA features and caches that overrule it; ambiguous from features alone."""
    core = uarch.of_topology(topo)
    if core.uarch is None:
        return unknown(core.evidence)
    ev = f"{core.decided_by}: {core.evidence}" + "".join(f"; {n}" for n in core.notes)
    return Fact(core.uarch.name, "ambiguous" if core.decided_by == "ISA features" else "known",
                ev)


def cpu_nodes(topo: Topology) -> list[int]:
    return [n.id for n in topo.nodes if n.cpus]


def _counts(topo: Topology) -> dict[str, Fact]:
    f: dict[str, Fact] = {}
    pk = topo.packages
    f["sockets"] = known(len(pk), "distinct physical_package_id of online CPUs: "
                         + format_list([p.id for p in pk]))
    cn = cpu_nodes(topo)
    f["cpu_nodes"] = known(len(cn), "nodes whose cpulist is not empty: " + (format_list(cn)
                                                                          or "none"))
    f["nodes_per_socket"] = nodes_per_socket(topo)
    f["l3_domains"] = (known(len(topo.l3s), "distinct shared_cpu_list of level-3 caches")
                       if topo.l3s else unknown("no level-3 cache in cpu*/cache/index*", 0))
    if topo.l3s:
        cores_in = Counter()
        for d in topo.l3s:
            cores_in[len({topo.cpu(c).core for c in d.cpus})] += 1
        desc = ", ".join(f"{n} L3 with {k} cores" for k, n in sorted(cores_in.items()))
        f["cores_per_l3"] = known(min(cores_in) if len(cores_in) == 1 else
                                  sorted(cores_in), desc)
    widths = Counter(len(c.cpus) for c in topo.cores)
    desc = ", ".join(f"{n} cores with {w} threads" for w, n in sorted(widths.items()))
    f["smt_width"] = (known(max(widths), f"thread_siblings of online CPUs: {desc}"
                            + _cmt_note(topo))
                      if widths else unknown("no online core found"))
    f["cores"] = known(len(topo.cores), "thread-sibling groups of online CPUs")
    f["threads"] = known(sum(c.online for c in topo.cpus), "online CPUs")
    return f


def nodes_per_socket(topo: Topology) -> Fact:
    """An int, or "1/m" when every node spans m packages (NPS0 on two sockets: "1/2")."""
    nodes = [n for n in topo.nodes if n.cpus]
    spans = {len(n.packages) for n in nodes}
    if nodes and min(spans) > 1:
        ev = ", ".join(f"N{n.id}: S{',S'.join(map(str, n.packages))}" for n in nodes)
        if len(spans) == 1:
            m = spans.pop()
            return known(f"1/{m}", f"each node spans {m} packages ({ev})")
        return ambiguous(sorted(f"1/{m}" for m in spans), f"nodes span different numbers "
                         f"of packages ({ev})")
    per = {p.id: len(p.nodes) for p in topo.packages}
    vals = set(per.values())
    ev = ", ".join(f"S{p}: {n}" for p, n in per.items())
    if len(vals) == 1:
        return known(vals.pop(), f"CPU-bearing nodes per package ({ev})")
    return ambiguous(sorted(vals), f"packages differ ({ev})")


def _cmt_note(topo: Topology) -> str:
    """SMT threads share their core's L1d; siblings with an L1d each are CMT cores."""
    l1d = [k.cpus for k in topo.caches if k.level == 1 and k.kind == "Data"]
    multi = [c.cpus for c in topo.cores if len(c.cpus) > 1]
    if not l1d or not multi:
        return ""
    private = [g for g in multi
               if not any(set(g) <= set(k) for k in l1d)]
    if len(private) != len(multi):
        return ""
    fam = (f" (AMD family {topo.cpu_family:#x}, Bulldozer-type)"
           if (topo.cpu_vendor or "").startswith("AuthenticAMD") and topo.cpu_family == 0x15
           else "")
    return (f"; but siblings {'+'.join(map(str, multi[0]))} … do not share an L1d: the "
            f"kernel's thread siblings are the cores of one compute unit (CMT{fam}), each "
            "with its own integer unit and L1d, sharing L1i/L2/FPU — not SMT threads")


# -- numbering ------------------------------------------------------------------------------

def _pattern(seq: list) -> str:
    distinct = len(set(seq))
    if distinct <= 1:
        return "single"
    runs = 1 + sum(a != b for a, b in itertools.pairwise(seq))
    if runs == distinct:
        return "linear"
    if all(a != b for a, b in itertools.pairwise(seq)):
        return "round-robin"
    return "irregular"


def core_numbering(topo: Topology) -> Fact:
    first = sorted((c for c in topo.cpus if c.online and c.smt == 0), key=lambda c: c.id)
    pk = _pattern([c.package for c in first])
    nd = _pattern([c.node for c in first])
    sample = ", ".join(f"{c.id}→S{c.package}/N{c.node}" for c in first[:8])
    ev = f"first thread of each core, CPU → package/node: {sample}"
    if pk == "round-robin":
        return known("round-robin across sockets", ev)
    if nd == "round-robin":
        return known("round-robin across nodes", ev)
    if pk in ("linear", "single") and nd in ("linear", "single"):
        if pk == nd == "single":
            return known("linear", ev + " (one socket, one node: nothing to interleave)")
        return known("linear", ev)
    return known("irregular", ev + f" (sockets: {pk}, nodes: {nd})")


def smt_numbering(topo: Topology) -> Fact:
    multi = [c.cpus for c in topo.cores if len(c.cpus) > 1]
    if not multi:
        return known("no SMT", "every online core has one thread (SMT off or absent)")
    gaps = Counter(c[1] - c[0] for c in multi)
    sample = ", ".join(f"{c[0]}+{c[1]}" for c in multi[:4])
    if gaps.keys() == {1}:
        return known("adjacent", f"siblings are consecutive CPU numbers ({sample} …)")
    if len(gaps) == 1:
        return known("offset", f"siblings are {next(iter(gaps))} apart ({sample} …)")
    return known("irregular", f"sibling gaps {dict(gaps)} ({sample} …)")


# -- distances and oddities ------------------------------------------------------------------

def distance_classes(topo: Topology) -> Fact:
    classes: dict[int, list[list[int]]] = {}
    asym = []
    for a in topo.nodes:
        for b in topo.nodes:
            if b.id < a.id:
                continue
            d = a.distances.get(b.id)
            if d is None:
                continue
            back = b.distances.get(a.id)
            if back is not None and back != d:
                asym.append(f"{a.id}→{b.id}={d} but {b.id}→{a.id}={back}")
            classes.setdefault(d, []).append([a.id, b.id])
    if not classes:
        return unknown("no node*/distance files", {})
    ev = "; ".join(f"{d}: {len(p)} pair(s)" for d, p in sorted(classes.items()))
    if asym:
        ev += "; asymmetric: " + ", ".join(asym[:4])
    return known({str(d): classes[d] for d in sorted(classes)}, f"node*/distance rows ({ev})")


def _oddities(topo: Topology) -> dict[str, Fact]:
    f: dict[str, Fact] = {}
    cpuless = [n.id for n in topo.nodes if not n.cpus]
    ev = ("nodes with an empty cpulist (HBM, CXL, GPU or far memory)" if cpuless
          else "every node has CPUs")
    if topo.overlapping_nodes:
        ev = (f"nodes {format_list(list(topo.overlapping_nodes))} only repeat CPUs of an "
              "earlier node (overlapping cpulists: buggy or fake NUMA), so they hold none; "
              + ev)
    f["cpuless_nodes"] = known(cpuless, ev)
    memless = [n.id for n in topo.nodes if n.memory_bytes == 0 and n.cpus]
    f["memoryless_nodes"] = known(memless, "node*/meminfo MemTotal is 0" if memless
                                  else "every CPU-bearing node reports memory")
    off = [c.id for c in topo.cpus if not c.online]
    f["offline_cpus"] = known(off, "cpu*/online is 0 (or not in cpu/online)" if off
                              else "all CPUs online")
    dis = [c.id for c in topo.cpus if c.online and not c.allowed]
    f["disallowed_cpus"] = known(dis, topo.allowed_evidence or "no restriction found")
    disn = [n.id for n in topo.nodes if not n.allowed]
    f["disallowed_nodes"] = known(disn, topo.allowed_evidence or "no restriction found")
    ids = topo.node_ids()
    sparse = ids != list(range(len(ids)))
    f["sparse_node_ids"] = known(sparse, f"node ids {format_list(ids)}"
                                 + (" are not 0..n-1" if sparse else " are 0..n-1"))
    pids = [p.id for p in topo.packages]
    odd = pids != list(range(len(pids)))
    f["odd_package_ids"] = known(odd, f"package ids {format_list(pids) or 'none'}"
                                 + (" are not 0..n-1" if odd else " are 0..n-1"))
    unk = [d.name or d.address for d in topo.devices if d.numa_node is None]
    if topo.devices:
        f["devices_unknown_locality"] = known(unk, "numa_node -1 or missing: the firmware "
                                              "does not say which node they hang off"
                                              if unk else "every device states its node")
    return f
