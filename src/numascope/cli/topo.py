"""`numascope topo`: the machine's topology, inferred BIOS modes and device locality."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from numascope.command.flags import add_json, add_store, add_sysfs_root
from numascope.command.output import check_output, emit

NAME = "topo"
HELP = "show packages, NUMA nodes, L3 domains, cores, devices and the inferred memory mode"
ORDER = 10

if TYPE_CHECKING:
    from numascope.results.record import BenchResult
    from numascope.topology.hwloc_xml import NodeFigure


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
    from numascope.console import out, plural, warn
    from numascope.errors import UserError
    from numascope.results.run import topology_digest
    from numascope.results.store import Store
    from numascope.topology.hwloc_xml import tools, write_xml

    tools()   # missing hwloc: say so before reading the store
    with Store.open(args.store) as st:
        rec = _pick_run(st, args.from_run)
    digest = rec.host.get("topology_digest")
    if digest is None:
        warn(f"run {rec.run_id} records no topology digest: cannot check it was measured "
             "on this machine")
    elif digest != topology_digest(topo):
        raise UserError(f"run {rec.run_id} was measured on another machine (its topology "
                        "differs from this one's; --sysfs-root replays the machine it came "
                        "from)")
    try:
        attrs, replaced = write_xml(topo, matrix_figures(rec.results), args.hwloc_xml,
                                    args.sysfs_root)
    except OSError as e:   # checked before, yet the disk may still refuse (full, removed)
        from numascope.errors import escape_text
        raise UserError(f"--hwloc-xml {escape_text(args.hwloc_xml)}: cannot write it "
                        f"({e.strerror or type(e).__name__})") from None
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


def matrix_figures(results: list[BenchResult]) -> list[NodeFigure]:
    """A run's node matrix as the topology layer's plain figures (`NodeFigure`s): validated
    matrix results with samples, each metric's median, in the results' order."""
    from numascope.topology.hwloc_xml import METRICS, NodeFigure
    out = []
    for r in results:
        if r.family != "matrix" or not r.validated:
            continue
        for metric in METRICS:
            m = r.metrics.get(metric)
            if m is not None and m.values:
                out.append(NodeFigure(initiator=int(r.params["src"]),
                                      target=int(r.params["dst"]), metric=metric,
                                      value=m.median, source=f"run result {r.case}"))
    return out


def _pick_run(st, spec: str | None):
    from numascope.errors import UserError
    if spec is not None:
        recs = st.load([spec])
        if len(recs) != 1:
            raise UserError(f"--from-run {spec} selects {len(recs)} runs: give one")
        if not any(r.family == "matrix" for r in recs[0].results):
            raise UserError(f"run {recs[0].run_id} holds no node matrix")
        return recs[0]
    for summary in reversed(st.list_runs()):
        rec = st.get_run(summary.run_id)
        if any(r.family == "matrix" for r in rec.results):
            return rec
    raise UserError("no stored run holds a node matrix (numascope run stores one)")
