"""Pointer chase: the cycle, the sweep's levels, bad input."""

from __future__ import annotations

import math

import pytest

from numascope import _core
from numascope.bench import latency as lat
from numascope.errors import UserError
from numascope.topology import read_topology


@pytest.fixture(scope="module")
def topo():
    return read_topology("/")


def _one_cycle(nxt: list[int]) -> bool:
    n, seen, p = len(nxt), set(), 0
    for _ in range(n):
        seen.add(p)
        p = nxt[p]
    return p == 0 and len(seen) == n


@pytest.mark.parametrize("lines,window", [(4096, 0), (4096, 64), (1000, 96), (2, 0), (3, 2)])
def test_permutation_is_one_cycle_over_every_line(lines, window):
    nxt = _core.lat_permutation(lines, window, 7)
    assert sorted(nxt) == list(range(lines))
    assert _one_cycle(nxt)
    assert all(nxt[i] != i for i in range(lines))


def test_tlb_mode_stays_inside_windows_then_moves_on():
    lines, window = 4096, 64
    nxt = _core.lat_permutation(lines, window, 3)
    p, order = 0, []
    for _ in range(lines):
        order.append(p)
        p = nxt[p]
    # each window is entered exactly once: the walk covers it completely before leaving
    changes = sum(order[i] // window != order[i - 1] // window for i in range(lines))
    assert changes == lines // window
    full = _core.lat_permutation(lines, 0, 3)
    assert any(abs(full[i] - i) >= window for i in range(lines))


def test_chase_small_buffer_validates_and_reports(topo):
    cpu = topo.usable_cpus()[0]
    r = lat.chase(topo, 64 * 1024, cpu, mode="random", samples=5, loads=1 << 14, clock=False)
    v = r.metrics["latency"].values
    assert len(v) == 5 and all(math.isfinite(x) and x > 0 for x in v)
    assert r.metrics["tsc_cycles"].median > 0
    assert any(f"cycle walked in full: {64 * 1024 // lat.STRIDE} lines" in n for n in r.notes)
    s = lat.summary(r)
    assert s["p5"] <= s["p50"] <= s["p95"]


def test_sweep_finds_l1_l2_and_dram(topo):
    cpu = topo.usable_cpus()[0]
    l1, l2 = topo.cache_bytes(1, cpu), topo.cache_bytes(2, cpu)
    llc = lat.llc_bytes(topo, cpu)
    if not (l1 and l2 and llc):
        pytest.skip("this machine reports no L1/L2/LLC sizes")
    dram = 1 << (2 * llc - 1).bit_length()
    sizes = [l1 // 4, l1 // 2, l2 // 4, l2 // 2, dram]
    pts = []
    for s in sizes:
        r = lat.chase(topo, s, cpu, samples=3, loads=1 << 15, clock=False)
        pts.append((s, r.metrics["latency"].median))
    names = [lv.name for lv in lat.detect_levels(pts, topo, cpu)]
    assert "L1" in names and "L2" in names and "DRAM" in names, (pts, names)


def test_detect_levels_on_synthetic_curve(topo):
    from numascope.topology.model import Cache
    t = read_topology("/")
    t.caches = [Cache(1, "Data", 32 << 10, (0,)), Cache(2, "Unified", 1 << 20, (0,)),
                Cache(3, "Unified", 32 << 20, (0,))]
    pts = [(4 << 10, 1.0), (16 << 10, 1.0), (64 << 10, 4.0), (512 << 10, 4.2),
           (4 << 20, 20.0), (16 << 20, 21.0), (128 << 20, 90.0), (512 << 20, 92.0)]
    lv = lat.detect_levels(pts, t, 0)
    assert [x.name for x in lv] == ["L1", "L2", "L3", "DRAM"]
    assert "consistent" in lv[0].verdict and "consistent" in lv[2].verdict


def test_sweep_sizes_reach_four_times_llc(topo):
    cpu = topo.usable_cpus()[0]
    sizes = lat.sweep_sizes(topo, cpu)
    assert sizes[0] == 4096 and sizes == sorted(set(sizes))
    assert sizes[-1] >= 4 * lat.llc_bytes(topo, cpu)


def test_loaded_latency_gives_points(topo):
    cpus = topo.usable_cpus()
    if len(cpus) < 2:
        pytest.skip("needs two CPUs")
    rs = lat.loaded(topo, cpus[0], [cpus[1]], None, [0, 5000], 8 << 20, 8 << 20,
                    samples=2, loads=1 << 13)
    assert [r.params["delay"] for r in rs] == [0, 5000]
    for r in rs:
        assert r.metrics["bandwidth"].median > 0
        assert r.metrics["latency"].median > 0


@pytest.mark.parametrize("kw,msg", [
    ({"node": 999}, "does not exist"),
    ({"cpu": 4096}, "does not exist"),
    ({"nbytes": 1 << 50}, "does not fit"),
    ({"mode": "zigzag"}, "unknown chase mode"),
    ({"pages": "giant"}, "unknown page kind"),
    ({"nbytes": 64}, "too small"),
])
def test_bad_input_is_user_error(topo, kw, msg):
    args = {"nbytes": 1 << 20, **kw}
    with pytest.raises(UserError, match=msg):
        lat.chase(topo, **args)


@pytest.mark.parametrize("text,val", [("4K", 4096), ("1g", 1 << 30), ("256MiB", 256 << 20),
                                      ("100", 100)])
def test_parse_size(text, val):
    assert lat.parse_size(text) == val


@pytest.mark.parametrize("text", ["", "abc", "-1K", "0"])
def test_parse_size_rejects(text):
    with pytest.raises(UserError):
        lat.parse_size(text)


@pytest.mark.parametrize("stride", [64, 128, 256, 1024, 4096])
def test_chase_validates_at_every_stride(topo, stride):
    """The cycle covers bytes/stride lines, walked in full, and the chase ends where the
    cycle predicts (else lat.chase raises MeasurementError) at any stride."""
    cpu = topo.usable_cpus()[0]
    nbytes = 1 << 20
    r = lat.chase(topo, nbytes, cpu, mode="tlb", samples=3, loads=(1 << 14) + 7, clock=False,
                  stride=stride)
    assert any(f"cycle walked in full: {nbytes // stride} lines" in n for n in r.notes)
    assert r.params["stride"] == stride and f"stride {stride}" in r.case
    assert f"one pointer per {stride} B" in r.metrics["latency"].note


def test_default_stride_is_prefetch_proof(topo):
    r = lat.chase(topo, 1 << 20, samples=1, loads=1 << 12, clock=False)
    assert lat.STRIDE == 256 and r.params["stride"] == 256
    assert "line" not in r.params


@pytest.mark.parametrize("stride", [0, 32, 63, 100, 192, 8192, -256])
def test_bad_stride_is_user_error(topo, stride):
    with pytest.raises(UserError, match="power of two from 64 to 4096"):
        lat.chase(topo, 1 << 20, stride=stride)
    with pytest.raises(UserError, match="power of two from 64 to 4096"):
        lat.Latency().cases(topo, sizes=[1 << 20], stride=stride)


def test_buffer_must_hold_two_strides(topo):
    with pytest.raises(UserError, match="too small for a 4096 B stride"):
        lat.chase(topo, 4096, stride=4096)


def test_loaded_latency_chases_at_the_stride(topo):
    cpus = topo.usable_cpus()
    if len(cpus) < 2:
        pytest.skip("needs two CPUs")
    rs = lat.loaded(topo, cpus[0], [cpus[1]], None, [0], 4 << 20, 4 << 20, samples=2,
                    loads=1 << 12, stride=512)
    assert rs[0].params["stride"] == 512 and "stride 512" in rs[0].case
    assert "one pointer per 512 B" in rs[0].metrics["latency"].note


def test_cases_pass_the_stride_to_measure(topo):
    b = lat.Latency()
    (case,) = b.cases(topo, sizes=[256 << 10], samples=2, loads=1 << 12, stride=128)
    r = b.measure(topo, case)
    assert r.params["stride"] == 128
    assert any("cycle walked in full: 2048 lines" in n for n in r.notes)
