"""The bandwidth family's options, declared once: `numascope bw`'s flags (its --tier-sweep
mode's included), BandwidthParams' defaults and docs/bw.md's option table all come from
TABLE.

The kernels and ISAs are the C core's (bw.c's kernel table, read by kernels.py): the rules
ask for them when they run, so that reading this table (every command line does) does not
load the core."""

from __future__ import annotations

from typing import Any

from numascope.errors import UserError
from numascope.families.bandwidth.sizes import LLC_FACTOR
from numascope.options import Option, Table, placement, thread_counts
from numascope.placement import POLICIES
from numascope.steady import reps_option

NT_CHOICES = ("auto", "both", "on", "off")
MIN_ARRAY_BYTES = 64 * 8       # the C core needs 64 elements per array
TIER_MIN_ARRAY_BYTES = 256 << 20   # tier sweep: >= 128 granules of 2 MiB, the ratio holds
DEFAULT_RATIOS = ("1:0", "3:1", "1:1", "1:3", "0:1")
SYSTEM = "sys"                 # the kernel's weighted interleave with its own weights


def check_kernels(value: str | list[str], flag: str = "--kernel") -> list[str]:
    """The kernel names of "read,copy" (or a list of names); "all": every kernel of the C
    core's table. UserError for an empty list or a name the table lacks."""
    from numascope.families.bandwidth.kernels import KERNELS
    names = [k.strip() for k in value.split(",") if k.strip()] if isinstance(value, str) \
        else list(value)
    if not names:
        raise UserError(f"{flag} needs at least one kernel")
    if "all" in names:
        return list(KERNELS)
    for k in names:
        if k not in KERNELS:
            raise UserError(f"unknown kernel {k!r} (choose from {', '.join(KERNELS)}, all)")
    return names


def check_isa(isa: str, flag: str = "--isa") -> str:
    """"auto", or an ISA of the C core's table that this CPU runs."""
    from numascope import _core
    from numascope.families.bandwidth.kernels import ISAS
    if isa == "auto":
        return isa
    if isa not in ISAS:
        raise UserError(f"unknown ISA {isa!r} (choose from auto, {', '.join(ISAS)})")
    avail = _core.isa()
    if isa not in avail:
        raise UserError(f"this CPU cannot run {isa} kernels (it has {', '.join(avail)})")
    return isa


def check_array_size(nbytes: int, flag: str = "--size") -> None:
    if nbytes < MIN_ARRAY_BYTES:
        raise UserError(f"array size {nbytes} B is too small (at least {MIN_ARRAY_BYTES} B)")


def check_threads(value: Any, flag: str = "--threads") -> int:
    """One thread count, at least 1 (the shared reader's messages)."""
    return thread_counts(value, flag)


def check_ratios(value: str | list[str], flag: str = "--ratios") -> list[str]:
    """"1:0,3:1,sys" → ["1:0", "3:1", "sys"] (each a:b in lowest terms, not 0:0; repeats
    dropped)."""
    items = [t.strip() for t in (value.split(",") if isinstance(value, str) else value)
             if t.strip()]
    if not items:
        raise UserError(f"{flag} needs at least one ratio such as 3:1")
    out = []
    for t in items:
        if t.lower() == SYSTEM:
            out.append(SYSTEM)
            continue
        a, sep, b = t.partition(":")
        if not sep or not a.strip().isdigit() or not b.strip().isdigit() or \
                int(a) + int(b) == 0:
            raise UserError(f"bad ratio {t!r}: expected DRAM:TIER page counts such as 3:1, "
                            f"or '{SYSTEM}' for the kernel's weights")
        out.append(f"{int(a)}:{int(b)}")
    return list(dict.fromkeys(out))


TABLE = Table("bandwidth", (
    Option("--kernel", "kernel(s), comma separated, e.g. read,copy (a name it does not know "
           "lists the kernels)", default="triad", metavar="LIST",
           rule=check_kernels, rule_text="names from the C core's kernel table, or all"),
    *placement("cpus", "cpunodebind", "membind", "interleave", "weighted_interleave",
               "pages", "threads",
               cpus={"default_text": "every usable CPU"},
               pages={"hidden": ("--huge",)},
               threads={"rule": check_threads, "low": 1,
                        "default_text": "every CPU the policy gives; with --scaling the "
                                        "largest count swept"}),
    Option("--policy", "order in which CPUs are taken", kind="choice", choices=POLICIES,
           default="compact"),
    Option("--size", "bytes per array, e.g. 512M, 2G, 1GiB, 3GB", kind="size",
           metavar="BYTES", rule=check_array_size, rule_text=f"at least {MIN_ARRAY_BYTES} B",
           default_text=f"{LLC_FACTOR}x the LLC of the CPUs used; --tier-sweep: at least "
                        f"{TIER_MIN_ARRAY_BYTES >> 20} MiB"),
    reps_option(default=10, high=1000),
    Option("--isa", "kernel instruction set: scalar, avx2, avx512, or auto (time the vector "
           "ISAs this CPU has and report the fastest)", default="auto", metavar="ISA",
           rule=check_isa, rule_text="one this CPU runs"),
    Option("--nt", "streaming stores: auto takes ordinary stores where all arrays fit in the "
           "caches of the CPUs used and streaming ones beyond (both timed where cache sizes "
           "are unknown); both times both and reports the faster",
           kind="choice", choices=NT_CHOICES, default="auto"),
    Option("--scaling", "sweep 1..all threads under every placement policy", kind="switch"),
    Option("--per-domain", "each package, each node, each L3 alone", kind="switch"),
    # --tier-sweep takes its nodes or nothing ("auto": the CPUs' node and its nearest tier)
    Option("--tier-sweep", "bandwidth over interleave ratios between a DRAM node and a "
           "memory tier (given alone: the CPUs' node and its nearest CPU-less node)",
           metavar="DRAM,TIER", default_text="off", const="auto"),
    # --sweep: bandwidth by working set (sweep.py, sweep_command.py)
    Option("--sweep", "bandwidth by working set, from a few KiB to past the last-level "
           "cache, with the plateaus (L1, L2, L3, DRAM) checked against the cache sizes; "
           "kernels read,fill,copy,triad unless --kernel is given, 1 thread unless "
           "--threads is", kind="switch"),
    Option("--min", "sweep: smallest working set (all arrays of all threads)", kind="size",
           metavar="BYTES", default_text="4 KiB per thread", only_with="sweep"),
    Option("--max", "sweep: largest working set (all arrays of all threads)", kind="size",
           metavar="BYTES", only_with="sweep",
           default_text=f"arrays of {LLC_FACTOR}x the largest cache of the CPUs used"),
    Option("--per-octave", "sweep: working sets per doubling", kind="int", default=4, low=1,
           high=64, metavar="N", only_with="sweep"),
    Option("--ratios", f"DRAM:TIER page ratios of --tier-sweep ('{SYSTEM}' adds the kernel's "
           "weighted interleave); given alone, it runs the sweep", metavar="LIST",
           rule=check_ratios, default_text=",".join(DEFAULT_RATIOS)),
))

# what the bandwidth stage of `numascope run` takes (keyword arguments of Bandwidth)
RUN_OPTIONS = (
    Option("--bw-sweep", "bandwidth stage: also bandwidth by working set and its plateaus "
           "(bw --sweep: triad on 1 thread; the four kernels with --full)", kind="switch"),
)
