"""`numascope bw --tier-sweep`: bandwidth over DRAM:tier page ratios (bench.bw_tiers)."""

from __future__ import annotations

import argparse

from numascope.topology.model import Topology


def run_sweep(args: argparse.Namespace, topo: Topology, kernels: list[str]) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from numascope import placement
    from numascope.bench import bw_tiers
    from numascope.bench.base import Interrupted, run_cases
    from numascope.bench.bw_sizes import parse_size
    from numascope.console import err, out, print_json
    from numascope.errors import UserError

    if args.scaling or args.per_domain:
        raise UserError("--tier-sweep measures one placement: leave out --scaling and "
                        "--per-domain")
    if args.membind or args.interleave or args.weighted_interleave:
        raise UserError("--tier-sweep sets the memory placement itself: leave out "
                        "--membind, --interleave and --weighted-interleave")
    ratios = bw_tiers.parse_ratios(args.ratios)
    where = args.cpus or args.domain
    if args.cpus:
        cpus = placement.check_cpus(topo, placement.parse_cpulist(args.cpus))
    else:
        first = None if where else topo.cpu(placement.select_cpus(topo)[0]).node
        cpus = placement.select_cpus(topo, where or f"N{first}", args.policy, args.threads)
    dram, tier, how = bw_tiers.pick_nodes(topo, args.tier_sweep, cpus)
    size = parse_size(args.size) if args.size else None
    cases = bw_tiers.sweep_cases(topo, dram, tier, ratios, kernels, cpus, size, args.reps,
                                 args.isa, args.nt, args.huge)
    line = bw_tiers.kernel_line(topo, dram, tier)
    interrupted = False
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=err, transient=True,
                  disable=args.json or not err.is_terminal) as prog:
        try:
            results = run_cases(bw_tiers.TierSweep(), topo, cases, progress=prog,
                                description="tier sweep")
        except Interrupted as e:
            results, interrupted = e.results, True
    rows = bw_tiers.summary(results)
    if args.plot and results:
        from numascope.report.figures import save_figures
        from numascope.report.figures.tiers import figures
        for path in save_figures(figures(results), args.plot):
            err.print(f"plot written to {path}")
    if args.json:
        print_json({"results": [r.to_dict() for r in results], "tier_sweep": rows,
                    "nodes": {"dram": dram, "tier": tier, "chosen": how},
                    "kernel_weighted_interleave": line, "units": "GB = 10^9 bytes"})
    else:
        _print(rows, dram, tier, how, line, out)
    if interrupted:
        err.print("interrupted: the results above are the ratios that finished")
        return 130
    return 0


def _print(rows: list[dict], dram: int, tier: int, how: str, line: str, console) -> None:
    from rich import box
    from rich.table import Table

    t = Table(title=f"Bandwidth over DRAM:tier page ratios, N{dram} (DRAM) : N{tier} (tier), "
                    "GB/s (10^9 B), STREAM bytes", title_justify="left",
              box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("kernel", "ratio", "DRAM share", "achieved", "best", "median"):
        t.add_column(col, justify="left" if col in ("kernel", "ratio") else "right")
    for r in rows:
        got = r["achieved_dram_share"]
        t.add_row(r["kernel"], r["ratio"], f"{100 * r['dram_share']:.0f}%",
                  "-" if got is None else f"{100 * got:.1f}%", f"{r['best']:.1f}",
                  f"{r['median']:.1f}")
    console.print(t)
    console.print(f"nodes: {how}")
    console.print(line)
    console.print("achieved = share of the sampled pages (move_pages) on the DRAM node; a "
                  "point outside the tolerance is an error, never shown")
