"""Repetitions of several passes over cache-sized arrays, and the store kind chosen by where
the arrays live: the pass count given or calibrated, bytes counted per pass, a skipped pass
caught by the marks every pass checks (or by read's sum), and --nt auto's rule on synthetic
machines (their caches sized by the test, not by this host)."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest
from synth_sysfs import machine

from numascope import _core
from numascope.errors import UserError
from numascope.families.bandwidth import bench as bw
from numascope.topology import read_topology

ISAS = _core.isa()
N = (1 << 12) + 40          # 32 KiB + a tail shorter than an unrolled step


def _cpus(threads: int) -> list[int]:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < threads:
        pytest.skip(f"needs {threads} usable CPUs")
    return cpus[:threads]


# -- the pass count ---------------------------------------------------------------------------
@pytest.mark.parametrize("kernel", bw.KERNELS)
def test_given_passes_are_made_and_validated(kernel):
    for passes in (1, 2, 3, 16, 18, 33):     # 18: the step values repeat every 16 steps
        r = _core.bw_run(kernel, _cpus(1), N, 2, [(ISAS[-1], False)], warmup=1,
                         passes=[passes])
        assert r["passes"] == [passes]
        assert r["validated"] and r["pass_bad"] == 0 and r["spot_bad"] == 0, (passes, r)


def test_read_sums_every_pass():
    """read's sum over a repetition is its passes' sums: about `passes` times one pass."""
    one = _core.bw_run("read", _cpus(1), N, 1, [("scalar", False)], warmup=0, passes=[1])
    five = _core.bw_run("read", _cpus(1), N, 1, [("scalar", False)], warmup=0, passes=[5])
    assert one["validated"] and five["validated"]
    assert 4.9 * one["read_sums"][0] < five["read_sums"][0] < 5.1 * one["read_sums"][0]


def test_no_minimum_time_keeps_one_pass_per_repetition():
    r = _core.bw_run("triad", _cpus(1), N, 2, [(ISAS[-1], False)], warmup=1)
    assert r["passes"] == [1]
    r = _core.bw_run("triad", _cpus(1), N, 2, [(ISAS[-1], False)], warmup=1,
                     min_seconds=1e-9)       # any pass lasts a nanosecond: one is enough
    assert r["passes"] == [1] and r["validated"]


def test_calibration_grows_the_passes_of_a_small_array():
    # 64 elements take well under a microsecond a pass: 20 ms ask for many passes (only a
    # warm-up pass preempted for 20 ms would leave one)
    r = _core.bw_run("copy", _cpus(1), 64, 2, [(ISAS[-1], False), ("scalar", False)],
                     warmup=1, min_seconds=0.02)
    assert all(p > 1 for p in r["passes"]) and r["validated"]


@pytest.mark.parametrize("kw", [{"passes": [-1]}, {"passes": [1, 1]}, {"passes": ["x"]},
                                {"min_seconds": -1.0}, {"min_seconds": 61.0}])
def test_bad_pass_counts_are_refused(kw):
    with pytest.raises((ValueError, TypeError)):
        _core.bw_run("copy", _cpus(1), N, 1, [("scalar", False)], warmup=0, **kw)


def test_bytes_are_counted_per_pass():
    topo = read_topology("/")
    r = bw.measure(topo, kernel="triad", cpus=_cpus(1), size_bytes=N * 8, reps=3, nt="off")
    passes = r.params["passes"]
    assert passes >= 1 and r.params["passes_by_variant"][r.params["variants"][0]] >= 1
    assert r.params["min_rep_seconds"] == bw.MIN_REP_SECONDS
    for g, t in zip(r.metrics["bandwidth"].values, r.metrics["seconds"].values, strict=True):
        assert g == pytest.approx(24 * N * passes / t / 1e9)


def test_minimum_time_is_checked():
    topo = read_topology("/")
    with pytest.raises(UserError, match="minimum time"):
        bw.BandwidthParams(kernel="copy", cpus=tuple(_cpus(1)), size_bytes=N * 8,
                           min_seconds=-1).checked(topo)


# -- a pass that skipped its work -------------------------------------------------------------
@pytest.mark.parametrize("variant", [("scalar", False), (ISAS[-1], False), (ISAS[-1], True)])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kernel", bw.KERNELS)
def test_a_pass_that_did_no_work_is_caught(kernel, threads, variant):
    """Every pass of a repetition takes another value than the one before it, and after
    every pass each thread checks its chunk's first and last output element (read: the sum
    over the passes), so a skipped pass is caught whichever it is, not only the last."""
    cpus = _cpus(threads)
    ok = _core.bw_run(kernel, cpus, N, 2, [variant], warmup=1, passes=[4])
    assert ok["validated"] and ok["pass_bad"] == 0
    for skip in (0, 1, 3):
        r = _core.bw_run(kernel, cpus, N, 2, [variant], warmup=1, passes=[4], skip_pass=skip)
        assert not r["validated"], skip
        if kernel == "read":
            assert r["bad_elements"] > 0
        else:
            assert r["pass_bad"] > 0


def test_a_skipped_pass_is_a_validation_error_in_the_record_path(monkeypatch):
    """The Python side turns the core's pass marks into the one clear error."""
    real = _core.bw_run

    def skipping(*a, **kw):
        return real(*a, **kw, skip_pass=1)
    monkeypatch.setattr(bw._core, "bw_run", skipping)
    topo = read_topology("/")
    with pytest.raises(bw.MeasurementError, match="pass marks were wrong"):
        bw.measure(topo, kernel="copy", cpus=_cpus(1), size_bytes=64 * 8, reps=2, nt="off")


# -- streaming or ordinary stores, by where the arrays live -----------------------------------
@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    """2 sockets x 2 L3 domains (8 MiB each) x 2 cores, L2 1 MiB per core, no SMT."""
    root = machine(tmp_path_factory.mktemp("m"), sockets=2, l3_per_socket=2, cores_per_l3=2,
                   smt=1, l3_kb=8192)
    return read_topology(root)


def _choice(topo, kernel, cpus, size, nt="auto"):
    p = bw.BandwidthParams(kernel=kernel, cpus=tuple(cpus), size_bytes=size, nt=nt)
    return bw.store_choice(topo, p)


def test_shared_cache_adds_the_threads_l3_domains(synth):
    assert bw.shared_cache_bytes(synth, [0]) == (8 << 20, "L3")
    assert bw.shared_cache_bytes(synth, [0, 1]) == (8 << 20, "L3")        # one L3 domain
    assert bw.shared_cache_bytes(synth, [0, 2]) == (16 << 20, "L3 x2")    # two
    assert bw.shared_cache_bytes(synth, list(range(8))) == (32 << 20, "L3 x4")


@pytest.mark.parametrize("cpus,size,fits", [
    ([0], 16 << 10, True),                 # L1-sized
    ([0], (8 << 20) // 3, True),           # the whole L3, exactly
    ([0], (8 << 20) // 3 + 8, False),      # one element past it
    ([0, 1], 4 << 20, False),              # 12 MiB in one 8 MiB L3
    ([0, 2], 4 << 20, True),               # 12 MiB in two L3s (16 MiB)
    ([0], 1 << 30, False),                 # DRAM-sized
])
def test_nt_auto_by_working_set(synth, cpus, size, fits):
    got, reason = _choice(synth, "triad", cpus, size)
    assert got is fits
    assert ("fits in" if fits else "exceeds") in reason
    assert bw.variants("triad", "avx2", "auto", got) == [("avx2", not fits)]


def test_nt_auto_counts_all_arrays(synth):
    # 3 MiB per array: copy's two arrays (6 MiB) fit an 8 MiB L3, triad's three do not
    assert _choice(synth, "copy", [0], 3 << 20)[0] is True
    assert _choice(synth, "triad", [0], 3 << 20)[0] is False


def test_nt_auto_without_cache_sizes_times_both(synth):
    bare = replace(synth, caches=[], l3s=[])
    fits, reason = _choice(bare, "triad", [0], 16 << 10)
    assert fits is None and "unknown" in reason
    assert bw.variants("triad", "avx2", "auto", fits) == [("avx2", False), ("avx2", True)]


@pytest.mark.parametrize("nt,kinds", [("both", [False, True]), ("on", [True]),
                                      ("off", [False])])
def test_explicit_store_kinds_ignore_the_size(synth, nt, kinds):
    for size in (16 << 10, 1 << 30):
        fits, reason = _choice(synth, "triad", [0], size, nt)
        assert fits is None and reason == f"--nt {nt}"
        assert [k for _, k in bw.variants("triad", "avx2", nt, fits)] == kinds


def test_read_has_no_store_kind(synth):
    assert bw.variants("read", "avx2", "auto", False) == [("avx2", False)]
    assert _choice(synth, "read", [0], 1 << 30) == (None, "no stores")


def test_the_record_states_the_choice():
    topo = read_topology("/")
    r = bw.measure(topo, kernel="fill", cpus=_cpus(1), size_bytes=N * 8, reps=1)
    fits, reason = bw.store_choice(topo, bw.BandwidthParams(
        kernel="fill", cpus=tuple(_cpus(1)), size_bytes=N * 8))
    assert r.params["nt_reason"] == reason
    assert r.params["working_set_bytes"] == N * 8
    if fits is not None:
        assert r.params["stores"] == ("ordinary" if fits else "streaming")
