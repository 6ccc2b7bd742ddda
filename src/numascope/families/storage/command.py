"""`numascope io`: fio's IOPS and latency on the drives under the directories you name, by
NUMA placement (--placement) and by drive count (--scaling)."""

from __future__ import annotations

import argparse
import math

NAME = "io"
HELP = "storage IOPS and latency with fio: files in --dir DIR (one per drive), by placement " \
       "(--placement) and drive count (--scaling)"
ORDER = 48
FLAGS = {"plot": "the placement / scaling plot"}   # beside the TABLE of options.py


def params_from(args: argparse.Namespace):
    """(IoParams, sweep of (iodepth, numjobs)) from the flags, each checked by its option
    in the table (families/storage/options.py) before anything is measured; UserError on
    a bad value."""
    from numascope.errors import UserError
    from numascope.families.storage.fio import IoParams
    from numascope.families.storage.options import RWMIX
    if args.rwmixread is not None and args.rw != "randrw":
        raise UserError(f"--rwmixread {args.rwmixread}: the mix of reads goes with --rw randrw, "
                        f"not --rw {args.rw} (leave it out, or use --rw randrw)")
    depths = list(dict.fromkeys(args.iodepth))     # checked: lists of counts
    jobs = args.threads
    p = IoParams(rw=args.rw, bs=args.bs, iodepth=depths[0], numjobs=jobs[0],
                 runtime=args.runtime, ramp=args.ramp, size=args.size,
                 rwmixread=RWMIX if args.rwmixread is None else args.rwmixread)
    sweep = [(d, n) for d in depths for n in jobs]
    for d, n in sweep:   # every point checked now, not when it is reached
        IoParams(rw=p.rw, bs=p.bs, iodepth=d, numjobs=n, runtime=p.runtime, ramp=p.ramp,
                 size=p.size, rwmixread=p.rwmixread)
    return p, sweep


def main(args: argparse.Namespace) -> int:
    from numascope.command.flags import cpus_arg, memory_arg
    from numascope.command.output import check_output, check_workdir
    from numascope.command.runner import PLOT_SUFFIXES, measure, save_plot, warn_notes
    from numascope.errors import UserError
    from numascope.families.storage.bench import UNKNOWN, Storage
    from numascope.families.storage.fio import fio_path, fio_version, probe
    from numascope.families.storage.options import TABLE
    from numascope.options import check
    from numascope.placement import select_cpus
    from numascope.topology import read_topology
    plot = check_output(args.plot, "--plot", PLOT_SUFFIXES)
    if args.plot and not (args.placement or args.scaling):
        raise UserError("--plot draws --placement or --scaling: add one of them")
    for d in args.dirs or []:   # type, length, writability: one line, before anything else
        if d.strip():
            check_workdir(d, "--dir")
    if args.remove_leftovers and not args.dirs:
        raise UserError("--remove-leftovers goes with --dir (numascope never writes to a "
                        "--device)")
    args = argparse.Namespace(**{**vars(args), **check(TABLE, vars(args))})   # its rules
    p, sweep = params_from(args)
    for d in args.dirs or []:
        _leftovers(d, remove=args.remove_leftovers)
    topo = read_topology("/")
    where = cpus_arg(args, default="")
    cpus = select_cpus(topo, where) if where else None
    memory = memory_arg(args, topo)
    mode = "placement" if args.placement else "scaling" if args.scaling else "run"
    bench = Storage()
    cases = bench.cases(topo, params=p, dirs=args.dirs or [], device=args.device,
                        readonly=args.readonly, mode=mode, reps=args.reps, cpus=cpus,
                        memory=memory, where=where, sweep=sweep)
    path = fio_path()                      # before measuring: fio missing is exit 4, one line
    version = fio_version(path)
    engine, numa = probe(path)
    with bench.reusing_files():       # one file per --dir for every case, removed after
        outcome = measure(bench, topo, cases, label="io", quiet=args.json, args=args)
    if not args.json:
        warn_notes(outcome.results, skip=lambda n: n.endswith(UNKNOWN))
    if plot is not None:
        save_plot(plot, "storage.figures", outcome)
    from numascope.families.storage import bench as io
    extra = {"fio_version": version, "engine": engine, "fio_numa": numa,
             "placement_rows": io.placement_rows(outcome.results),
             "scaling_rows": io.scaling_rows(outcome.results),
             "knee": io.knee_text(io.scaling_rows(outcome.results))}
    from numascope.command.runner import finish
    planned = len(cases)
    return finish(args, NAME, outcome, lambda rs, con: render(rs, con, mode, planned),
                  extra=extra)


def _leftovers(directory: str, *, remove: bool) -> None:
    """Name the files a stopped or killed `numascope io` left in `directory` (a warning), or
    remove them with --remove-leftovers (and say so): never silently either way."""
    from numascope.console import err, warn
    from numascope.families.storage.targets import leftovers, leftovers_text, remove_files
    found = leftovers(directory)
    if not found:
        return
    text = leftovers_text(found)
    n = len(found)
    files = f"{n} file{'s' if n != 1 else ''}"
    if not remove:
        warn(f"--dir {directory} holds {files} a stopped numascope io left: {text}; "
             "--remove-leftovers removes them")
        return
    left = remove_files([str(f) for f in found])
    err.print(f"--dir {directory}: removed {files} a stopped numascope io left: {text}"
              if not left else f"--dir {directory}: could not remove {', '.join(left)}",
              markup=False, soft_wrap=True)


def header(results: list, planned: int | None = None) -> str:
    """The line above the tables: fio's version, the engine, and how many cases finished
    (of how many planned, when a stop ended the sweep early)."""
    r0 = results[0]
    n = len(results)
    if planned is not None and n < planned:
        done = f"{n} of {planned} case{'s' if planned != 1 else ''} finished"
    else:
        done = f"{n} case{'s' if n != 1 else ''}"
    return f"{r0.params['fio_version']}, {r0.params['engine']}, direct I/O; {done}"


def _n(v: float | None, fmt: str = ",.0f") -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)


def _us(v: float | None) -> str:
    if v is None or math.isnan(v):
        return "-"
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


def render(results: list, con, mode: str, planned: int | None = None) -> None:
    """Tables that fit 80 columns: the job, then one row per case (or the study's table)."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from numascope.families.storage import bench as io
    if not results:
        con.print("no case finished")
        return
    con.print(escape(header(results, planned)))
    seen = set()
    for r in results:
        for t in r.params["targets"]:
            if t["path"] in seen:
                continue
            seen.add(t["path"])
            node = f"node {t['node']}" if t["node"] is not None else "node unknown"
            disk = t.get("disk") or "?"
            con.print(escape(f"target {t['path']}: {disk}, {node}"))
    if mode == "placement":
        tb = Table(title="IOPS by placement (jobs + buffers on a node)", box=box.SIMPLE_HEAD,
                   pad_edge=False)
        for c, j in (("job", "left"), ("where", "left"), ("role", "left"), ("dist", "right"),
                     ("IOPS", "right"), ("vs local", "right"), ("p99 us", "right"),
                     ("sys %", "right")):
            tb.add_column(c, justify=j)
        for row in io.placement_rows(results):
            r = next(x for x in results if x.case == row["case"])
            p = r.params["io"]
            tb.add_row(f"QD{p['iodepth']} x{p['numjobs']}", escape(row["where"]), row["role"],
                       _n(row["distance"], "d"), _n(row["iops"]),
                       "-" if row["vs_local"] is None else f"{row['vs_local']:.0%}",
                       _us(row["p99_us"]), _n(row["cpu_sys"], ".0f"))
        con.print(tb)
        return
    if mode == "scaling":
        rows = io.scaling_rows(results)
        tb = Table(title="Drive scaling (each drive's jobs local to it)", box=box.SIMPLE_HEAD,
                   pad_edge=False)
        for c in ("drives", "IOPS", "per drive", "vs one", "p99 us", "kernel CPUs", "IRQs"):
            tb.add_column(c, justify="right")
        for row in rows:
            tb.add_row(str(row["drives"]) + (" knee" if row["knee"] else ""), _n(row["iops"]),
                       _n(row["per_drive"]),
                       "-" if row["efficiency"] is None else f"{row['efficiency']:.0%}",
                       _us(row["p99_us"]), f"{row['kernel_cpus']:.2f}",
                       _n(row["interrupts"]) if row["interrupts"] else "-")
        con.print(tb)
        k = io.knee_text(rows)
        con.print(k if k else "no knee: IOPS per drive stayed within "
                  f"{io.KNEE:.0%} of one drive alone")
        return
    tb = Table(title="fio results (median of runs; latency: completion, us)",
               box=box.SIMPLE_HEAD, pad_edge=False)
    for c, j in (("job", "left"), ("placed", "left"), ("IOPS", "right"), ("MB/s", "right"),
                 ("p50", "right"), ("p99", "right"), ("p99.9", "right"), ("usr%", "right"),
                 ("sys%", "right")):
        tb.add_column(c, justify=j)
    for r in results:
        p, m = r.params["io"], r.metrics
        where = ", ".join(dict.fromkeys(r.placement.get("where") or ["-"]))
        tb.add_row(f"{p['rw']} {_bs(p['bs'])} QD{p['iodepth']} x{p['numjobs']}", escape(where),
                   _n(m["iops"].median), _n(m["bandwidth"].median, ",.1f"),
                   _us(m["clat_p50"].median), _us(m["clat_p99"].median),
                   _us(m["clat_p99.9"].median), _n(m["cpu_usr"].median, ".0f"),
                   _n(m["cpu_sys"].median, ".0f"))
    con.print(tb)
    errs = sum(r.metrics["errors"].max for r in results)
    if errs:
        con.print(f"fio counted {errs:.0f} errors, short or dropped I/Os")


def _bs(b: int) -> str:
    return f"{b // 1024}k" if b % 1024 == 0 else f"{b}"
