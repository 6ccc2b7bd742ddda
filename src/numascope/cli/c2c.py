"""`numascope c2c`: core-to-core latency (cache-line ping-pong) as a matrix and heat map."""

from __future__ import annotations

import argparse
import math

from numascope.cli._common import add_json, report_interrupted

NAME = "c2c"
HELP = "core-to-core latency: cache-line ping-pong between CPU pairs (one-way ns)"
ORDER = 44


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cpus", default=None, metavar="CPUS",
                   help="CPUs to pair, e.g. 0-7 (default: every usable CPU)")
    p.add_argument("--max-pairs", type=int, default=256,
                   help="sample this many pairs on big machines (default 256)")
    p.add_argument("--samples", type=int, default=15, help="timed samples per pair")
    p.add_argument("--trips", type=int, default=2000, help="round trips per sample")
    p.add_argument("--plot", default=None, metavar="FILE", help="save the heat map to FILE")
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
    from rich.table import Table

    from numascope.bench import c2c
    from numascope.bench.base import Interrupted, run_cases
    from numascope.console import err, out, print_json
    from numascope.errors import UserError
    from numascope.placement import parse_cpulist
    from numascope.report.figures import save_figures
    from numascope.report.figures.c2c import figures
    from numascope.topology import read_topology

    if args.samples < 1 or args.trips < 1 or args.max_pairs < 1:
        raise UserError("--samples, --trips and --max-pairs must be at least 1")
    topo = read_topology("/")
    cpus = parse_cpulist(args.cpus) if args.cpus else None
    bench = c2c.C2C()
    cases = bench.cases(topo, cpus=cpus, max_pairs=args.max_pairs, samples=args.samples,
                        trips=args.trips)
    stopped: Interrupted | None = None
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=err, transient=True, disable=args.json) as prog:
        try:
            results = run_cases(bench, topo, cases, progress=prog, description="c2c")
        except Interrupted as e:
            results, stopped = e.results, e
    if stopped and not results and not args.json:
        return report_interrupted(stopped, 0)
    if args.plot and results:
        for f in save_figures(figures(results), args.plot):
            err.print(f"plot written to {f}")
    rel = c2c.by_relation(results)
    if args.json:
        print_json({"results": [r.to_dict() for r in results], "by_relation": rel,
                    "interrupted": stopped is not None})
        return report_interrupted(stopped, len(results), "pair") if stopped else 0
    ids, m = c2c.matrix(results)
    if len(ids) <= 32:
        t = Table(title="Core-to-core latency, one-way ns (median of samples)")
        t.add_column("CPU", justify="right")
        for c in ids:
            t.add_column(str(c), justify="right")
        for c, row in zip(ids, m):
            t.add_row(str(c), *["-" if math.isnan(v) else f"{v:.0f}" for v in row])
        out.print(t)
    rt = Table(title=f"By relation ({len(results)} pairs)")
    for col in ("relation", "pairs", "min ns", "median ns", "max ns"):
        rt.add_column(col, justify="right")
    for k, v in rel.items():
        rt.add_row(k, str(v["pairs"]), f"{v['min']:.1f}", f"{v['median']:.1f}",
                   f"{v['max']:.1f}")
    out.print(rt)
    return report_interrupted(stopped, len(results), "pair") if stopped else 0
