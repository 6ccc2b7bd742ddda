"""`numascope net`: MPI point-to-point latency, bandwidth and message rate by NUMA placement —
the intra-node paths of this host (same L3, same node, other node, other socket), or two
hosts with --hosts A,B (every node pair, each node's distance to the HCA/NIC)."""

from __future__ import annotations

import argparse
import math
from typing import Any

NAME = "net"
HELP = "MPI latency and bandwidth by NUMA placement (mpirun; OSU when on PATH): this " \
       "host's paths, or two hosts with --hosts A,B"
ORDER = 50
FLAGS = {"plot": "the latency / bandwidth plot"}   # beside the TABLE of options.py


def checked(args: argparse.Namespace) -> dict[str, Any]:
    """Every option's value converted and checked by its rule (one pass, before anything
    runs); --path: each value given, once."""
    from numascope.families.interconnect.options import TABLE
    from numascope.options import check
    values = check(TABLE, vars(args))
    values["path"] = list(dict.fromkeys(values["path"] or []))
    return values


def _sizes(text: str | None, quick: bool) -> tuple[int, ...]:
    """--sizes (its option's rule), or the preset when it is not given."""
    from numascope.families.interconnect.options import FULL_SIZES, QUICK_SIZES, TABLE
    if text is None:
        return QUICK_SIZES if quick else FULL_SIZES
    return TABLE["sizes"].convert(text)


def params_from(v: dict[str, Any]):
    """NetParams from the checked values (the presets where --sizes, --iters are left
    out)."""
    from numascope.families.interconnect.bench import NetParams
    from numascope.families.interconnect.options import FULL_ITERS, NO_PAIRS, QUICK_ITERS
    lat, bw = v["iters"] or (QUICK_ITERS if v["quick"] else FULL_ITERS)
    pairs = NO_PAIRS if v["pairs"] is None else v["pairs"]
    return NetParams(sizes=v["sizes"] or _sizes(None, v["quick"]), lat_iters=lat,
                     bw_iters=bw, window=v["window"], pairs=pairs, reps=v["reps"],
                     timeout=v["timeout"], engine=v["engine"], tests=v["tests"],
                     pages=v["pages"], buffers=v["buffers"])


def main(args: argparse.Namespace) -> int:
    from numascope.command.output import check_output
    from numascope.command.runner import PLOT_SUFFIXES, finish, measure, save_plot, warn_notes
    from numascope.errors import UserError
    from numascope.families.interconnect import bench as net
    from numascope.families.interconnect import launch
    from numascope.families.interconnect.options import PATH_FLAGS
    from numascope.placement import check_cpus
    from numascope.topology import read_topology

    plot = check_output(args.plot, "--plot", PLOT_SUFFIXES)
    v = checked(args)
    p = params_from(v)
    world = launch.mpi_world()
    if world is not None:
        return _under_launcher(args, v, p, world, plot)
    topo = read_topology("/")
    hosts = v["hosts"] or ()
    if v["peer_nodes"] is not None and not hosts:
        raise UserError("--peer-nodes goes with --hosts A,B")
    if hosts and (v["cpus"] or v["path"]):
        raise UserError("--hosts moves the ranks through every node itself: leave out "
                        "--cpus and --path")
    if v["cpus"] and v["path"]:
        raise UserError("give --cpus or --path, not both")
    bench = net.Interconnect()
    if v["cpus"]:
        a, b = v["cpus"]
        check_cpus(topo, [a, b])
        cases = [net.given_case(topo, p, a, b)]
    else:
        only = [PATH_FLAGS[x] for x in v["path"]] or None
        cases = bench.cases(topo, params=p, hosts=hosts, peer_nodes=v["peer_nodes"],
                            only=only)
        if not cases:
            raise UserError("no path to measure: " + "; ".join(bench.absent))
    mpirun, _ = launch.mpi_tools()            # exit 4, one line, before anything runs
    version = launch.mpi_version(mpirun)
    outcome = measure(bench, topo, cases, label="net", quiet=args.json, args=args)
    if not args.json:
        warn_notes(outcome.results)
    if plot is not None:
        save_plot(plot, "interconnect.figures", outcome)
    extra = {"mpi": version, "absent": bench.absent if not hosts else [],
             "paths": net.path_rows(outcome.results) if not hosts else [],
             "peer": net.peer_table(outcome.results) if hosts else None,
             "hca": net.hca_table(topo)}
    planned = len(cases)
    return finish(args, NAME, outcome, lambda rs, con: render(rs, con, bench.absent, hosts,
                                                               topo, planned), extra=extra)


def _under_launcher(args: argparse.Namespace, v: dict[str, Any], p, world: tuple[int, int],
                    plot) -> int:
    """Started by the user's `mpirun -np 2 -H a,b numascope net` / `srun -N2 -n2 …`: rank 0
    prints the node-pair table (or the envelope); the other rank prints nothing."""
    from numascope.command.runner import Outcome, finish, save_plot, warn_notes
    from numascope.errors import UserError
    from numascope.families.interconnect import bench as net
    from numascope.topology import read_topology
    if v["hosts"] or v["cpus"] or v["path"] or v["peer_nodes"] is not None:
        raise UserError("under your own mpirun/srun the ranks' hosts are yours: leave out "
                        "--hosts, --cpus, --path and --peer-nodes")
    topo = read_topology("/")
    results = net.under_launcher(topo, p, world)
    if world[0] != 0:
        return 0
    if not args.json:
        warn_notes(results)
    outcome = Outcome(results=results)
    if plot is not None:
        save_plot(plot, "interconnect.figures", outcome)
    hosts = tuple(results[0].params["hosts"]) if results else ("A", "B")
    extra = {"mpi": "the user's launcher", "absent": [], "paths": [],
             "peer": net.peer_table(results), "hca": net.hca_table(topo),
             "launched_by": "user"}
    return finish(args, NAME, outcome,
                  lambda rs, con: render(rs, con, [], hosts, topo), extra=extra)


def _f(v, fmt: str) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)


def _num(v) -> str:
    """3 significant digits below 100, whole numbers with separators above."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def cases_text(finished: int, planned: int | None = None) -> str:
    """"3 cases", or "2 of 3 cases finished" when a stop ended the sweep early."""
    if planned is not None and finished < planned:
        return f"{finished} of {planned} case{'s' if planned != 1 else ''} finished"
    return f"{finished} case{'s' if finished != 1 else ''}"


def ranks_text(row: dict[str, Any]) -> str:
    """Rank 0's CPU and node, then rank 1's: "CPU 0 → CPU 1" over "node 0 → node 0" (not
    "0-1", which reads as a range)."""
    return (f"CPU {row['cpu_a']} → CPU {row['cpu_b']}\n"
            f"node {row['node_a']} → node {row['node_b']}")


def render(results: list, con, absent: list[str], hosts: tuple[str, ...], topo,
           planned: int | None = None) -> None:
    """Per case: the path and latency / bandwidth; then the sweep by size; then what is
    absent here. With --hosts: the node-pair table, the HCA distances and the best node."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from numascope.families.interconnect import bench as net
    if not results:
        con.print("no case finished")
        return
    r0 = results[0]
    buffers = net.buffers_of(r0)
    con.print(escape(f"{r0.params['mpi']}; engine {r0.params['engine']}; "
                     f"{cases_text(len(results), planned)}; buffers "
                     f"{buffers}: {net.BUFFERS[buffers]}; pages {net.pages_of(r0)}: "
                     f"{net.PAGE_TEXT[net.pages_of(r0)]}"))
    if hosts:
        pt = net.peer_table(results)
        tb = Table(title=f"{hosts[0]} node x {hosts[1]} node ({buffers} buffers; medians)",
                   box=box.SIMPLE_HEAD, pad_edge=False)
        for c in ("A node", "B node", "lat us", "bw MB/s", "HCA dist"):
            tb.add_column(c, justify="right")
        for row in pt["rows"]:
            tb.add_row(str(row["node_a"]), str(row["node_b"]), _f(row["latency_us"], ".2f"),
                       _f(row["bandwidth_mbs"], ",.0f"), _f(row["hca_distance"], "d"))
        con.print(tb)
        if pt["best"]:
            con.print(escape(pt["best"]))
        hca = [h for h in net.hca_table(topo) if h["device"]]
        if not hca:
            con.print(escape(f"no InfiniBand HCA or NIC with a known NUMA node on "
                             f"{hosts[0]}: no HCA distance"))
        for h in hca:
            con.print(escape(f"node {h['node']}: nearest {h['kind']} {h['device']} on node "
                             f"{h['hca_node']}, distance {h['distance']}"))
        return
    rows = net.path_rows(results)
    n = max((row["launches"] for row in rows), default=1)
    tb = Table(title=f"by path (under it: rank 0's CPU and node → rank 1's; lat: smallest "
                     f"size; bw: largest; {buffers} buffers; median "
                     f"of {n} launch{'es' if n != 1 else ''}, best beside it)",
               box=box.SIMPLE_HEAD, pad_edge=False)
    for c, j in (("path", "left"), ("dist", "right"),
                 ("lat us", "right"), ("best", "right"), ("bw MB/s", "right"),
                 ("best", "right"), ("bibw MB/s", "right"), ("best", "right")):
        tb.add_column(c, justify=j)
    for row in rows:
        tb.add_row(escape(f"{row['path']}\n{ranks_text(row)}"), _f(row["distance"], "d"),
                   _num(row["latency_us"]), _num(row["latency_us_best"]),
                   _num(row["bandwidth_mbs"]), _num(row["bandwidth_mbs_best"]),
                   _num(row["bibw_mbs"]), _num(row["bibw_mbs_best"]))
    con.print(tb)
    if any(r["mbw_mbs"] is not None for r in rows):
        for row in rows:
            if row["mbw_mbs"] is not None:
                con.print(escape(f"{row['path']}: {r0.params['net']['pairs']} pairs "
                                 f"{row['mbw_mbs']:,.0f} MB/s, "
                                 f"{_f(row['msg_rate'], ',.0f')} msg/s"))
    con.print(escape(f"by size: medians of {n} launch{'es' if n != 1 else ''}, {buffers} "
                     "buffers"))
    for t, unit in (("lat", "us"), ("bw", "MB/s"), ("bibw", "MB/s"), ("mbw", "MB/s")):
        have = [r for r in results if net.sweep(r, t)]
        if not have:
            continue
        sw = Table(title=f"{t} {unit} by size", box=box.SIMPLE_HEAD, pad_edge=False)
        sw.add_column("size", justify="right")
        for r in have:
            sw.add_column(escape(str(r.params.get("path"))), justify="right")
        sizes = sorted({s for r in have for s in net.sweep(r, t)})
        for s in sizes:
            sw.add_row(net._size(s), *[_num(net.sweep(r, t).get(s)) for r in have])
        con.print(sw)
    for a in absent:
        con.print(escape(a))
