"""`numascope lat`: idle memory latency (one size or a sweep) and loaded latency."""

from __future__ import annotations

import argparse

NAME = "lat"
HELP = "memory latency by pointer chasing: one working set, --sweep, or --loaded"
ORDER = 40
FLAGS = {"plot": "the plot(s)"}   # beside the TABLE of options.py


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
    """LatencyParams from the flags (each checked by its option in the table; what depends
    on the machine, when the cases are built)."""
    from dataclasses import replace

    from numascope.command.flags import memory_arg
    from numascope.errors import UserError
    from numascope.families.latency import bench as lat
    cpu = chaser_cpu(topo, args.cpus)
    p = lat.LatencyParams(
        kind="loaded" if args.loaded else "idle", cpu=cpu, memory=memory_arg(args, topo),
        bytes=args.size, mode="tlb" if args.mode == "both" else args.mode,  # both: below
        samples=args.samples, loads=args.loads, stride=args.stride)
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
    from numascope.families.latency import bench as lat
    from numascope.families.latency.options import TABLE
    from numascope.options import check
    args = argparse.Namespace(**{**vars(args), **check(TABLE, vars(args))})   # its rules
    base = params(args, topo)
    if args.loaded:
        return bench.cases(topo, base, delays=list(args.delays))
    modes = list(lat.MODES) if args.mode == "both" else [args.mode]
    sizes = None
    if args.sweep:
        cpu = topo.usable_cpus()[0] if base.cpu is None else base.cpu
        sizes = lat.sweep_sizes(topo, cpu, args.min, args.max, args.per_octave, base.stride)
    return bench.cases(topo, base, sizes=sizes, modes=modes)


def levels(results, topo) -> dict[str, list[dict]]:
    """The cache levels a sweep shows, per chase mode: from the TLB-friendly chase when it
    ran (a full random chase adds page walks that blur the plateaus)."""
    from numascope.families.latency import bench as lat
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
    from numascope.command.output import check_output
    from numascope.command.runner import PLOT_SUFFIXES, finish, measure, save_plot
    from numascope.families.latency import bench as lat
    from numascope.topology import read_topology

    plot = check_output(args.plot, "--plot", PLOT_SUFFIXES)        # before measuring
    topo = read_topology("/")
    bench = lat.Latency()
    cases = build_cases(args, topo, bench)
    outcome = measure(bench, topo, cases, label="lat", quiet=args.json)
    lv = levels(outcome.results, topo) if args.sweep and not outcome.stopped else {}
    save_plot(plot, "latency.figures", outcome.results)
    return finish(args, "lat", outcome, lambda rs, console: _print(rs, lv, console),
                  extra={"levels": lv})


def _print(results, levels, console) -> None:
    from rich import box
    from rich.table import Table

    from numascope.families.latency import bench as lat

    if not results:
        return
    loaded = results[0].params.get("kind") == "loaded"
    strides = sorted({r.params.get("stride") for r in results}, key=str)
    per = ", ".join(f"{s} B" for s in strides)
    t = Table(title=("Loaded latency" if loaded else "Idle latency (pointer chase)")
              + f", one pointer per {per}", box=box.SIMPLE_HEAD, pad_edge=False,
              padding=(0, 1, 0, 0))
    from numascope.command.runner import steady_lines
    from numascope.steady import mark, verdict_of
    auto = any(verdict_of(r.params) for r in results)      # --samples auto: n per row
    cols = (["delay", "read GB/s"] if loaded else ["size", "mode"]) + \
        ["median ns", "best ns", "p5 ns", "p95 ns", "TSC cyc", "core cyc"] + \
        (["n"] if auto else []) + ([] if loaded else ["pages huge"])
    for c in cols:
        t.add_column(c, justify="right")
    for r in results:
        s = lat.summary(r)
        core = f"{s['core_cycles']:.0f}" if "core_cycles" in s else "unknown"
        head = ([str(r.params["delay"]), f"{r.metrics['bandwidth'].median:.1f}"] if loaded
                else [lat.format_bytes(r.params["bytes"]), r.params["mode"]])
        tail = ([f"{r.params['samples']}{mark(r.params)}"] if auto else []) + \
            ([] if loaded else [_pages(r)])
        t.add_row(*head, f"{s['p50']:.1f}", f"{s['min']:.1f}", f"{s['p5']:.1f}",
                  f"{s['p95']:.1f}", f"{s['tsc_cycles']:.0f}", core, *tail)
    console.print(t)
    console.print("median and best (lowest) of the timed samples, p5 and p95 their spread; "
                  "cycles: medians", markup=False)
    steady_lines(results, console)
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
