"""One reader of the host's own files — /proc/meminfo, /proc/cpuinfo, the hugetlb pool,
node meminfo — and the one rule for "does this fit", on top of the topology's Tree (so a
replayed root is read exactly like the live one, jail included). Host builds on topology,
never the reverse: the procfs text parsers (meminfo_field, cpuinfo_first) live in
topology.files, which the topology reader uses too.

Every benchmark asks here before it allocates:
    check_fits(need, what, nodes=None)      UserError (exit 2): a smaller --size is the fix
    check_hugetlb(need, what)               Unavailable (exit 4): this host cannot, as set up
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from numascope.errors import Unavailable, UserError
from numascope.topology.files import Tree, cpuinfo_first, meminfo_field
from numascope.units import format_bytes

HEADROOM = 0.9          # use at most 90 % of what is free: the kernel and we need some too
HUGE_2M = 2 << 20       # the hugetlb page size the C core maps


class Host:
    """The host files under `root` ("/" is this machine). Values are read when asked, so
    free memory is current."""

    def __init__(self, root: str | Path = "/") -> None:
        self.tree = root if isinstance(root, Tree) else Tree(root)

    # -- meminfo ------------------------------------------------------------------------
    def meminfo(self, key: str, node: int | None = None) -> int | None:
        """A /proc/meminfo (or node<N>/meminfo) field: kB fields in bytes, counts as is;
        None when missing or unreadable."""
        return meminfo_field(self.tree.read(_meminfo_file(node)), key)

    def mem_available(self) -> int | None:
        return self.meminfo("MemAvailable")

    def node_free(self, node: int, _read: _Once | None = None) -> int | None:
        """What an allocation on `node` can have: MemFree alone misses the page cache and
        reclaimable slab the kernel frees on demand (on a server with hours of uptime, most
        of a node). On a one-node machine that is MemAvailable; with several nodes, the
        node's MemFree plus its share (by its reclaimable file pages and slab) of what
        MemAvailable adds to the machine's MemFree."""
        read = _read or _Once(self)
        free = read.field("MemFree", node)
        if free is None:
            return None
        nodes = read.memory_nodes()
        if nodes == [node]:
            return read.field("MemAvailable")
        extra = (read.field("MemAvailable") or 0) - (read.field("MemFree") or 0)
        total = sum(read.reclaimable(n) for n in nodes)
        if extra <= 0 or total <= 0:
            return free
        return free + extra * read.reclaimable(node) // total

    def memory_nodes(self) -> list[int]:
        """The nodes with a meminfo file (every node, CPU-less tiers included)."""
        d = self.tree.path("sys/devices/system/node")
        try:
            names = [p.name for p in d.iterdir()]
        except OSError:
            return []
        return sorted(int(n[4:]) for n in names if re.fullmatch(r"node\d+", n)
                      and self.tree.exists(f"sys/devices/system/node/{n}/meminfo"))

    def hugetlb_pool(self) -> tuple[int, int] | None:
        """(free bytes, page bytes) of the default hugetlb pool; None when there is none."""
        free, size = self.meminfo("HugePages_Free"), self.meminfo("Hugepagesize")
        if free is None or not size:
            return None
        return free * size, size

    # -- cpuinfo ------------------------------------------------------------------------
    def cpuinfo(self) -> dict[str, str]:
        """The first processor block of /proc/cpuinfo (empty if unreadable)."""
        return cpuinfo_first(self.tree.read("proc/cpuinfo") or "")

    def cpu_flags(self) -> set[str]:
        info = self.cpuinfo()
        return set((info.get("flags") or info.get("Features") or "").split())

    # -- the rules ----------------------------------------------------------------------
    def free_for(self, nodes: list[int] | tuple[int, ...] | None) -> tuple[int | None, str]:
        """Free bytes where memory will go, and how a message names that place."""
        if not nodes:
            return self.mem_available(), "on this machine (MemAvailable)"
        read = _Once(self)
        frees = [self.node_free(n, read) for n in nodes]
        if any(f is None for f in frees):
            return None, ""
        names = ",".join(str(n) for n in nodes)
        return sum(f for f in frees if f is not None), \
            f"on node{'s' if len(nodes) > 1 else ''} {names}"

    def check_fits(self, need: int, what: str, nodes=None) -> None:
        """UserError when `need` bytes would not fit in what is free where they go."""
        free, where = self.free_for(nodes)
        if free is not None and need > HEADROOM * free:
            raise UserError(f"{what} needs {format_bytes(need)} but only {format_bytes(free)} "
                            f"is free {where}: use a smaller --size")

    def check_hugetlb(self, need: int, what: str) -> None:
        """Unavailable unless the default hugetlb pool holds `need` bytes in 2 MiB pages:
        touching a hugetlb mapping the pool cannot back kills the process with SIGBUS."""
        pool = self.hugetlb_pool()
        if pool is None:
            raise Unavailable("hugetlb pages: this kernel reports no hugetlb pool")
        free, page = pool
        if page != HUGE_2M:
            raise Unavailable(f"hugetlb pages: the default huge page is {format_bytes(page)}, "
                              "numascope maps 2 MiB ones; use --pages thp")
        need = -(-need // page) * page
        if need > free:
            raise Unavailable(f"hugetlb pages: {what} needs {format_bytes(need)} but the pool "
                              f"has {format_bytes(free)} free (reserve more through "
                              "/proc/sys/vm/nr_hugepages, or use --pages thp)")


@lru_cache(maxsize=4)
def _host(root: str) -> Host:
    return Host(root)


def host(root: str | Path = "/") -> Host:
    """The Host for `root` (one per root per process)."""
    return _host(str(root))


def live_host(topo) -> Host | None:
    """The host whose free memory and hugetlb pool matter for `topo`: this machine's when
    the topology is this machine's, none for a replayed or hand-built one (nothing is
    allocated for it)."""
    return host("/") if topo.source in ("/", "") else None


def _meminfo_file(node: int | None) -> str:
    """/proc/meminfo, or node N's meminfo."""
    return "proc/meminfo" if node is None else f"sys/devices/system/node/node{node}/meminfo"


class _Once:
    """Each meminfo file read once for one decision: a check over several nodes reads every
    node's file for each node's share, ~18 reads a node otherwise (slow where sysfs is, as
    under an emulator), and one snapshot gives shares that add up."""

    def __init__(self, host: Host) -> None:
        self.host, self._texts, self._nodes = host, {}, None

    def field(self, key: str, node: int | None = None) -> int | None:
        if node not in self._texts:
            self._texts[node] = self.host.tree.read(_meminfo_file(node))
        return meminfo_field(self._texts[node], key)

    def memory_nodes(self) -> list[int]:
        if self._nodes is None:
            self._nodes = self.host.memory_nodes()
        return self._nodes

    def reclaimable(self, node: int | None) -> int:
        return sum(self.field(k, node) or 0
                   for k in ("Active(file)", "Inactive(file)", "SReclaimable"))
