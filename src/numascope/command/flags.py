"""The flags every command shares: one spelling of each placement flag (in numactl's words,
from numascope.options.PLACEMENT), the profiles, --json, --sysfs-root; and the readers that
turn them into what a family takes (a CPU list text, a MemorySpec, thread counts)."""

from __future__ import annotations

import argparse
from typing import Any

from numascope.options import (  # noqa: F401 - PAGE_KINDS re-exported
    DEFAULT_PAGES,
    PAGE_KINDS,
    WHERE,
    Option,
    thread_counts,
)


def add_sysfs_root(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sysfs-root", default="/", metavar="DIR",
                   help="read the machine from this root (a directory or a .tar.bz2 dump); "
                        "default: this machine")


SMOKE_HELP = ("every stage on small working sets, in seconds: checks that this machine "
              "(or job, or guest) runs them all; its numbers measure caches, not memory")


def add_profile(p: argparse.ArgumentParser, quick: str, full: str) -> None:
    """--quick / --full / --smoke (dest "profile"; none given: None, the quick profile)."""
    prof = p.add_mutually_exclusive_group()
    prof.add_argument("--quick", dest="profile", action="store_const", const="quick",
                      help=quick)
    prof.add_argument("--full", dest="profile", action="store_const", const="full", help=full)
    prof.add_argument("--smoke", dest="profile", action="store_const", const="smoke",
                      help=SMOKE_HELP)


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true",
                   help="print one JSON document (schema_version, command, results, errors)")


def add_store(p: argparse.ArgumentParser) -> None:
    """--store, shared by every command that reads or writes the results store."""
    p.add_argument("--store", metavar="PATH", default=None,
                   help="results store (SQLite); default $NUMASCOPE_STORE, else "
                        "$XDG_DATA_HOME/numascope/runs.db or ~/.local/share/numascope/runs.db")


# -- placement, in numactl's words ---------------------------------------------------------

def add_options(p: argparse.ArgumentParser, options: tuple[Option, ...] | list[Option]) -> None:
    """The argparse flags of `options` (a family's table, placement ones included): argparse
    converts whole numbers and checks choices; bounds and rules are numascope.options.check's,
    run before anything is measured. Placement flags go in their own group; options sharing
    an `exclusive` name exclude each other."""
    groups: dict[str, Any] = {}
    exclusive: dict[str, Any] = {}
    for o in options:
        where: Any = p
        if o.group:
            if o.group not in groups:
                groups[o.group] = p.add_argument_group(
                    "placement (numactl's words)" if o.group == "placement" else o.group)
            where = groups[o.group]
        if o.exclusive:
            if o.exclusive not in exclusive:
                exclusive[o.exclusive] = where.add_mutually_exclusive_group()
            where = exclusive[o.exclusive]
        kw: dict[str, Any] = {"dest": o.name, "help": _help(o)}
        if o.kind == "switch":
            kw.update(action="store_true", default=bool(o.default))
        else:
            kw.update(default=o.default, metavar=o.metavar, action=_Typed)
            if o.repeat:
                kw["action"] = _TypedAppend
            if o.const is not None:
                kw.update(nargs="?", const=o.const)
            if o.kind == "int":
                kw["type"] = int
            elif o.kind == "float":
                kw["type"] = float
            elif o.kind == "choice":
                kw.update(choices=o.choices, metavar=None)
        where.add_argument(o.flag, **kw)
        for old in o.hidden:                  # older spellings: the same dest, not listed
            where.add_argument(old, **{**kw, "help": argparse.SUPPRESS})


def add_family(p: argparse.ArgumentParser, options: Any, *, plot: str | None = None,
               sysfs_root: bool = False) -> None:
    """A family command's flags: its option table, then what every command may have —
    --plot FILE (`plot` says what it draws), --sysfs-root, --plan, --budget, --json."""
    add_options(p, tuple(options))
    if plot:
        p.add_argument("--plot", default=None, metavar="FILE",
                       help=f"save {plot} to FILE (.png or .svg)")
    if sysfs_root:
        add_sysfs_root(p)
    add_plan(p)
    add_json(p)


def add_plan(p: argparse.ArgumentParser) -> None:
    """--plan (the cases and the time each will take, then exit) and --budget DURATION
    (measure, in order, the cases that still fit; docs/plan.md)."""
    p.add_argument("--plan", action="store_true",
                   help="print the cases and the time each will take, then exit")
    p.add_argument("--budget", metavar="DURATION",
                   help="measure the cases, in order, while they fit this time (e.g. 30s, "
                        "2m); the rest are said and left out")


def _remember(ns: argparse.Namespace, dest: str, spelling: str | None) -> None:
    """Which spelling of an option the user typed (`--numjobs` for --threads' dest): the
    checks then name it (numascope.options.check reads `_typed`)."""
    if spelling:
        ns._typed = {**(getattr(ns, "_typed", None) or {}), dest: spelling}


class _Typed(argparse._StoreAction):
    def __call__(self, parser, ns, values, option_string=None):  # type: ignore[override]
        super().__call__(parser, ns, values, option_string)
        _remember(ns, self.dest, option_string)


class _TypedAppend(argparse._AppendAction):
    def __call__(self, parser, ns, values, option_string=None):  # type: ignore[override]
        super().__call__(parser, ns, values, option_string)
        _remember(ns, self.dest, option_string)


def _help(o: Option) -> str:
    text = o.help
    if o.group == "placement" and o.name == "cpus" and "S0" not in text:
        text = f"{text}: {WHERE}"
    if o.rule_text:
        text = f"{text}, {o.rule_text}"
    if (o.kind == "choice" or o.default is not None or o.default_text) \
            and "default" not in text:
        text = f"{text} (default: {o.default_words()})"
    if o.repeat:
        text = f"{text}; may be given several times"
    return text.replace("%", "%%")          # argparse formats help with %


def cpus_arg(args: argparse.Namespace, default: str = "all") -> str:
    """The "where" text of --cpus / --cpunodebind (one of them), checked not empty."""
    from numascope.errors import UserError
    cpus, nodes = getattr(args, "cpus", None), getattr(args, "cpunodebind", None)
    if cpus is not None and nodes is not None:
        raise UserError("give --cpus or --cpunodebind, not both")
    for flag, v in (("--cpus", cpus), ("--cpunodebind", nodes)):
        if v is not None and not v.strip():
            raise UserError(f"{flag} is empty: give e.g. 0-3, S0, N1, L3:5 or all"
                            if flag == "--cpus" else f"{flag} is empty: give nodes such as 0,1")
    if nodes is not None:
        t = nodes.strip()
        return ",".join(p if p[:1] in "Nn" else f"N{p}" for p in t.split(",")) \
            if t.lower() != "all" else "all"
    return cpus if cpus is not None else default


def memory_arg(args: argparse.Namespace, topo: Any):
    """The MemorySpec the flags ask for (first touch when none is given)."""
    from numascope.memspec import MemorySpec
    return MemorySpec.from_flags(
        topo, membind=getattr(args, "membind", None), interleave=getattr(args, "interleave", None),
        weighted=getattr(args, "weighted_interleave", None),
        pages=getattr(args, "pages", None) or DEFAULT_PAGES)


def threads_arg(args: argparse.Namespace, *, many: bool = False) -> list[int] | int | None:
    """--threads as one count (or, with `many`, a list such as 1,2,4); None when absent."""
    v = getattr(args, "threads", None)
    return None if v is None else thread_counts(v, "--threads", many=many)


