"""`numascope lat`: idle memory latency (one size or a sweep) and loaded latency."""

from __future__ import annotations

import argparse

from numascope.cli._common import add_json, add_placement

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
    p.add_argument("--per-octave", type=int, default=2, metavar="N",
                   help="sweep points per doubling (default 2)")
    p.add_argument("--loaded", action="store_true",
                   help="loaded latency: chaser on --cpus, the other CPUs read with a delay sweep")
    p.add_argument("--delays", default=None, metavar="LIST",
                   help="loaded: injected delays, e.g. 0,100,1000 (empty-loop iterations)")
    p.add_argument("--load-cpus", default=None, metavar="CPUS",
                   help="loaded: CPUs generating bandwidth, 0-3 or S1, N1 … (default: all "
                        "others)")
    add_placement(p, cpunodebind=False, interleave=False, pages="none", threads=None)
    for a in p._actions:          # the same flags; what they mean for the chase
        if a.dest == "cpus":
            a.help = ("the chaser's CPU: one, e.g. 2, or the first usable CPU of S0 "
                      "(package), N1 (node), L3:5 (default: the first usable CPU)")
        elif a.dest == "membind":
            a.help = "bind the buffer to this NUMA node (default: first touch, local)"
    # the spellings before numactl's words, kept for scripts
    p.add_argument("--cpu", dest="cpus", default=None, help=argparse.SUPPRESS)
    p.add_argument("--node", dest="membind", default=None, help=argparse.SUPPRESS)
    p.add_argument("--mode", choices=["tlb", "random", "both"], default="tlb",
                   help="tlb: random in 256 KiB windows, windows shuffled (MLC/multichase); "
                        "random: one random cycle over the whole buffer")
    p.add_argument("--stride", type=int, default=256, metavar="BYTES",
                   help="bytes between two pointers of the chase, a power of two from 64 to "
                        "4096 (default 256: the prefetchers cannot serve the chase)")
    p.add_argument("--samples", type=int, default=15, metavar="N",
                   help="timed samples per working set or delay (default 15)")
    p.add_argument("--loads", type=int, default=None, metavar="N",
                   help="dependent loads per sample")
    p.add_argument("--plot", default=None, metavar="FILE",
                   help="save the plot(s) to FILE (.png or .svg)")
    add_json(p)


def _ints(text: str, flag: str) -> list[int]:
    from numascope.errors import UserError
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"{flag} {text!r}: expected numbers such as 0,100,1000") from None
    if not out:
        raise UserError(f"{flag} is empty: give numbers such as 0,100,1000")
    return out


def _cpus(topo, text: str, flag: str) -> tuple[list[int], bool]:
    """The usable CPUs `text` names (a list, or S0 / N1 / L3:5 / all) and whether it was a
    list of CPU numbers (else a domain)."""
    from numascope import placement
    from numascope.errors import UserError
    t = text.strip()
    if not t:
        raise UserError(f"{flag} is empty: give e.g. 0, 0-3, S0, N1 or L3:5")
    if t[:1].isdigit():
        return placement.check_cpus(topo, placement.parse_cpulist(t)), True
    return placement.order(topo, t), False


def chaser_cpu(topo, text: str | None) -> int | None:
    """The one CPU of the chaser: a single CPU number, or the first usable CPU of a domain."""
    from numascope.errors import UserError
    if text is None:
        return None
    ids, literal = _cpus(topo, text, "--cpus")
    if literal and len(ids) != 1:
        raise UserError(f"--cpus {text}: the chaser runs on one CPU, this names {len(ids)} "
                        "(give one, e.g. --cpus 0; the loaders go in --load-cpus)")
    return ids[0]


def params(args: argparse.Namespace, topo):
    """LatencyParams from the flags (checked when the cases are built)."""
    from dataclasses import replace

    from numascope.bench import latency as lat
    from numascope.cli._common import memory_arg
    from numascope.errors import UserError
    cpu = chaser_cpu(topo, args.cpus)
    p = lat.LatencyParams(
        kind="loaded" if args.loaded else "idle", cpu=cpu, memory=memory_arg(args, topo),
        bytes=lat.parse_size(args.size) if args.size else None,
        mode="tlb" if args.mode == "both" else args.mode,     # both: idle cases below
        samples=args.samples, loads=args.loads, stride=lat.check_stride(args.stride, "--stride"))
    if args.loaded and args.load_cpus is not None:
        ids, literal = _cpus(topo, args.load_cpus, "--load-cpus")
        chaser = topo.usable_cpus()[0] if cpu is None else cpu
        if not literal:                      # a domain: every CPU there but the chaser
            ids = [c for c in ids if c != chaser]
        if not ids:
            raise UserError(f"--load-cpus {args.load_cpus}: no CPU besides the chaser's")
        p = replace(p, load_cpus=tuple(ids))
    return p


def build_cases(args: argparse.Namespace, topo, bench):
    """The checked cases the flags ask for."""
    from numascope.bench import latency as lat
    from numascope.errors import UserError
    if args.per_octave < 1:
        raise UserError(f"--per-octave must be at least 1 (got {args.per_octave})")
    base = params(args, topo)
    if args.loaded:
        delays = _ints(args.delays, "--delays") if args.delays is not None \
            else list(lat.LOADED_DELAYS)
        if any(d < 0 for d in delays):
            raise UserError(f"--delays {args.delays}: delays must be >= 0")
        return bench.cases(topo, base, delays=delays)
    modes = list(lat.MODES) if args.mode == "both" else [args.mode]
    sizes = None
    if args.sweep:
        cpu = topo.usable_cpus()[0] if base.cpu is None else base.cpu
        hi = lat.parse_size(args.max) if args.max else None
        sizes = lat.sweep_sizes(topo, cpu, lat.parse_size(args.min), hi, args.per_octave,
                                base.stride)
    return bench.cases(topo, base, sizes=sizes, modes=modes)


def levels(results, topo) -> dict[str, list[dict]]:
    """The cache levels a sweep shows, per chase mode: from the TLB-friendly chase when it
    ran (a full random chase adds page walks that blur the plateaus)."""
    from numascope.bench import latency as lat
    idle = [r for r in results if r.params.get("kind") == "idle"]
    if not idle:
        return {}
    cpu = idle[0].params["cpu"]
    modes = {r.params["mode"] for r in idle}
    out = {}
    for mode in (["tlb"] if "tlb" in modes else sorted(modes)):
        pts = lat.sweep_points([r for r in idle if r.params["mode"] == mode])
        out[mode] = [lv.to_dict() for lv in lat.detect_levels(pts, topo, cpu)]
    return out


def main(args: argparse.Namespace) -> int:
    from numascope.bench import latency as lat
    from numascope.cli._common import check_output
    from numascope.cli._runner import PLOT_SUFFIXES, finish, measure, save_plot
    from numascope.topology import read_topology

    plot = check_output(args.plot, "--plot", PLOT_SUFFIXES)        # before measuring
    topo = read_topology("/")
    bench = lat.Latency()
    cases = build_cases(args, topo, bench)
    outcome = measure(bench, topo, cases, label="lat", quiet=args.json)
    lv = levels(outcome.results, topo) if args.sweep and not outcome.stopped else {}
    save_plot(plot, "latency", outcome.results)
    return finish(args, "lat", outcome, lambda rs, console: _print(rs, lv, console),
                  extra={"levels": lv})


def _print(results, levels, console) -> None:
    from rich import box
    from rich.table import Table

    from numascope.bench import latency as lat

    if not results:
        return
    loaded = results[0].params.get("kind") == "loaded"
    strides = sorted({r.params.get("stride") for r in results}, key=str)
    per = ", ".join(f"{s} B" for s in strides)
    t = Table(title=("Loaded latency" if loaded else "Idle latency (pointer chase)")
              + f", one pointer per {per}", box=box.SIMPLE_HEAD, pad_edge=False,
              padding=(0, 1, 0, 0))
    cols = (["delay", "read GB/s"] if loaded else ["size", "mode"]) + \
        ["median ns", "best ns", "p5 ns", "p95 ns", "TSC cyc", "core cyc"] + \
        ([] if loaded else ["pages huge"])
    for c in cols:
        t.add_column(c, justify="right")
    for r in results:
        s = lat.summary(r)
        core = f"{s['core_cycles']:.0f}" if "core_cycles" in s else "unknown"
        head = ([str(r.params["delay"]), f"{r.metrics['bandwidth'].median:.1f}"] if loaded
                else [lat.format_bytes(r.params["bytes"]), r.params["mode"]])
        tail = [] if loaded else [_pages(r)]
        t.add_row(*head, f"{s['p50']:.1f}", f"{s['min']:.1f}", f"{s['p5']:.1f}",
                  f"{s['p95']:.1f}", f"{s['tsc_cycles']:.0f}", core, *tail)
    console.print(t)
    console.print("median and best (lowest) of the timed samples, p5 and p95 their spread; "
                  "cycles: medians", markup=False)
    if "core_cycles" not in results[0].metrics:
        console.print("core cycles: unknown (the core clock could not be measured here); "
                      "TSC ticks only")
    if loaded:
        n = len(results[0].params.get("load_cpus") or [])
        console.print(f"{n} loader{'s' if n != 1 else ''} reading; base pages "
                      f"(4K); working set {lat.format_bytes(results[0].params['bytes'])}")
        for inv in lat.inversions(results):
            console.print(f"[bold yellow]warning:[/] loaded latency {inv.note()}")
    for mode, lvls in levels.items():
        lt = Table(title=f"Detected levels ({mode})", box=box.SIMPLE_HEAD, pad_edge=False)
        for c in ("level", "plateau", "ns", "expected", "check"):
            lt.add_column(c)
        for lv in lvls:
            exp = lat.format_bytes(lv["expected_bytes"]) if lv["expected_bytes"] else "-"
            lt.add_row(lv["name"], f"{lat.format_bytes(lv['first_bytes'])} – "
                       f"{lat.format_bytes(lv['last_bytes'])}", f"{lv['latency_ns']:.1f}", exp,
                       lv["verdict"])
        console.print(lt)


def _pages(r) -> str:
    """The page kind asked for and the share of the buffer the kernel backed with huge
    pages: "THP 97%", "4K 0%", "hugetlb unknown"."""
    asked = {"none": "4K", "thp": "THP", "hugetlb": "hugetlb"}.get(r.params.get("pages"),
                                                                    "unknown")
    frac = r.placement.get("huge_fraction")
    return f"{asked} {frac:.0%}" if isinstance(frac, (int, float)) and frac >= 0 \
        else f"{asked} unknown"
