"""Which CPUs a benchmark runs on: numactl-style lists, domains and placement policies.

    where:   "all" | "S0" (package 0) | "N1" (NUMA node 1) | "L3:5" (L3 domain index 5)
             | a CPU list in numactl syntax such as "0-3,8-11" (no "!")
    policy:  compact  - fill cores in topology order, SMT siblings last
             spread   - round-robin over NUMA nodes (compact inside each node)
             per-l3   - one thread per L3 domain
             per-node - one thread per NUMA node
    threads: take the first N CPUs of the policy's order

Only usable CPUs (online and allowed for this process) are ever returned. Every mistake
raises UserError with one line."""

from __future__ import annotations

from collections.abc import Iterable

from numascope.errors import UserError
from numascope.topology.lists import format_list, parse_list
from numascope.topology.model import Cpu, Topology

POLICIES = ("compact", "spread", "per-l3", "per-node")


def parse_cpulist(text: str) -> list[int]:
    """`0-3,8-11` → [0, 1, 2, 3, 8, 9, 10, 11]; UserError on anything else."""
    t = text.strip()
    if "!" in t:
        raise UserError(f"CPU list {text!r}: '!' (negation) is not supported")
    if not t:
        raise UserError("empty CPU list")
    try:
        return parse_list(t)
    except ValueError as e:
        raise UserError(f"bad CPU list {text!r}: {e} (expected e.g. 0-3,8-11)") from None


def format_cpulist(cpus: Iterable[int]) -> str:
    return format_list(list(cpus))


def _ids(ids: Iterable[int]) -> str:
    s = format_list(list(ids))
    return s if s else "none"


def _domain_cpus(topo: Topology, where: str) -> list[Cpu]:
    w = where.strip()
    lw = w.lower()
    if lw in ("all", ""):
        return list(topo.cpus)
    if lw.startswith("l3:"):
        idx = _num(w[3:], where)
        if not 0 <= idx < len(topo.l3s):
            have = f"0-{len(topo.l3s) - 1}" if topo.l3s else "none reported"
            raise UserError(f"L3 domain {idx} does not exist (L3 domains: {have})")
        members = set(topo.l3s[idx].cpus)
        return [c for c in topo.cpus if c.id in members]
    if lw[:1] == "s" and lw[1:].isdigit():
        pid = int(w[1:])
        pkgs = [p.id for p in topo.packages]
        if pid not in pkgs:
            raise UserError(f"package S{pid} does not exist (packages: {_ids(pkgs)})")
        return [c for c in topo.cpus if c.package == pid]
    if lw[:1] == "n" and lw[1:].isdigit():
        nid = int(w[1:])
        if nid not in topo.node_ids():
            raise UserError(f"node N{nid} does not exist (nodes: {_ids(topo.node_ids())})")
        return [c for c in topo.cpus if c.node == nid]
    if w[:1].isdigit() or "!" in w:
        return [topo.cpu(i) for i in check_cpus(topo, parse_cpulist(w), distinct=False)]
    raise UserError(f"bad placement {where!r}: expected all, S<n>, N<n>, L3:<n> or a CPU list "
                    "such as 0-3,8-11")


def _num(text: str, where: str) -> int:
    if not text.strip().isdigit():
        raise UserError(f"bad placement {where!r}: expected a number after the colon")
    return int(text)


def _compact(cpus: list[Cpu]) -> list[Cpu]:
    # fill every core once (in topology order) before any SMT sibling
    return sorted(cpus, key=lambda c: (c.smt, c.core if c.core is not None else 1 << 30, c.id))


def _round_robin(groups: list[list[Cpu]]) -> list[Cpu]:
    out = []
    for i in range(max((len(g) for g in groups), default=0)):
        out.extend(g[i] for g in groups if i < len(g))
    return out


def _by(cpus: list[Cpu], key: str) -> list[list[Cpu]]:
    groups: dict = {}
    for c in _compact(cpus):
        groups.setdefault(getattr(c, key), []).append(c)
    return [groups[k] for k in sorted(groups, key=lambda k: (k is None, k if k is not None else 0))]


def order(topo: Topology, where: str = "all", policy: str = "compact") -> list[int]:
    """All usable CPUs of `where` in the order `policy` would hand them out."""
    if policy not in POLICIES:
        raise UserError(f"unknown policy {policy!r} (choose from {', '.join(POLICIES)})")
    usable = [c for c in _domain_cpus(topo, where) if c.usable]
    if not usable:
        raise UserError(f"{where} has no usable CPUs (offline, outside this process's "
                        "allowed set, or a memory-only node)")
    if policy == "compact":
        chosen = _compact(usable)
    elif policy == "spread":
        chosen = _round_robin(_by(usable, "node"))
    elif policy == "per-l3":
        if not topo.l3s:
            raise UserError("policy per-l3: this machine reports no L3 caches")
        chosen = [g[0] for g in _by(usable, "l3")]
    else:
        chosen = [g[0] for g in _by(usable, "node")]
    return [c.id for c in chosen]


def select_cpus(topo: Topology, where: str = "all", policy: str = "compact",
                threads: int | None = None) -> list[int]:
    """The CPUs to run on: the first `threads` of `policy`'s order inside `where`."""
    ids = order(topo, where, policy)
    if threads is None:
        return ids
    if threads < 1:
        raise UserError(f"threads must be at least 1 (got {threads})")
    if threads > len(ids):
        raise UserError(f"{threads} threads asked but {where} with policy {policy} gives only "
                        f"{len(ids)} CPUs ({_ids(ids)})")
    return ids[:threads]


def parse_nodes(topo: Topology, text: str) -> list[int]:
    """Memory nodes: "all", "N1", "0-1" or "0,2"; each must exist on this machine."""
    t = text.strip()
    if t.lower() == "all":
        return topo.node_ids()
    if t[:1] in ("N", "n"):
        t = t[1:]
    if "!" in t:
        raise UserError(f"node list {text!r}: '!' (negation) is not supported")
    try:
        ids = parse_list(t)
    except ValueError as e:
        raise UserError(f"bad node list {text!r}: {e} (expected e.g. 0-1 or N1 or all)") from None
    if not ids:
        raise UserError("empty node list")
    have = topo.node_ids()
    for n in ids:
        if n not in have:
            raise UserError(f"node {n} does not exist (nodes: {_ids(have)})")
    return ids


def check_cpus(topo: Topology, cpus: Iterable[int], *, distinct: bool = True) -> list[int]:
    """The CPUs as given, after checking each exists, is online and is in this process's
    allowed set (and, with `distinct`, is named once). UserError names the first that fails."""
    cpus = list(cpus)
    if not cpus:
        raise UserError("no CPU given: at least one is needed")
    known = {c.id: c for c in topo.cpus}
    for i in cpus:
        if i not in known:
            raise UserError(f"CPU {i} does not exist (this machine has CPUs {_ids(known)})")
        if not known[i].online:
            raise UserError(f"CPU {i} is offline")
        if not known[i].allowed:
            raise UserError(f"CPU {i} is outside this process's allowed CPUs "
                            f"({_ids(topo.usable_cpus())})")
    if distinct and len(set(cpus)) != len(cpus):
        twice = next(c for c in cpus if cpus.count(c) > 1)
        raise UserError(f"CPU list {format_cpulist(cpus)} names CPU {twice} twice")
    return cpus


# -- weighted interleave ----------------------------------------------------------------------
MAX_WEIGHT_SUM = 1024          # the C core's limit on one block of explicitly placed granules


def parse_weighted(topo: Topology, text: str) -> dict:
    """A weighted-interleave memory spec, numactl-like:
    "0,1" / "N0,N1" / "all": the kernel's MPOL_WEIGHTED_INTERLEAVE with the system weights
        (numactl --weighted-interleave; Linux >= 6.9);
    "N0:3,N1:1" / "0:3,1:1": pages in this ratio, placed by numascope granule by granule
        (setting per-task weights would mean writing sysfs, which numascope never does)."""
    t = text.strip()
    if ":" not in t:
        return {"policy": "weighted-interleave", "nodes": parse_nodes(topo, t)}
    nodes, weights = [], []
    for part in t.split(","):
        node, sep, w = part.strip().partition(":")
        if not sep or not w.strip().isdigit():
            raise UserError(f"bad weighted interleave {text!r}: expected NODE:WEIGHT pairs "
                            "such as N0:3,N1:1 (or a node list for the kernel's weights)")
        nodes += parse_nodes(topo, node)
        weights.append(int(w))
        if len(nodes) != len(weights):
            raise UserError(f"bad weighted interleave {text!r}: one node per weight")
    return check_weighted(topo, {"policy": "weighted-interleave", "nodes": nodes,
                                 "weights": weights})


def check_weighted(topo: Topology, mem: dict) -> dict:
    """The weighted-interleave spec checked: explicit weights reduced to lowest terms, or,
    for the kernel's policy, its availability and the system weights it will use
    (recorded as "system_weights"). Unavailable when the kernel lacks the policy."""
    from math import gcd

    from numascope.errors import Unavailable
    mem = dict(mem)
    nodes = [int(n) for n in mem.get("nodes") or []]
    if len(set(nodes)) != len(nodes):
        raise UserError(f"weighted interleave names a node twice ({_ids(nodes)})")
    weights = mem.get("weights")
    if weights is None:
        tg = topo.tiering
        if not tg.weighted_interleave:
            raise Unavailable("this kernel has no weighted interleave (no /sys/kernel/mm/"
                              "mempolicy/weighted_interleave; Linux >= 6.9): give a ratio "
                              "such as N0:3,N1:1 to have numascope place the pages")
        mem["system_weights"] = [tg.interleave_weights.get(n, 1) for n in nodes]
        return mem
    weights = [int(w) for w in weights]
    if len(weights) != len(nodes):
        raise UserError(f"{len(weights)} weights for {len(nodes)} nodes")
    if any(w < 0 for w in weights) or not any(weights):
        raise UserError("weights must be >= 0 and not all zero")
    g = 0
    for w in weights:
        g = gcd(g, w)
    weights = [w // g for w in weights]
    if sum(weights) > MAX_WEIGHT_SUM:
        raise UserError(f"weights {':'.join(map(str, weights))} sum to more than "
                        f"{MAX_WEIGHT_SUM} in lowest terms")
    mem["weights"] = weights
    return mem


def weighted_fractions(mem: dict) -> dict[int, float]:
    """Node → share of the pages a weighted-interleave spec asks for."""
    weights = mem.get("weights") or mem.get("system_weights") or []
    total = sum(weights)
    return {int(n): w / total for n, w in zip(mem.get("nodes") or [], weights)} if total \
        else {}


def format_weighted(mem: dict) -> str:
    """"N0:3,N1:1" (explicit) or "N0,N1 sys 1:1" (the kernel's system weights)."""
    nodes = mem.get("nodes") or []
    if mem.get("weights"):
        return ",".join(f"N{n}:{w}" for n, w in zip(nodes, mem["weights"]))
    sw = mem.get("system_weights")
    return ",".join(f"N{n}" for n in nodes) + \
        (f" sys {':'.join(map(str, sw))}" if sw else "")
