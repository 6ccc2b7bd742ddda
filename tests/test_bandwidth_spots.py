"""The bandwidth kernel's per-repetition spot checks cover every thread's chunk at any team
size (a thread that skipped its part of a repetition leaves stale spots), read from the C
core's own choice of spots without starting a team."""

from __future__ import annotations

import bisect
import itertools

import pytest

from numascope import _core

THREADS = [1, 2, 255, 256, 257, 384, 1024]


def _unchecked_chunks(n: int, threads: int) -> list[tuple[int, int]]:
    r = _core.bw_spots(n, threads)
    spots = r["spots"]
    assert spots == sorted(set(spots)) and all(0 <= i < n for i in spots)
    missed = []
    for begin, end in r["chunks"]:
        k = bisect.bisect_left(spots, begin)
        if end > begin and not (k < len(spots) and spots[k] < end):
            missed.append((begin, end))
    return missed


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("n", [64, 1000, (1 << 20) + 5, 1 << 27])
def test_every_threads_chunk_has_spots(n, threads):
    assert _unchecked_chunks(n, threads) == []


@pytest.mark.parametrize("threads", THREADS)
def test_each_chunks_ends_are_checked(threads):
    """A thread that did only part of its chunk is caught at either end."""
    n = (1 << 22) + 13
    r = _core.bw_spots(n, threads)
    spots = set(r["spots"])
    for begin, end in r["chunks"]:
        assert begin in spots and end - 1 in spots
    assert len(spots) >= 257      # never fewer than the single-thread spread of old


def test_chunks_are_the_split_bw_run_uses():
    r = _core.bw_spots(1 << 20, 384)
    chunks = r["chunks"]
    assert chunks[0][0] == 0 and chunks[-1][1] == 1 << 20
    assert all(a[1] == b[0] for a, b in itertools.pairwise(chunks))
    assert all(begin % r["align"] == 0 for begin, _ in chunks)


def test_bad_arguments_are_one_clear_error():
    with pytest.raises(ValueError, match="between 1 and"):
        _core.bw_spots(1 << 20, 0)
    with pytest.raises(ValueError, match="at least 64"):
        _core.bw_spots(10, 2)
