"""`numascope bw --tier-sweep`: bandwidth over DRAM:tier page ratios (bench.bw_tiers)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from numascope.memspec import MemorySpec
from numascope.topology.model import Topology


def run_sweep(args: argparse.Namespace, topo: Topology, kernels: list[str], where: str | None,
              threads: int | None, memory: MemorySpec, size: int | None,
              plot: Path | None) -> int:
    """The sweep for `bw`'s checked flags (each converted by its row in the bandwidth
    options table): `where` is the --cpus/--cpunodebind text (None: the first usable CPU's
    node), `memory` only gives the page kind (the sweep places the pages itself), `plot`
    was checked before."""
    from numascope import placement
    from numascope.command.runner import finish, measure, save_plot, warn_notes
    from numascope.errors import UserError
    from numascope.families.bandwidth import tiers as bw_tiers
    from numascope.families.bandwidth.bench import UNITS_NOTE, BandwidthParams
    from numascope.families.bandwidth.options import DEFAULT_RATIOS

    if args.scaling or args.per_domain:
        raise UserError("--tier-sweep measures one placement: leave out --scaling and "
                        "--per-domain")
    if not memory.first_touch:
        raise UserError("--tier-sweep sets the memory placement itself: leave out "
                        "--membind, --interleave and --weighted-interleave")
    ratios = list(args.ratios or DEFAULT_RATIOS)
    if where is None:
        where = f"N{topo.cpu(placement.select_cpus(topo)[0]).node}"
    cpus = placement.select_cpus(topo, where, args.policy, threads)
    dram, tier, how = bw_tiers.pick_nodes(topo, args.tier_sweep, cpus)
    base = BandwidthParams(size_bytes=size, reps=args.reps, isa=args.isa, nt=args.nt,
                           memory=MemorySpec(pages=memory.pages))
    cases = bw_tiers.sweep_cases(topo, dram, tier, ratios, kernels, cpus, base)
    line = bw_tiers.kernel_line(topo, dram, tier)
    outcome = measure(bw_tiers.TierSweep(), topo, cases, label="tier sweep", quiet=args.json, args=args)
    rows = bw_tiers.summary(outcome.results)
    warn_notes(outcome.results, skip=lambda n: n.startswith("auto:"))
    save_plot(plot, "bandwidth.tier_figures", outcome)
    extra: dict[str, Any] = {"tier_sweep": rows,
                             "nodes": {"dram": dram, "tier": tier, "chosen": how},
                             "kernel_weighted_interleave": line, "units": UNITS_NOTE}
    return finish(args, "bw", outcome, what="ratio",
                  render=lambda _results, console: _print(rows, dram, tier, how, line, console),
                  extra=extra)


def _print(rows: list[dict], dram: int, tier: int, how: str, line: str, console) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    if not rows:
        return
    t = Table(title=f"Bandwidth over DRAM:tier page ratios, N{dram} (DRAM) : N{tier} (tier), "
                    "GB/s (10^9 B), STREAM bytes", title_justify="left",
              box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("kernel", "ratio", "DRAM share", "achieved", "median", "best"):
        t.add_column(col, justify="left" if col in ("kernel", "ratio") else "right",
                     overflow="fold")
    for r in rows:
        got = r["achieved_dram_share"]
        t.add_row(r["kernel"], r["ratio"], f"{100 * r['dram_share']:.0f}%",
                  "unknown" if got is None else f"{100 * got:.1f}%", f"{r['median']:.1f}",
                  f"{r['best']:.1f}")
    console.print(t)
    console.print(Text(f"nodes: {how}"))
    console.print(Text(line))
    console.print(Text("achieved = share of the sampled pages (move_pages) on the DRAM node; "
                       "a point outside the tolerance is an error, never shown"))
