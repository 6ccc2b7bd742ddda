"""Which clock the FLOP/s peak uses, and that it says so: all cores busy when the peaks stage
measured it, else a single CPU's clock at run start, labelled as that."""

from __future__ import annotations

import pytest
from test_peaks_calc import two_socket

from numascope import peaks
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord
from numascope.suite import theoretical_peaks
from numascope.topology import read_topology

ZEN2 = ("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 23\nmodel\t\t: 49\n"
        "flags\t\t: fpu sse2 avx avx2 fma\n\n")


@pytest.fixture
def zen2_root(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cpuinfo").write_text(ZEN2)
    return tmp_path


@pytest.mark.parametrize("clock, ghz, source", [
    ({"all_busy_ghz": 2.5, "single_ghz": 3.0}, 2.5, peaks.CLOCK_ALL_BUSY),
    ({"single_ghz": 3.0}, 3.0, peaks.CLOCK_SINGLE),
    ({"single_ghz": 3.0, "labels": {"single_ghz": "measured, one CPU alone at run start"}},
     3.0, "measured, one CPU alone at run start"),
    ({"all_busy_ghz": 2.0, "given": True}, 2.0, peaks.CLOCK_GIVEN),
    ({}, None, "not measured"),
])
def test_peak_clock(clock, ghz, source):
    assert peaks.peak_clock(clock) == (ghz, source)


def test_single_cpu_clock_is_not_called_all_cores(zen2_root):
    s = peaks.summary(two_socket(4, 2), clock={"single_ghz": 3.0}, root=zen2_root)
    f = s["flops"]
    assert f["ghz"] == 3.0 and f["ghz_source"] == peaks.CLOCK_SINGLE
    assert "all cores busy" not in f["formula"] and "(measured, one CPU alone)" in f["formula"]
    assert any("all-cores clock was not measured" in n for n in f["notes"])
    busy = peaks.summary(two_socket(4, 2), clock={"single_ghz": 3.0, "all_busy_ghz": 2.5},
                         root=zen2_root)["flops"]
    assert busy["ghz"] == 2.5 and "(measured, all cores busy)" in busy["formula"]
    assert not any("all-cores clock was not measured" in n for n in busy["notes"])


def _clock_result(single: float, busy: float) -> BenchResult:
    return BenchResult("compute", "clock", {"kind": "clock"}, {
        "single_ghz": Metric("single_ghz", "GHz", True, [single]),
        "all_busy_ghz": Metric("all_busy_ghz", "GHz", True, [busy])})


def test_run_without_peaks_stage_uses_the_run_start_clock_and_says_so():
    topo = read_topology("/")
    rec = RunRecord.new()
    rec.host["clock_ghz"] = 2.8
    f = theoretical_peaks(topo, rec)["flops"]
    assert f["ghz"] == 2.8
    assert f["ghz_source"] == "measured, one CPU alone at run start (run monitor)"
    if f["value"] is not None:
        assert "one CPU alone at run start" in f["formula"]
        assert "all cores busy" not in f["formula"]


def test_run_with_peaks_stage_uses_the_all_cores_clock():
    topo = read_topology("/")
    rec = RunRecord.new()
    rec.host["clock_ghz"] = 2.8
    rec.results.append(_clock_result(3.1, 2.6))
    out = theoretical_peaks(topo, rec)
    f = out["flops"]
    assert f["ghz"] == 2.6 and f["ghz_source"].startswith(peaks.CLOCK_ALL_BUSY)
    labels = out["clock"]["labels"]
    assert labels["single_ghz"].startswith(peaks.CLOCK_SINGLE)
    assert labels["all_busy_ghz"].startswith(peaks.CLOCK_ALL_BUSY)
