"""`numascope c2c`: core-to-core latency (cache-line ping-pong) as a matrix and heat map."""

from __future__ import annotations

import argparse
import math
from typing import Any

NAME = "c2c"
HELP = "core-to-core latency: cache-line ping-pong between CPU pairs (one-way ns)"
ORDER = 44
FLAGS = {"plot": "the heat map"}   # beside the TABLE of options.py


def _cpus(topo: Any, args: argparse.Namespace) -> tuple[int, ...] | None:
    """--cpus / --cpunodebind as the CPUs to pair (a plain list must not repeat a CPU)."""
    from numascope.command.flags import cpus_arg
    from numascope.errors import UserError
    from numascope.placement import check_cpus, parse_cpulist, select_cpus
    where = cpus_arg(args, default="")
    if not where:
        return None
    if where.strip()[:1].isdigit():
        named = [c for part in where.split(",") for c in parse_cpulist(part)]
        twice = next((c for c in named if named.count(c) > 1), None)
        if twice is not None:
            raise UserError(f"--cpus {where} names CPU {twice} twice")
        return tuple(sorted(check_cpus(topo, named)))
    return tuple(sorted(select_cpus(topo, where)))


def main(args: argparse.Namespace) -> int:
    from numascope.command.output import check_output
    from numascope.command.runner import PLOT_SUFFIXES, finish, measure, save_plot
    from numascope.families.c2c import bench as c2c
    from numascope.families.c2c.clusters import analyse
    from numascope.families.c2c.options import TABLE
    from numascope.options import check
    from numascope.topology import read_topology

    plot = check_output(args.plot, "--plot", PLOT_SUFFIXES)   # before measuring
    v = check(TABLE, vars(args))                              # the options' rules, once
    topo = read_topology("/")
    params = c2c.C2CParams(cpus=_cpus(topo, argparse.Namespace(**v)),
                           max_pairs=v["max_pairs"], samples=v["samples"], trips=v["trips"],
                           homes=tuple(c2c.home_nodes(topo, v["membind"])))
    bench = c2c.C2C()
    cases = bench.cases(topo, params)
    outcome = measure(bench, topo, cases, label="c2c", quiet=args.json, args=args)
    results = outcome.results
    save_plot(plot, "c2c.figures", outcome)
    seen = c2c.homes(results)
    ids, m = c2c.matrix(results)
    clusters = analyse(topo, ids, m) if len(ids) >= 2 else None
    extra = {"by_relation": c2c.by_relation(results),
             "by_home": {str(h): c2c.by_relation(results, h) for h in seen},
             "home_cost": c2c.home_cost(results), "clusters": clusters}
    return finish(args, NAME, outcome, lambda rs, con: render(rs, con, clusters),
                  what="pair", extra=extra)


def _nodes(ids: list[int]) -> str:
    return f"node{'s' if len(ids) != 1 else ''} {', '.join(str(i) for i in ids) or 'unknown'}"


def render(results: list, con: Any, clusters: dict | None) -> None:
    """The matrix (up to 32 CPUs), the by-relation table, the per-home table and clusters."""
    from rich.table import Table

    from numascope.command.runner import rendered_width
    from numascope.families.c2c import bench as c2c
    if not results:
        return
    seen = c2c.homes(results)
    ids, m = c2c.matrix(results)
    landed = sorted({r.params.get("home_node") for r in results} - {None})
    con.print("Shared line: " + (
        f"bound to node {seen[0]} (verified with move_pages)"
        if seen and seen[0] != "first-touch" and len(seen) == 1 else
        f"bound to each of {_nodes(seen)} in turn (verified with move_pages)"
        if len(seen) > 1 else
        f"first touch by each pair's first CPU, landed on {_nodes(landed)}"), markup=False)
    if len(ids) <= 32:
        best = c2c.matrix(results, stat="best")[1]
        both = [["-" if math.isnan(v) else f"{v:.0f} ({b:.0f})" for v, b in zip(row, brow)]
                for row, brow in zip(m, best)]
        cells, head = both, "median (best) of samples"
        if rendered_width(_grid(ids, both)) > con.width:     # best: in the relation table
            cells = [["-" if math.isnan(v) else f"{v:.0f}" for v in row] for row in m]
            head = "median of samples; best per relation below"
        con.print(f"Core-to-core latency, one-way ns ({head}):", markup=False)
        con.print(_grid(ids, cells))
    n = len(results)
    rt = Table(title=f"By relation ({n} pair{'s' if n != 1 else ''} measured)")
    for col in ("relation", "pairs", "median ns", "best ns", "pair medians min–max"):
        rt.add_column(col, justify="right")
    for k, v in c2c.by_relation(results).items():
        rt.add_row(k, str(v["pairs"]), f"{v['median']:.1f}", f"{v['best']:.1f}",
                   f"{v['min']:.1f}–{v['max']:.1f}")
    con.print(rt)
    con.print("median ns: median of the pairs' medians; best ns: the lowest sample of any "
              "pair", markup=False)
    if len(seen) > 1:
        print_by_home(results, seen, con)
    if clusters:
        print_clusters(clusters, con)


def _grid(ids: list[int], cells: list[list[str]]) -> Any:
    from rich.table import Table
    t = Table()
    t.add_column("CPU", justify="right")
    for c in ids:
        t.add_column(str(c), justify="right")
    for c, row in zip(ids, cells):
        t.add_row(str(c), *row)
    return t


def print_by_home(results: list, seen: list, con: Any) -> None:
    """Median one-way ns per relation for each home node, and the pairs a home costs most."""
    from rich.table import Table

    from numascope.families.c2c import bench as c2c
    t = Table(title="By node of the shared line (median of pair medians, ns)")
    t.add_column("relation")
    for h in seen:
        t.add_column(f"node {h}", justify="right")
    per = {h: c2c.by_relation(results, h) for h in seen}
    for rel in c2c.RELATIONS:
        if any(rel in per[h] for h in seen):
            t.add_row(rel, *[f"{per[h][rel]['median']:.1f}" if rel in per[h] else "-"
                             for h in seen])
    con.print(t)
    for c in c2c.home_cost(results)[:5]:
        con.print(f"cpu{c['a']}<->cpu{c['b']}: line on node {c['worst_home']} costs "
                  f"{c['extra_ns']:.1f} ns more than on node {c['best_home']}", markup=False)


def print_clusters(cl: dict, con: Any) -> None:
    """Measured latency levels and whether they match SMT cores / L3 domains / dies / packages."""
    from numascope.placement import format_cpulist
    if "skipped" in cl:
        con.print(f"Clusters from latency: skipped, {cl['skipped']}", markup=False)
        return
    con.print(f"Clusters from latency (levels within {cl['tolerance']:.0%} of their "
              "smallest):", markup=False)
    for i, lv in enumerate(cl["levels"]):
        groups = " | ".join(format_cpulist(c) for c in lv["clusters"])
        match = f" = {', '.join(lv['matches'])}" if lv["matches"] else ""
        con.print(f"  level {i} (<= {lv['max_ns']:.1f} ns): {groups}{match}", markup=False)
    for a in cl["topology"]:
        if a["agree"]:
            con.print(f"  topology {a['kind']}: agrees (level {a['level']})", markup=False)
            continue
        d = [f"measured apart: {p[0]},{p[1]}" for p in a["split"]] + \
            [f"measured together: {p[0]},{p[1]}" for p in a["joined"]]
        n = a["differing"]
        con.print(f"  topology {a['kind']}: differs from level {a['level']} in {n} "
                  f"pair{'s' if n != 1 else ''} ({'; '.join(d)})", markup=False)
