"""`numascope compress`: does compressed, chunked processing beat the memory wall on my data?"""

from __future__ import annotations

import argparse

from numascope.cli._common import add_json, report_interrupted

NAME = "compress"
HELP = ("compression vs the memory wall: plain sum vs Blosc2 decompress+sum per thread "
        "count, on synthetic data or your own file")
ORDER = 70


def register(p: argparse.ArgumentParser) -> None:
    src = p.add_argument_group("data")
    src.add_argument("--data", metavar="FILE",
                     help="your data: .npy, raw binary (--dtype), .csv/.tsv (--column), "
                          ".parquet (--column), .h5/.nc (--variable), a Blosc chunk")
    src.add_argument("--format", default="auto",
                     choices=["auto", "npy", "raw", "csv", "parquet", "hdf5", "netcdf", "blosc"],
                     help="file format (default: from the name)")
    src.add_argument("--dtype", help="item type, e.g. float32, f8, int16 (raw data needs it)")
    src.add_argument("--column", help="CSV/Parquet column (name or index) or .npy field")
    src.add_argument("--variable", help="HDF5/netCDF variable")
    src.add_argument("--synthetic", default=None, metavar="LIST",
                     help="synthetic sets: smooth,noisy,precip or all (default: smooth)")
    src.add_argument("--size", metavar="BYTES",
                     help="synthetic: size generated; file: use this prefix (never enlarged)")
    sw = p.add_argument_group("sweep")
    sw.add_argument("--profile", choices=["quick", "full"], default="quick",
                    help="quick: 4 fast codec settings; full: every codec x clevel x filter")
    sw.add_argument("--codecs", metavar="LIST", help="blosclz,lz4,lz4hc,zstd,zlib")
    sw.add_argument("--clevels", metavar="LIST", help="e.g. 1,5,9")
    sw.add_argument("--filters", metavar="LIST", help="shuffle,bitshuffle,bytedelta,none")
    sw.add_argument("--threads", metavar="LIST", help="thread counts (default 1,2,4,…,all)")
    sw.add_argument("--where", default="all", help="CPUs: all, S0, N1, L3:5 or a CPU list")
    sw.add_argument("--policy", default="compact",
                    help="thread placement: compact, spread, per-l3, per-node")
    sw.add_argument("--chunk", metavar="BYTES", help="chunk size (default: half the L2)")
    sw.add_argument("--block", metavar="BYTES",
                    help="Blosc block size (default: half the chunk; 0: Blosc's choice)")
    sw.add_argument("--read", choices=["buffer", "fused"], default="buffer",
                    help="buffer: decompress each chunk, then sum it; fused: sum each block "
                         "in a Blosc2 postfilter as it is decompressed")
    sw.add_argument("--reps", type=int, default=5, help="timed repetitions per case")
    p.add_argument("--plot", metavar="FILE", help="save GB/s vs threads plot(s) to FILE")
    add_json(p)


def _list(text: str | None, what: str, conv=str) -> list | None:
    from numascope.errors import UserError
    if text is None:
        return None
    try:
        items = [conv(x.strip()) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"bad {what} list {text!r}") from None
    if not items:
        raise UserError(f"empty {what} list")
    return items


def main(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from numascope.bench import compress as cz
    from numascope.bench.base import Interrupted, run_cases
    from numascope.bench.datasets import SYNTHETIC, load, parse_size
    from numascope.console import err, out, print_json
    from numascope.errors import UserError
    from numascope.topology import read_topology

    topo = read_topology("/")
    size = parse_size(args.size) if args.size else None
    if args.data and args.synthetic:
        raise UserError("give either --data or --synthetic, not both")
    if args.data:
        load(args.data, args.format, args.dtype, args.column, args.variable)  # fail early
        specs = [cz.DataSpec("file", path=args.data, fmt=args.format, dtype=args.dtype,
                             column=args.column, variable=args.variable, size=size)]
    else:
        names = _list(args.synthetic or "smooth", "synthetic data set")
        if names == ["all"]:
            names = list(SYNTHETIC)
        for n in names:
            if n not in SYNTHETIC:
                raise UserError(f"unknown synthetic data set {n!r} (choose from "
                                f"{', '.join(SYNTHETIC)} or all)")
        size = size or cz.default_size(topo, args.profile)
        specs = [cz.DataSpec(n, dtype=args.dtype, size=size) for n in names]
    quick = args.profile == "quick" and not (args.codecs or args.clevels or args.filters)
    threads = _list(args.threads, "thread count", int)
    chunk = parse_size(args.chunk) if args.chunk else None
    block = None if args.block is None else (0 if args.block.strip() == "0"
                                            else parse_size(args.block))
    bench = cz.Compress()
    if quick:
        cases = []
        for spec in specs:  # data-set-major, so each data set is built once
            for codec, lv, filt in cz.QUICK_COMBOS:
                cases += bench.cases(topo, spec, [codec], [lv], [filt], threads, args.where,
                                     args.policy, chunk, args.reps, block, args.read)
    else:
        cases = bench.cases(topo, specs, _list(args.codecs, "codec") or cz.CODECS,
                            _list(args.clevels, "clevel", int) or cz.CLEVELS,
                            _list(args.filters, "filter") or cz.FILTERS, threads, args.where,
                            args.policy, chunk, args.reps, block, args.read)
    stopped: Interrupted | None = None
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=err, transient=True, disable=args.json) as prog:
        try:
            results = run_cases(bench, topo, cases, progress=prog, description="compress")
        except Interrupted as e:
            results, stopped = e.results, e
    summaries = cz.summarize(results)
    if args.plot:
        from numascope.report.figures import save_figures
        from numascope.report.figures.compress import figures
        figs = figures(results)
        for f in save_figures(figs, args.plot):
            err.print(f"plot written to {f}")
    if args.json:
        print_json({"results": [r.to_dict() for r in results],
                    "summary": [s.to_dict() for s in summaries], "interrupted": stopped is not None})
    else:
        for s in summaries:
            _print(s, out)
    return report_interrupted(stopped, len(results)) if stopped else 0


def _print(s, console) -> None:
    from rich.table import Table

    from numascope.bench.datasets import format_bytes
    console.print(f"[bold]{s.dataset}[/bold]: {format_bytes(s.nbytes)} of {s.dtype}, "
                  f"chunks of {format_bytes(s.chunk_bytes)}, {s.source}")
    t = Table(show_header=True, header_style="bold")
    t.add_column("codec-clevel-filter", no_wrap=True, min_width=19)
    t.add_column("ratio", justify="right")
    t.add_column("compress GB/s", justify="right")
    for th in s.threads:
        t.add_column(f"{th}T GB/s (vs plain)", justify="right")
    t.add_row("plain sum", "1.0", "-", *[f"{s.plain[th]:.2f}" for th in s.threads],
              style="bold")
    for r in sorted(s.rows, key=lambda r: -r.gbs.get(max(s.threads), 0.0)):
        cells = []
        for th in s.threads:
            if th in r.gbs:
                mark = "[green]" if r.speedup[th] > 1 else ""
                cells.append(f"{r.gbs[th]:.2f} ({mark}{r.speedup[th]:.2f}x"
                             f"{'[/green]' if mark else ''})")
            else:
                cells.append("-")
        t.add_row(r.label, f"{r.ratio:.2f}", f"{r.compress_gbs:.2f}", *cells)
    console.print(t)
    for th in s.threads:
        if th in s.best:
            name, gbs, sp = s.best[th]
            console.print(f"  best at {th} thread(s): {name} {gbs:.2f} GB/s = {sp:.2f}x plain")
    if s.crossover:
        console.print(f"  [green]crossover: compressed beats plain from {s.crossover} "
                      "thread(s)[/green]")
    else:
        console.print(f"  no crossover: compressed does not beat plain up to "
                      f"{max(s.threads)} thread(s) here")
    for n in s.notes:
        console.print(f"  [yellow]note:[/yellow] {n}")
    console.print("  GB = 1e9 B of uncompressed data; medians of paired repetitions, "
                  "timed in C; sums validated against a Kahan reference")
