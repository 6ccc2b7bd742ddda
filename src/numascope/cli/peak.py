"""`numascope peak`: theoretical peaks (FLOP/s, DRAM, links) with their formulas, the measured
clock, measured compute (DGEMM, LU, optionally HPL) and the efficiency table."""

from __future__ import annotations

import argparse
import contextlib
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from numascope.cli._common import add_json, add_sysfs_root, report_interrupted

NAME = "peak"
HELP = "theoretical peaks vs measured: clock, FLOP/s (DGEMM, LU, HPL), DRAM, links"
ORDER = 60


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("--memory", metavar="SPEC",
                   help="memory per socket, e.g. '12x DDR5-4800' (default: SMBIOS type 17)")
    p.add_argument("--links", metavar="SPEC",
                   help="inter-socket links [NAME:]LINKSxLANES@GBPS, e.g. 'xgmi:4x16@32'")
    p.add_argument("--hpl", action="store_true", help="also run HPL through hpcc (short run)")
    p.add_argument("--hpl-big", action="store_true",
                   help="HPL with N sized from 80%% of available memory (long)")
    p.add_argument("--hpl-n", type=int, metavar="N", help="HPL problem size")
    p.add_argument("--hpl-np", type=int, metavar="P",
                   help="MPI processes for HPL (default: physical cores; 1 = no mpirun)")
    p.add_argument("--size", type=int, default=2048, metavar="N",
                   help="matrix size for DGEMM and LU (default 2048)")
    p.add_argument("--reps", type=int, default=3, help="repetitions (default 3)")
    p.add_argument("--no-compute", action="store_true",
                   help="peaks and clock only: skip DGEMM/LU and the DRAM measurement")
    p.add_argument("--dram-gbs", type=float, metavar="GB/S",
                   help="use this measured DRAM bandwidth instead of measuring a triad")
    p.add_argument("--link-gbs", type=float, metavar="GB/S",
                   help="measured inter-socket bandwidth, for the efficiency table")
    p.add_argument("--clock", type=float, metavar="GHZ",
                   help="use this all-core clock for the FLOP/s peak instead of measuring "
                        "(e.g. a spec-sheet base clock, or a replayed machine)")
    add_sysfs_root(p)
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from numascope import clock, peaks
    from numascope.bench.compute import Compute
    from numascope.console import err, print_json, warn
    from numascope.errors import MeasurementError, Unavailable, UserError
    from numascope.peaks import dram, links
    from numascope.topology import read_topology

    # Validate the user's descriptions before measuring anything.
    if args.memory:
        dram.parse_memory_spec(args.memory)
    if args.links:
        links.parse_links_spec(args.links)
    if args.reps < 1:
        raise UserError("--reps must be at least 1")
    for flag, v in (("--dram-gbs", args.dram_gbs), ("--link-gbs", args.link_gbs),
                    ("--clock", args.clock)):
        if v is not None and not (v > 0 and math.isfinite(v)):
            raise UserError(f"{flag} must be a positive, finite number (got {v})")
    live = args.sysfs_root in ("/", "")
    if not live and (args.hpl or not args.no_compute):
        raise UserError("measurements need this machine: add --no-compute with --sysfs-root")
    topo = read_topology(args.sysfs_root)

    try:
        clk = clock.measure(topo, reps=args.reps) if live and not args.clock else None
    except KeyboardInterrupt as e:
        return report_interrupted(e, 0)
    given = {"all_busy_ghz": args.clock, "given": True} if args.clock else None
    with _tree(args.sysfs_root) as root:
        summary = peaks.summary(topo, args.memory, args.links, clock=clk or given, root=root)
    if given:
        summary["clock"] = None
    measured: dict[str, Any] = {}
    compute: list[dict[str, Any]] = []
    problems: list[str] = []
    stopped: KeyboardInterrupt | None = None
    bench = Compute()
    bench._clock = clk
    if not args.no_compute:
        cases = bench.cases(topo, dgemm=(args.size,), lu=(args.size,), reps=args.reps,
                            hpl=args.hpl or args.hpl_big or args.hpl_n is not None,
                            hpl_np=args.hpl_np, hpl_n=args.hpl_n, hpl_big=args.hpl_big,
                            clock=False)
        try:   # a stop signal keeps the cases that finished; no DRAM figure then
            with err.status("measuring compute …"):
                for case in cases:
                    try:
                        r = bench.measure(topo, case)
                    except (Unavailable, MeasurementError) as e:
                        problems.append(f"{case.label}: {e}")
                        compute.append({"case": case.label, "error": str(e)})
                        continue
                    compute.append(r.to_dict())
                    kind = case.params["kind"]
                    if kind in ("lu", "hpl"):  # LINPACK-style solves are what the labs compare
                        by = ("HPL (hpcc)" if kind == "hpl"
                              else f"LU solve n={case.params['n']}")
                        g = r.metric("gflops")
                        measured.setdefault("gflops", []).append(
                            (g.median, f"{by}: median of {len(g.values)} repetitions"))
            measured.update(_dram_measured(topo, args.dram_gbs, problems))
        except KeyboardInterrupt as e:
            stopped = e
    elif args.dram_gbs:
        measured.update(dram_gbs=args.dram_gbs, dram_by="--dram-gbs")
    if args.link_gbs:
        measured.update(link_gbs=args.link_gbs, link_by="--link-gbs")
    table = [r.to_dict() for r in peaks.efficiency_table(summary, measured)]

    if args.json:
        print_json({"peaks": summary, "compute": compute, "measured": measured,
                    "efficiency": table, "problems": problems})
    else:
        _render(summary, compute, table)
        for p in problems:
            warn(p)
    if stopped:
        return report_interrupted(stopped, len(compute) + (clk is not None), "measurement")
    return 0


@contextlib.contextmanager
def _tree(sysfs_root: str) -> Iterator[str]:
    """The directory holding sys/ and proc/ of a replayed machine (archives extracted)."""
    from numascope.topology.archive import extracted, find_root, is_archive
    p = Path(sysfs_root)
    if sysfs_root in ("/", "") or not p.exists():
        yield "/" if sysfs_root in ("/", "") else sysfs_root
    elif is_archive(p):
        with extracted(p) as d:
            yield str(d)
    else:
        yield str(find_root(p, sysfs_root))


def _dram_measured(topo, given: float | None, problems: list[str]) -> dict[str, Any]:
    if given:
        return {"dram_gbs": given, "dram_by": "--dram-gbs"}
    try:
        from numascope.bench import bandwidth
    except ImportError as e:
        problems.append(f"DRAM not measured: bandwidth engine not available ({e})")
        return {}
    from numascope.console import err
    from numascope.errors import MeasurementError, Unavailable, UserError
    try:
        with err.status("measuring STREAM triad, all cores …"):
            r = bandwidth.measure(topo, kernel="triad")
    except (MeasurementError, Unavailable, UserError) as e:
        problems.append(f"DRAM not measured: {e}")
        return {}
    return dram_from_result(r)


def dram_from_result(r) -> dict[str, Any]:
    """The measured DRAM figure for the efficiency table: the median of the repetitions
    kept (implausibly fast ones are set aside by the measurement), never the best one."""
    bw = r.metric("bandwidth")
    excluded = len(r.params.get("excluded_reps") or [])
    out = f", {excluded} implausible excluded" if excluded else ""
    return {"dram_gbs": bw.median,
            "dram_by": f"STREAM triad, {r.params.get('threads')} threads: median of "
                       f"{len(bw.values)} repetitions{out}"}


def _fmt(v: float | None, digits: int = 1) -> str:
    return "unknown" if v is None else f"{v:,.{digits}f}"


def _render(summary: dict[str, Any], compute: list[dict[str, Any]],
            table: list[dict[str, Any]]) -> None:
    from rich.table import Table

    from numascope.console import out

    t = Table(title="Theoretical peaks", title_justify="left")
    for c in ("resource", "peak", "unit", "formula / reason", "source"):
        t.add_column(c)
    for key, name in (("flops", "FP64 FLOP/s"), ("dram", "DRAM bandwidth"),
                      ("links", "inter-socket links")):
        p = summary[key]
        t.add_row(name, _fmt(p["value"]), p["unit"],
                  p["formula"] or f"[yellow]{p['reason']}[/yellow]", p.get("source") or "")
    out.print(t)
    for key in ("flops", "dram", "links"):
        for n in summary[key].get("notes", []):
            out.print(f"  [dim]{key}: {n}[/dim]")

    c = summary.get("clock")
    if c:
        t = Table(title="Measured core clock (GHz)", title_justify="left")
        for col in ("CPU", "alone", "all busy"):
            t.add_column(col, justify="right")
        for cpu, v in c["per_cpu"].items():
            t.add_row(str(cpu), "—" if v["single_ghz"] is None else _fmt(v["single_ghz"], 3),
                      _fmt(v["all_busy_ghz"], 3))
        out.print(t)
        tsc = f"TSC {c['tsc_ghz']:.3f} GHz; " if c.get("tsc_ghz") else ""
        out.print(f"  [dim]{tsc}{c['method']}[/dim]")
        for n in c.get("notes", []):
            out.print(f"  [yellow]{n}[/yellow]")

    rows = [r for r in compute if "metrics" in r]
    if rows or compute:
        t = Table(title="Measured compute", title_justify="left")
        for col in ("case", "GFLOP/s best", "median", "% of peak", "check"):
            t.add_column(col)
        notes: list[str] = []
        for r in compute:
            if "error" in r:
                t.add_row(r["case"], "—", "—", "—", "[red]failed[/red]")
                notes.append(f"{r['case']}: {r['error']}")
                continue
            m = r["metrics"]
            pct = m.get("pct_of_peak", {}).get("best")
            res = m.get("residual", {}).get("max")
            t.add_row(r["case"], _fmt(m["gflops"]["best"]), _fmt(m["gflops"]["median"]),
                      _fmt(pct), f"residual {res:.2g} < 16" if res is not None else "passed")
            notes += [f"{r['case']}: {n}" for n in r["notes"] if n not in notes]
        out.print(t)
        for n in dict.fromkeys(notes):
            out.print(f"  [dim]{n}[/dim]")

    if table:
        t = Table(title="Efficiency (measured / theoretical)", title_justify="left")
        for col in ("resource", "measured", "by", "peak", "unit", "efficiency", "note"):
            t.add_column(col)
        for r in table:
            pct = "—" if r["percent"] is None else f"{r['percent']:.1f} %"
            note = "peak unknown (see above)" if r["note"].startswith("peak unknown") \
                else r["note"]
            t.add_row(r["what"], _fmt(r["measured"]), r["measured_by"], _fmt(r["peak"]),
                      r["unit"], pct, note)
        out.print(t)
