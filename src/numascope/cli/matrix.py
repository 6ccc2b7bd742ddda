"""`numascope matrix`: idle latency and read bandwidth for every (CPU node, memory node)."""

from __future__ import annotations

import argparse
import math

from numascope.cli._common import add_json, add_sysfs_root, report_interrupted

NAME = "matrix"
HELP = "NUMA latency and read-bandwidth matrices: CPUs of node i x memory of node j"
ORDER = 42


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("--what", choices=["both", "latency", "bandwidth"], default="both",
                   help="which matrix to measure (default both)")
    p.add_argument("--from", dest="src", default=None, metavar="NODES",
                   help="source nodes (CPUs), e.g. 0-3 (default: every node with CPUs)")
    p.add_argument("--to", dest="dst", default=None, metavar="NODES",
                   help="target nodes (memory), e.g. 0,2 (default: every node with memory)")
    p.add_argument("--size", default=None, metavar="BYTES",
                   help="latency buffer (default: 4x the LLC, >= 256 MiB)")
    p.add_argument("--bw-size", default=None, metavar="BYTES",
                   help="read-bandwidth array per pair (default: 4x the LLC of the source "
                        "node's CPUs, >= 64 MiB)")
    p.add_argument("--mode", choices=["tlb", "random"], default="tlb",
                   help="chase mode for the latency matrix (default tlb)")
    p.add_argument("--stride", type=int, default=256, metavar="BYTES",
                   help="latency chase: bytes between pointers, a power of two from 64 to "
                        "4096 (default 256: prefetch-proof)")
    p.add_argument("--samples", type=int, default=9, help="latency samples per pair")
    p.add_argument("--dry-run", action="store_true",
                   help="list the pairs that would be measured, measure nothing")
    p.add_argument("--plot", default=None, metavar="FILE", help="save the heat maps to FILE")
    add_sysfs_root(p)
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from numascope.bench import latency as lat
    from numascope.bench import matrix as mx
    from numascope.console import err, out, print_json
    from numascope.errors import UserError
    from numascope.placement import parse_nodes
    from numascope.report.figures import save_figures
    from numascope.report.figures.matrix import figures
    from numascope.topology import read_topology

    topo = read_topology(args.sysfs_root)
    src = parse_nodes(topo, args.src) if args.src else None
    dst = parse_nodes(topo, args.dst) if args.dst else None
    pairs = mx.pairs(topo, src, dst)
    if args.dry_run:
        if args.json:
            print_json({"pairs": pairs})
        else:
            out.print(f"{len(pairs)} pairs: " + ", ".join(f"N{i}->N{j}" for i, j in pairs))
        return 0
    if args.sysfs_root != "/":
        raise UserError("--sysfs-root replays another machine: only --dry-run is possible")
    if args.samples < 1:
        raise UserError("--samples must be at least 1")
    what = ("latency", "bandwidth") if args.what == "both" else (args.what,)
    size = lat.parse_size(args.size) if args.size else None
    lat.check_stride(args.stride)
    if "latency" in what:
        for _, j in pairs:
            nbytes = size or lat.dram_size(topo, topo.usable_cpus()[0])
            lat.check_size(nbytes, args.stride)
            lat.check_fits(topo, nbytes, j, "none", args.stride)
    bw_size = lat.parse_size(args.bw_size) if args.bw_size else None
    ex = mx.default_executor(topo, what, size, args.samples, args.mode, stride=args.stride,
                             bw_bytes=bw_size)
    results: list = []   # pairs as they finish: what a stop signal leaves
    stopped: KeyboardInterrupt | None = None
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=err, transient=True, disable=args.json) as prog:
        task = prog.add_task("matrix", total=len(pairs))

        def done(r):
            results.append(r)
            prog.update(task, description=f"matrix: {r.case}")
            prog.advance(task)
        try:
            mx.run_matrix(topo, ex, src, dst, on_result=done)
        except KeyboardInterrupt as e:
            stopped = e
    if stopped and not results and not args.json:
        return report_interrupted(stopped, 0)
    if args.plot and results:
        for f in save_figures(figures(results), args.plot):
            err.print(f"plot written to {f}")
    ratios = {m: mx.ratios_by_distance(results, m) for m in what}
    tiers = mx.tier_summary(results)
    if args.json:
        print_json({"results": [r.to_dict() for r in results], "ratios_by_distance": ratios,
                    "tiers": tiers, "nodes": len(topo.nodes)})
        return report_interrupted(stopped, len(results), "pair") if stopped else 0
    if len(topo.nodes) == 1:
        out.print("one NUMA node: the matrices are 1x1 (local only, no remote pair exists)")
    _print(results, ratios, what, out)
    _print_tiers(tiers, what, out)
    if "bandwidth" in what and not mx.bandwidth_available():
        out.print("read bandwidth not measured: numascope.bench.bandwidth is not available")
    return report_interrupted(stopped, len(results), "pair") if stopped else 0


def _print(results, ratios, what, console) -> None:
    from rich.table import Table

    from numascope.bench import matrix as mx

    for metric in what:
        unit = "ns" if metric == "latency" else "GB/s"
        src, dst, m = mx.table(results, metric)
        if all(math.isnan(v) for row in m for v in row):
            continue
        t = Table(title=f"{metric} ({unit}): rows = CPU node, columns = memory node")
        t.add_column("", justify="right")
        for j in dst:
            t.add_column(f"N{j}", justify="right")
        for i, row in zip(src, m):
            t.add_row(f"N{i}", *["-" if math.isnan(v) else f"{v:.1f}" for v in row])
        console.print(t)
        if ratios.get(metric):
            rt = Table(title=f"{metric}: remote/local by distance class")
            for c in ("distance", "pairs", f"median {unit}", "ratio to local"):
                rt.add_column(c, justify="right")
            for r in ratios[metric]:
                rt.add_row(str(r["distance"]), str(r["pairs"]), f"{r['median']:.1f}",
                           f"{r['ratio']:.2f}")
            console.print(rt)


def _print_tiers(rows: list[dict], what: tuple[str, ...], console) -> None:
    """The tier summary, when a CPU-less memory tier was measured."""
    from rich.table import Table

    from numascope.topology.tiers import DRAM

    if not any(r["tier"] != DRAM for r in rows):
        return
    t = Table(title="memory tiers: nearest node of each tier from each CPU node, ratio to "
                    "local DRAM")
    for c in ("tier", "CPU node", "node", "dist"):
        t.add_column(c)
    for m in what:
        unit = "ns" if m == "latency" else "GB/s"
        t.add_column(f"{m} {unit}", justify="right")
        t.add_column("x local", justify="right")
    for r in rows:
        cells = [r["tier"], f"N{r['src']}", f"N{r['node']}", str(r["distance"] or "-")]
        for m in what:
            v, q = r.get(m), r.get(f"{m}_ratio")
            cells += ["-" if v is None else f"{v:.1f}", "-" if q is None else f"{q:.2f}"]
        t.add_row(*cells)
    console.print(t)
