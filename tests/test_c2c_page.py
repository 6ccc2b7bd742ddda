"""Every c2c pair gets a fresh page for its line: consecutive pairs never share an address
or a physical frame (freed right after its pair, a page came straight back to the next one:
same address, same frame, and a line perhaps still in the last pair's caches)."""

from __future__ import annotations

import itertools

import pytest

from numascope import _core
from numascope.topology import read_topology


@pytest.fixture(scope="module")
def cpus():
    usable = read_topology("/").usable_cpus()
    if len(usable) < 2:
        pytest.skip("needs two CPUs")
    return usable[:2]


def _pairs(cpus, n):
    a, b = cpus
    return [_core.c2c_pingpong(a, b, 2, 50) if i % 2 == 0 else _core.c2c_pingpong(b, a, 2, 50)
            for i in range(n)]


def test_consecutive_pairs_get_distinct_lines(cpus):
    rs = _pairs(cpus, 6)
    assert all(r["validated"] for r in rs)
    addrs = [r["line_address"] for r in rs]
    assert all(x % 64 == 0 for x in addrs)
    assert all(x != y for x, y in itertools.pairwise(addrs))


def test_consecutive_pairs_get_distinct_frames(cpus):
    rs = _pairs(cpus, 6)
    frames = [r["line_frame"] for r in rs]
    if None in frames:
        pytest.skip("/proc/self/pagemap hides physical frames here (needs CAP_SYS_ADMIN)")
    assert all(x != y for x, y in itertools.pairwise(frames))


def _mapped(addr: int) -> bool:
    with open("/proc/self/maps") as maps:
        lines = maps.readlines()
    for line in lines:
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        if lo <= addr < hi:
            return True
    return False


def test_the_last_pairs_page_is_freed_when_the_measurement_ends(cpus):
    """The page kept for the next pair is released by the family's finish (run_cases calls
    it), not left mapped until some later stage (the guests' witness saw it unmapped there)."""
    from numascope.benchmark import run_cases
    from numascope.families.c2c.bench import C2C
    topo = read_topology("/")
    bench = C2C()
    kept: list[int] = []
    real = _core.c2c_pingpong

    def spy(*a, **k):
        r = real(*a, **k)
        kept.append(r["line_address"])
        return r
    _core.c2c_pingpong = spy
    try:
        run_cases(bench, topo, bench.cases(topo, cpus=cpus, samples=2, trips=50))
    finally:
        _core.c2c_pingpong = real
    assert kept and not _mapped(kept[-1] & ~4095)
