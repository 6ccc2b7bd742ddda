"""The storage family's options, declared once: `numascope io`'s flags, IoParams' defaults
and checks, and docs/io.md's option table all come from TABLE."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from numascope.errors import UserError
from numascope.options import Option, Table, placement
from numascope.units import format_bytes

RW = ("randread", "randwrite", "randrw", "read")
SECTOR = 512                  # a block is whole sectors
BS_RANDOM = 4 << 10           # the block size when --bs is not given: random I/O
BS_SEQUENTIAL = 128 << 10     # and sequential read (--rw read)
MAX_BS = 64 << 20             # fio's largest sensible block
MAX_IODEPTH = 65536
MAX_NUMJOBS = 4096
MAX_REPS = 1000               # fio runs per case
RWMIX = 70                    # --rwmixread when --rw randrw is given without it
JOB = "the fio job"           # the --help group of the job's options


def _counts(high: int, one: str, many: str) -> Callable[[Any, str], list[int]]:
    """The rule of a count that a list sweeps (--iodepth 1,32; --threads 1,4): the counts,
    each from 1 to `high`."""
    def rule(value: Any, flag: str) -> list[int]:
        if isinstance(value, int):
            counts = [value]
        elif isinstance(value, str):
            try:
                counts = [int(x.strip()) for x in value.split(",")]
            except ValueError:
                raise UserError(f"{flag} {value!r}: expected a count such as {one} or a list "
                                f"such as {many}") from None
        else:
            counts = [int(x) for x in value]
        for n in counts:
            if n < 1:
                raise UserError(f"{flag} must be at least 1 (got {flag} {value})")
            if n > high:
                raise UserError(f"{flag} {n}: between 1 and {high}")
        return counts
    return rule


def _bs(bs: int, flag: str) -> None:
    if bs < SECTOR or bs % SECTOR:
        raise UserError(f"{flag} {bs}: a block size is a multiple of {SECTOR} bytes (e.g. 4k)")
    if bs > MAX_BS:
        raise UserError(f"{flag} {format_bytes(bs)}: at most {format_bytes(MAX_BS)}")


def _seconds(low: float, high: float) -> Callable[[float, str], None]:
    def rule(s: float, flag: str) -> None:
        if not math.isfinite(s):
            raise UserError(f"{flag} {s}: a number of seconds")
        if not low <= s <= high:
            raise UserError(f"{flag} {s:g}: between {low:g} and {high:g} seconds")
    return rule


def _percent(pct: int, flag: str) -> None:
    if not 0 <= pct <= 100:
        raise UserError(f"{flag} {pct}: a percentage, 0 to 100")


# --dir may be given once per drive (argparse's "append"), which numascope.options has no
# kind for yet: the command adds these flags itself, from their rows here

TABLE = Table("storage", (
    Option("--dir", "a directory on the drive to measure: numascope creates a file in it "
           "and removes it; one for each drive", metavar="DIR", dest="dirs", repeat=True,
           default_text="none: give --dir or --device"),
    Option("--device", "read a raw block device instead (needs --readonly; never written, "
           "refused while it or a partition is mounted)", metavar="/dev/X"),
    Option("--readonly", "acknowledge that --device is only read", kind="switch"),
    Option("--remove-leftovers", "remove the files a stopped or killed numascope io left in "
           "--dir (numascope-io-* files of a process that no longer runs; without this flag "
           "they are named, not removed)", kind="switch"),
    Option("--rw", "workload (read is sequential)", kind="choice", choices=RW,
           default="randread", group=JOB),
    Option("--bs", "block size", kind="size", metavar="SIZE", group=JOB, rule=_bs,
           rule_text=f"a multiple of {SECTOR} B, at most {format_bytes(MAX_BS)}",
           default_text=f"{format_bytes(BS_RANDOM)}; {format_bytes(BS_SEQUENTIAL)} for --rw read"),
    Option("--iodepth", "queue depth per job; a list such as 1,32 sweeps it", default=32,
           metavar="LIST", group=JOB, rule=_counts(MAX_IODEPTH, "32", "1,32"),
           rule_text=f"each 1 to {MAX_IODEPTH}"),
    Option("--runtime", "seconds measured per run", kind="float", default=5.0, unit="s",
           metavar="S", group=JOB, rule=_seconds(0.5, 86400), rule_text="0.5 to 86400"),
    Option("--ramp", "seconds run before measuring", kind="float", default=1.0, unit="s",
           metavar="S", group=JOB, rule=_seconds(0, 3600), rule_text="0 to 3600"),
    Option("--size", "file size per --dir, or the region of --device read", kind="size",
           default=1 << 30, metavar="SIZE", group=JOB, rule_text="whole blocks of --bs"),
    Option("--rwmixread", "--rw randrw: percent reads (an error with any other --rw)",
           kind="int", unit="percent", metavar="PCT", group=JOB, rule=_percent,
           rule_text="0 to 100", default_text=f"{RWMIX} percent"),
    Option("--reps", "fio runs per case", kind="int", default=1, low=1, high=MAX_REPS,
           metavar="N", group=JOB),
    Option("--placement", "per target: jobs and buffers on its node, each other node, "
           "unpinned", kind="switch", exclusive="study"),
    Option("--scaling", "1..N --dir at once, each local to its drive: IOPS per drive, knee",
           kind="switch", exclusive="study"),
    *placement("cpus", "cpunodebind", "membind", "interleave", "threads",
               cpus={"help": "run fio's jobs on these CPUs",
                     "default_text": "each target's jobs on its drive's node"},
               membind={"help": "bind fio's buffers to these NUMA nodes",
                        "default_text": "the drive's node"},
               threads={"help": "fio jobs per target (fio's numjobs); a list such as 1,4 "
                                "sweeps it", "default": 1, "default_text": "",
                        "hidden": ("--numjobs",), "metavar": "N",
                        "rule": _counts(MAX_NUMJOBS, "4", "1,2,4"),
                        "rule_text": f"each 1 to {MAX_NUMJOBS}"}),
))


def _io_dirs(paths: Any, flag: str) -> list[str]:
    """--io-dir, once per drive: each a directory numascope may write a file in (checked as
    `numascope io --dir`'s), none named twice; a warning when two are on one device (the
    drive-count sweep then measures one drive shared, not several)."""
    import os

    from numascope.console import warn
    from numascope.families.storage.targets import check_dir, same_device
    dirs = [paths] if isinstance(paths, str) else list(paths)
    for d in dirs:
        check_dir(d, flag)
    real = [os.path.realpath(d) for d in dirs]
    twice = next((d for d, r in zip(dirs, real) if real.count(r) > 1), None)
    if twice is not None:
        raise UserError(f"{flag} {twice} is named twice")
    for group in same_device(dirs):
        warn(f"{flag} {' and '.join(group)} are on the same device: the drive-count sweep "
             f"measures one drive shared by {len(group)} jobs, not {len(group)} drives")
    return dirs


# what the storage stage of `numascope run` takes (keyword arguments of Storage)
RUN_OPTIONS = (
    Option("--io-dir", "run the storage stage with fio on a file numascope creates (and "
           "removes) in DIR; one per drive: with several, each drive alone and the "
           "drive-count sweep (io --scaling); without it the storage stage is skipped",
           metavar="DIR", rule=_io_dirs, repeat=True),
)
