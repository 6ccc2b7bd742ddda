"""`numascope compress`: does compressed, chunked processing beat the memory wall on my data?"""

from __future__ import annotations

import argparse
from typing import Any

NAME = "compress"
HELP = ("compression vs the memory wall: plain sum vs Blosc2 decompress+sum per thread "
        "count, on synthetic data or your own file")
ORDER = 70
FLAGS = {"plot": "GB/s vs threads plot(s)"}   # beside the TABLE of options.py
UNITS_NOTE = "GB = 10^9 bytes of uncompressed data"


def main(args: argparse.Namespace) -> int:
    from numascope.command.flags import cpus_arg
    from numascope.command.output import check_output
    from numascope.command.runner import PLOT_SUFFIXES, finish, measure, save_plot
    from numascope.errors import UserError
    from numascope.families.compress import bench as cz
    from numascope.families.compress.options import DEFAULT_SET, TABLE
    from numascope.memspec import MemorySpec
    from numascope.options import check
    from numascope.profile import profile
    from numascope.topology import read_topology

    plot = check_output(args.plot, "--plot", PLOT_SUFFIXES)      # before anything is measured
    v = check(TABLE, vars(args))                                  # the options' rules, once
    prof = profile(v["profile"])
    where = cpus_arg(argparse.Namespace(**v))
    if v["data"] and v["synthetic"]:
        raise UserError("give either --data or --synthetic, not both")
    topo = read_topology("/")
    if v["data"]:
        spec = cz.DataSpec("file", path=v["data"], fmt=v["format"], dtype=v["dtype"],
                           column=v["column"], variable=v["variable"], size=v["size"])
        spec.build()    # a file that cannot be read, sized or validated fails here, once
        specs = [spec]
    else:
        size = v["size"] or cz.default_size(topo, prof)
        specs = [cz.DataSpec(n, dtype=v["dtype"], size=size)
                 for n in v["synthetic"] or [DEFAULT_SET]]
    quick = not prof.dense and not (v["codecs"] or v["clevels"] or v["filters"])
    memory = MemorySpec.from_flags(topo, membind=v["membind"], interleave=v["interleave"],
                                   pages=v["pages"])
    common: dict[str, Any] = {"threads": v["threads"], "where": where, "policy": v["policy"],
                              "chunk_bytes": v["chunk"], "reps": v["reps"],
                              "block_bytes": v["block"], "read": v["read"], "memory": memory}
    bench = cz.Compress()
    if quick:
        cases = []
        for spec in specs:  # data-set-major, so each data set is built once
            for codec, lv, filt in cz.QUICK_COMBOS:
                cases += bench.cases(topo, spec, [codec], [lv], [filt], **common)
    else:
        cases = bench.cases(topo, specs, v["codecs"] or cz.CODECS, v["clevels"] or cz.CLEVELS,
                            v["filters"] or cz.FILTERS, **common)
    outcome = measure(bench, topo, cases, label=NAME, quiet=args.json, args=args)
    save_plot(plot, "compress.figures", outcome)
    summaries = cz.summarize(outcome.results)
    return finish(args, NAME, outcome, render=_render, extra={
        "summary": [s.to_dict() for s in summaries], "units": UNITS_NOTE})


def _render(results, console) -> None:
    from numascope.command.runner import steady_lines
    from numascope.families.compress.bench import combo_label, summarize
    from numascope.steady import unsteady
    # --reps auto: the cells whose figure did not converge (data set, setting, threads)
    shaky = {(r.params["dataset"], combo_label(r.params["codec"], r.params["clevel"],
                                               r.params["filter"]), r.params["threads"])
             for r in results if unsteady(r.params)}
    for s in summarize(results):
        _print(s, console, shaky)
    steady_lines(results, console)


# -- the table: thread columns spill into further tables rather than past the width ---------

def _threads(n: int) -> str:
    return f"{n} thread{'' if n == 1 else 's'}"


def _width(widths: list[int]) -> int:
    """A rich table's width with the default box: padding 1 each side and one rule a column."""
    return sum(widths) + 3 * len(widths) + 1


def _pack(fixed: list[int], rest: list[int], limit: int) -> int:
    """How many of the `rest` columns fit beside the `fixed` ones (at least one)."""
    n = 0
    while n < len(rest) and _width(fixed + rest[:n + 1]) <= limit:
        n += 1
    return max(1, n)


def _median_best(median: float, best: float | None) -> str:
    """"median/best" GB/s; the median alone for a summary without the best (older JSON)."""
    return f"{median:.2f}" if best is None else f"{median:.2f}/{best:.2f}"


def _print(s, console, shaky: set[tuple[str, str, int]] = frozenset()) -> None:
    from rich.markup import escape
    from rich.table import Table

    from numascope.families.compress.datasets import format_bytes
    head = (f"{s.dataset}: {format_bytes(s.nbytes)} of {s.dtype}, chunks of "
            f"{format_bytes(s.chunk_bytes)}, {s.source}")
    _say(console)(head, head=len(s.dataset), style="bold", indent=0)
    top = max(s.threads)
    rows = sorted(s.rows, key=lambda r: -r.gbs.get(top, 0.0))
    label_head, ratio_head, comp_head = "codec-clevel-filter", "ratio", "compress GB/s"
    labels = ["plain sum"] + [r.label for r in rows]
    ratios = ["1.0"] + [f"{r.ratio:.2f}" for r in rows]
    comps = ["-"] + [f"{r.compress_gbs:.2f}" for r in rows]
    cells: dict[int, list[str]] = {}
    for th in s.threads:
        col = [_median_best(s.plain[th], s.plain_best.get(th))]
        for r in rows:
            if th in r.gbs:
                mark = "[green]" if r.speedup[th] > 1 else ""
                star = "*" if (s.dataset, r.label, th) in shaky else ""
                col.append(f"{_median_best(r.gbs[th], r.gbs_best.get(th))}{star} "
                           f"({mark}{r.speedup[th]:.2f}x{'[/green]' if mark else ''})")
            else:
                col.append("-")
        cells[th] = col

    def w(head: str, col: list[str]) -> int:
        from rich.text import Text
        return max(len(head), *(Text.from_markup(c).cell_len for c in col))

    wl, wr, wc = w(label_head, labels), w(ratio_head, ratios), w(comp_head, comps)
    wt = [w(_threads(th), cells[th]) for th in s.threads]
    limit = max(60, console.width)
    todo = list(range(len(s.threads)))
    first = True
    while todo:
        fixed = [wl, wr, wc] if first else [wl]
        n = _pack(fixed, [wt[i] for i in todo], limit)
        part, todo = todo[:n], todo[n:]
        t = Table(show_header=True, header_style="bold")
        t.add_column(label_head, no_wrap=True, min_width=wl)
        if first:
            t.add_column(ratio_head, justify="right", no_wrap=True)
            t.add_column(comp_head, justify="right", no_wrap=True)
        for i in part:
            t.add_column(_threads(s.threads[i]), justify="right", no_wrap=True)
        for k, lab in enumerate(labels):
            head = [escape(lab)] + ([ratios[k], comps[k]] if first else [])
            t.add_row(*head, *[cells[s.threads[i]][k] for i in part],
                      style="bold" if k == 0 else None)
        console.print(t)
        first = False
    say = _say(console)
    say("thread columns: decompress+sum GB/s, median/best of the repetitions (median "
        "paired speed-up over the plain sum)")
    for th in s.threads:
        if th in s.best:
            name, gbs, sp = s.best[th]
            say(f"best at {_threads(th)}: {name} {gbs:.2f} GB/s = {sp:.2f}x plain")
    if s.crossover:
        say(f"crossover: compressed beats plain from {_threads(s.crossover)}", style="green")
    else:
        say(f"no crossover: compressed does not beat plain up to {_threads(top)} here")
    for n in s.notes:
        say(f"note: {n}", head=5, style="yellow")
    say(f"{UNITS_NOTE}; medians of paired repetitions, timed in C; sums validated against a "
        "Kahan reference")


def _say(console):
    """Print a line indented (by two), wrapped at the console's width with a hanging indent
    (nothing from the data or the machine is read as markup); `head` characters styled."""
    import textwrap

    from rich.text import Text

    def say(text: str, head: int = 0, style: str | None = None, indent: int = 2) -> None:
        lines = textwrap.wrap(text, width=max(40, console.width) - 1,
                              initial_indent=" " * indent, subsequent_indent=" " * (indent + 2),
                              break_on_hyphens=False)
        t = Text("\n".join(lines))
        if style:
            t.stylize(style, indent, indent + head if head else len(t))
        console.print(t, soft_wrap=True)
    return say
