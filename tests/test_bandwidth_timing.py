"""The timing window of a bandwidth repetition and the repetitions that cannot be trusted:
every thread's work lies inside the window even when a thread starts late; implausibly fast
repetitions are set aside (never the best); a repetition without time is an error."""

from __future__ import annotations

import os
import statistics

import pytest

from numascope import _core
from numascope.analysis.efficiency import measured_from
from numascope.errors import MeasurementError
from numascope.families.bandwidth import bench as bw
from numascope.families.bandwidth.outliers import MIN_EXCESS, screen
from numascope.topology import read_topology

LATE = 0.2   # seconds thread 0 is held back after the others finished


def _two_threads() -> list[int]:
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[:2] if len(cpus) > 1 else cpus * 2   # a team may share a CPU


@pytest.mark.parametrize("kernel", ["copy", "triad"])
def test_a_late_thread_is_inside_the_window(kernel):
    # Thread 0 starts only after thread 1 has finished its half, plus LATE: the old window
    # (thread 0's own start to the end) held none of thread 1's work and missed LATE.
    r = _core.bw_run(kernel, _two_threads(), 1 << 16, 2, [("scalar", False)], warmup=1,
                     late_start=LATE)
    assert r["validated"]
    for t, starts, ends in zip(r["times"][0], r["thread_starts"][0], r["thread_ends"][0]):
        assert min(starts) == 0.0                       # offsets from the earliest start
        assert t == pytest.approx(max(ends))            # window: earliest start..latest end
        assert ends[1] <= starts[0]                     # thread 1 was done before 0 began
        assert starts[0] >= LATE
        assert t >= LATE                                # the window holds the delay
        old_window = max(ends) - starts[0]              # what thread 0's clock alone gave
        assert t - old_window >= LATE


def test_every_thread_is_stamped():
    cpus = _two_threads()
    r = _core.bw_run("fill", cpus, 1 << 16, 3, [("scalar", False), ("scalar", True)],
                     warmup=1)
    assert len(r["thread_starts"]) == 2 and len(r["thread_starts"][0]) == 3
    for times, starts, ends in zip(r["times"], r["thread_starts"], r["thread_ends"]):
        for t, st, en in zip(times, starts, ends):
            assert len(st) == len(en) == len(cpus)
            assert all(e >= s >= 0 for s, e in zip(st, en))
            assert t == pytest.approx(max(en))


# -- the rule for implausibly fast repetitions ---------------------------------------------
def test_the_reviewers_repetitions_are_too_many_to_exclude():
    """Three implausibly fast of ten (the reviewers' run, timed on thread 0's clock): more
    than the one of ten a run may have broken, so none is excluded and the variant is
    bimodal, a disturbed run (tests/test_bandwidth_bimodal.py); one of them alone is."""
    gbs = [44.0, 45.0, 46.0, 45.0, 43.0, 47.0, 45.0, 110.0, 81.0, 79.0]
    s = screen(gbs)
    assert s.excluded == [] and s.kept == list(range(10)) and s.would_exclude == 3
    assert s.bimodal and [m.reps for m in s.modes] == [7, 3]
    s = screen(gbs[:8] + [45.0, 44.0])
    assert s.excluded == [7] and not s.bimodal


@pytest.mark.parametrize("gbs, excluded", [
    ([20.0] * 9 + [80.0], [9]),                           # one far above identical ones
    ([100.0] * 9 + [112.0], []),                          # far in MAD but within the margin
    ([10.0 + 2 * i for i in range(11)], []),              # broad but continuous noise
    ([50.0] * 9 + [1.0], []),                             # slow repetitions are never suspect
    ([20.0, 21.0, 20.5, 80.0], []),                       # too few to judge
    ([20.0, 21.0, 20.5, 20.2, 80.0], [4]),
])
def test_outlier_rule_on_planted_values(gbs, excluded):
    s = screen(gbs)
    assert s.excluded == excluded
    assert sorted(s.kept + s.excluded) == list(range(len(gbs)))
    assert all(gbs[i] > (1 + MIN_EXCESS) * statistics.median(gbs) for i in s.excluded)


@pytest.fixture(scope="module")
def topo():
    return read_topology("/")


def _planted(monkeypatch, times: list[float]) -> None:
    """Run the real kernel, then replace its times by planted ones."""
    real = _core.bw_run

    def fake(*args, **kw):
        raw = real(*args, **kw)
        raw["times"] = [list(times) for _ in raw["times"]]
        return raw
    monkeypatch.setattr(bw._core, "bw_run", fake)


def test_implausible_repetitions_are_flagged_not_best(topo, monkeypatch):
    times = [0.010, 0.0102, 0.0098, 0.0101, 0.0099, 0.0100, 0.0040, 0.0101, 0.0100, 0.0103]
    _planted(monkeypatch, times)
    cpu = topo.usable_cpus()[:1]
    r = bw.measure(topo, kernel="triad", cpus=cpu, size_bytes=1 << 20, reps=10, isa="scalar",
                   nt="off")
    m = r.metrics["bandwidth"]
    assert len(m.values) == 9 and len(r.metrics["seconds"].values) == 9
    assert m.best < 1.25 * m.median                     # the 2.5x repetition is not the best
    [ex] = r.params["excluded_reps"]
    assert ex["rep"] == 6 and ex["seconds"] == 0.004 and ex["variant"] == "scalar"
    assert any("excluded as implausibly fast" in n for n in r.notes)
    d = measured_from([r])
    assert d["dram_gbs"] == m.median
    assert "median of 9 repetitions" in d["dram_by"] and "1 implausible" in d["dram_by"]


@pytest.mark.parametrize("bad", [0.0, -1e-3, float("nan")])
def test_a_repetition_without_time_is_an_error(topo, monkeypatch, bad):
    _planted(monkeypatch, [0.01, bad, 0.01])
    with pytest.raises(MeasurementError, match="no measurable time"):
        bw.measure(topo, kernel="copy", cpus=topo.usable_cpus()[:1], size_bytes=1 << 20,
                   reps=3, isa="scalar", nt="off")
