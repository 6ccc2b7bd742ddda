"""`numascope lat`: idle memory latency (one size or a sweep) and loaded latency."""

from __future__ import annotations

import argparse

from numascope.cli._common import add_json, report_interrupted

NAME = "lat"
HELP = "memory latency by pointer chasing: one working set, --sweep, or --loaded"
ORDER = 40


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("--size", default=None, metavar="BYTES",
                   help="working set, e.g. 64K, 256M, 1G (default: 4x the LLC, >= 256 MiB)")
    p.add_argument("--sweep", action="store_true",
                   help="walk working sets from --min to --max (log steps), detect cache levels")
    p.add_argument("--min", default="4K", metavar="BYTES", help="sweep start (default 4K)")
    p.add_argument("--max", default=None, metavar="BYTES",
                   help="sweep end (default: 4x the LLC, >= 256 MiB)")
    p.add_argument("--per-octave", type=int, default=2, help="sweep points per doubling")
    p.add_argument("--loaded", action="store_true",
                   help="loaded latency: chaser on --cpu, the other CPUs read with a delay sweep")
    p.add_argument("--delays", default=None, metavar="LIST",
                   help="loaded: injected delays, e.g. 0,100,1000 (empty-loop iterations)")
    p.add_argument("--load-cpus", default=None, metavar="CPUS",
                   help="loaded: CPUs generating bandwidth (default: all others)")
    p.add_argument("--cpu", type=int, default=None, help="CPU of the chaser (default: first)")
    p.add_argument("--node", type=int, default=None,
                   help="bind the buffer to this NUMA node (default: first touch, local)")
    p.add_argument("--mode", choices=["tlb", "random", "both"], default="tlb",
                   help="tlb: random in 256 KiB windows, windows shuffled (MLC/multichase); "
                        "random: one random cycle over the whole buffer")
    p.add_argument("--pages", choices=["none", "thp", "hugetlb"], default="none",
                   help="page kind asked for (the kernel's answer is reported)")
    p.add_argument("--stride", type=int, default=256, metavar="BYTES",
                   help="bytes between two pointers of the chase, a power of two from 64 to "
                        "4096 (default 256: the prefetchers cannot serve the chase)")
    p.add_argument("--samples", type=int, default=15, help="timed samples per working set")
    p.add_argument("--loads", type=int, default=None, help="dependent loads per sample")
    p.add_argument("--plot", default=None, metavar="FILE", help="save the plot(s) to FILE")
    add_json(p)


def _ints(text: str, what: str) -> list[int]:
    from numascope.errors import UserError
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"bad {what} {text!r} (expected e.g. 0,100,1000)") from None


def main(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from numascope.bench import latency as lat
    from numascope.bench.base import Interrupted, run_cases
    from numascope.console import err, out, print_json
    from numascope.errors import UserError
    from numascope.placement import parse_cpulist
    from numascope.report.figures import save_figures
    from numascope.report.figures.latency import figures
    from numascope.topology import read_topology

    topo = read_topology("/")
    if args.samples < 1:
        raise UserError("--samples must be at least 1")
    if args.loads is not None and args.loads < 1:
        raise UserError("--loads must be at least 1")
    if args.per_octave < 1:
        raise UserError("--per-octave must be at least 1")
    stride = lat.check_stride(args.stride, "--stride")
    cpu = topo.usable_cpus()[0] if args.cpu is None else args.cpu
    lat.check_cpu(topo, cpu)
    if args.node is not None:
        lat.memory_spec(topo, args.node, args.pages)
    size = lat.parse_size(args.size) if args.size else None
    extra: dict = {}
    stopped: KeyboardInterrupt | None = None

    if args.loaded:
        delays = _ints(args.delays, "delay list") if args.delays else None
        load = parse_cpulist(args.load_cpus) if args.load_cpus else None
        mode = "tlb" if args.mode == "both" else args.mode
        try:   # one C call for every delay: a stop keeps none of them
            results = lat.loaded(topo, cpu, load, args.node, delays, size, mode=mode,
                                 samples=min(args.samples, 15), loads=args.loads or 1 << 16,
                                 stride=stride)
        except KeyboardInterrupt as e:
            results, stopped = [], e
    else:
        bench = lat.Latency()
        sizes = None
        if args.sweep:
            hi = lat.parse_size(args.max) if args.max else None
            sizes = lat.sweep_sizes(topo, cpu, lat.parse_size(args.min), hi, args.per_octave,
                                    stride)
        elif size:
            sizes = [size]
        cases = bench.cases(topo, sweep=args.sweep, sizes=sizes, cpu=cpu, node=args.node,
                            mode=args.mode, pages=args.pages, samples=args.samples,
                            loads=args.loads, stride=stride)
        for c in cases:
            lat.check_size(c.params["bytes"], stride)
            lat.check_fits(topo, c.params["bytes"], args.node, args.pages, stride)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      console=err, transient=True, disable=args.json) as prog:
            try:
                results = run_cases(bench, topo, cases, progress=prog, description="lat")
            except Interrupted as e:
                results, stopped = e.results, e
        if args.sweep and not stopped:   # levels need the whole sweep
            modes = {r.params["mode"] for r in results}
            # levels from the TLB-friendly chase: full random adds page walks that blur them
            for mode in (["tlb"] if "tlb" in modes else sorted(modes)):
                pts = lat.sweep_points([r for r in results if r.params["mode"] == mode])
                extra[mode] = [lv.to_dict() for lv in lat.detect_levels(pts, topo, cpu)]

    if stopped and not results and not args.json:
        return report_interrupted(stopped, 0)
    if args.plot and results:
        figs = figures(results)
        if figs:
            for f in save_figures(figs, args.plot):
                err.print(f"plot written to {f}")
        else:
            err.print("nothing to plot (a sweep or --loaded draws a plot)")
    if args.json:
        print_json({"results": [r.to_dict() for r in results], "levels": extra})
    else:
        _print(results, extra, out)
    return report_interrupted(stopped, len(results)) if stopped else 0


def _print(results, levels, console) -> None:
    from rich.table import Table

    from numascope.bench import latency as lat

    loaded = results and results[0].params.get("kind") == "loaded"
    strides = sorted({r.params.get("stride") for r in results}, key=str)
    per = ", ".join(f"{s} B" for s in strides)
    t = Table(title=("Loaded latency" if loaded else "Idle latency (pointer chase)")
              + f", one pointer per {per}")
    cols = (["delay", "read GB/s"] if loaded else ["working set", "mode"]) + \
        ["p5 ns", "p50 ns", "p95 ns", "TSC cyc", "core cyc", "pages"]
    for c in cols:
        t.add_column(c, justify="right")
    for r in results:
        s = lat.summary(r)
        core = f"{s['core_cycles']:.0f}" if "core_cycles" in s else "-"
        head = ([str(r.params["delay"]), f"{r.metrics['bandwidth'].median:.1f}"] if loaded
                else [lat.format_bytes(r.params["bytes"]), r.params["mode"]])
        pages = r.placement.get("pages", "4 KiB")
        t.add_row(*head, f"{s['p5']:.1f}", f"{s['p50']:.1f}", f"{s['p95']:.1f}",
                  f"{s['tsc_cycles']:.0f}", core, str(pages))
    console.print(t)
    if results and "core_cycles" not in results[0].metrics:
        console.print("cycles: TSC ticks only (the core clock could not be measured here)")
    if loaded:
        for inv in lat.inversions(results):
            console.print(f"[bold yellow]warning:[/] loaded latency {inv.note()}")
    for mode, lvls in levels.items():
        lt = Table(title=f"Detected levels ({mode})")
        for c in ("level", "plateau", "ns", "expected size", "check"):
            lt.add_column(c)
        for lv in lvls:
            exp = lat.format_bytes(lv["expected_bytes"]) if lv["expected_bytes"] else "-"
            lt.add_row(lv["name"], f"{lat.format_bytes(lv['first_bytes'])} – "
                       f"{lat.format_bytes(lv['last_bytes'])}", f"{lv['latency_ns']:.1f}", exp,
                       lv["verdict"])
        console.print(lt)
