"""`numascope topo`: the machine's topology, inferred BIOS modes and device locality."""

from __future__ import annotations

import argparse

from numascope.command.flags import add_json, add_store, add_sysfs_root
from numascope.command.output import check_output, emit

NAME = "topo"
HELP = "show packages, NUMA nodes, L3 domains, cores, devices and the inferred memory mode"
ORDER = 10


def register(p: argparse.ArgumentParser) -> None:
    add_sysfs_root(p)
    p.add_argument("--hwloc-xml", default=None, metavar="FILE",
                   help="write hwloc's XML of the machine with the measured node matrix "
                        "(latency, bandwidth) as hwloc memory attributes")
    p.add_argument("--from-run", default=None, metavar="RUN",
                   help="the stored run whose matrix --hwloc-xml exports (default: the "
                        "latest run holding one)")
    add_store(p)
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from numascope.console import out
    from numascope.errors import UserError
    from numascope.topology import read_topology
    from numascope.topology.export import topology_to_dict
    from numascope.topology.render import render
    if args.from_run is not None and args.hwloc_xml is None:
        raise UserError("--from-run names the run --hwloc-xml exports: give --hwloc-xml FILE")
    if args.hwloc_xml is not None:   # a bad path is said before anything is read
        check_output(args.hwloc_xml, "--hwloc-xml", (".xml",))
    topo = read_topology(args.sysfs_root)
    if args.hwloc_xml is not None:
        return _hwloc_xml(args, topo)
    if args.json:   # results: the topology document (its own schema_version inside)
        emit(NAME, [topology_to_dict(topo)])
    else:
        render(topo, out)
    return 0


def _hwloc_xml(args: argparse.Namespace, topo) -> int:
    from numascope.console import out, plural
    from numascope.results.hwloc import write_matrix_xml

    rec, attrs, replaced = write_matrix_xml(topo, args.store, args.from_run, args.hwloc_xml,
                                            args.sysfs_root)
    if args.json:
        emit(NAME, [a.__dict__ for a in attrs], xml=args.hwloc_xml, run=rec.run_id,
             firmware_values_replaced=replaced,
             units={"Latency": "ns", "Bandwidth": "MiB/s (2^20 B/s)"})
        return 0
    pairs = {(a.initiator, a.target) for a in attrs}
    out.print(f"wrote {args.hwloc_xml}: {plural(len(attrs), 'memory attribute')} "
              f"({plural(len(pairs), 'node pair')} of run {rec.run_id}; Latency/ReadLatency "
              "in ns, Bandwidth/ReadBandwidth in MiB/s)"
              + (f"; {plural(replaced, 'firmware (HMAT) value')} of the measured nodes "
                 "replaced" if replaced else ""), markup=False)
    out.print(f"read it with: lstopo --input {args.hwloc_xml} --memattrs", markup=False)
    return 0
