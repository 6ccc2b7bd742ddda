"""DRAM peak = populated channels × MT/s × 8 bytes (a 64-bit channel; DDR5's two 32-bit
sub-channels together are still 8 bytes per transfer). GB = 10^9 bytes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from numascope.errors import UserError
from numascope.peaks.smbios import DimmSlot

BYTES_PER_TRANSFER = 8


def dram_peak_gbs(channels: int, mts: int, sockets: int = 1) -> float:
    """channels (per socket) × MT/s × 8 B × sockets, in GB/s (10^9 B/s)."""
    if channels <= 0 or mts <= 0 or sockets <= 0:
        raise ValueError("channels, MT/s and sockets must be positive")
    return sockets * channels * mts * BYTES_PER_TRANSFER / 1000  # MB/s → GB/s, exact


@dataclass
class DramPeak:
    gbs: float
    channels: int                # total, all sockets
    mts: int
    type: str | None
    source: str                  # "--memory", "dmidecode -t 17", "/sys/firmware/dmi/…"
    formula: str
    notes: list[str] = field(default_factory=list)
    # DIMMs on each populated channel, when the BIOS names the channels and every one holds
    # as many (None: unnamed, mixed, or given with --memory)
    dimms_per_channel: int | None = None


_SPEC = re.compile(r"^\s*(\d+)\s*[x×*]\s*(?:((?:LP)?DDR\d*X?|HBM\d*E?)\s*-?\s*)?(\d+)\s*"
                   r"(?:MT/?s)?\s*$", re.IGNORECASE)
# the memory generations a DRAM peak can be given for (SMBIOS names them the same way)
KNOWN_TYPES = ("DDR", "DDR2", "DDR3", "DDR4", "DDR5", "LPDDR", "LPDDR2", "LPDDR3", "LPDDR4",
               "LPDDR4X", "LPDDR5", "LPDDR5X", "HBM", "HBM2", "HBM2E", "HBM3", "HBM3E")


# a type with no speed after it ('12xDDR5'): _SPEC alone would read DDR at 5 MT/s
_NO_SPEED = re.compile(r"^\s*(\d+\s*[x×*]\s*)((?:LP)?DDR\d*X?|HBM\d*E?)\s*(?:MT/?s)?\s*$",
                       re.IGNORECASE)
# a usual speed of each generation, for the example in the message that asks for one
_EXAMPLE_MTS = {"DDR": 400, "DDR2": 800, "DDR3": 1600, "DDR4": 3200, "DDR5": 4800,
                "LPDDR4": 3200, "LPDDR4X": 4266, "LPDDR5": 6400, "LPDDR5X": 8533,
                "HBM2": 2000, "HBM2E": 3200, "HBM3": 6400, "HBM3E": 9600}


def parse_memory_spec(spec: str) -> tuple[int, str | None, int]:
    """'12x DDR5-4800' → (12, 'DDR5', 4800): channels per socket, type, MT/s."""
    bare = _NO_SPEED.match(spec or "")
    if bare and bare.group(2).upper() in KNOWN_TYPES:
        mts = _EXAMPLE_MTS.get(bare.group(2).upper(), 4800)
        example = f"{bare.group(1).lstrip()}{bare.group(2)}-{mts}"
        raise UserError(f"bad --memory {spec!r}: the speed is missing: give it in MT/s, "
                        f"e.g. '{example}'")
    m = _SPEC.match(spec or "")
    if not m:
        raise UserError(f"bad --memory {spec!r}: expected CHANNELSx[TYPE-]MTS per socket, "
                        "e.g. '12x DDR5-4800' or '8x3200'")
    ch, typ, mts = int(m.group(1)), m.group(2), int(m.group(3))
    if typ and typ.upper() not in KNOWN_TYPES:
        raise UserError(f"bad --memory {spec!r}: unknown memory type {typ} (known: DDR3, "
                        "DDR4, DDR5, LPDDR4X, LPDDR5X, HBM2E, HBM3 …)")
    if ch == 0 or ch > 64:
        raise UserError(f"bad --memory {spec!r}: {ch} channels per socket is not plausible")
    if not 100 <= mts <= 20000:
        raise UserError(f"bad --memory {spec!r}: {mts} MT/s is not plausible")
    return ch, typ.upper() if typ else None, mts


def from_spec(spec: str, sockets: int) -> DramPeak:
    ch, typ, mts = parse_memory_spec(spec)
    sockets = max(1, sockets)
    gbs = dram_peak_gbs(ch, mts, sockets)
    socks = f"{sockets} socket{'s' if sockets != 1 else ''}"
    return DramPeak(gbs, ch * sockets, mts, typ, "--memory",
                    f"{socks} × {ch} channels × {mts} MT/s × 8 B = {gbs:g} GB/s")


_BANK_CHANNEL = re.compile(r"^(.*?CHANNEL[\s_-]*[A-Z0-9]+)", re.IGNORECASE)
_LOC_CHANNEL = re.compile(r"^(.*DIMM[\s_-]?[A-Z])[\s_-]?(\d)$", re.IGNORECASE)


def channel_of(slot: DimmSlot) -> str | None:
    """The channel a slot sits on, when the BIOS names it; None when it cannot be told."""
    m = _BANK_CHANNEL.match(slot.bank or "")
    if m:
        return m.group(1).strip().upper()
    m = _LOC_CHANNEL.match(slot.locator.strip())
    if m:
        return f"{slot.bank.strip()}|{m.group(1).upper()}"
    return None


def from_slots(slots: list[DimmSlot], source: str) -> DramPeak:
    """The DRAM peak from SMBIOS slots: populated channels × the slowest configured speed."""
    dimms = [s for s in slots if s.populated and s.volatile]
    notes: list[str] = []
    pmem = [s for s in slots if s.populated and not s.volatile]
    if pmem:
        notes.append(f"{len(pmem)} persistent-memory module{'s' if len(pmem) != 1 else ''} "
                     "not counted")
    if not dimms:
        raise ValueError("no populated DRAM slot")
    speeds = [s.effective_mts for s in dimms if s.effective_mts]
    if not speeds:
        raise ValueError("no populated slot reports its speed")
    mts = min(speeds)
    if len(set(speeds)) > 1:
        notes.append(f"mixed speeds {sorted(set(speeds))} MT/s: the slowest, {mts} MT/s, "
                     "governs (the controller runs the interleaved channels together)")
    rated = [s.speed_mts for s in dimms if s.speed_mts and s.configured_mts]
    if rated and any(s.configured_mts < s.speed_mts for s in dimms
                     if s.speed_mts and s.configured_mts):
        notes.append(f"DIMMs rated up to {max(rated)} MT/s run at {mts} MT/s (configured "
                     "speed used)")
    chans = [channel_of(s) for s in dimms]
    dpc = None
    if all(c is not None for c in chans):
        channels = len(set(chans))
        per = {chans.count(c) for c in set(chans)}
        dpc = per.pop() if len(per) == 1 else None
        if channels < len(dimms):
            how = f"{dpc} per channel" if dpc else "2 per channel on some"
            notes.append(f"{len(dimms)} DIMMs on {channels} channels ({how}): channels "
                         "count, not DIMMs")
    else:
        channels = len(dimms)
        notes.append("channel of each slot not named by the BIOS: assumed one DIMM per "
                     "channel (2 DIMMs per channel would make this figure too high)")
    types = sorted({s.type for s in dimms if s.type})
    empty = sum(1 for s in slots if not s.populated)
    if empty:
        notes.append(f"{empty} empty slot{'s' if empty != 1 else ''} of {len(slots)}")
    gbs = dram_peak_gbs(channels, mts)
    return DramPeak(gbs, channels, mts, "/".join(types) or None, source,
                    f"{channels} populated channels × {mts} MT/s × 8 B = {gbs:g} GB/s", notes,
                    dpc)
