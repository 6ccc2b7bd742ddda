"""Rank/thread layouts: which CPUs each rank of a job (and each thread inside it) gets.

    layout(topo, ranks=16, threads=8)            one rank per L3 with 8 threads inside
    layout(topo, threads=64)                     one process, threads spread over the L3s
    layout(topo, ranks=4, unit="node")           ranks inside NUMA nodes

A rank is bound to whole cores (every usable hardware thread of them, as `mpirun --bind-to
core` and `srun --cpu-bind=cores` do); its threads run one per core (`Slot.threads`), on SMT
siblings only when asked (smt=True) or when the shape needs them (smt=None; noted). The
unit is the domain every rank stays inside: "core", "l3" (an L3 domain, AMD's CCX),
"node" (a NUMA node), "socket" (a package), or "machine" (one process over all of them).

Orders follow hwloc's logical order (packages by first CPU, then L3 domains, then cores by
first CPU), the order Open MPI's mapper walks, so regular layouts map to `ppr` lines. Only
usable CPUs (online, inside this process's cgroup/affinity set) are ever handed out."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from numascope.errors import UserError
from numascope.topology.lists import format_list
from numascope.topology.model import Cpu, Topology

UNITS = ("core", "l3", "node", "socket", "machine")
UNIT_NAMES = {"core": "core", "l3": "L3", "node": "node", "socket": "socket",
              "machine": "machine"}


@dataclass(frozen=True)
class Slot:
    """One rank: the CPUs it is bound to and where they lie."""

    rank: int
    cpus: tuple[int, ...]          # the binding: every usable hardware thread of its cores
    threads: tuple[int, ...]       # one CPU per thread, in thread order
    cores: int                     # cores it holds
    group: int                     # index of its unit in Layout.groups
    nodes: tuple[int, ...]         # NUMA nodes of its CPUs
    l3s: tuple[int, ...]           # L3 domain indices of its CPUs (empty: none reported)
    packages: tuple[int, ...]
    mem_nodes: tuple[int, ...]     # where its memory should go (its nodes with memory)

    @property
    def node(self) -> int | None:
        return self.nodes[0] if len(self.nodes) == 1 else None

    @property
    def l3(self) -> int | None:
        return self.l3s[0] if len(self.l3s) == 1 else None

    @property
    def package(self) -> int | None:
        return self.packages[0] if len(self.packages) == 1 else None

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "cpus": format_list(list(self.cpus)),
                "threads": list(self.threads), "cores": self.cores, "node": self.node,
                "l3": self.l3, "package": self.package, "nodes": list(self.nodes),
                "l3s": list(self.l3s), "mem_nodes": list(self.mem_nodes)}


@dataclass(frozen=True)
class Layout:
    unit: str                      # one of UNITS
    ranks: int
    threads: int                   # threads per rank
    slots: tuple[Slot, ...]
    per_unit: tuple[int, ...]      # ranks in each used group, in group order
    groups: tuple[Any, ...]        # the unit ids used (core index, L3 index, node, package)
    smt: bool                      # SMT siblings carry threads
    smt_width: int                 # hardware threads per core (1: no SMT)
    regular: bool                  # the same ranks in every group of the machine, in logical
    #                                order from the first, cores from each group's first:
    #                                what `mpirun --map-by ppr:N:…` produces
    near: str | None = None
    near_node: int | None = None
    within: str = "all"
    notes: tuple[str, ...] = field(default=())

    def cpus(self) -> list[int]:
        return [c for s in self.slots for c in s.cpus]

    @property
    def ppr(self) -> int:
        return self.per_unit[0] if self.per_unit else 0

    @property
    def cores_per_rank(self) -> int:
        return self.slots[0].cores if self.slots else 0

    def describe(self) -> str:
        """"16 ranks × 8 threads, 1 rank per L3" (one line)."""
        r = f"{self.ranks} rank{'s' if self.ranks != 1 else ''} × {self.threads} " \
            f"thread{'s' if self.threads != 1 else ''}"
        if self.unit == "machine":
            how = f"spread over {len(self.groups)} L3/node domains" if len(self.groups) > 1 \
                else "inside one domain"
            return f"{r}, {how}"
        per = set(self.per_unit)
        k = f"{self.per_unit[0]}" if len(per) == 1 else f"{min(per)}-{max(per)}"
        return f"{r}, {k} rank{'s' if max(per) != 1 else ''} per {UNIT_NAMES[self.unit]}" + \
            (" (SMT siblings used)" if self.smt else "")

    def to_dict(self) -> dict[str, Any]:
        return {"unit": self.unit, "ranks": self.ranks, "threads": self.threads,
                "cores_per_rank": self.cores_per_rank, "per_unit": list(self.per_unit),
                "groups": list(self.groups), "smt": self.smt, "smt_width": self.smt_width,
                "regular": self.regular, "near": self.near, "near_node": self.near_node,
                "within": self.within, "describe": self.describe(), "notes": list(self.notes),
                "slots": [s.to_dict() for s in self.slots]}


# -- the machine in hwloc's logical order ---------------------------------------------------

@dataclass(frozen=True)
class _Core:
    pos: int                       # position in logical order
    index: int | None              # Topology.cores index
    cpus: tuple[Cpu, ...]          # usable hardware threads, first thread first

    @property
    def ids(self) -> tuple[int, ...]:
        return tuple(c.id for c in self.cpus)

    def key(self, unit: str) -> Any:
        c = self.cpus[0]
        return {"core": self.pos, "l3": c.l3, "node": c.node, "socket": c.package,
                "machine": 0}[unit]


def logical_cores(topo: Topology, cpus: Iterable[Cpu] | None = None) -> list[_Core]:
    """The usable cores (of `cpus`, default all) in hwloc's logical order."""
    pool = [c for c in (topo.cpus if cpus is None else cpus) if c.usable]
    first_of_pkg: dict[Any, int] = {}
    first_of_l3: dict[Any, int] = {}
    for c in topo.cpus:           # domain order from every CPU, usable or not
        first_of_pkg[c.package] = min(first_of_pkg.get(c.package, c.id), c.id)
        first_of_l3[c.l3] = min(first_of_l3.get(c.l3, c.id), c.id)
    by_core: dict[Any, list[Cpu]] = {}
    for c in pool:
        by_core.setdefault(c.core if c.core is not None else ("cpu", c.id), []).append(c)
    # hwloc orders siblings by their first CPU at every level of the tree: package, L3,
    # L2 (cores sharing an L2 are neighbours: 0,4 then 2,6 on a Core 2 Quad), core
    first_of_l2: dict[int, int] = {}
    for cache in topo.caches:
        if cache.level == 2 and cache.kind != "Instruction" and cache.cpus:
            for c in cache.cpus:
                first_of_l2[c] = min(cache.cpus)
    # CMT (AMD family 15h): the kernel's thread siblings have an L1d each; hwloc, and so
    # Open MPI, count each as a core: so do we here
    l1d = {c: cache.cpus for cache in topo.caches if cache.level == 1 and cache.kind == "Data"
           for c in cache.cpus}
    split = []
    for v in by_core.values():
        if len(v) > 1 and all(l1d.get(c.id) == (c.id,) for c in v):
            split += [[c] for c in v]
        else:
            split.append(v)
    groups = [sorted(v, key=lambda c: (c.smt, c.id)) for v in split]
    groups.sort(key=lambda g: (first_of_pkg[g[0].package], first_of_l3[g[0].l3],
                               min(first_of_l2.get(c.id, c.id) for c in g),
                               min(c.id for c in g)))
    return [_Core(i, g[0].core, tuple(g)) for i, g in enumerate(groups)]


def _group(cores: list[_Core], unit: str) -> list[tuple[Any, list[_Core]]]:
    out: dict[Any, list[_Core]] = {}
    for c in cores:
        out.setdefault(c.key(unit), []).append(c)
    return list(out.items())


def _need(ranks: int, threads: int) -> str:
    return (f"{ranks} rank{'s' if ranks != 1 else ''} × {threads} "
            f"thread{'s' if threads != 1 else ''}")


def device_node(topo: Topology, near: str) -> int:
    """The NUMA node of a device named as the topology names it: an interface or block name
    (mlx5_0, ib0, nvme0, nvme0n1, eth0), its PCI address (0000:3b:00.0 or 3b:00.0), or
    gpuN / nvmeN / nicN / ibN by kind and position."""
    want = near.strip().lower()
    if not want:
        raise UserError("--near needs a device name (e.g. mlx5_0, nvme0, a PCI address)")
    kinds = {"gpu": "gpu", "nvme": "nvme", "nic": "nic", "hca": "infiniband", "ib": "infiniband"}
    found = []
    for d in topo.devices:
        names = {t.lower() for t in re.split(r"[\s,;()]+", d.name) if t} | \
            {d.address.lower(), d.address.lower()[5:]}
        names |= {n[:-2] for n in names if n.startswith("nvme") and n[-2:-1] == "n"}
        if want in names:
            found.append(d)
    if not found:
        for prefix, kind in kinds.items():
            if want.startswith(prefix) and want[len(prefix):].isdigit():
                same = [d for d in topo.devices if d.kind == kind]
                i = int(want[len(prefix):])
                if i < len(same):
                    found.append(same[i])
                break
    if not found:
        have = ", ".join(sorted({re.split(r"[\s,;]+", d.name)[0] for d in topo.devices
                                 if d.kind not in ("other", "storage") and d.name}))[:120] \
            or "none"
        raise UserError(f"--near {near}: no such device (this machine shows: {have})")
    d = found[0]
    if d.numa_node is None:
        raise UserError(f"--near {near}: the kernel does not say which node {d.address} "
                        "hangs off (numa_node -1), so it cannot guide the placement")
    return d.numa_node


def _mem_nodes(topo: Topology, nodes: tuple[int, ...]) -> tuple[int, ...]:
    """Its own nodes that hold memory; a memoryless node's nearest node with memory."""
    out = []
    for n in nodes:
        try:
            node = topo.node(n)
        except KeyError:
            continue
        if not node.memoryless:
            out.append(n)
            continue
        cands = [m for m in topo.nodes if not m.memoryless and m.id != n]
        if cands:
            out.append(min(cands, key=lambda m: (node.distances.get(m.id, 1 << 20), m.id)).id)
    return tuple(sorted(set(out)))


def layout(topo: Topology, ranks: int | None = None, threads: int | None = None,
           unit: str | None = None, within: str | None = None, near: str | None = None,
           smt: bool | None = None) -> Layout:
    """The layout of `ranks` ranks × `threads` threads (see the module doc). UserError with
    one line saying what fits when the shape does not."""
    from numascope.placement import _domain_cpus
    if unit is not None and unit not in UNITS:
        raise UserError(f"unknown unit {unit!r} (choose from {', '.join(UNITS)})")
    for name, v in (("ranks", ranks), ("threads", threads)):
        if v is not None and (not isinstance(v, int) or v < 1):
            raise UserError(f"--{name} must be at least 1 (got {v})")
    where = within or "all"
    pool = [c for c in _domain_cpus(topo, where) if c.usable]
    if not pool:
        raise UserError(f"{where} has no usable CPUs (offline, or outside this process's "
                        "allowed set)")
    cores = logical_cores(topo, pool)
    width = min(len(c.cpus) for c in cores)
    near_node = device_node(topo, near) if near else None
    notes: list[str] = []
    n_cores, n_cpus = len(cores), sum(len(c.cpus) for c in cores)
    r = ranks or 1
    if unit == "l3" and any(c.cpus[0].l3 is None for c in cores):
        raise UserError("unit l3: this machine reports no L3 cache for some CPUs (try "
                        "--unit node)")
    # the whole-machine check first: the one line everyone understands
    if threads is not None:
        can = n_cpus if smt is not False else n_cores
        if r * threads > can:
            what = f"{n_cores} usable cores" + (f" ({n_cpus} hardware threads)"
                                                 if n_cpus != n_cores else "")
            raise UserError(f"{_need(r, threads)} needs {r * threads} CPUs; this machine has "
                            f"{what}" + ("" if where == "all" else f" in {where}"))
    elif r > (n_cores if smt is False else n_cpus):
        raise UserError(f"{r} ranks need {r} cores; this machine has {n_cores} usable cores"
                        + (f" ({n_cpus} hardware threads; SMT not allowed)" if n_cpus > n_cores
                           else ""))
    if unit is None:
        unit = _choose_unit(cores, r, threads, smt, ranks is None)
    if unit == "machine" and r != 1:
        raise UserError(f"unit machine is for one process (got {r} ranks): choose core, l3, "
                        "node or socket")
    if unit == "machine":
        return _spread(topo, cores, threads, smt, width, where, near, near_node, notes)

    groups = _group(cores, unit)
    order_all = list(range(len(groups)))
    if near_node is not None:          # the device's node first, then by distance
        def dist(i: int) -> tuple[int, int]:
            nodes = {c.cpus[0].node for c in groups[i][1]}
            d = min((topo.distance(near_node, n) or (10 if n == near_node else 1 << 20))
                    if n is not None else 1 << 20 for n in nodes)
            return (d, i)
        order_all.sort(key=dist)
    g = len(groups)
    if r >= g:
        base, extra = divmod(r, g)
        used = order_all
        counts = [base + (1 if j < extra else 0) for j in range(g)]
        if extra:
            notes.append(f"{r} ranks do not divide over {g} {UNIT_NAMES[unit]} domains: "
                         f"{base + 1} in the first {extra}, {base} in the rest")
    else:
        # fewer ranks than domains: spread them (evenly over the order), or the nearest
        used = order_all[:r] if near_node is not None else [i * g // r for i in range(r)]
        counts = [1] * r
    pairs = [(i, k) for i, k in zip(used, counts) if k]
    # threads per rank: given, or what the tightest group allows
    if threads is None:
        threads = min(len(groups[i][1]) // k for i, k in pairs)
        if threads < 1:
            need_smt = min(sum(len(c.cpus) for c in groups[i][1]) // k for i, k in pairs)
            if smt is not False and need_smt >= 1:
                threads = 1
            else:
                raise UserError(f"{r} ranks do not fit in the {UNIT_NAMES[unit]} domains "
                                f"({_fits(groups, unit)})")
    use_smt = bool(smt) and width > 1
    for i, k in pairs:
        have = len(groups[i][1])
        if k * threads > have:
            if smt is False or k * threads > sum(len(c.cpus) for c in groups[i][1]):
                raise UserError(f"{_need(k, threads)} per {UNIT_NAMES[unit]} needs "
                                f"{k * threads} CPUs in each; {_fits(groups, unit)}")
            use_smt = True
    if use_smt and not smt:
        notes.append(f"{_need(r, threads)} needs SMT siblings: {width} threads per core "
                     "share one core's execution units")
    slots = []
    for i, k in pairs:
        gc = groups[i][1]
        pus = [c for core in gc for c in core.cpus]
        for j in range(k):
            if use_smt:     # hardware threads, core by core: Open MPI's --use-hwthread-cpus
                slots.append(_slot(topo, len(slots), [], threads, True, used.index(i),
                                   pus[j * threads:(j + 1) * threads]))
            else:
                slots.append(_slot(topo, len(slots), gc[j * threads:(j + 1) * threads],
                                   threads, False, used.index(i)))
    regular = (len(set(counts)) == 1 and counts[0] > 0 and len(pairs) == g
               and used == list(range(g)) and len({c for _, c in pairs}) == 1
               and where == "all")
    return Layout(unit=unit, ranks=r, threads=threads, slots=tuple(slots),
                  per_unit=tuple(k for _, k in pairs),
                  groups=tuple(groups[i][0] for i, _ in pairs), smt=use_smt,
                  smt_width=width, regular=regular, near=near, near_node=near_node,
                  within=where, notes=tuple(notes))


def _slot(topo: Topology, rank: int, mine: list[_Core], threads: int, use_smt: bool,
          group: int, pus: list[Cpu] | None = None) -> Slot:
    """A rank on whole cores (`mine`; one thread per core) or, with SMT, on the hardware
    threads `pus` (one thread each, bound to exactly those)."""
    if pus is not None:
        cpus, thr = list(pus), [c.id for c in pus][:threads]
        ncores = len({c.core if c.core is not None else c.id for c in pus})
    else:
        cpus = [c for core in mine for c in core.cpus]
        thr = [core.cpus[0].id for core in mine][:threads]
        ncores = len(mine)
    nodes = tuple(sorted({c.node for c in cpus if c.node is not None}))
    return Slot(rank=rank, cpus=tuple(sorted(c.id for c in cpus)), threads=tuple(thr),
                cores=ncores, group=group, nodes=nodes,
                l3s=tuple(sorted({c.l3 for c in cpus if c.l3 is not None})),
                packages=tuple(sorted({c.package for c in cpus if c.package is not None})),
                mem_nodes=_mem_nodes(topo, nodes))


def _fits(groups: list[tuple[Any, list[_Core]]], unit: str) -> str:
    sizes = sorted({len(gc) for _, gc in groups})
    s = "/".join(map(str, sizes))
    return f"the {len(groups)} {UNIT_NAMES[unit]} domains have {s} usable cores each"


def _choose_unit(cores: list[_Core], r: int, threads: int | None, smt: bool | None,
                 one_process: bool) -> str:
    """What the shape implies: one process → machine (threads spread); ranks matching a
    domain count → that domain; ranks dividing over a domain → the finest that fits."""
    if one_process:
        return "machine"
    has_l3 = all(c.cpus[0].l3 is not None for c in cores)
    cands = ["core", "l3", "node", "socket"] if has_l3 else ["core", "node", "socket"]
    t = threads or 1

    def fits(unit: str, k: int) -> bool:
        gs = [gc for _, gc in _group(cores, unit)]
        return all(k * t <= len(gc) or (smt is not False and
                                         k * t <= sum(len(c.cpus) for c in gc)) for gc in gs)

    size = {u: len(cores) / len(_group(cores, u)) for u in cands}
    fixed = list(cands)
    cands.sort(key=lambda u: (size[u], fixed.index(u)))   # finest first, as this machine has it
    for unit in cands:                        # exactly one rank per domain
        if len(_group(cores, unit)) == r and fits(unit, 1):
            return unit
    for unit in cands[1:]:                    # the same number of ranks in every domain
        g = len(_group(cores, unit))
        if g > 1 and r % g == 0 and fits(unit, r // g):
            return unit
    for unit in cands[1:]:                    # fewer ranks than domains: one in each
        if r < len(_group(cores, unit)) and fits(unit, 1):
            return unit
    for unit in cands[1:]:                    # one domain holds them all
        if len(_group(cores, unit)) == 1 and fits(unit, r):
            return unit
    for unit in cands[1:]:                    # as even as it gets: some hold one more
        g = len(_group(cores, unit))
        if g > 1 and r > g and fits(unit, -(-r // g)):
            return unit
    return "socket" if threads else "core"


def _spread(topo: Topology, cores: list[_Core], threads: int | None, smt: bool | None,
            width: int, where: str, near: str | None, near_node: int | None,
            notes: list[str]) -> Layout:
    """One process: its threads spread evenly over the L3 domains (nodes without L3s), the
    device's node first with --near; all cores when threads is None."""
    n = len(cores)
    t = threads or n
    whole = cores
    if near_node is not None:
        local = [c for c in cores if c.cpus[0].node == near_node]
        if local and t <= len(local):
            cores = local
            notes.append(f"every thread on node {near_node}, the node of {near}")
        elif local:
            notes.append(f"{t} threads do not fit on node {near_node} ({len(local)} cores): "
                         "spread over the machine")
    unit = "l3" if all(c.cpus[0].l3 is not None for c in cores) else "node"
    groups = _group(cores, unit)
    if near_node is not None:
        groups.sort(key=lambda kv: (0 if kv[1][0].cpus[0].node == near_node else 1))
    use_smt = bool(smt) and width > 1
    per_core = width if use_smt else 1
    if t > len(cores) * per_core:
        use_smt = True
        per_core = width
        notes.append(f"{t} threads need SMT siblings ({len(cores)} cores)")
    n_cores = -(-t // per_core)
    # round-robin over the domains: each takes its next core until n_cores are taken
    taken: list[list[_Core]] = [[] for _ in groups]
    left = n_cores
    depth = 0
    while left:
        for gi, (_, gc) in enumerate(groups):
            if left and depth < len(gc):
                taken[gi].append(gc[depth])
                left -= 1
        depth += 1
    mine = [c for gi in range(len(groups)) for c in taken[gi]]
    slot = _slot(topo, 0, mine, t, use_smt, 0)
    # threads interleaved over the domains (thread i in domain i mod G), as OMP spread does
    rr: list[int] = []
    cols = [[c.id for core in taken[gi] for c in (core.cpus if use_smt else core.cpus[:1])]
            for gi in range(len(groups))]
    for i in range(max((len(c) for c in cols), default=0)):
        rr.extend(c[i] for c in cols if i < len(c))
    slot = Slot(**{**slot.__dict__, "threads": tuple(rr[:t])})
    used = [groups[gi][0] for gi in range(len(groups)) if taken[gi]]
    # one domain, the machine's first, from its first core: what ppr:1:<domain> maps
    first = _group(whole, unit)[0][1]
    one = (len(used) == 1 and where == "all" and bool(taken[0])
           and [c.pos for c in taken[0]] == [c.pos for c in first[:len(taken[0])]])
    return Layout(unit="machine", ranks=1, threads=t, slots=(slot,), per_unit=(1,),
                  groups=tuple(used), smt=use_smt, smt_width=width, regular=one,
                  near=near, near_node=near_node, within=where, notes=tuple(notes))


NAMED = ("per-core", "per-l3", "per-node", "per-socket")


def named(topo: Topology, name: str) -> Layout:
    """The whole machine by a layout name: per-l3 (one rank per L3 domain, threads on its
    cores), per-node, per-socket, per-core (one single-threaded rank per core)."""
    unit = {"per-core": "core", "per-l3": "l3", "per-node": "node",
            "per-socket": "socket"}.get(name.strip().lower())
    if unit is None:
        raise UserError(f"unknown layout {name!r} (choose from {', '.join(NAMED)})")
    cores = logical_cores(topo)
    if unit == "l3" and any(c.cpus[0].l3 is None for c in cores):
        raise UserError(f"layout {name}: this machine reports no L3 cache (try per-node)")
    return layout(topo, ranks=len(_group(cores, unit)), unit=unit,
                  threads=1 if unit == "core" else None)


def check(topo: Topology, lay: Layout) -> list[str]:
    """What is wrong with a layout (empty: nothing): a CPU twice, an unusable CPU, a rank
    outside its unit, threads outside the binding."""
    problems = []
    seen: dict[int, int] = {}
    usable = set(topo.usable_cpus())
    core_of = {c: core.pos for core in logical_cores(topo) for c in core.ids}
    for s in lay.slots:
        for c in s.cpus:
            if c in seen:
                problems.append(f"CPU {c} in ranks {seen[c]} and {s.rank}")
            seen[c] = s.rank
            if c not in usable:
                problems.append(f"rank {s.rank}: CPU {c} is not usable")
        if not set(s.threads) <= set(s.cpus) or len(set(s.threads)) != len(s.threads):
            problems.append(f"rank {s.rank}: threads {s.threads} not distinct inside {s.cpus}")
        one = {"core": lambda c: core_of[c], "l3": lambda c: topo.cpu(c).l3,
               "node": lambda c: topo.cpu(c).node,
               "socket": lambda c: topo.cpu(c).package}.get(lay.unit)
        if one and len({one(c) for c in s.cpus}) != 1:
            problems.append(f"rank {s.rank}: CPUs {format_list(list(s.cpus))} span more than "
                            f"one {UNIT_NAMES[lay.unit]}")
    return problems
