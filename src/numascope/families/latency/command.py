"""`numascope lat`: idle memory latency (one size or a sweep) and loaded latency."""

from __future__ import annotations

import argparse

NAME = "lat"
HELP = "memory latency by pointer chasing: one working set, --sweep, or --loaded"
ORDER = 40
FLAGS = {"plot": "the mode's plot (sweep, loaded latency or --chains' memory-level "
                  "parallelism; the latency distribution when there is none) and any other "
                  "figure beside FILE, named for what it shows (FILE-latency-distribution)"}   # beside the TABLE of options.py


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
    if args.chains:
        return _chain_cases(args, topo)
    base = params(args, topo)
    if args.loaded:
        return bench.cases(topo, base, delays=list(args.delays), mixes=list(args.mix))
    modes = list(lat.MODES) if args.mode == "both" else [args.mode]
    sizes = None
    if args.sweep:
        cpu = topo.usable_cpus()[0] if base.cpu is None else base.cpu
        sizes = lat.sweep_sizes(topo, cpu, args.min, args.max, args.per_octave, base.stride)
    return bench.cases(topo, base, sizes=sizes, modes=modes)


def _chain_cases(args: argparse.Namespace, topo):
    """lat --chains: one case per mode and count (not with --sweep or --loaded)."""
    from numascope.errors import UserError
    from numascope.families.latency import bench as lat
    from numascope.families.latency import chains
    for flag, on in (("--sweep", args.sweep), ("--loaded", args.loaded)):
        if on:
            raise UserError(f"--chains does not go with {flag}: give one of them")
    modes = list(lat.MODES) if args.mode == "both" else [args.mode]
    return chains.cases(topo, params(args, topo), list(args.chains), modes,
                        layout=args.chain_layout)


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
    from numascope.families.latency.family import Latency
    from numascope.topology import read_topology

    plot = check_output(args.plot, "--plot", PLOT_SUFFIXES)        # before measuring
    topo = read_topology("/")
    bench = Latency()
    cases = build_cases(args, topo, bench)
    outcome = measure(bench, topo, cases, label="lat", quiet=args.json, args=args)
    lv = levels(outcome.results, topo) if args.sweep and not outcome.stopped else {}
    save_plot(plot, "latency.figures", outcome)
    extra: dict = {"levels": lv}
    if args.loaded and "mix" in (getattr(args, "_typed", None) or {}):
        # with --mix, one summary per curve (without it the document stays as it was)
        extra["curves"] = [lat.curve_summary(c) for c in lat.curves(outcome.results)]
    if args.chains:
        from numascope.families.latency import chains
        extra["mlp"] = chains.summaries(outcome.results)
    return finish(args, "lat", outcome, lambda rs, console: _print(rs, lv, console),
                  extra=extra)


def _print(results, levels, console) -> None:
    from rich import box
    from rich.table import Table

    from numascope.families.latency import bench as lat

    if not results:
        return
    if results[0].params.get("kind") == "loaded":
        _print_loaded(results, console)
        return
    if results[0].params.get("kind") == "chains":
        from numascope.families.latency.chains import print_table
        print_table(results, console)
        return
    strides = sorted({r.params.get("stride") for r in results}, key=str)
    per = ", ".join(f"{s} B" for s in strides)
    t = Table(title=f"Idle latency (pointer chase), one pointer per {per}",
              box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0))
    from numascope.command.runner import steady_lines
    from numascope.steady import mark, verdict_of
    auto = any(verdict_of(r.params) for r in results)      # --samples auto: n per row
    cols = ["size", "mode", "median ns", "best ns", "p5 ns", "p95 ns", "p99 load",
            "p99.9 load", "TSC cyc", "core cyc"] + (["n"] if auto else []) + ["pages huge"]
    rows = []
    for r in results:
        s = lat.summary(r)
        core = f"{s['core_cycles']:.0f}" if "core_cycles" in s else "unknown"
        rows.append([lat.format_bytes(r.params["bytes"]), r.params["mode"],
                     f"{s['p50']:.1f}", f"{s['min']:.1f}", f"{s['p5']:.1f}",
                     f"{s['p95']:.1f}", *_tail_cells(r, s),
                     f"{s['tsc_cycles']:.0f}", core,
                     *([f"{r.params['samples']}{mark(r.params)}"] if auto else []), _pages(r)])
    if all(row[6] == row[7] == "-" for row in rows):     # no distribution: no tail columns
        cols = cols[:6] + cols[8:]
        rows = [row[:6] + row[8:] for row in rows]
    _fill(t, cols, rows, console, whole=("size", "pages huge"))
    console.print(t)
    _print_footer(results, console)
    steady_lines(results, console)
    _print_tail_footer(results, console)
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


def _latency_cells(r) -> list[str]:
    from numascope.families.latency import bench as lat
    s = lat.summary(r)
    core = f"{s['core_cycles']:.0f}" if "core_cycles" in s else "unknown"
    return [f"{s['p50']:.1f}", f"{s['min']:.1f}", f"{s['p5']:.1f}", f"{s['p95']:.1f}",
            *_tail_cells(r, s), f"{s['tsc_cycles']:.0f}", core]


def _tail_cells(r, s: dict) -> list[str]:
    """The p99 and p99.9 load cells, marked where fewer than MIN_BEYOND loads lie beyond."""
    from numascope.families.latency.distribution import THIN_MARK, thin
    few = thin(r)
    return [_ns(s[key]) + (THIN_MARK if name in few else "")
            for key, name in (("load_p99", "latency_p99"), ("load_p999", "latency_p999"))]


def _print_tail_footer(results, console) -> None:
    """What the p99 / p99.9 load columns are, and the mark on a thin tail."""
    from numascope.families.latency.distribution import THIN_NOTE, thin
    dists = [r.distributions["latency"] for r in results if "latency" in r.distributions]
    if not dists:
        return
    groups = sorted({d["loads_per_group"] for d in dists})
    res = max(d["resolution_ns"] for d in dists)
    n = sorted(d["groups"] for d in dists)
    each = f"{n[0]}" if n[0] == n[-1] else f"{n[0]} to {n[-1]}"
    what = "single loads" if groups == [1] else \
        f"groups of {'/'.join(map(str, groups))} loads (1 on DRAM)"
    console.print(f"p99, p99.9 load: the tail of {what} (ns per load) from one histogram of "
                  f"the case's {each} timed groups, each timed by the TSC in a pass after the "
                  f"samples, timer overhead subtracted; resolution {res:.0f} ns or better; "
                  "lat --plot draws the distribution", markup=False)
    if any(name in thin(r) for r in results for name in ("latency_p99", "latency_p999")):
        console.print(THIN_NOTE, markup=False)


def _print_footer(results, console) -> None:
    console.print("median and best (lowest) of the timed samples (ns per load), p5 and p95 "
                  "their spread; cycles: medians", markup=False)
    if "core_cycles" not in results[0].metrics:
        console.print("core cycles: unknown (the core clock could not be measured here); "
                      "TSC ticks only")


def _print_loaded(results, console) -> None:
    """One table per curve (mix), in the order measured, each with how its bandwidth is
    counted, its knee and the points that break monotonicity."""
    from rich import box
    from rich.table import Table

    from numascope.families.latency import bench as lat
    from numascope.families.latency.mixes import Mix

    for curve in lat.curves(results):
        rows = [r for r in results if r in curve]          # measured order
        p = curve[0].params
        mix = Mix.parse(p.get("mix", lat.DEFAULT_MIX))
        title = f"Loaded latency, one pointer per {p.get('stride')} B"
        if mix.writes or len(lat.curves(results)) > 1:
            title += f", mix {mix.name} (a loader's step: {mix.step()})"
        t = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0))
        cols = ["delay"] + (["DRAM GB/s", "loads GB/s", "stores GB/s"] if mix.writes
                            else ["read GB/s"]) + \
            ["median ns", "best ns", "p5 ns", "p95 ns", "p99 load", "p99.9 load", "TSC cyc",
             "core cyc"]
        cells = []
        for r in rows:
            bw = [f"{r.metrics[k].median:.1f}" for k in
                  (("bandwidth", "read_bandwidth", "write_bandwidth") if mix.writes
                   else ("bandwidth",))]
            cells.append([str(r.params["delay"]), *bw, *_latency_cells(r)])
        _fill(t, cols, cells, console)
        console.print(t)
        summary = lat.curve_summary(curve)
        console.print(f"bandwidth: {summary['bandwidth_counted']}", markup=False)
        console.print(summary["knee_text"], markup=False)
        for inv in lat.inversions(curve):
            console.print(f"[bold yellow]warning:[/] loaded latency {inv.note()}")
    _print_footer(results, console)
    _print_tail_footer(results, console)
    console.print(f"knee: {lat.curve_summary(lat.curves(results)[0])['knee_rule']}",
                  markup=False)
    n = len(results[0].params.get("load_cpus") or [])
    console.print(f"{n} loader{'s' if n != 1 else ''}; base pages "
                  f"(4K); working set {lat.format_bytes(results[0].params['bytes'])}")


def _fill(t, cols: list[str], rows: list[list[str]], console, whole=(),
          optional=("TSC cyc", "core cyc")) -> None:
    """The table's columns and rows: each column at its natural width where the terminal
    holds them all, else as wide as its longest word (headers wrap between words; no cell
    is cut; `whole`: columns whose cells stay on one line); when even that is too wide, the
    `optional` columns are left out (the figures stay in --json) and said so."""
    def narrow_width(cs, rs):
        return sum(max(map(len, c.split() + [w for row in rs for w in
                                             ([row[i]] if c in whole else row[i].split())]))
                   for i, c in enumerate(cs)) + _frame(cs)
    dropped = []
    for name in optional:
        if narrow_width(cols, rows) <= console.width or name not in cols:
            continue
        i = cols.index(name)
        cols = cols[:i] + cols[i + 1:]
        rows = [row[:i] + row[i + 1:] for row in rows]
        dropped.append(name)
    if dropped:
        t.caption = f"({', '.join(dropped)}: in --json; a wider terminal shows them)"
    natural = [max([len(c)] + [len(row[i]) for row in rows]) for i, c in enumerate(cols)]
    narrow = [max(map(len, c.split() + [w for row in rows for w in
                                          ([row[i]] if c in whole else row[i].split())]))
              for i, c in enumerate(cols)]
    fits = sum(natural) + _frame(cols) <= console.width
    for c, nat, nar in zip(cols, natural, narrow):
        t.add_column(c, justify="right", width=nat if fits else nar)
    for row in rows:
        t.add_row(*row)


def _frame(cols: list[str]) -> int:
    """Columns a table takes beyond its cells: a divider between columns, one cell of
    right padding on all but the last, the two edges."""
    return 2 * len(cols) + 1


def _ns(v: float) -> str:
    import math
    return f"{v:.1f}" if math.isfinite(v) else "-"    # NaN: the record has no distribution


def _pages(r) -> str:
    """The page kind asked for and the share of the buffer the kernel backed with huge
    pages: "THP 97%", "4K 0%", "hugetlb unknown"."""
    asked = {"none": "4K", "thp": "THP", "hugetlb": "hugetlb"}.get(r.params.get("pages"),
                                                                    "unknown")
    frac = r.placement.get("huge_fraction")
    return f"{asked} {frac:.0%}" if isinstance(frac, (int, float)) and frac >= 0 \
        else f"{asked} unknown"
