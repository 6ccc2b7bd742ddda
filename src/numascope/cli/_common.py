"""Options and output shared by every command: one spelling of each placement flag (in
numactl's words), one JSON envelope, one check of output paths made before measuring."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

ENVELOPE_VERSION = 1     # the shape of --json output below (docs/json-output.md)
PAGE_KINDS = ("none", "thp", "hugetlb")


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


# -- placement, in numactl's words ---------------------------------------------------------

def add_placement(p: argparse.ArgumentParser, *, cpus: str | None = "run on these CPUs",
                  cpunodebind: bool = True, membind: bool = True, interleave: bool = True,
                  weighted: bool = False, pages: str | None = "thp",
                  threads: str | None = "number of threads",
                  threads_metavar: str = "N") -> None:
    """The placement flags a command supports, spelled the same everywhere:
    --cpus LIST (0-3,8-11 | S0 | N1 | L3:5 | all), --cpunodebind NODES, --membind NODES,
    --interleave NODES, [--weighted-interleave SPEC], --pages none|thp|hugetlb, --threads.
    Pass None/False to leave a flag out; strings are the command's own help text."""
    g = p.add_argument_group("placement (numactl's words)")
    if cpus:
        g.add_argument("--cpus", default=None, metavar="LIST",
                       help=f"{cpus}: 0-3,8-11, S0 (package), N1 (node), L3:5, all")
    if cpunodebind:
        g.add_argument("--cpunodebind", default=None, metavar="NODES",
                       help="run on the CPUs of these NUMA nodes (same as --cpus N0,N1)")
    # argparse (3.11) cannot print --help with an empty exclusive group
    mem = g.add_mutually_exclusive_group() if membind or interleave or weighted else g
    if membind:
        mem.add_argument("--membind", default=None, metavar="NODES",
                         help="allocate memory on these NUMA nodes only (default: first touch)")
    if interleave:
        mem.add_argument("--interleave", default=None, metavar="NODES",
                         help="interleave memory page by page over these NUMA nodes")
    if weighted:
        mem.add_argument("--weighted-interleave", default=None, metavar="SPEC",
                         help="N0:3,N1:1: pages in this ratio, placed by numascope; 0,1: the "
                              "kernel's weighted interleave with the system weights (Linux >= 6.9)")
    if pages:
        g.add_argument("--pages", default=pages, choices=PAGE_KINDS,
                       help=f"page kind: none (base pages), thp (transparent huge pages), "
                            f"hugetlb (the reserved pool); default {pages}")
    if threads:
        g.add_argument("--threads", default=None, metavar=threads_metavar, help=threads)


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
        pages=getattr(args, "pages", None) or "thp")


def threads_arg(args: argparse.Namespace, *, many: bool = False) -> list[int] | int | None:
    """--threads as one count (or, with `many`, a list such as 1,2,4); None when absent."""
    from numascope.errors import UserError
    v = getattr(args, "threads", None)
    if v is None:
        return None
    parts = [s.strip() for s in str(v).split(",")]
    try:
        counts = [int(s) for s in parts]
    except ValueError:
        raise UserError(f"--threads {v!r}: expected a count such as 4"
                        + (" or a list such as 1,2,4" if many else "")) from None
    if any(c < 1 for c in counts):
        raise UserError(f"--threads must be at least 1 (got {v})")
    if not many:
        if len(counts) != 1:
            raise UserError(f"--threads {v!r}: one count here")
        return counts[0]
    return counts


# -- output paths, checked before anything is measured --------------------------------------

def check_output(path: str | None, flag: str, suffixes: tuple[str, ...] = ()) -> Path | None:
    """`path` if a file can be written there: the suffix is one of `suffixes`, the folder
    exists and is writable, and the path is not a folder. UserError (exit 2) otherwise, so a
    bad --plot/--report/-o never costs a measurement. "-" (standard output) passes."""
    from numascope.errors import UserError
    if path is None or path == "-":
        return None if path is None else Path("-")
    p = Path(path)
    if not str(path).strip():
        raise UserError(f"{flag} is empty: give a file name")
    if p.is_dir():
        raise UserError(f"{flag} {path} is a folder: give a file name")
    if suffixes and p.suffix.lower() not in suffixes:
        raise UserError(f"{flag} {path}: the file must end in {' or '.join(suffixes)}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"{flag} {path}: folder {parent} does not exist")
    if p.exists() and not os.access(p, os.W_OK) or not os.access(parent, os.W_OK | os.X_OK):
        raise UserError(f"{flag} {path}: cannot write there (permission denied)")
    return p


# -- the JSON envelope ----------------------------------------------------------------------

def envelope(command: str, results: list[Any] | None = None,
             errors: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """Every command's --json document: what ran, its results, what went wrong, then the
    command's own extra fields (units, summaries …)."""
    return {"schema_version": ENVELOPE_VERSION, "command": command,
            "results": list(results or []), "errors": list(errors or []), **extra}


def error_entry(e: BaseException, kind: str | None = None) -> dict[str, Any]:
    """One entry of an envelope's errors: kind (bad-input, validation, unavailable,
    interrupted, internal), the one-line message and the exit code it gave."""
    from numascope import signals
    from numascope.errors import MeasurementError, Unavailable, UserError
    if kind is None:
        kind = ("bad-input" if isinstance(e, UserError) else
                "validation" if isinstance(e, MeasurementError) else
                "unavailable" if isinstance(e, Unavailable) else
                "interrupted" if isinstance(e, KeyboardInterrupt) else "internal")
    code = (signals.exit_code(e) if isinstance(e, KeyboardInterrupt)
            else getattr(e, "exit_code", 1))
    msg = (f"interrupted ({signals.name(signals.signum_of(e))})"
           if isinstance(e, KeyboardInterrupt) else (str(e).splitlines() or [""])[0])
    return {"kind": kind, "message": msg, "exit_code": code}


def emit(command: str, results: list[Any] | None = None,
         errors: list[dict[str, Any]] | None = None, **extra: Any) -> None:
    from numascope.console import print_json
    print_json(envelope(command, results, errors, **extra))


def report_interrupted(e: BaseException, finished: int, what: str = "case") -> int:
    """Say that a stop signal ended the command and how much finished (printed above, or
    nothing); the exit status: 128 + the signal (130 Ctrl-C, 143 SIGTERM)."""
    from numascope import signals
    from numascope.console import err
    done = f"{finished} {what}{'s' if finished != 1 else ''} finished (shown above)" \
        if finished else "nothing finished"
    err.print(f"interrupted ({signals.name(signals.signum_of(e))}): {done}", markup=False)
    return signals.exit_code(e)
