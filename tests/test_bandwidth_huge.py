"""The huge-page share of the bandwidth arrays: counted over all arrays from their own
mappings, never one mapping's total divided by one array's size."""

from __future__ import annotations

import ctypes
import os
import re
import statistics

import pytest

from numascope import _core

MIB = 1 << 20
ARRAY = 4 * MIB
PROT_NONE, PROT_RW = 0, 3
MAP_PRIVATE, MAP_ANONYMOUS, MAP_NORESERVE = 0x02, 0x20, 0x4000
MADV_HUGEPAGE = 14

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def _vma_of(addr: int) -> tuple[int, int, int]:
    """(start, end, AnonHugePages bytes) of the mapping holding addr, read independently."""
    with open("/proc/self/smaps") as f:
        text = f.read()
    for block in re.split(r"\n(?=[0-9a-f]+-[0-9a-f]+ )", text):
        lo, hi = (int(x, 16) for x in block.split(" ", 1)[0].split("-"))
        if lo <= addr < hi:
            huge = re.search(r"^AnonHugePages:\s+(\d+) kB", block, re.MULTILINE)
            return lo, hi, int(huge.group(1)) * 1024
    raise AssertionError("address not mapped")


@pytest.fixture
def back_to_back():
    """Three 4 MiB arrays back to back in one mapping (what identical neighbouring
    mappings merge into), fenced by PROT_NONE so nothing else joins it; the first two
    touched, with THP asked for."""
    span = 3 * ARRAY + 4 * MIB
    base = libc.mmap(None, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
    assert base not in (None, ctypes.c_void_p(-1).value)
    a = (base + MIB + 2 * MIB - 1) // (2 * MIB) * (2 * MIB)
    assert libc.mprotect(a, 3 * ARRAY, PROT_RW) == 0
    libc.madvise(a, 3 * ARRAY, MADV_HUGEPAGE)
    ctypes.memset(a, 1, 2 * ARRAY)
    yield a
    libc.munmap(base, span)


def test_merged_arrays_share_is_the_truth(back_to_back):
    a = back_to_back
    lo, hi, huge = _vma_of(a)
    assert (lo, hi) == (a, a + 3 * ARRAY)          # one mapping holds all three arrays
    truth = huge / (3 * ARRAY)
    share = _core.huge_share([(a, ARRAY), (a + ARRAY, ARRAY), (a + 2 * ARRAY, ARRAY)])
    assert share == pytest.approx(truth, abs=1e-12) and 0 <= share <= 1
    # one array of the three cannot be told apart by smaps: unknown, not overstated (the
    # old reading, the mapping's huge bytes over one array, gave min(1, 3 x truth))
    assert _core.huge_share([(a, ARRAY)]) == -1
    if huge:
        assert min(1.0, huge / ARRAY) > truth


def test_unmapped_range_is_unknown(back_to_back):
    assert _core.huge_share([(back_to_back - MIB // 2, 4096)]) == -1


@pytest.mark.parametrize("huge", ["thp", "none"])
@pytest.mark.parametrize("kernel", ["copy", "triad"])
def test_bw_arrays_are_counted_apart(kernel, huge):
    cpu = [min(os.sched_getaffinity(0))]
    r = _core.bw_run(kernel, cpu, (8 * MIB) // 8, 1, [("scalar", False)],
                     memory={"policy": "first-touch", "huge": huge}, warmup=1)
    per = r["huge_by_array"]
    assert len(per) == (3 if kernel == "triad" else 2)
    # each array is its own mapping: its share is known and at most 1
    assert all(0 <= f <= 1 for f in per)
    assert r["huge_fraction"] == pytest.approx(statistics.fmean(per), abs=1e-12)
    if huge == "none":
        assert r["huge_fraction"] == 0
