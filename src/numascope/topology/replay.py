"""This machine or a replayed one as the topology and the jailed Tree it was read through:
the commands that read more than the topology (cpuinfo, SMBIOS, the readiness checks) take
both from here, so a --sysfs-root archive is extracted once for all of them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def machine(sysfs_root: str) -> Iterator[tuple[Any, Any]]:
    """(topology, Tree) of this machine ("/") or a replayed one (a directory or an archive,
    extracted for as long as the context lasts): cpuinfo and SMBIOS are read through the
    same jailed Tree as the topology."""
    from numascope.topology import read_topology
    from numascope.topology.archive import extracted, find_root, is_archive
    from numascope.topology.files import Tree
    from numascope.topology.reader import read_tree
    p = Path(sysfs_root or "/")
    if p.is_file() and is_archive(p):
        with extracted(p) as d:
            tree = Tree(d, label=sysfs_root)
            yield read_tree(tree, live=False), tree
        return
    topo = read_topology(p)        # every check: missing, not a dump, /sys itself …
    live = p.resolve() == Path("/")
    yield topo, Tree("/" if live else find_root(p, sysfs_root), label=None if live
                     else sysfs_root)
