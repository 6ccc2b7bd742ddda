"""The compute family's options, declared once: `numascope peak`'s flags, ComputeParams'
defaults and checks, the matrix orders each profile of `numascope run` measures (PRESETS)
and docs/peak.md's option table all come from here.

The machine descriptions (--memory, --links) and HPL's N are checked by the peaks package's
own parsers (numascope.peaks.dram / links / hpcc), imported only when a value is checked."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from numascope.errors import UserError
from numascope.options import Option, Table

MIN_SIZE = 16                 # the smallest matrix order measured


class Orders(NamedTuple):
    """The matrix orders of one profile."""

    dgemm: int                # DGEMM order
    lu: int                   # LU solve order


# profile name -> the orders its compute stage measures; quick: seconds with an optimized
# BLAS, and its DGEMM order is `numascope peak --size`'s default; a profile not named here
# (a test's own) measures quick's
PRESETS = {"quick": Orders(2048, 4096), "full": Orders(4096, 8192), "smoke": Orders(128, 128)}


def orders(profile_name: str) -> Orders:
    """The matrix orders of the profile called `profile_name` (quick's for any other)."""
    return PRESETS.get(profile_name, PRESETS["quick"])


class Description(Option):
    """An option whose rule parses a description of the machine and words every refusal
    itself, an empty one included ("bad --memory ''": the parser's message, not the generic
    "is empty")."""

    def convert(self, text: Any, flag: str | None = None) -> Any:
        if isinstance(text, str) and not text.strip() and self.rule is not None:
            self.rule(text, flag or self.flag)
        return super().convert(text, flag)


def _memory(spec: str, flag: str) -> None:
    from numascope.peaks import dram
    dram.parse_memory_spec(spec)


def _links(spec: str, flag: str) -> None:
    from numascope.peaks import links
    links.parse_links_spec(spec)


def _hpl_n(n: int, flag: str) -> None:
    from numascope.peaks import hpcc
    hpcc.check_n(n)


def _layouts(values: Any, flag: str) -> tuple[str, ...]:
    """--layout per-l3 --layout per-node,per-core -> ("per-l3", "per-node", "per-core"),
    each a known layout, none twice."""
    from numascope.layouts import NAMED
    out: list[str] = []
    for v in [values] if isinstance(values, str) else values:
        parts = [x.strip().lower() for x in v.split(",")]
        if not all(parts):
            raise UserError(f"{flag} {v!r}: empty layout name (e.g. per-l3,per-node)")
        out += parts
    for name in out:
        if name not in NAMED:
            raise UserError(f"{flag} {name}: unknown layout (choose from {', '.join(NAMED)})")
    if len(set(out)) != len(out):
        raise UserError(f"{flag} names a layout twice")
    return tuple(out)


def _size(n: int, flag: str) -> None:
    if n < MIN_SIZE:
        raise UserError(f"{flag} {n}: matrix size too small (at least {MIN_SIZE})")


def _clock(ghz: float, flag: str) -> None:
    if not (math.isfinite(ghz) and 0 < ghz < 100):
        raise UserError(f"{flag} must be a positive, finite clock in GHz below 100 "
                        f"(got {ghz})")


def _bandwidth(gbs: float, flag: str) -> None:
    if not (math.isfinite(gbs) and gbs > 0):
        raise UserError(f"{flag} must be a positive, finite bandwidth (got {gbs})")


# --layout may be given several times (argparse's "append"), which numascope.options has no
# kind for yet: the command adds these flags itself, from their rows here

HPL_RUN = "hpl|hpl_big|hpl_n|hpl_layouts"   # any of these runs HPL

TABLE = Table("compute", (
    Description("--memory", "memory per socket, e.g. '12x DDR5-4800'", metavar="SPEC",
                rule=_memory, default_text="SMBIOS type 17"),
    Description("--links", "inter-socket links [NAME:]LINKSxLANES@GBPS, e.g. 'xgmi:4x16@32'",
                metavar="SPEC", rule=_links, default_text="unknown"),
    Option("--hpl", "also run HPL through hpcc (short run)", kind="switch"),
    Option("--hpl-big", "HPL with N sized from 80 percent of available memory (long)",
           kind="switch"),
    Option("--hpl-n", "HPL problem size", kind="int", metavar="N", rule=_hpl_n,
           rule_text="not below HPL's smallest N",
           default_text="a short run, or sized by --hpl-big"),
    Option("--hpl-np", "MPI processes for HPL (1 = no mpirun)", kind="int", metavar="P",
           only_with=HPL_RUN,
           low=1, default_text="physical cores", high=1 << 16),
    Option("--layout", "HPL under mpirun with ranks per-l3 (threads inside), per-node, "
           "per-socket or per-core; repeat or comma-list for one run each (implies --hpl)",
           metavar="LAYOUT", dest="hpl_layouts", hidden=("--hpl-layout",), rule=_layouts,
           repeat=True),
    Option("--size", "matrix size for DGEMM and LU", kind="int",
           default=PRESETS["quick"].dgemm, metavar="N", rule=_size,
           rule_text=f"at least {MIN_SIZE}"),
    Option("--reps", "repetitions", kind="int", default=3, low=1, metavar="N", high=1000),
    Option("--no-compute", "peaks and clock only: skip DGEMM/LU and the DRAM measurement",
           kind="switch"),
    Option("--dram-gbs", "use this measured DRAM bandwidth instead of measuring a triad",
           kind="float", unit="GB/s", metavar="GB/S", rule=_bandwidth,
           rule_text="above 0"),
    Option("--link-gbs", "measured inter-socket bandwidth, for the efficiency table",
           kind="float", unit="GB/s", metavar="GB/S", rule=_bandwidth,
           rule_text="above 0"),
    Option("--clock", "use this all-core clock for the FLOP/s peak instead of measuring "
           "(e.g. a spec-sheet base clock, or a replayed machine)", kind="float", unit="GHz",
           metavar="GHZ", dest="clock_ghz", rule=_clock, rule_text="above 0, below 100",
           default_text="measured"),
))


# what `numascope run` takes for the machine's peaks (keyword arguments of Compute): the
# compute stage computes the DRAM and link peaks from them, and the run's peak summary uses
# them whichever stages run (numascope.cli.run checks them before anything is measured)
RUN_OPTIONS = (
    Description("--memory", "the DIMMs per socket for the DRAM peak, e.g. '12x DDR5-4800' "
                "(recorded as given by the user; wins over SMBIOS, which a note quotes when "
                "it disagrees)", metavar="SPEC", rule=_memory, default_text="SMBIOS type 17"),
    Description("--links", "the inter-socket links for the link peak, "
                "[NAME:]LINKSxLANES@GBPS, e.g. 'xgmi:4x16@32' (recorded as given by the user)",
                metavar="SPEC", rule=_links, default_text="unknown"),
)
