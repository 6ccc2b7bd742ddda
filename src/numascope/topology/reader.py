"""Build a Topology from sysfs/procfs under a root: "/", a directory, or a tarball."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from numascope.errors import UserError, escape_text
from numascope.topology.archive import extracted, find_root, is_archive
from numascope.topology.cgroup import Allowed, replayed_allowed
from numascope.topology.files import Tree, cpuinfo_first, meminfo_field
from numascope.topology.lists import format_list
from numascope.topology.model import Cache, Core, Cpu, L3Domain, Node, Package, Topology
from numascope.topology.tiers import read_tiering

CPU_DIR = "sys/devices/system/cpu"
NODE_DIR = "sys/devices/system/node"


def read_topology(root: str | Path = "/", *, infer: bool = True, devices: bool = True
                  ) -> Topology:
    """Read the machine at `root`: "/" (this machine), a directory holding a sysfs dump
    (sys/, proc/ …, possibly under one top folder) or a .tar.bz2 of one."""
    p = Path(root)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise UserError(f"{root}: no such file or directory") from None
    except (OSError, ValueError) as e:   # a name too long, permission denied, a NUL …
        why = e.strerror if isinstance(e, OSError) and e.strerror else "not a usable path"
        raise UserError(f"{escape_text(root, 160)}: {why[:1].lower()}{why[1:]}") from None
    if stat.S_ISREG(st.st_mode):
        if not is_archive(p):
            raise UserError(f"{root}: not a directory or a tar archive of a sysfs dump")
        with extracted(p) as d:
            return read_tree(Tree(d, label=str(root)), live=False, infer=infer,
                             devices=devices)
    if not stat.S_ISDIR(st.st_mode):
        raise UserError(f"{root}: not a directory or a tar archive of a sysfs dump")
    live = p.resolve() == Path("/")
    base = p if live else find_root(p, root)
    if not live and (base / "sys").resolve() == Path("/sys"):
        raise UserError(f"{root}: its sys/ is this machine's /sys, not a dump (use "
                        "--sysfs-root / to read this machine)")
    return read_tree(Tree(base, label="/" if live else str(root)), live=live, infer=infer,
                     devices=devices)


def read_tree(tree: Tree, *, live: bool, infer: bool = True, devices: bool = True
              ) -> Topology:
    cpu_ids = tree.numbered(CPU_DIR, "cpu")
    if not cpu_ids:
        raise UserError(f"{tree.where(CPU_DIR)}: no cpuN directories (not a sysfs root?)")
    online = _online(tree, cpu_ids)

    pkg: dict[int, int | None] = {}
    core_id: dict[int, int | None] = {}
    die: dict[int, int | None] = {}
    siblings: dict[int, list[int]] = {}
    for c in cpu_ids:
        t = f"{CPU_DIR}/cpu{c}/topology"
        p = tree.read_int(f"{t}/physical_package_id")
        pkg[c] = p if p is not None and p >= 0 else None
        core_id[c] = tree.read_int(f"{t}/core_id")
        d = tree.read_int(f"{t}/die_id")
        die[c] = d if d is not None and d >= 0 else None
        sib = tree.read_cpus(t, "thread_siblings")
        siblings[c] = sib if sib else [c]

    node_ids = tree.numbered(NODE_DIR, "node")
    node_cpus: dict[int, list[int]] = {}
    for n in node_ids:
        base = f"{NODE_DIR}/node{n}"
        cl = tree.read_list(f"{base}/cpulist")
        cl = cl if cl is not None else (tree.read_mask(f"{base}/cpumap") or [])
        node_cpus[n] = [c for c in cl if c in online]  # masks may name absent CPUs
    # a CPU belongs to one node; a kernel with buggy (or fake) NUMA lists it in several:
    # it goes to the first node listing it, and the later nodes keep only their own CPUs
    cpu_node: dict[int, int] = {}
    overlaps: dict[int, list[int]] = {}
    for n, cl in node_cpus.items():
        for c in cl:
            if cpu_node.setdefault(c, n) != n:
                overlaps.setdefault(n, []).append(c)
    node_cpus = {n: [c for c in cl if cpu_node[c] == n] for n, cl in node_cpus.items()}
    if not node_ids:  # kernel without NUMA: one node holding everything (as hwloc does)
        cpu_node = {c: 0 for c in cpu_ids}

    caches = _caches(tree, [c for c in cpu_ids if online[c]], set(cpu_ids))
    l3_caches = sorted((k for k in caches if k.level == 3 and k.kind != "Instruction"),
                       key=lambda k: (_pkey(pkg.get(k.cpus[0])), k.cpus[0]))
    cpu_l3: dict[int, int] = {}
    for i, k in enumerate(l3_caches):
        for c in k.cpus:
            cpu_l3.setdefault(c, i)

    # cores: the thread-sibling groups of online CPUs (core_id alone repeats across dies)
    online_set = {c for c in cpu_ids if online[c]}
    groups: list[tuple[int, ...]] = []
    assigned: set[int] = set()
    for c in cpu_ids:
        if c in online_set and c not in assigned:
            g = tuple(sorted(((set(siblings[c]) & online_set) - assigned) | {c}))
            assigned.update(g)
            groups.append(g)
    order = sorted(groups, key=lambda g: (_pkey(pkg.get(g[0])), cpu_node.get(g[0], -1),
                                          cpu_l3.get(g[0], -1), g[0]))
    cores = [Core(index=i, package=pkg.get(g[0]), core_id=core_id.get(g[0]), cpus=g)
             for i, g in enumerate(order)]
    cpu_core = {c: core.index for core in cores for c in core.cpus}

    allowed = _allowed(tree, live)
    allowed_cpus = set(allowed.cpus) if allowed.cpus is not None else None
    cpus = []
    for c in cpu_ids:
        core = cores[cpu_core[c]] if c in cpu_core else None
        cpus.append(Cpu(
            id=c, package=pkg.get(c) if online[c] else None, node=cpu_node.get(c),
            l3=cpu_l3.get(c), core=core.index if core else None,
            smt=core.cpus.index(c) if core else 0, online=online[c],
            allowed=allowed_cpus is None or c in allowed_cpus,
            die=die.get(c) if online[c] else None))

    l3s = []
    for i, k in enumerate(l3_caches):
        l3s.append(L3Domain(index=i, size_bytes=k.size_bytes, cpus=k.cpus,
                            package=pkg.get(k.cpus[0]),
                            nodes=tuple(sorted({cpu_node[c] for c in k.cpus if c in cpu_node}))))

    nodes = _nodes(tree, node_ids, node_cpus, pkg, allowed, cpu_ids)
    packages = []
    for p in sorted({v for c, v in pkg.items() if v is not None and online[c]}):
        pc = tuple(c for c in cpu_ids if pkg[c] == p and online[c])
        packages.append(Package(
            id=p, cpus=pc, nodes=tuple(sorted({cpu_node[c] for c in pc if c in cpu_node})),
            l3s=tuple(sorted({cpu_l3[c] for c in pc if c in cpu_l3}))))

    topo = Topology(source=tree.label, cpus=cpus, cores=cores, l3s=l3s, nodes=nodes,
                    packages=packages, caches=caches)
    _cpuinfo(tree, topo)
    topo.tiering = read_tiering(tree, node_ids)
    topo.allowed_evidence = allowed.evidence
    topo.overlapping_nodes = {n: tuple(cl) for n, cl in overlaps.items()}
    if overlaps:
        topo.notes.append(
            "node cpulists overlap (" + "; ".join(
                f"node{n} repeats CPUs {format_list(cl)}" for n, cl in overlaps.items())
            + "): the kernel's NUMA description is inconsistent (buggy or fake NUMA); each "
            "CPU was given to the first node listing it")
    if tree.mismatches:
        rel, lst, mask = tree.mismatches[0]
        topo.notes.append(
            f"{len(tree.mismatches)} cpu-list file(s) disagree with their hex-map twin, e.g. "
            f"{tree.where(rel)} says {format_list(lst)} but the map says {format_list(mask)}"
            " (an edited dump: the kernel writes both from one mask); the lists were used")
    if not node_ids:
        topo.notes.append(f"{tree.where(NODE_DIR)} is missing: the kernel shows no NUMA nodes; "
                          "treated as one node holding every CPU and all memory")
    if devices:
        from numascope.topology.pci import read_devices
        topo.devices = read_devices(tree, topo)
    if infer:
        from numascope.topology.infer import infer_facts
        topo.facts = infer_facts(topo)
    return topo


def _pkey(p: int | None) -> int:
    return -1 if p is None else p


def _online(tree: Tree, cpu_ids: list[int]) -> dict[int, bool]:
    glob = tree.read_list(f"{CPU_DIR}/online")
    out = {}
    for c in cpu_ids:
        own = tree.read(f"{CPU_DIR}/cpu{c}/online")
        if own is not None:
            if own not in ("0", "1"):   # a damaged file is not "offline"
                raise UserError(f"{tree.where(f'{CPU_DIR}/cpu{c}/online')}: expected 0 or 1")
            out[c] = own == "1"
        elif glob is not None:
            out[c] = c in glob
        else:  # cpu0 often has no online file; no topology dir means it is offline
            out[c] = tree.exists(f"{CPU_DIR}/cpu{c}/topology") or c == cpu_ids[0]
    return out


_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
# no CPU cache is this large (the largest L3 slices are a few hundred MiB, a whole 3D V-Cache
# socket about 1 GiB): a bigger size is a damaged or forged file, not a cache
CACHE_MAX_BYTES = 64 << 30


def _size(tree: Tree, rel: str) -> int | None:
    v = tree.read(rel)
    if not v:
        return None
    mult = _UNITS.get(v[-1].upper(), 1)
    num = v[:-1] if v[-1].upper() in _UNITS else v
    if not num.isdigit():
        raise UserError(f"{tree.where(rel)}: expected a size like 32K, found {v[:40]!r}")
    if len(num) > 30 or int(num) * mult > CACHE_MAX_BYTES:
        raise UserError(f"{tree.where(rel)}: a cache size of more than "
                        f"{CACHE_MAX_BYTES >> 30} GiB is not plausible (a damaged or "
                        "edited file?)")
    return int(num) * mult


def _caches(tree: Tree, cpu_ids: list[int], known: set[int]) -> list[Cache]:
    seen: dict[tuple, Cache] = {}
    for c in cpu_ids:
        base = f"{CPU_DIR}/cpu{c}/cache"
        for idx in tree.numbered(base, "index"):
            d = f"{base}/index{idx}"
            level = tree.read_int(f"{d}/level")
            size = _size(tree, f"{d}/size")
            if level is None or not size:
                continue
            kind = tree.read(f"{d}/type") or "Unified"
            shared = [x for x in tree.read_cpus(d, "shared_cpu_map") or [c] if x in known]
            if c not in shared:
                shared = sorted({*shared, c})
            key = (level, kind, tuple(shared))
            if key not in seen:
                seen[key] = Cache(level=level, kind=kind, size_bytes=size, cpus=tuple(shared),
                                  line_bytes=tree.read_int(f"{d}/coherency_line_size"))
    return sorted(seen.values(), key=lambda k: (k.level, k.kind, k.cpus))


def _allowed(tree: Tree, live: bool) -> Allowed:
    if not live:
        return replayed_allowed(tree)
    mems = None
    for line in (tree.read("proc/self/status") or "").splitlines():
        if line.startswith("Mems_allowed_list:"):
            from numascope.topology.lists import parse_list
            try:
                mems = parse_list(line.split(":", 1)[1])
            except ValueError:
                mems = None
    return Allowed(sorted(os.sched_getaffinity(0)), mems,
                   "os.sched_getaffinity(0) and /proc/self/status Mems_allowed_list")


def _nodes(tree: Tree, node_ids: list[int], node_cpus: dict[int, list[int]],
           pkg: dict[int, int | None], allowed: Allowed, cpu_ids: list[int]) -> list[Node]:
    if not node_ids:
        mi = tree.read("proc/meminfo")
        return [Node(id=0, cpus=tuple(cpu_ids), memory_bytes=meminfo_field(mi, "MemTotal"),
                     free_bytes=meminfo_field(mi, "MemFree"),
                     packages=tuple(sorted({p for p in pkg.values() if p is not None})))]
    nodes = []
    for n in node_ids:
        base = f"{NODE_DIR}/node{n}"
        mi = tree.read(f"{base}/meminfo")
        dist: dict[int, int] = {}
        row = tree.read(f"{base}/distance")
        if row:
            vals = row.split()
            if not all(v.isdigit() for v in vals):
                raise UserError(f"{tree.where(base + '/distance')}: malformed row {row[:40]!r}")
            if len(vals) == len(node_ids):
                dist = {m: int(v) for m, v in zip(node_ids, vals)}
        nodes.append(Node(
            id=n, cpus=tuple(node_cpus[n]), memory_bytes=meminfo_field(mi, "MemTotal"),
            free_bytes=meminfo_field(mi, "MemFree"), distances=dist,
            packages=tuple(sorted({pkg[c] for c in node_cpus[n]
                                   if c in pkg and pkg[c] is not None})),
            allowed=allowed.mems is None or n in allowed.mems))
    return nodes


def _cpuinfo(tree: Tree, topo: Topology) -> None:
    first = cpuinfo_first(tree.read_head("proc/cpuinfo") or "")   # grows with the CPUs
    topo.cpu_model = first.get("model name") or first.get("cpu") or None
    topo.cpu_vendor = first.get("vendor_id")
    fam, mod = first.get("cpu family"), first.get("model")
    topo.cpu_family = int(fam) if fam and fam.isdigit() else None
    topo.cpu_model_number = int(mod) if mod and mod.isdigit() else None
    step = first.get("stepping")
    topo.cpu_stepping = int(step) if step and step.isdigit() else None
    flags = first.get("flags", first.get("Features"))
    topo.cpu_flags = tuple(flags.split()) if flags is not None else None
    topo.hypervisor = "hypervisor" in first.get("flags", "").split() if first else None
