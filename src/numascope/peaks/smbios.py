"""SMBIOS type 17 (Memory Device): which DIMM slots are populated, with what, at what speed.

Two sources: the text of `dmidecode -t 17`, or the binary structures the kernel exposes in
/sys/firmware/dmi/entries/17-*/raw (readable by root, no tool needed). Both give the same
DimmSlot records."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from numascope.errors import Unavailable
from numascope.host import Host
from numascope.topology.files import Tree

# SMBIOS 3.x Memory Type byte (offset 0x12) → name
MEMORY_TYPES = {
    0x12: "DDR", 0x13: "DDR2", 0x18: "DDR3", 0x1A: "DDR4", 0x1B: "LPDDR", 0x1C: "LPDDR2",
    0x1D: "LPDDR3", 0x1E: "LPDDR4", 0x20: "HBM", 0x21: "HBM2", 0x22: "DDR5", 0x23: "LPDDR5",
    0x24: "HBM3",
}


@dataclass(frozen=True)
class DimmSlot:
    locator: str
    bank: str
    size_bytes: int                # 0 = empty slot
    type: str | None               # "DDR4", "DDR5" …
    speed_mts: int | None          # rated maximum (MT/s)
    configured_mts: int | None     # what the memory controller runs it at
    data_width_bits: int | None = None
    volatile: bool = True          # False for persistent memory (Optane DCPMM)

    @property
    def populated(self) -> bool:
        return self.size_bytes > 0

    @property
    def effective_mts(self) -> int | None:
        return self.configured_mts or self.speed_mts


# -- dmidecode text -------------------------------------------------------------------------
_SIZE = re.compile(r"^(\d+)\s*(bytes|kB|KB|MB|GB|TB)$")
_UNITS = {"bytes": 1, "kB": 2**10, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}


def _size(v: str) -> int:
    m = _SIZE.match(v.strip())
    return int(m.group(1)) * _UNITS[m.group(2)] if m else 0


def _speed(v: str | None) -> int | None:
    if not v:
        return None
    m = re.match(r"^(\d+)\s*(MT/s|MHz)", v.strip())  # old dmidecode wrote MHz for MT/s
    return int(m.group(1)) or None if m else None


def parse_dmidecode(text: str) -> list[DimmSlot]:
    """Every 'Memory Device' block of `dmidecode -t 17` output."""
    slots: list[DimmSlot] = []
    for block in re.split(r"\n(?=Handle 0x)", text):
        if "\nMemory Device" not in block and not block.startswith("Memory Device"):
            continue
        f: dict[str, str] = {}
        for line in block.splitlines():
            if line.startswith("\t") and ":" in line and not line.startswith("\t\t"):
                k, _, v = line.strip().partition(":")
                f[k.strip()] = v.strip()
        tech = f.get("Memory Technology", "DRAM")
        width = re.match(r"(\d+)", f.get("Data Width", ""))
        slots.append(DimmSlot(
            locator=f.get("Locator", "?"),
            bank=f.get("Bank Locator", ""),
            size_bytes=_size(f.get("Size", "")),
            type=None if f.get("Type") in (None, "Unknown", "Other") else f["Type"],
            speed_mts=_speed(f.get("Speed")),
            configured_mts=_speed(f.get("Configured Memory Speed")
                                  or f.get("Configured Clock Speed")),
            data_width_bits=int(width.group(1)) if width else None,
            volatile="DRAM" in tech,
        ))
    return slots


# -- raw SMBIOS structures ------------------------------------------------------------------
def _word(b: bytes, off: int) -> int | None:
    return int.from_bytes(b[off:off + 2], "little") if len(b) >= off + 2 else None


def _dword(b: bytes, off: int) -> int | None:
    return int.from_bytes(b[off:off + 4], "little") if len(b) >= off + 4 else None


def parse_type17_raw(raw: bytes) -> DimmSlot:
    """One binary type-17 structure: formatted area (length at byte 1), then the strings."""
    if len(raw) < 0x15 or raw[0] != 17:
        raise ValueError("not an SMBIOS type 17 structure")
    length = raw[1]
    body = raw[:length]
    strings = raw[length:].split(b"\0")

    def string(idx_off: int) -> str:
        i = body[idx_off] if len(body) > idx_off else 0
        return strings[i - 1].decode("ascii", "replace").strip() if 0 < i <= len(strings) else ""

    size = 0
    w = _word(body, 0x0C)
    if w not in (None, 0, 0xFFFF):
        if w == 0x7FFF:                          # real size in the extended DWORD (MiB)
            size = ((_dword(body, 0x1C) or 0) & 0x7FFFFFFF) * 2**20
        else:
            size = (w & 0x7FFF) * (2**10 if w & 0x8000 else 2**20)

    def speed(off: int, ext_off: int) -> int | None:
        s = _word(body, off)
        if s == 0xFFFF:                          # SMBIOS 3.3+: extended speed field
            s = _dword(body, ext_off)
        return s or None

    data_width = _word(body, 0x0A)
    tech = body[0x28] if len(body) > 0x28 else None  # Memory Technology (3.2+): 3 = DRAM
    return DimmSlot(
        locator=string(0x10), bank=string(0x11), size_bytes=size,
        type=MEMORY_TYPES.get(body[0x12]),
        speed_mts=speed(0x15, 0x54), configured_mts=speed(0x20, 0x58),
        data_width_bits=data_width if data_width not in (None, 0xFFFF) else None,
        volatile=tech in (None, 0, 2, 3),        # 0/2 = unknown/other: assume DRAM
    )


ENTRIES = "sys/firmware/dmi/entries"


def read_sysfs_entries(root: str | Path | Tree = "/") -> list[DimmSlot]:
    """Type-17 structures from /sys/firmware/dmi/entries under root (a path or the
    topology's Tree: a replayed root's links never lead out of it); raises Unavailable."""
    tree = Host(root).tree
    where = tree.where(ENTRIES)
    if not tree.exists(ENTRIES):
        raise Unavailable(f"{where} does not exist (no SMBIOS tables exported)")
    names = [n for n in tree.listdir(ENTRIES) if re.fullmatch(r"17-\d+", n)]
    slots = []
    for name in sorted(names, key=lambda n: int(n.split("-")[1])):
        rel = f"{ENTRIES}/{name}/raw"
        if not tree.exists(rel):
            raise Unavailable(f"{tree.where(rel)} is missing or leads out of the root")
        try:
            slots.append(parse_type17_raw(tree.path(rel).read_bytes()))
        except PermissionError:
            raise Unavailable(f"no permission to read {tree.where(rel)} (needs root)") from None
        except (OSError, ValueError):
            raise Unavailable(f"cannot parse {tree.where(rel)}: not an SMBIOS type 17 "
                              "structure") from None
    if not slots:
        raise Unavailable(f"{where} holds no type-17 (memory device) entries")
    return slots


def run_dmidecode() -> list[DimmSlot]:
    """`dmidecode -t 17` on this machine; raises Unavailable with the reason."""
    exe = shutil.which("dmidecode")
    if not exe:
        raise Unavailable("dmidecode is not installed")
    try:
        p = subprocess.run([exe, "-t", "17"], capture_output=True, text=True, timeout=20,
                           check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Unavailable(f"dmidecode failed: {e}") from None
    slots = parse_dmidecode(p.stdout)
    if p.returncode != 0 or not slots:
        why = (p.stderr.strip().splitlines() or ["no memory devices listed"])[-1]
        if "ermission" in why:
            why = "no permission (dmidecode needs root)"
        raise Unavailable(f"dmidecode -t 17: {why}")
    return slots


def read_slots(root: str | Path | Tree = "/") -> tuple[list[DimmSlot], str]:
    """DIMM slots from sysfs under root (preferred: no tool needed), else dmidecode (only
    for the live machine). Returns (slots, source); raises Unavailable with every reason."""
    reasons = []
    tree = Host(root).tree
    try:
        return read_sysfs_entries(tree), tree.where(ENTRIES)
    except Unavailable as e:
        reasons.append(str(e))
    if tree.live:
        try:
            return run_dmidecode(), "dmidecode -t 17"
        except Unavailable as e:
            reasons.append(str(e))
    raise Unavailable("; ".join(reasons))
