"""The read:write mixes of loaded latency's load generators (`lat --loaded --mix`), and the
DRAM traffic each one moves.

A loader's step reads R bursts of 1 KiB (16 lines) from its read stream, stores W bursts to
its write stream (a second buffer of the same size), then spins the injected delay:

    read    R=1, W=0: reads only (loaded latency as it always was)
    R:W     e.g. 3:1, 2:1, 1:1, 0:1: R bursts read, W bursts stored with ordinary stores
    nt      0:1 with streaming (non-temporal) stores; R:Wnt (e.g. 2:1nt) reads as well

The ratio is the one the loaders issue. On the memory bus an ordinary store to a line not in
cache reads that line first (write-allocate, a read for ownership), so 1:1 issued moves two
reads and one write per pair of lines; streaming stores read nothing. Whether this CPU's
ordinary stores write-allocate is numascope.traffic's answer (yes, no, or unknown:
then the traffic is stated as a lower bound, never guessed)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from numascope.errors import UserError

if TYPE_CHECKING:   # the option table imports this module: keep it light
    from numascope.traffic import WriteAllocate

DEFAULT = "read"
MAX_BURSTS = 16            # bursts read or stored per step
BURST = 1024               # bytes: 16 lines of 64 B
_RATIO = re.compile(r"^(\d+):(\d+)(nt)?$")

# Intel MLC's --loaded_latency / --bandwidth_matrix traffic modes (its -W help text):
# read:write ratios with ordinary stores, and read:non-temporal-write ratios.
MLC_PLAIN = {(2, 1): "-W2", (3, 1): "-W3", (3, 2): "-W4", (1, 1): "-W5", (4, 1): "-W12",
             (5, 1): "-W13", (6, 1): "-W14", (7, 1): "-W15", (8, 1): "-W16", (9, 1): "-W17"}
MLC_NT = {(0, 1): "-W6", (2, 1): "-W7", (1, 1): "-W8", (3, 1): "-W9"}
MLC_READ = "-R (all reads, the default)"
NO_MODE = "no -W mode"


def _reduced(a: int, b: int) -> tuple[int, int]:
    g = math.gcd(a, b) or 1
    return a // g, b // g


@dataclass(frozen=True)
class Mix:
    """One mix: bursts read and stored per step, and the store kind."""

    reads: int
    writes: int
    nt: bool = False

    @classmethod
    def parse(cls, text: str, flag: str = "--mix") -> Mix:
        t = text.strip().lower()
        if t == "read":
            return cls(1, 0)
        if t == "nt":
            return cls(0, 1, True)
        m = _RATIO.match(t)
        if not m:
            raise UserError(f"{flag} {text!r}: a mix is read, R:W (ordinary stores, e.g. 2:1), "
                            "nt (streaming stores only) or R:Wnt (e.g. 2:1nt)")
        r, w, nt = int(m[1]), int(m[2]), bool(m[3])
        if r > MAX_BURSTS or w > MAX_BURSTS:
            raise UserError(f"{flag} {text}: at most {MAX_BURSTS} bursts read and "
                            f"{MAX_BURSTS} stored per step")
        if w == 0:
            raise UserError(f"{flag} {text}: no stores; for reads only give read")
        return cls(r, w, nt)

    @property
    def name(self) -> str:
        if not self.writes:
            return "read"
        if self.nt and (self.reads, self.writes) == (0, 1):
            return "nt"
        return f"{self.reads}:{self.writes}{'nt' if self.nt else ''}"

    @property
    def stores(self) -> str:
        """The store kind, in traffic.write_allocate's words."""
        return "n/a" if not self.writes else "streaming" if self.nt else "ordinary"

    def step(self) -> str:
        """A loader's step in words."""
        parts = []
        if self.reads:
            parts.append(f"{self.reads} KiB read")
        if self.writes:
            parts.append(f"{self.writes} KiB stored ({'streaming' if self.nt else 'ordinary'}"
                         " stores)")
        return " then ".join(parts)

    def dram_lines(self, wa: WriteAllocate) -> tuple[int, int] | None:
        """(reads, writes) on the memory bus per step, in 1 KiB bursts: the stores' reads
        for ownership counted where they write-allocate; None when that is unknown."""
        if self.writes and wa.allocates is None:
            return None
        rfo = self.writes if self.writes and wa.allocates else 0
        return self.reads + rfo, self.writes

    def dram_gbs(self, read_gbs: float, write_gbs: float, wa: WriteAllocate) -> float | None:
        """Bandwidth on the memory bus from what the loaders issued (loads, stores):
        loads + stores + one read per stored line where stores write-allocate."""
        if self.writes and wa.allocates is None:
            return None
        return read_gbs + write_gbs * (2 if self.writes and wa.allocates else 1)

    def counting(self, wa: WriteAllocate) -> str:
        """How the bandwidth of this mix is counted, in words (the output states it)."""
        if not self.writes:
            return "DRAM traffic = the lines the loaders read (64 B each)"
        lines = self.dram_lines(wa)
        if lines is None:
            return ("DRAM traffic: whether ordinary stores write-allocate here is unknown "
                    f"({wa.reason}); counted as loads + stores, a lower bound")
        r, w = lines
        rfo = (" + one read per stored line (write-allocate: read for ownership)"
               if wa.allocates else "")
        return (f"DRAM traffic = lines read + lines stored{rfo}: {r}:{w} reads:writes per step "
                f"({wa.reason})")

    def mlc(self, wa: WriteAllocate | None = None) -> str:
        """The Intel MLC traffic mode(s) this mix matches: by the ratio issued, and (ordinary
        stores that may write-allocate) by the ratio on the memory bus."""
        if not self.writes:
            return MLC_READ
        issued = _reduced(self.reads, self.writes)
        if self.nt:
            return MLC_NT.get(issued, NO_MODE)
        by_issue = MLC_PLAIN.get(issued)
        if wa is not None and wa.allocates is False:
            return by_issue or NO_MODE
        by_bus = MLC_PLAIN.get(_reduced(self.reads + self.writes, self.writes))
        parts = ([f"{by_issue} counted as issued"] if by_issue else []) + \
            ([f"{by_bus} counted on the bus (write-allocate)"] if by_bus else [])
        return ", ".join(parts) or NO_MODE


def check_mixes(text: str, flag: str = "--mix") -> tuple[str, ...]:
    """--mix's rule: a comma list of mixes, each once, as canonical names."""
    names: list[str] = []
    for part in str(text).split(","):
        if not part.strip():
            raise UserError(f"{flag} {text!r}: an empty mix in the list")
        name = Mix.parse(part, flag).name
        if name in names:
            raise UserError(f"{flag} {text}: the mix {name} is given twice")
        names.append(name)
    return tuple(names)
