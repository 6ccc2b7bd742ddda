"""Array sizes for the bandwidth kernels: parsing "512M"/"2GiB" and the 4 × LLC rule. Free
memory and the hugetlb pool are the host's (numascope.host: check_fits, check_hugetlb)."""

from __future__ import annotations

from numascope.host import HUGE_2M
from numascope.units import format_bytes, parse_size  # noqa: F401 - re-exported

MIB = 1 << 20
HUGE_PAGE = HUGE_2M
MIN_DEFAULT = 64 * MIB         # floor of the automatic size when the LLC is tiny or unknown
NO_LLC_DEFAULT = 1024 * MIB    # automatic size when the machine reports no L3
LLC_FACTOR = 4                 # STREAM's rule (McCalpin): each array >= 4 × the caches in use


def default_array_bytes(llc_bytes: int) -> int:
    """Bytes per array: 4 × the LLC of the CPUs used, rounded up to whole 2 MiB pages."""
    want = LLC_FACTOR * llc_bytes if llc_bytes > 0 else NO_LLC_DEFAULT
    want = max(want, MIN_DEFAULT)
    return -(-want // HUGE_PAGE) * HUGE_PAGE
