"""Array sizes for the bandwidth kernels: parsing "512M"/"2GiB", the 4 × LLC rule, free memory."""

from __future__ import annotations

import re
from pathlib import Path

from numascope.errors import UserError
from numascope.units import format_bytes, parse_size  # noqa: F401 - re-exported

MIB = 1 << 20
HUGE_PAGE = 2 * MIB
MIN_DEFAULT = 64 * MIB         # floor of the automatic size when the LLC is tiny or unknown
NO_LLC_DEFAULT = 1024 * MIB    # automatic size when the machine reports no L3
LLC_FACTOR = 4                 # STREAM's rule: each array at least 4 × the caches in use

def default_array_bytes(llc_bytes: int) -> int:
    """Bytes per array: 4 × the LLC of the CPUs used, rounded up to whole 2 MiB pages."""
    want = LLC_FACTOR * llc_bytes if llc_bytes > 0 else NO_LLC_DEFAULT
    want = max(want, MIN_DEFAULT)
    return -(-want // HUGE_PAGE) * HUGE_PAGE


def mem_available(root: str | Path = "/") -> int | None:
    """MemAvailable from /proc/meminfo in bytes, None when unreadable."""
    try:
        text = (Path(root) / "proc/meminfo").read_text()
    except OSError:
        return None
    m = re.search(r"^MemAvailable:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(m.group(1)) * 1024 if m else None


def check_fits(total_bytes: int, available: int | None, what: str,
               where: str = "(MemAvailable)") -> None:
    """UserError when `total_bytes` would not fit into free memory (10 % headroom kept);
    `where` names the memory that `available` counts."""
    if available is None:
        return
    if total_bytes > 0.9 * available:
        raise UserError(f"{what} needs {format_bytes(total_bytes)} but only "
                        f"{format_bytes(available)} is free {where}; use a smaller --size")


def hugetlb_free(root: str | Path = "/") -> tuple[int, int] | None:
    """(free bytes, page bytes) of the default hugetlb pool, None when unreadable."""
    try:
        text = (Path(root) / "proc/meminfo").read_text()
    except OSError:
        return None
    free = re.search(r"^HugePages_Free:\s+(\d+)", text, re.MULTILINE)
    size = re.search(r"^Hugepagesize:\s+(\d+)\s*kB", text, re.MULTILINE)
    if not free or not size:
        return None
    page = int(size.group(1)) * 1024
    return int(free.group(1)) * page, page


def check_hugetlb(arrays: int, array_bytes: int, root: str | Path = "/") -> None:
    """UserError unless the hugetlb pool holds `arrays` arrays: touching a hugetlb mapping
    that the pool cannot back kills the process with SIGBUS instead of failing cleanly."""
    pool = hugetlb_free(root)
    if pool is None:
        raise UserError("hugetlb pages: this kernel reports no hugetlb pool")
    free, page = pool
    if page != HUGE_PAGE:
        raise UserError(f"hugetlb pages: the default huge page is {format_bytes(page)}, "
                        "numascope maps 2 MiB ones; use --huge thp")
    need = arrays * (-(-array_bytes // page) * page)
    if need > free:
        raise UserError(f"hugetlb pages: {format_bytes(need)} needed but "
                        f"{format_bytes(free)} free (reserve more via /proc/sys/vm/nr_hugepages"
                        ", or use --huge thp)")
