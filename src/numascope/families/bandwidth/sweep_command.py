"""`numascope bw --sweep`: bandwidth by working set and its plateaus (sweep.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from numascope.memspec import MemorySpec
from numascope.topology.model import Topology

LATE = "threads started up to"      # bench._start_spread's note


def _refuse_other_modes(args: argparse.Namespace) -> None:
    from numascope.errors import UserError
    if args.size is not None:
        raise UserError("--sweep chooses the working sets itself: leave out --size (give "
                        "--min and --max for the range)")
    for flag, on in (("--scaling", args.scaling), ("--per-domain", args.per_domain),
                     ("--tier-sweep", args.tier_sweep is not None),
                     ("--ratios", args.ratios is not None)):
        if on:
            raise UserError(f"--sweep does not go with {flag}: give one of them")


def run_sweep(args: argparse.Namespace, topo: Topology, memory: MemorySpec,
              plot: Path | None) -> int:
    """The sweep for `bw`'s checked flags (each converted by its row in the bandwidth
    options table); `plot` was checked before."""
    from numascope import placement
    from numascope.command.flags import cpus_arg
    from numascope.command.runner import finish, measure, save_plot, warn_notes
    from numascope.errors import UserError
    from numascope.families.bandwidth import sweep
    from numascope.families.bandwidth.bench import ARRAYS, UNITS_NOTE, BandwidthParams
    from numascope.families.bandwidth.family import Bandwidth

    _refuse_other_modes(args)
    typed = getattr(args, "_typed", None) or {}
    kernels = list(args.kernel) if "kernel" in typed else list(sweep.DEFAULT_KERNELS)
    where = cpus_arg(args)
    cpus = placement.select_cpus(topo, where, args.policy, args.threads or 1)
    least = max(ARRAYS[k] for k in kernels) * sweep.MIN_ELEMENTS * 8
    if args.min is not None and args.min < least:
        raise UserError(f"--min {args.min} B is below the smallest working set of "
                        f"{', '.join(kernels)} ({least} B: {sweep.MIN_ELEMENTS} elements per "
                        "array)")
    base = BandwidthParams(memory=memory, reps=args.reps, isa=args.isa, nt=args.nt,
                           policy=args.policy)
    cases = sweep.cases(topo, kernels, cpus, base, args.min, args.max, args.per_octave,
                        where=where)
    # the plateaus come with the points (Bandwidth.derived), unless a stop cut the curve
    outcome = measure(Bandwidth(), topo, cases, label="bw sweep", quiet=args.json, args=args)
    # the plateaus' notes are in the table (and the JSON): the points' are warned
    points = [r for r in outcome.results if sweep.is_point(r)]
    late = [r for r in points if any(n.startswith(LATE) for n in r.notes)]
    warn_notes(points, skip=lambda n: n.startswith(("auto:", LATE)))
    if late:      # one line for the sweep, not one per working set (each record has its own)
        from numascope.console import warn
        warn(f"{len(late)} of {len(points)} working sets: "
             "threads started far apart in some repetition (one held up, preempted?); the "
             "timing window covers it (each record's notes say by how much)")
    save_plot(plot, "bandwidth.sweep_figures", outcome)
    extra: dict[str, Any] = {"units": UNITS_NOTE, "sweep": _summary(outcome.results)}
    return finish(args, "bw", outcome, render=_print, what="working set", extra=extra)


def _summary(results) -> list[dict[str, Any]]:
    """Per curve (kernel, threads): its plateaus and the cache levels without one."""
    from numascope.families.bandwidth import sweep
    out = []
    for (kernel, threads), curve in sweep.curves(results).items():
        found, missing = sweep.plateaus_of(curve)
        out.append({"kernel": kernel, "threads": threads,
                    "level_bytes": curve[0].params.get("level_bytes") or {},
                    "plateaus": [{"plateau": p.name, "working_set_range": [p.first, p.last],
                                  "gbs": p.gbs, "points": len(p.values),
                                  "expected_bytes": p.expected, "lines_up": p.lines_up,
                                  "verdict": p.verdict} for p in found],
                    "without_plateau": missing})
    return out


def _print(results, console) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from numascope.families.bandwidth import sweep
    from numascope.families.bandwidth.plateaus import RULE
    from numascope.units import format_bytes

    for (kernel, threads), curve in sweep.curves(results).items():
        t = Table(title=f"{kernel}, {threads} thread{'s' if threads != 1 else ''} "
                        f"(CPUs {curve[0].placement.get('cpulist', '')}): bandwidth by working "
                        "set, GB/s (10^9 B), STREAM bytes", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
        for col in ("working set", "per thread", "level", "median", "best", "spread",
                    "variant"):
            t.add_column(col, justify="left" if col in ("level", "variant") else "right")
        for r in curve:
            p, bw = r.params, r.metrics["bandwidth"]
            t.add_row(format_bytes(p["working_set"]), format_bytes(p["per_thread_bytes"]),
                      p["level"], f"{bw.median:.1f}", f"{bw.best:.1f}",
                      f"{100 * bw.spread:.1f}%",
                      p["isa"] + ("-nt" if p.get("stores") == "streaming" else ""))
        console.print(t)
        found, missing = sweep.plateaus_of(curve)
        caps = ", ".join(f"{k} {format_bytes(v)}"
                         for k, v in (curve[0].params.get("level_bytes") or {}).items())
        pt = Table(title=f"Plateaus ({kernel}, {threads}T); caches for these threads: "
                         f"{caps or 'none reported'}", title_justify="left",
                   box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
        for col in ("plateau", "working sets", "GB/s", "points", "check"):
            pt.add_column(col, justify="right" if col in ("GB/s", "points") else "left",
                          overflow="fold")
        for pl in found:
            pt.add_row(pl.name, f"{format_bytes(pl.first)} - {format_bytes(pl.last)}",
                       f"{pl.gbs:.1f}", str(len(pl.values)),
                       Text(("" if pl.lines_up else "(!) ") + pl.verdict))
        console.print(pt)
        for line in missing + [n for pl in found for n in pl.notes]:
            console.print(Text(line))
        console.print()
    if results:
        p = next(r for r in results if sweep.is_point(r)).params
        console.print(Text(
            f"median and best of {p['reps']} timed repetitions per working set; working set "
            "= all arrays of all threads; level = the smallest cache holding it for these "
            "threads; a plateau's GB/s = the median of its points' medians; (!) = does not "
            f"line up with the cache size. Plateaus: {RULE}."))
