"""`numascope bw`: memory bandwidth with STREAM-class kernels on pinned threads."""

from __future__ import annotations

import argparse

from numascope.command.flags import add_family

NAME = "bw"
HELP = "memory bandwidth (STREAM kernels) on pinned threads: one placement, --scaling, " \
       "--per-domain, --sweep (by working set)"
ORDER = 30


def register(p: argparse.ArgumentParser) -> None:
    from numascope.families.bandwidth.options import TABLE
    add_family(p, TABLE, plot="the scaling / per-domain plot")
    # the old spelling of --cpus, kept for scripts: its own dest, so that giving both, or it
    # empty, is an error naming it (a hidden alias of --cpus would share --cpus's dest)
    p.add_argument("--domain", default=None, help=argparse.SUPPRESS)


def options(args: argparse.Namespace) -> argparse.Namespace:
    """The flags with every option converted and checked by its row in the table (one
    pass, before anything is measured); the old --domain folded into --cpus."""
    from numascope.errors import UserError
    from numascope.families.bandwidth.options import TABLE
    from numascope.options import check
    if args.domain is not None:         # the old spelling of --cpus
        if args.cpus is not None:
            raise UserError("give --cpus or --domain, not both")
        if not args.domain.strip():
            raise UserError("--domain is empty: give e.g. 0-3, S0, N1, L3:5 or all")
        args = argparse.Namespace(**{**vars(args), "cpus": args.domain})
    return argparse.Namespace(**{**vars(args), **check(TABLE, vars(args))})


def main(args: argparse.Namespace) -> int:
    from numascope.command.flags import cpus_arg, memory_arg
    from numascope.command.output import check_output
    from numascope.command.runner import PLOT_SUFFIXES, finish, measure, save_plot, warn_notes
    from numascope.families.bandwidth.bench import UNITS_NOTE
    from numascope.families.bandwidth.family import Bandwidth
    from numascope.topology import read_topology

    plot = check_output(args.plot, "--plot", PLOT_SUFFIXES)      # before anything is measured
    args = options(args)
    where = cpus_arg(args)
    topo = read_topology("/")
    memory = memory_arg(args, topo)
    if args.sweep:
        from numascope.families.bandwidth.sweep_command import run_sweep as working_sets
        return working_sets(args, topo, memory, plot)
    if args.tier_sweep is not None or args.ratios is not None:
        from numascope.families.bandwidth.tier_command import run_sweep
        given = args.cpus is not None or args.cpunodebind is not None
        return run_sweep(args, topo, args.kernel, where if given else None, args.threads,
                         memory, args.size, plot)

    bench = Bandwidth()
    cases = bench.cases(topo, kernels=args.kernel, scaling=args.scaling,
                        per_domain=args.per_domain, where=where, policy=args.policy,
                        threads=args.threads, memory=memory, size_bytes=args.size,
                        reps=args.reps, isa=args.isa, nt=args.nt)
    outcome = measure(bench, topo, cases, label="bw", quiet=args.json, args=args)
    warn_notes(outcome.results, skip=lambda n: n.startswith("auto:"))
    save_plot(plot, "bandwidth.figures", outcome)
    return finish(args, NAME, outcome, render=_print, extra={"units": UNITS_NOTE})


# -- the table --------------------------------------------------------------------------------
def _pages(r) -> str:
    """Where the sampled pages are: "N0 100%", "N0 50% N1 50%"; "unknown" when not read."""
    pages = r.placement.get("pages_per_node") or {}
    total = sum(pages.values())
    if not total:
        return "unknown"
    return " ".join(f"N{k} {100 * v / total:.0f}%" if int(k) >= 0 else
                    f"absent {100 * v / total:.0f}%" for k, v in sorted(pages.items(),
                                                                        key=lambda kv: int(kv[0])))


PAGE_WORDS = {"none": "base pages", "thp": "", "hugetlb": "hugetlb pages"}


def _memory(r) -> str:
    """The memory placement in words, empty for first touch on transparent huge pages:
    "bind N1", "interleave N0,N1; base pages", "first-touch; hugetlb pages"."""
    from dataclasses import replace

    from numascope.memspec import MemorySpec
    mem = MemorySpec.from_dict(r.placement.get("memory"))    # old records: "huge"
    words = [] if mem.first_touch else [replace(mem, pages="thp").describe()]
    if PAGE_WORDS[mem.pages]:
        words.append(PAGE_WORDS[mem.pages])
    return "; ".join(words)


def _placement(r, memory: bool) -> str:
    """What a row is about besides its kernel and CPUs: the policies or domains that gave
    those CPUs ("every policy" when all of them did), and (`memory`) the memory placement
    when it is not the same for every row."""
    from numascope.placement import POLICIES
    p = r.params
    # a scaling point that is a domain too (bench.merged): both names
    names = [*(p.get("policies") or []), *(p.get("domains") or [])] or \
        [p.get("policy") or "cpus"]
    what = "every policy" if len(names) > 1 and set(names) == set(POLICIES) else \
        ", ".join(names)
    mem = _memory(r) if memory else ""
    return f"{what}; {mem}" if mem else what


def _print(results, console) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from numascope.steady import mark, verdict_of
    from numascope.units import format_bytes

    if not results:
        return
    t = Table(title="Memory bandwidth, GB/s (GB = 10^9 B), STREAM bytes",
              title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
              collapse_padding=True)
    auto = any(verdict_of(r.params) for r in results)     # --reps auto: n per row
    for col, just in (("kernel", "left"), ("CPUs", "left"), ("placement", "left"),
                      ("median", "right"), ("best", "right"), ("spread", "right"),
                      *((("n", "right"),) if auto else ()),
                      ("DRAM", "right"), ("pages", "left")):
        t.add_column(col, justify=just, overflow="fold",
                     no_wrap=col in ("kernel", "best", "median", "spread", "n", "DRAM"))
    flagged = False
    mems = {_memory(r) for r in results}
    for r in results:
        bw = r.metrics["bandwidth"]
        dram = r.metrics.get("dram_bandwidth")     # absent where write-allocate is unknown
        p = r.params
        code = p["isa"] + ("-nt" if p.get("stores") == "streaming" else "")
        pages = _pages(r)
        if not r.placement.get("ok", True):
            pages += " (!)"
            flagged = True
        t.add_row(Text(f"{p['kernel']} {code}"),
                  Text(f"{r.placement.get('cpulist', '').replace(',', ', ')} "
                       f"({p['threads']})"),
                  Text(_placement(r, memory=len(mems) > 1)),
                  f"{bw.median:.1f}" + (" (b)" if p.get("bimodal") else ""),
                  f"{bw.best:.1f}", f"{100 * bw.spread:.1f}%",
                  *((f"{p['reps']}{mark(p)}",) if auto else ()),
                  "unknown" if dram is None else f"{dram.median:.1f}", Text(pages))
    console.print(t)
    if len(mems) == 1 and next(iter(mems)):
        console.print(Text(f"memory: {next(iter(mems))}"))
    console.print()
    p = results[0].params
    excluded = sum(len(r.params.get("excluded_reps") or []) for r in results)
    dropped = (f"; {excluded} implausibly fast repetition{'s' if excluded != 1 else ''} "
               "excluded (see the notes)" if excluded else "")
    bimodal = sum(1 for r in results if r.params.get("bimodal"))
    reps = p["reps"]
    count = "n" if auto else str(reps)
    console.print(Text(
        f"median and best of {count} timed repetition{'s' if auto or reps != 1 else ''} after "
        f"{p['warmup']} warm-up{'s' if p['warmup'] != 1 else ''}{dropped}; a repetition runs "
        "from the first thread's start to the last thread's end" + _passes_text(results)
        + "; arrays of "
        f"{format_bytes(p['array_bytes'])} each; spread = (max - min) / median; DRAM = median "
        "in bytes on the bus, write-allocate counted where stores do it (below); -nt = streaming stores; CPUs (threads); pages = where "
        "sampled pages are" + ("; (!) = not where asked (see the warnings)"
                               if flagged else "")
        + (f"; (b) = repetitions bimodal ({bimodal} case{'s' if bimodal != 1 else ''}): a "
           "disturbed run, nothing excluded, both modes in the notes" if bimodal else "")
        + "."))
    for line in write_allocate_lines(results):
        console.print(Text(line))
    for line in dict.fromkeys(f"stores: {r.params['nt_reason']}" for r in results
                              if r.params.get("nt") == "auto" and r.params.get("nt_reason")
                              and r.params.get("stores") != "n/a"):
        console.print(Text(line))
    from numascope.command.runner import steady_lines
    steady_lines(results, console)


def _passes_text(results) -> str:
    """How many passes over the arrays a repetition made ("" for records without it)."""
    counts = sorted({r.params["passes"] for r in results if "passes" in r.params})
    if not counts or counts == [1]:
        return ""
    least = results[0].params.get("min_rep_seconds", 0)
    many = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
    return (f", making {many} passes over the arrays (as many as last at least "
            f"{1e3 * least:g} ms; the bytes counted per pass)")


def write_allocate_lines(results) -> list[str]:
    """One line per store kind in the table: whether its stores write-allocate, and why
    (older records without the field say nothing)."""
    seen: dict[str, str] = {}
    for r in results:
        p = r.params
        if p.get("stores") in ("ordinary", "streaming") and "write_allocate" in p:
            seen.setdefault(p["stores"], f"write-allocate, {p['stores']} stores: "
                            f"{p['write_allocate']} ({p.get('write_allocate_reason', '')})")
    return [seen[k] for k in sorted(seen)]
