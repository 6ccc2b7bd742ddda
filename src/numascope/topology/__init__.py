"""Machine topology: a typed model read from sysfs/procfs under any root.

    from numascope.topology import read_topology
    topo = read_topology("/")            # or a directory / .tar.bz2 of a sysfs dump
"""

from numascope.topology.model import (  # noqa: F401
    Cache,
    Core,
    Cpu,
    Fact,
    L3Domain,
    Node,
    Package,
    PciDevice,
    Topology,
)
from numascope.topology.reader import read_topology  # noqa: F401
