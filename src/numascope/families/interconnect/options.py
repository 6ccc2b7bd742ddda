"""The interconnect family's options, declared once: `numascope net`'s flags, NetParams'
defaults and checks, the profiles' presets and docs/net.md's option table all come from
TABLE (and the constants beside it)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from numascope.errors import UserError
from numascope.options import Option, Table, placement
from numascope.units import format_bytes, parse_size

KIB, MIB = 1 << 10, 1 << 20
MAX_SIZE = 64 * MIB                  # the program's own limit (pt2pt.c: 1 << 26)
MAX_SIZES = 60                       # the program holds 64 (pt2pt.c: MAXSIZES)
MAX_ITERS = 1_000_000                # ping-pongs or windows per size: 100 x OSU's
MAX_PAIRS = 256
MAX_REPS = 100                       # launches per test
MAX_TIMEOUT = 86400.0                # seconds per launch: a day
NO_PAIRS = 0                         # NetParams.pairs when --pairs is left out
TESTS = ("lat", "bw", "bibw")        # --pairs N adds mbw
BUFFERS = {"same": "one send and one receive buffer per rank (OSU's method)",
           "distinct": "a buffer per window slot (fresh data every message)"}
PAGE_TEXT = {"system": "no madvise, the host's THP setting (as stock OSU)",
             "none": "base pages (MADV_NOHUGEPAGE)", "thp": "THP madvised (MADV_HUGEPAGE)"}
ENGINES = ("auto", "numascope", "osu")
PAGES = ("system", "none", "thp")    # the shared table's less hugetlb, plus the host's own
PATH_FLAGS = {"same-l3": "same L3", "same-node": "same node", "other-node": "other node",
              "other-socket": "other socket"}

# the presets of --sizes and --iters (ping-pongs, windows), by profile: full is OSU's
# counts (osu_util.h), quick a tenth / a fifth of them; smoke checks the launch and the
# placement, not the figures
FULL_SIZES = tuple(1 << i for i in range(23))                       # 1 B … 4 MiB
QUICK_SIZES = (1, 8, 64, 512, 4 * KIB, 32 * KIB, 256 * KIB, 1 * MIB)
SMOKE_SIZES = (1, 64, 4096, 65536)                                  # to 64 KiB
FULL_ITERS = (10000, 100)
QUICK_ITERS = (1000, 20)
SMOKE_ITERS = (100, 4)


# -- the rules (each called with the converted value and the flag the user typed) ----------

def message_sizes(value: str | Sequence[int], flag: str = "--sizes") -> tuple[int, ...]:
    """The message sizes `value` names: 1,8,4K,1M (sorted, once each), MIN:MAX (the powers
    of two between), or sizes already in bytes; each from 1 B to 64 MiB, at most 60."""
    if isinstance(value, str):
        sizes = _size_list(value, flag)
    else:
        sizes = tuple(value)
    if not sizes:
        raise UserError(f"{flag}: at least one message size")
    bad = [s for s in sizes if not isinstance(s, int) or s < 1 or s > MAX_SIZE]
    if bad:
        b = size_text(bad[0]) if isinstance(bad[0], int) and bad[0] > 0 else bad[0]
        raise UserError(f"{flag}: {b} is not a message size from 1 B to "
                        f"{format_bytes(MAX_SIZE)}")
    if len(sizes) > MAX_SIZES:
        raise UserError(f"{flag}: at most {MAX_SIZES} sizes")
    return sizes


def _size_list(text: str, flag: str) -> tuple[int, ...]:
    if ":" in text:
        lo_t, _, hi_t = text.partition(":")
        lo, hi = parse_size(lo_t or "1"), parse_size(hi_t)
        if lo > hi:
            raise UserError(f"{flag} {text}: the first size is larger than the second")
        out, s = [], 1
        while s <= hi:
            if s >= lo:
                out.append(s)
            s *= 2
        if not out:
            raise UserError(f"{flag} {text}: no power of two between them")
        return tuple(out)
    parts = [x.strip() for x in text.split(",")]
    if not all(parts):
        raise UserError(f"{flag} {text!r}: an empty entry")
    return tuple(sorted({parse_size(x) for x in parts}))


def size_text(b: int) -> str:
    """1 KiB, 4 MiB, 8 B: a message size in its whole unit."""
    for unit, n in (("MiB", MIB), ("KiB", KIB)):
        if b >= n and b % n == 0:
            return f"{b // n} {unit}"
    return f"{b} B"


def _tests(value: str | Sequence[str], flag: str) -> tuple[str, ...]:
    parts = value.split(",") if isinstance(value, str) else value
    tests = tuple(dict.fromkeys(x.strip() for x in parts))
    if not tests or any(t not in TESTS for t in tests):
        raise UserError(f"{flag} {','.join(tests)}: choose from {', '.join(TESTS)} "
                        "(--pairs N adds the multi-pair test)")
    return tests


def _iters(value: Sequence[int], flag: str) -> tuple[int, int]:
    """(ping-pongs, windows) from N[,M]."""
    if not 1 <= len(value) <= 2 or min(value) < 1:
        raise UserError(f"{flag} {','.join(map(str, value))}: one or two counts of at least 1")
    if max(value) > MAX_ITERS:
        raise UserError(f"{flag} {','.join(map(str, value))}: at most {MAX_ITERS:,} per size "
                        "(each launch must end within --timeout)")
    return value[0], value[-1]


def _from_to(lo: int, hi: int, none: int | None = None):
    def rule(v: int, flag: str) -> None:
        if v != none and not lo <= v <= hi:
            raise UserError(f"{flag} must be from {lo} to {hi}"
                            + (f", or {none} for none" if none is not None else "")
                            + f" (got {v})")
    return rule


def _pairs(v: int, flag: str) -> None:
    if not 1 <= v <= MAX_PAIRS:
        raise UserError(f"{flag} must be from 1 to {MAX_PAIRS} (got {v}); leave it out for no "
                        "multi-pair test")


def _seconds(v: float, flag: str) -> None:
    if not math.isfinite(v):
        raise UserError(f"{flag} {v}: a number of seconds")
    if v <= 0:
        raise UserError(f"{flag} must be a positive number of seconds (got {v})")
    if v > MAX_TIMEOUT:
        raise UserError(f"{flag} {v:g}: at most {MAX_TIMEOUT:.0f} seconds (a day)")


def _two(text: str, flag: str) -> tuple[str, str]:
    parts = [x.strip() for x in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise UserError(f"{flag} {text!r}: give two, A,B")
    return parts[0], parts[1]


def _cpu_pair(text: str, flag: str) -> tuple[int, int]:
    """Rank 0's CPU and rank 1's: two CPU numbers (whether they exist: when the topology is
    read)."""
    out = []
    for x in _two(text, flag):
        try:
            out.append(int(x))
        except ValueError:
            raise UserError(f"{flag} {text!r}: expected numbers such as 0,4") from None
    if min(out) < 0:
        raise UserError(f"{flag} {text!r}: numbers are not negative")
    return out[0], out[1]


def _once(nodes: list[int], flag: str) -> list[int]:
    return list(dict.fromkeys(nodes))


def one_of(name: str, value: Any) -> None:
    """UserError unless `value` is one of option `name`'s choices (NetParams built in code;
    on the command line argparse checks them)."""
    o = TABLE[name]
    if value not in o.choices:
        c = o.choices
        raise UserError(f"{o.flag} {value!r}: {', '.join(c[:-1])} or {c[-1]}")


MEASURED, WHERE, LAUNCHING = "what is measured", "where the ranks run", "launching"

TABLE = Table("interconnect", (
    Option("--sizes", "message sizes, e.g. 1,8,4K,1M, or MIN:MAX for the powers of two "
           "between", metavar="LIST", unit="B", rule=message_sizes,
           rule_text=f"each 1 B … {format_bytes(MAX_SIZE)}, at most {MAX_SIZES}",
           default_text=f"{format_bytes(FULL_SIZES[0])} … {format_bytes(FULL_SIZES[-1])}, "
                        f"powers of two; --quick: {len(QUICK_SIZES)} sizes to "
                        f"{format_bytes(QUICK_SIZES[-1])}", group=MEASURED),
    Option("--tests", "the tests: lat (ping-pong), bw (window of sends), bibw (both ways)",
           default=",".join(TESTS), metavar="LIST", rule=_tests, rule_text="comma-separated",
           group=MEASURED),
    Option("--pairs", "add the multi-pair test: N pairs at once, bandwidth and message rate",
           kind="int", metavar="N", rule=_pairs, rule_text=f"1 … {MAX_PAIRS}",
           default_text="none: no multi-pair test", group=MEASURED),
    Option("--iters", "timed iterations per size: N ping-pongs, M windows (N for both when "
           "M is left out; above 8 KiB a tenth / a fifth; warm-up in OSU's ratios)",
           kind="ints", metavar="N[,M]", rule=_iters,
           rule_text=f"each 1 … {MAX_ITERS:,}",
           default_text=f"OSU's {FULL_ITERS[0]},{FULL_ITERS[1]}; --quick "
                        f"{QUICK_ITERS[0]},{QUICK_ITERS[1]}", group=MEASURED),
    Option("--window", "sends in flight per window", kind="int", default=64, metavar="N",
           unit="messages", rule=_from_to(1, 1024), rule_text="1 … 1024", group=MEASURED),
    Option("--reps", "launches per test", kind="int", default=1, low=1, high=MAX_REPS,
           metavar="N", group=MEASURED),
    Option("--quick", "fewer sizes and iterations", kind="switch", group=MEASURED),
    Option("--buffers", "same: one send and one receive buffer per rank, reused by every "
           "message of a window (OSU's method); distinct: a buffer per window slot (an "
           "application streaming fresh data)", kind="choice", choices=tuple(BUFFERS),
           default="same", group=MEASURED),
    *placement("pages", pages={"help": "page kind of the ranks' buffers: system (no madvise: "
                                       "the host's THP setting, what stock OSU gets), none "
                                       "(base pages, MADV_NOHUGEPAGE), thp (MADV_HUGEPAGE; "
                                       "named in the case)",
                               "choices": PAGES, "default": "system", "group": MEASURED}),
    Option("--path", "only this intra-node path", kind="choice", repeat=True,
           choices=tuple(sorted(PATH_FLAGS)), default_text="every one present", group=WHERE),
    *placement("cpus", cpus={"help": "rank 0 on CPU A, rank 1 on CPU B (buffers on each "
                                     "CPU's node)", "metavar": "A,B", "rule": _cpu_pair,
                             "meaning": "numactl --physcpubind, one CPU per rank",
                             "default_text": "each path's CPUs", "group": WHERE}),
    Option("--hosts", "two hosts: rank 0 on A, rank 1 on B, through every node pair",
           metavar="A,B", rule=_two, group=WHERE),
    Option("--peer-nodes", "--hosts: host B's nodes", kind="ints", low=0, metavar="LIST",
           rule=_once, default_text="the same as this host's", group=WHERE),
    Option("--engine", "auto: the OSU micro-benchmarks when on PATH, else numascope's "
           "program (built with mpicc at first use)", kind="choice", choices=ENGINES,
           default="auto", group=LAUNCHING),
    Option("--timeout", "seconds per mpirun launch before every rank is killed",
           kind="float", default=300.0, unit="s", metavar="S", rule=_seconds,
           rule_text=f"more than 0, at most {MAX_TIMEOUT:.0f}", group=LAUNCHING),
))
