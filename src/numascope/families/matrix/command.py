"""`numascope matrix`: idle latency and read bandwidth for every (CPU node, memory node)."""

from __future__ import annotations

import argparse
import math

NAME = "matrix"
HELP = "NUMA latency and read-bandwidth matrices: CPUs of node i x memory of node j"
ORDER = 42
FLAGS = {"plot": "the heat maps", "sysfs_root": True}   # beside the TABLE of options.py

def _nodes(topo, text: str | None, flag: str) -> tuple[int, ...] | None:
    from numascope.errors import UserError
    from numascope.placement import parse_nodes
    if text is None:
        return None
    if not text.strip():
        raise UserError(f"{flag} is empty: give nodes such as 0,1 or N1 or all")
    return tuple(parse_nodes(topo, text))


def params(args: argparse.Namespace, topo):
    """MatrixParams from the flags (each checked by its option in the table; what depends
    on the machine, when the cases are built)."""
    from numascope.families.matrix import bench as mx
    from numascope.families.matrix.options import TABLE
    from numascope.options import check
    v = check(TABLE, vars(args))
    return mx.MatrixParams(
        what=mx.METRICS if v["what"] == "both" else (v["what"],),
        rows=_nodes(topo, args.cpunodebind, "--cpunodebind"),
        cols=_nodes(topo, args.membind, "--membind"),
        bytes=v["size"], bw_bytes=v["bw_size"], mode=v["mode"], stride=v["stride"],
        samples=v["samples"], pages=v["pages"], chains=v["chains"])


def main(args: argparse.Namespace) -> int:
    from numascope.command.output import check_output, emit
    from numascope.command.runner import PLOT_SUFFIXES, finish, measure, save_plot
    from numascope.console import out
    from numascope.errors import UserError
    from numascope.families.matrix import bench as mx
    from numascope.topology import read_topology

    plot = check_output(args.plot, "--plot", PLOT_SUFFIXES)        # before measuring
    topo = read_topology(args.sysfs_root)
    bench = mx.Matrix()
    p = params(args, topo)
    if args.sysfs_root != "/" and not args.dry_run:
        raise UserError("--sysfs-root replays another machine: only --dry-run is possible")
    cases = bench.cases(topo, p)
    checked = cases[0].params.params if cases else p
    if args.dry_run:
        pairs = [[c.params.src, c.params.dst] for c in cases]
        if args.json:
            emit("matrix", [], [], pairs=pairs, nodes=len(topo.nodes))
        else:
            _print_plan(topo, checked, len(pairs), out)
        return 0
    outcome = measure(bench, topo, cases, label="matrix", quiet=args.json, args=args)
    results = outcome.results
    shown = mx.shown_metrics(checked)
    ratios = {m: mx.ratios_by_distance(results, m) for m in shown}
    tiers = mx.tier_summary(results)
    save_plot(plot, "matrix.figures", outcome)

    def render(results, console) -> None:
        if not results:
            return
        if len(topo.nodes) == 1:
            console.print("one NUMA node: the matrices are 1x1 (local only, no remote pair "
                          "exists)")
        _print(results, ratios, shown, console)
        _print_tiers(tiers, checked.what, console)
        if "bandwidth" in checked.what and not mx.bandwidth_available():
            console.print("read bandwidth not measured: numascope.families.bandwidth.bench is not "
                          "available")
    return finish(args, "matrix", outcome, render, what="pair",
                  extra={"ratios_by_distance": ratios, "tiers": tiers,
                         "nodes": len(topo.nodes)})


def _print_plan(topo, p, n: int, console) -> None:
    """What --dry-run would measure, in a few lines whatever the node count."""
    from numascope.placement import format_cpulist
    rows, cols = list(p.rows or ()), list(p.cols or ())
    console.print(f"{n} pair{'s' if n != 1 else ''}: {len(rows)} CPU "
                  f"node{'s' if len(rows) != 1 else ''} x {len(cols)} memory "
                  f"node{'s' if len(cols) != 1 else ''}, rows first", markup=False)
    console.print(f"  rows, CPU nodes (--cpunodebind):   {format_cpulist(rows)}",
                  markup=False)
    console.print(f"  columns, memory nodes (--membind): {format_cpulist(cols)}",
                  markup=False)
    for line in p.describe(topo):
        console.print(f"  {line}", markup=False)


def _table(title: str, console):
    """A table whose title is a line of its own (a narrow table would wrap it)."""
    from rich import box
    from rich.table import Table
    console.print()
    console.print(title, markup=False, style="italic")
    return Table(box=box.SIMPLE_HEAD, pad_edge=False)


def _matrices(src, dst, m, best, console) -> list[tuple[str, list[list[str]]]]:
    """The cells to show: "median (best)" in one matrix where that fits the console, else a
    median matrix and a best one below it."""
    def cells(f):
        return [["-" if math.isnan(v) else f(v, b) for v, b in zip(row, brow)]
                for row, brow in zip(m, best)]
    both = cells(lambda v, b: f"{v:.1f} ({b:.1f})")
    from numascope.command.runner import rendered_width
    if rendered_width(_grid(src, dst, both)) <= console.width:
        return [("median (best)", both)]
    return [("median", cells(lambda v, b: f"{v:.1f}")), ("best", cells(lambda v, b: f"{b:.1f}"))]


def _grid(src, dst, cells):
    from rich import box
    from rich.table import Table
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("", justify="right")
    for j in dst:
        t.add_column(f"N{j}", justify="right")
    for i, row in zip(src, cells):
        t.add_row(f"N{i}", *row)
    return t


def _print(results, ratios, what, console) -> None:
    from numascope.families.matrix import bench as mx

    for metric in what:
        unit = mx.UNITS.get(metric, "GB/s")
        src, dst, m = mx.table(results, metric)
        best = mx.table(results, metric, "best")[2]
        if all(math.isnan(v) for row in m for v in row):
            continue
        for head, cells in _matrices(src, dst, m, best, console):
            console.print()
            console.print(f"{metric} ({unit}), {head} of the repetitions: rows = CPU node, "
                          "columns = memory node", markup=False, style="italic")
            console.print(_grid(src, dst, cells))
        if ratios.get(metric):
            rt = _table(f"{metric}: remote/local by distance class", console)
            for c in ("distance", "pairs", f"median {unit}", "ratio to local"):
                rt.add_column(c, justify="right")
            for r in ratios[metric]:
                d = r["distance"]
                rt.add_row("unknown" if d is None else str(d), str(r["pairs"]),
                           f"{r['median']:.1f}", f"{r['ratio']:.2f}")
            console.print(rt)


def _print_tiers(rows: list[dict], what: tuple[str, ...], console) -> None:
    """The tier summary, when a CPU-less memory tier was measured."""
    from numascope.topology.tiers import DRAM

    if not any(r["tier"] != DRAM for r in rows):
        return
    t = _table("memory tiers: nearest node of each tier from each CPU node, ratio to "
               "local DRAM", console)
    for c in ("tier", "from", "node", "dist"):
        t.add_column(c)
    for m in what:
        t.add_column("ns" if m == "latency" else "GB/s", justify="right")
        t.add_column("x local", justify="right")
    for r in rows:
        cells = [r["tier"], f"N{r['src']}", f"N{r['node']}",
                 "unknown" if r["distance"] is None else str(r["distance"])]
        for m in what:
            v, q = r.get(m), r.get(f"{m}_ratio")
            cells += ["-" if v is None else f"{v:.1f}", "-" if q is None else f"{q:.2f}"]
        t.add_row(*cells)
    console.print(t)
