"""`numascope net`: MPI point-to-point latency, bandwidth and message rate by NUMA placement —
the intra-node paths of this host (same L3, same node, other node, other socket), or two
hosts with --hosts A,B (every node pair, each node's distance to the HCA/NIC)."""

from __future__ import annotations

import argparse
import math

from numascope.command.flags import add_json

NAME = "net"
HELP = "MPI latency and bandwidth by NUMA placement (mpirun; OSU when on PATH): this " \
       "host's paths, or two hosts with --hosts A,B"
ORDER = 50
PATH_FLAGS = {"same-l3": "same L3", "same-node": "same node", "other-node": "other node",
              "other-socket": "other socket"}


def register(p: argparse.ArgumentParser) -> None:
    m = p.add_argument_group("what is measured")
    m.add_argument("--sizes", default=None, metavar="LIST",
                   help="message sizes, e.g. 1,8,4K,1M, or MIN:MAX for the powers of two "
                        "between (default 1:4M; --quick: 8 sizes to 1M)")
    m.add_argument("--tests", default="lat,bw,bibw", metavar="LIST",
                   help="lat (ping-pong), bw (window of sends), bibw (both ways) "
                        "(default all three)")
    m.add_argument("--pairs", type=int, default=0, metavar="N",
                   help="add the multi-pair test: N pairs at once, bandwidth and message "
                        "rate")
    m.add_argument("--iters", default=None, metavar="N[,M]",
                   help="timed iterations per size: N ping-pongs, M windows (N for both "
                        "when M is left out; default OSU's 10000,100, --quick 1000,20; above "
                        "8 KiB a tenth / a fifth; warm-up in OSU's ratios)")
    m.add_argument("--window", type=int, default=64, metavar="N",
                   help="sends in flight per window (default 64)")
    m.add_argument("--reps", type=int, default=1, metavar="N",
                   help="launches per test (default 1)")
    m.add_argument("--quick", action="store_true", help="fewer sizes and iterations")
    m.add_argument("--buffers", default="same", choices=["same", "distinct"],
                   help="same: one send and one receive buffer per rank, reused by every "
                        "message of a window (OSU's method, the default); distinct: a buffer "
                        "per window slot (an application streaming fresh data)")
    m.add_argument("--pages", default="thp", choices=["none", "thp"],
                   help="page kind of the ranks' buffers: none (base pages), thp "
                        "(transparent huge pages); default thp")
    w = p.add_argument_group("where the ranks run")
    w.add_argument("--path", action="append", default=[], choices=sorted(PATH_FLAGS),
                   help="only this intra-node path (repeatable; default every one present)")
    w.add_argument("--cpus", default=None, metavar="A,B",
                   help="rank 0 on CPU A, rank 1 on CPU B (buffers on each CPU's node)")
    w.add_argument("--hosts", default=None, metavar="A,B",
                   help="two hosts: rank 0 on A, rank 1 on B, through every node pair")
    w.add_argument("--peer-nodes", default=None, metavar="LIST",
                   help="--hosts: host B's nodes (default: the same as this host's)")
    e = p.add_argument_group("launching")
    e.add_argument("--engine", default="auto", choices=["auto", "numascope", "osu"],
                   help="auto: the OSU micro-benchmarks when on PATH, else numascope's "
                        "program (built with mpicc at first use)")
    e.add_argument("--timeout", type=float, default=300.0, metavar="S",
                   help="seconds per mpirun launch before every rank is killed (default 300)")
    p.add_argument("--plot", default=None, metavar="FILE",
                   help="save the latency / bandwidth plot (.png or .svg)")
    add_json(p)


def _sizes(text: str | None, quick: bool) -> tuple[int, ...]:
    from numascope.errors import UserError
    from numascope.families.interconnect.bench import FULL_SIZES, QUICK_SIZES
    from numascope.units import parse_size
    if text is None:
        return QUICK_SIZES if quick else FULL_SIZES
    if ":" in text:
        lo_t, _, hi_t = text.partition(":")
        lo, hi = parse_size(lo_t or "1"), parse_size(hi_t)
        if lo > hi:
            raise UserError(f"--sizes {text}: the first size is larger than the second")
        out, s = [], 1
        while s <= hi:
            if s >= lo:
                out.append(s)
            s *= 2
        if not out:
            raise UserError(f"--sizes {text}: no power of two between them")
        return tuple(out)
    parts = [x.strip() for x in text.split(",")]
    if not all(parts):
        raise UserError(f"--sizes {text!r}: an empty entry")
    return tuple(sorted({parse_size(x) for x in parts}))


def _pair(text: str, flag: str) -> list[str]:
    from numascope.errors import UserError
    parts = [x.strip() for x in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise UserError(f"{flag} {text!r}: give two, A,B")
    return parts


def params_from(args: argparse.Namespace):
    from numascope.errors import UserError
    from numascope.families.interconnect.bench import NetParams
    if not math.isfinite(args.timeout):
        raise UserError(f"--timeout {args.timeout}: a number of seconds")
    tests = tuple(dict.fromkeys(x.strip() for x in args.tests.split(",")))
    lat, bw = (1000, 20) if args.quick else (10000, 100)
    if args.iters is not None:
        its = _ints(str(args.iters), "--iters")
        if len(its) > 2 or min(its) < 1:
            raise UserError(f"--iters {args.iters}: one or two counts of at least 1")
        lat, bw = its[0], its[-1]
    return NetParams(sizes=_sizes(args.sizes, args.quick), lat_iters=lat, bw_iters=bw,
                     window=args.window, pairs=args.pairs, reps=args.reps,
                     timeout=args.timeout, engine=args.engine, tests=tests,
                     pages=args.pages, buffers=args.buffers)


def main(args: argparse.Namespace) -> int:
    from numascope.command.output import check_output
    from numascope.command.runner import PLOT_SUFFIXES, finish, measure, save_plot, warn_notes
    from numascope.errors import UserError
    from numascope.families.interconnect import bench as net
    from numascope.families.interconnect import launch
    from numascope.placement import check_cpus
    from numascope.topology import read_topology

    plot = check_output(args.plot, "--plot", PLOT_SUFFIXES)
    p = params_from(args)
    world = launch.mpi_world()
    if world is not None:
        return _under_launcher(args, p, world, plot)
    topo = read_topology("/")
    hosts = tuple(_pair(args.hosts, "--hosts")) if args.hosts else ()
    if args.peer_nodes is not None and not hosts:
        raise UserError("--peer-nodes goes with --hosts A,B")
    if hosts and (args.cpus or args.path):
        raise UserError("--hosts moves the ranks through every node itself: leave out "
                        "--cpus and --path")
    if args.cpus and args.path:
        raise UserError("give --cpus or --path, not both")
    peer_nodes = None
    if args.peer_nodes is not None:
        peer_nodes = list(dict.fromkeys(_ints(args.peer_nodes, "--peer-nodes")))
    bench = net.Interconnect()
    if args.cpus:
        a, b = (_ints(x, "--cpus")[0] for x in _pair(args.cpus, "--cpus"))
        check_cpus(topo, [a, b])
        cases = [net.given_case(topo, p, a, b)]
    else:
        only = [PATH_FLAGS[x] for x in dict.fromkeys(args.path)] or None
        cases = bench.cases(topo, params=p, hosts=hosts, peer_nodes=peer_nodes, only=only)
        if not cases:
            raise UserError("no path to measure: " + "; ".join(bench.absent))
    mpirun, _ = launch.mpi_tools()            # exit 4, one line, before anything runs
    version = launch.mpi_version(mpirun)
    outcome = measure(bench, topo, cases, label="net", quiet=args.json)
    if not args.json:
        warn_notes(outcome.results)
    if plot is not None:
        save_plot(plot, "interconnect.figures", outcome.results)
    extra = {"mpi": version, "absent": bench.absent if not hosts else [],
             "paths": net.path_rows(outcome.results) if not hosts else [],
             "peer": net.peer_table(outcome.results) if hosts else None,
             "hca": net.hca_table(topo)}
    return finish(args, NAME, outcome, lambda rs, con: render(rs, con, bench.absent, hosts,
                                                               topo), extra=extra)


def _under_launcher(args: argparse.Namespace, p, world: tuple[int, int], plot) -> int:
    """Started by the user's `mpirun -np 2 -H a,b numascope net` / `srun -N2 -n2 …`: rank 0
    prints the node-pair table (or the envelope); the other rank prints nothing."""
    from numascope.command.runner import Outcome, finish, save_plot, warn_notes
    from numascope.errors import UserError
    from numascope.families.interconnect import bench as net
    from numascope.topology import read_topology
    if args.hosts or args.cpus or args.path or args.peer_nodes is not None:
        raise UserError("under your own mpirun/srun the ranks' hosts are yours: leave out "
                        "--hosts, --cpus, --path and --peer-nodes")
    topo = read_topology("/")
    results = net.under_launcher(topo, p, world)
    if world[0] != 0:
        return 0
    if not args.json:
        warn_notes(results)
    if plot is not None:
        save_plot(plot, "interconnect.figures", results)
    hosts = tuple(results[0].params["hosts"]) if results else ("A", "B")
    extra = {"mpi": "the user's launcher", "absent": [], "paths": [],
             "peer": net.peer_table(results), "hca": net.hca_table(topo),
             "launched_by": "user"}
    return finish(args, NAME, Outcome(results=results),
                  lambda rs, con: render(rs, con, [], hosts, topo), extra=extra)


def _ints(text: str, flag: str) -> list[int]:
    from numascope.errors import UserError
    try:
        vals = [int(x) for x in text.split(",")]
    except ValueError:
        raise UserError(f"{flag} {text!r}: expected numbers such as 0,4") from None
    if any(v < 0 for v in vals):
        raise UserError(f"{flag} {text!r}: numbers are not negative")
    return vals


def _f(v, fmt: str) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)


def _num(v) -> str:
    """3 significant digits below 100, whole numbers with separators above."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def render(results: list, con, absent: list[str], hosts: tuple[str, ...], topo) -> None:
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
                     f"{len(results)} case{'s' if len(results) != 1 else ''}; buffers "
                     f"{buffers}: {net.BUFFERS[buffers]}"))
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
    tb = Table(title=f"by path (lat: smallest size; bw: largest; {buffers} buffers; median "
                     f"of {n} launch{'es' if n != 1 else ''}, best beside it)",
               box=box.SIMPLE_HEAD, pad_edge=False)
    for c, j in (("path", "left"), ("CPUs", "left"), ("nodes", "left"), ("dist", "right"),
                 ("lat us", "right"), ("best", "right"), ("bw MB/s", "right"),
                 ("best", "right"), ("bibw MB/s", "right"), ("best", "right")):
        tb.add_column(c, justify=j)
    for row in rows:
        tb.add_row(row["path"], f"{row['cpu_a']}-{row['cpu_b']}",
                   f"{row['node_a']}-{row['node_b']}", _f(row["distance"], "d"),
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
