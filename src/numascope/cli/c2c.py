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
    p.add_argument("--home", default=None, metavar="NODE",
                   help="put the shared line on memory node NODE (verified with move_pages), "
                        "a list, or 'all' to sweep every node with memory (default: first "
                        "touch by the pair's first CPU, node recorded)")
    p.add_argument("--plot", default=None, metavar="FILE", help="save the heat map to FILE")
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
    from rich.table import Table

    from numascope.bench import c2c
    from numascope.bench.base import Interrupted, run_cases
    from numascope.bench.c2c_clusters import analyse
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
    homes = c2c.home_nodes(topo, args.home)
    bench = c2c.C2C()
    cases = bench.cases(topo, cpus=cpus, max_pairs=args.max_pairs, samples=args.samples,
                        trips=args.trips, homes=homes)
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
    seen = c2c.homes(results)
    ids, m = c2c.matrix(results)
    clusters = analyse(topo, ids, m) if len(ids) >= 2 else None
    if args.json:
        print_json({"results": [r.to_dict() for r in results], "by_relation": rel,
                    "by_home": {str(h): c2c.by_relation(results, h) for h in seen},
                    "home_cost": c2c.home_cost(results), "clusters": clusters,
                    "interrupted": stopped is not None})
        return report_interrupted(stopped, len(results), "pair") if stopped else 0
    landed = sorted({r.params.get("home_node") for r in results} - {None})
    out.print("Shared line: " + (f"bound to node {seen[0]} (verified with move_pages)"
                                 if seen and seen[0] != "first-touch" else
                                 f"first touch by each pair's first CPU, landed on node(s) {landed}"))
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
    if len(seen) > 1:
        print_by_home(results, seen)
    if clusters:
        print_clusters(clusters)
    return report_interrupted(stopped, len(results), "pair") if stopped else 0


def print_by_home(results: list, seen: list) -> None:
    """Median one-way ns per relation for each home node, and the pairs a home costs most."""
    from rich.table import Table

    from numascope.bench import c2c
    from numascope.console import out
    t = Table(title="By home node of the shared line (median of pair medians, ns)")
    t.add_column("relation")
    for h in seen:
        t.add_column(f"node {h}", justify="right")
    per = {h: c2c.by_relation(results, h) for h in seen}
    for rel in c2c.RELATIONS:
        if any(rel in per[h] for h in seen):
            t.add_row(rel, *[f"{per[h][rel]['median']:.1f}" if rel in per[h] else "-"
                             for h in seen])
    out.print(t)
    cost = c2c.home_cost(results)[:5]
    for c in cost:
        out.print(f"cpu{c['a']}<->cpu{c['b']}: line on node {c['worst_home']} costs "
                  f"{c['extra_ns']:.1f} ns more than on node {c['best_home']}")


def print_clusters(cl: dict) -> None:
    """Measured latency levels and whether they match SMT cores / L3 domains / packages."""
    from numascope.console import out
    from numascope.placement import format_cpulist
    if "skipped" in cl:
        out.print(f"Clusters from latency: skipped, {cl['skipped']}")
        return
    out.print(f"Clusters from latency (levels within {cl['tolerance']:.0%} of their smallest):")
    for i, lv in enumerate(cl["levels"]):
        groups = " | ".join(format_cpulist(c) for c in lv["clusters"])
        match = f" = {', '.join(lv['matches'])}" if lv["matches"] else ""
        out.print(f"  level {i} (<= {lv['max_ns']:.1f} ns): {groups}{match}")
    for a in cl["topology"]:
        if a["agree"]:
            out.print(f"  topology {a['kind']}: agrees (level {a['level']})")
            continue
        d = [f"measured apart: {p[0]},{p[1]}" for p in a["split"]] + \
            [f"measured together: {p[0]},{p[1]}" for p in a["joined"]]
        out.print(f"  topology {a['kind']}: differs from level {a['level']} in "
                  f"{a['differing']} pairs ({'; '.join(d)})")
