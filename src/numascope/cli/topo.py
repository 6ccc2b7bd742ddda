"""`numascope topo`: the machine's topology, inferred BIOS modes and device locality."""

from __future__ import annotations

import argparse

from numascope.cli._common import add_json, add_sysfs_root

NAME = "topo"
HELP = "show packages, NUMA nodes, L3 domains, cores, devices and the inferred memory mode"
ORDER = 10


def register(p: argparse.ArgumentParser) -> None:
    add_sysfs_root(p)
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from numascope.console import out, print_json
    from numascope.topology import read_topology
    from numascope.topology.export import topology_to_dict
    from numascope.topology.render import render

    topo = read_topology(args.sysfs_root)
    if args.json:
        print_json(topology_to_dict(topo))
    else:
        render(topo, out)
    return 0
