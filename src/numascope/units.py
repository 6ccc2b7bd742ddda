"""Byte sizes as every command reads and prints them.

K/M/G/T and KiB/MiB/GiB/TiB are binary (as numactl and dd read them); KB/MB/GB/TB are
decimal, matching the GB = 10^9 of every bandwidth figure."""

from __future__ import annotations

import re

from numascope.errors import UserError

_UNITS = {
    "": 1, "b": 1,
    "k": 1 << 10, "kib": 1 << 10, "kb": 10**3,
    "m": 1 << 20, "mib": 1 << 20, "mb": 10**6,
    "g": 1 << 30, "gib": 1 << 30, "gb": 10**9,
    "t": 1 << 40, "tib": 1 << 40, "tb": 10**12,
}


def parse_size(text: str) -> int:
    """'512M' → 536870912, '1GiB' → 2^30, '2GB' → 2·10^9, '4096' → 4096 bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _UNITS:
        raise UserError(f"bad size {text!r}: expected e.g. 512M, 2G, 1GiB or 3GB "
                        "(K/M/G = 2^10/2^20/2^30, KB/MB/GB = 10^3/10^6/10^9)")
    value = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if value <= 0:
        raise UserError(f"size {text!r} must be larger than zero")
    return value


def format_bytes(n: float) -> str:
    """Binary units: '64 KiB', '1.88 GiB', '512 B'."""
    for unit, f in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= f:
            v = n / f
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.3g} {unit}"
    return f"{int(n)} B"
