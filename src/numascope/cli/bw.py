"""`numascope bw`: memory bandwidth with STREAM-class kernels on pinned threads."""

from __future__ import annotations

import argparse
from pathlib import Path

from numascope.cli._common import add_json, report_interrupted

NAME = "bw"
HELP = "memory bandwidth (STREAM kernels) on pinned threads: one placement, --scaling, " \
       "--per-domain"
ORDER = 30

KERNEL_CHOICES = "read,fill,copy,scale,add,triad,all"


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kernel", default="triad", metavar="LIST",
                   help=f"kernel(s), comma separated: {KERNEL_CHOICES} (default triad)")
    p.add_argument("--cpus", default=None, metavar="LIST",
                   help="run on these CPUs, e.g. 0-3,8-11 (default: all usable)")
    p.add_argument("--domain", default=None, metavar="WHERE",
                   help="run inside a domain: all, S<n> (package), N<n> (node), L3:<n>")
    p.add_argument("--policy", default="compact",
                   choices=["compact", "spread", "per-l3", "per-node"],
                   help="order in which CPUs are taken (default compact)")
    p.add_argument("--threads", type=int, default=None,
                   help="number of threads (default: every CPU the policy gives; with "
                        "--scaling the largest count swept)")
    mem = p.add_mutually_exclusive_group()
    mem.add_argument("--membind", default=None, metavar="NODES",
                     help="bind the arrays to these NUMA nodes (default: first touch)")
    mem.add_argument("--interleave", default=None, metavar="NODES",
                     help="interleave the arrays over these NUMA nodes")
    mem.add_argument("--weighted-interleave", default=None, metavar="SPEC",
                     help="N0:3,N1:1: pages in this ratio, placed by numascope; 0,1: the "
                          "kernel's weighted interleave with the system weights (Linux >= 6.9)")
    p.add_argument("--huge", default="thp", choices=["none", "thp", "hugetlb"],
                   help="pages: none (4 KiB), thp (transparent huge pages, default), hugetlb")
    p.add_argument("--size", default=None, metavar="BYTES",
                   help="bytes per array, e.g. 512M, 2G, 1GiB, 3GB "
                        "(default: 4x the LLC of the CPUs used)")
    p.add_argument("--reps", type=int, default=10, help="timed repetitions (default 10)")
    p.add_argument("--isa", default="auto", choices=["auto", "scalar", "avx2", "avx512"],
                   help="kernel instruction set (auto: time the vector ISAs this CPU has and "
                        "report the fastest)")
    p.add_argument("--nt", default="auto", choices=["auto", "on", "off"],
                   help="streaming stores: auto measures both and reports the faster")
    p.add_argument("--scaling", action="store_true",
                   help="sweep 1..all threads under every placement policy")
    p.add_argument("--per-domain", action="store_true",
                   help="each package, each node, each L3 alone")
    p.add_argument("--plot", default=None, metavar="FILE",
                   help="save the scaling / per-domain plot (.png or .svg)")
    p.add_argument("--tier-sweep", nargs="?", const="auto", default=None, metavar="DRAM,TIER",
                   help="bandwidth over interleave ratios between a DRAM node and a memory "
                        "tier (default: the CPUs' node and its nearest CPU-less node)")
    p.add_argument("--ratios", default=None, metavar="LIST",
                   help="DRAM:TIER page ratios of --tier-sweep (default 1:0,3:1,1:1,1:3,0:1; "
                        "'sys' adds the kernel's weighted interleave)")
    add_json(p)


def _kernels(text: str) -> list[str]:
    from numascope.bench.bandwidth import KERNELS
    from numascope.errors import UserError
    names = [k.strip() for k in text.split(",") if k.strip()]
    if not names:
        raise UserError("--kernel needs at least one kernel")
    if "all" in names:
        return list(KERNELS)
    for k in names:
        if k not in KERNELS:
            raise UserError(f"unknown kernel {k!r} (choose from {KERNEL_CHOICES})")
    return names


def main(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from numascope.bench.bandwidth import NUMA_BALANCING_NOTE, Bandwidth
    from numascope.bench.base import Interrupted, run_cases
    from numascope.bench.bw_sizes import parse_size
    from numascope.console import err, out, print_json, warn
    from numascope.errors import UserError
    from numascope.placement import parse_nodes
    from numascope.topology import read_topology

    if args.cpus and args.domain:
        raise UserError("give --cpus or --domain, not both")
    for flag, v in (("--cpus", args.cpus), ("--domain", args.domain)):
        if v is not None and not v.strip():
            raise UserError(f"{flag} is empty: give a CPU list such as 0-3, or S0, N1, L3:5")
    if args.threads is not None and args.threads < 1:
        raise UserError(f"--threads must be at least 1 (got {args.threads})")
    if args.reps < 1:
        raise UserError(f"--reps must be at least 1 (got {args.reps})")
    if args.plot and Path(args.plot).suffix.lower() not in (".png", ".svg"):
        raise UserError(f"--plot {args.plot}: the file must end in .png or .svg")
    kernels = _kernels(args.kernel)
    topo = read_topology("/")
    if args.tier_sweep is not None or args.ratios:
        from numascope.cli._tier_sweep import run_sweep
        return run_sweep(args, topo, kernels)
    memory = None
    if args.membind:
        memory = {"policy": "bind", "nodes": parse_nodes(topo, args.membind)}
    elif args.interleave:
        memory = {"policy": "interleave", "nodes": parse_nodes(topo, args.interleave)}
    elif args.weighted_interleave:
        from numascope.placement import parse_weighted
        memory = parse_weighted(topo, args.weighted_interleave)
    if args.huge != "thp":
        memory = {**(memory or {"policy": "first-touch"}), "huge": args.huge}
    size = parse_size(args.size) if args.size else None
    where = args.cpus or args.domain or "all"

    bench = Bandwidth()
    cases = bench.cases(topo, kernels=kernels, scaling=args.scaling, per_domain=args.per_domain,
                        where=where, policy=args.policy, threads=args.threads, memory=memory,
                        size_bytes=size, reps=args.reps, isa=args.isa, nt=args.nt)
    stopped: Interrupted | None = None
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=err, transient=True,
                  disable=args.json or len(cases) < 2 or not err.is_terminal) as prog:
        try:
            results = run_cases(bench, topo, cases, progress=prog, description="bw")
        except Interrupted as e:
            results, stopped = e.results, e
    for note in dict.fromkeys(n for r in results for n in r.notes
                              if not n.startswith("auto:") and n != NUMA_BALANCING_NOTE):
        warn(note)

    if args.plot and results:
        from numascope.report.figures import save_figures
        from numascope.report.figures.bandwidth import figures
        figs = figures(results)
        if not figs:
            err.print("nothing to plot (--scaling or --per-domain draws a plot)")
        for path in save_figures(figs, args.plot):
            err.print(f"plot written to {path}")
    if args.json:
        print_json({"results": [r.to_dict() for r in results], "units": "GB = 10^9 bytes"})
    else:
        _print(results, out)
    if stopped:
        return report_interrupted(stopped, len(results))
    return 0


def _print(results, console) -> None:
    from rich import box
    from rich.table import Table

    from numascope.bench.bw_sizes import format_bytes

    if not results:
        return
    t = Table(title="Memory bandwidth, GB/s (GB = 10^9 B): best/median in STREAM bytes, "
                    "DRAM = traffic incl. write-allocate", title_justify="left",
              box=box.SIMPLE_HEAD, pad_edge=False)
    for col, just in (("kernel", "left"), ("placement", "left"), ("CPUs", "left"),
                      ("best", "right"), ("median", "right"), ("spread", "right"),
                      ("DRAM", "right"), ("pages", "left")):
        t.add_column(col, justify=just, no_wrap=col in ("kernel", "CPUs"))
    for r in results:
        bw = r.metrics["bandwidth"]
        dram = r.metrics["dram_bandwidth"]
        pages = r.placement.get("pages_per_node") or {}
        total = sum(pages.values()) or 1
        where = " ".join(f"N{k} {100 * v / total:.0f}%" if int(k) >= 0 else
                         f"absent {100 * v / total:.0f}%" for k, v in sorted(pages.items()))
        if not r.placement.get("ok", True):
            where += " [red](!)[/red]"
        p = r.params
        place = "/".join(p.get("domains") or p.get("policies") or [p.get("policy", "")])
        mem = r.placement.get("memory") or {}
        if mem.get("policy") == "weighted-interleave":
            from numascope.placement import format_weighted
            place += f" mem weighted {format_weighted(mem)}"
        elif mem.get("policy", "first-touch") != "first-touch":
            place += f" mem {mem['policy']}:{','.join(map(str, mem.get('nodes', [])))}"
        code = p["isa"] + ("-nt" if p.get("stores") == "streaming" else "")
        t.add_row(f"{p['kernel']} {code}", place,
                  f"{r.placement.get('cpulist', '')} ({p['threads']})",
                  f"{bw.best:.1f}", f"{bw.median:.1f}", f"{100 * bw.spread:.1f}%",
                  f"{dram.best:.1f}", where or "unknown")
    console.print(t)
    p = results[0].params
    excluded = sum(len(r.params.get("excluded_reps") or []) for r in results)
    dropped = (f"; {excluded} implausibly fast repetition(s) excluded (see the notes)"
               if excluded else "")
    console.print(f"best and median of {p['reps']} timed repetitions after {p['warmup']} "
                  f"warm-up{dropped}; a repetition runs from the first thread's start to the "
                  f"last thread's end; arrays of {format_bytes(p['array_bytes'])} each; "
                  f"spread = (max - min) / median; -nt = streaming stores; CPUs (threads).")
