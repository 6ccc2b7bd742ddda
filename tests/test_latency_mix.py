"""Loaded latency by read:write mix (`lat --loaded --mix`): the mixes and their DRAM
traffic, the knee rule and the per-curve monotonicity check on planted points (no C), then
on this machine a short two-curve run, and the write generator's stores read back."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from numascope.errors import UserError
from numascope.families.latency import bench as lat
from numascope.families.latency import knee
from numascope.families.latency.mixes import Mix, check_mixes
from numascope.results.record import BenchResult, Metric
from numascope.traffic import WriteAllocate

YES, NO, UNKNOWN = WriteAllocate(True, "rfo"), WriteAllocate(False, "none"), \
    WriteAllocate(None, "who knows")


# -- the mixes ------------------------------------------------------------------------------

def test_mixes_parse_to_canonical_names():
    assert check_mixes("read,3:1,2:1,1:1,nt") == ("read", "3:1", "2:1", "1:1", "nt")
    assert check_mixes(" NT ,2:1nt,0:1") == ("nt", "2:1nt", "0:1")
    assert Mix.parse("0:1nt") == Mix(0, 1, True) and Mix.parse("0:1nt").name == "nt"
    assert Mix.parse("read") == Mix(1, 0)


@pytest.mark.parametrize("text,words", [
    ("x", "a mix is read"), ("1:0", "no stores"), ("read,read", "given twice"),
    ("nt,0:1nt", "given twice"), ("17:1", "at most 16"), ("read,,1:1", "empty mix"),
    ("2:1:1", "a mix is read"), ("-1:1", "a mix is read"),
])
def test_bad_mixes_are_refused_in_one_line(text, words):
    with pytest.raises(UserError, match=words) as e:
        check_mixes(text)
    assert "\n" not in str(e.value) and str(e.value).startswith("--mix")


def test_dram_traffic_counts_write_allocate_only_where_it_applies():
    one = Mix.parse("1:1")
    assert one.dram_lines(YES) == (2, 1)           # 2 reads + 1 write per pair of lines
    assert one.dram_lines(NO) == (1, 1)
    assert one.dram_lines(UNKNOWN) is None
    assert one.dram_gbs(5.0, 5.0, YES) == 15.0 and one.dram_gbs(5.0, 5.0, NO) == 10.0
    assert one.dram_gbs(5.0, 5.0, UNKNOWN) is None
    nt = Mix.parse("nt")                            # streaming stores read nothing
    assert nt.dram_lines(WriteAllocate(False, "nt")) == (0, 1)
    assert Mix.parse("3:1").dram_lines(YES) == (4, 1)
    assert Mix.parse("read").dram_gbs(7.0, 0.0, UNKNOWN) == 7.0   # no stores: no question
    assert "one read per stored line" in one.counting(YES)
    assert "lower bound" in one.counting(UNKNOWN)


def test_mlc_modes_by_issue_and_by_bus():
    assert Mix.parse("read").mlc().startswith("-R")
    assert Mix.parse("nt").mlc(YES) == "-W6"
    assert Mix.parse("2:1nt").mlc(YES) == "-W7"
    assert Mix.parse("1:1").mlc(YES) == "-W5 counted as issued, -W2 counted on the bus " \
                                        "(write-allocate)"
    assert Mix.parse("2:1").mlc(YES).startswith("-W2 counted as issued, -W3")
    assert Mix.parse("3:1").mlc(YES).startswith("-W3 counted as issued, -W12")
    assert Mix.parse("1:1").mlc(NO) == "-W5"
    assert Mix.parse("0:1").mlc(YES) == "-W5 counted on the bus (write-allocate)"
    assert Mix.parse("5:3").mlc(YES) == "no -W mode"
    assert Mix.parse("3:1nt").mlc() == "-W9"


# -- the knee -------------------------------------------------------------------------------

def test_knee_interpolates_where_latency_crosses_the_line():
    pts = [(20, 200), (1, 100), (5, 105), (10, 110), (15, 140)]      # any order
    k = knee.find(pts)
    assert k is not None and k.line_ns == pytest.approx(120.0)
    assert k.below == (10, 110) and k.above == (15, 140)
    assert k.gbs == pytest.approx(10 + 10 / 30 * 5)
    assert "knee at 11.7 GB/s" in k.text()


def test_knee_base_is_the_lowest_latency_so_a_disturbed_first_point_does_not_hide_it():
    pts = [(0.5, 150), (1, 100), (5, 130)]
    k = knee.find(pts)
    assert k is not None and k.base == (1, 100)
    assert k.gbs == pytest.approx(1 + 20 / 30 * 4)


def test_no_knee_on_a_flat_curve_or_one_point():
    assert knee.find([(1, 100), (10, 110), (20, 119)]) is None
    assert "no knee" in knee.text([(1, 100), (10, 110), (20, 119)])
    assert "up to 20.0 GB/s" in knee.text([(1, 100), (10, 110), (20, 119)])
    assert knee.find([(1, 100)]) is None
    assert knee.find([(1, 100), (2, 106)], rise=0.05) is not None    # the rise is the rule
    with pytest.raises(ValueError):
        knee.find([(1, 100), (2, 100)], rise=0.0)


# -- the curve check per mix ----------------------------------------------------------------

def point(delay: int, gbs: float, ns: list[float], mix: str = "read") -> BenchResult:
    params = {"kind": "loaded", "delay": delay, "bytes": 1 << 30, "mode": "tlb", "cpu": 0,
              "load_cpus": [1], "load_bytes": 1 << 28, "node": None, "samples": len(ns),
              "loads_per_sample": 1 << 16, "stride": 256}
    if mix != "read":
        params.update(mix=mix, write_allocate="yes", traffic="planted")
    return BenchResult(family="latency", case=f"loaded mix={mix} delay={delay}", params=params,
                       metrics={"latency": Metric("latency", "ns", False, list(ns)),
                                "bandwidth": Metric("bandwidth", "GB/s", True, [gbs])})


def planted() -> list[BenchResult]:
    read = [point(10000, 0.5, [130] * 3), point(100, 5.0, [140] * 3), point(0, 10.0, [180] * 3)]
    mixed = [point(10000, 1.0, [135] * 3, "1:1"), point(100, 12.0, [170] * 3, "1:1"),
             point(0, 20.0, [150] * 3, "1:1")]            # 150 ns at 20 GB/s: an inversion
    return read + mixed


def test_curves_are_split_by_mix_and_checked_each_on_its_own():
    cs = lat.curves(planted())
    assert [c[0].params.get("mix", "read") for c in cs] == ["read", "1:1"]
    invs = lat.inversions(planted())
    # only the 1:1 curve breaks: read's 180 ns at 10 GB/s is never set against 1:1's points
    assert [(i.high.params["mix"], i.high.params["delay"]) for i in invs] == [("1:1", 0)]
    assert "not monotone (mix 1:1)" in invs[0].note()


def test_curve_summary_names_the_knee_and_keeps_the_flagged_point():
    read, mixed = (lat.curve_summary(c) for c in lat.curves(planted()))
    assert read["mix"] == "read" and read["not_monotone"] == []
    assert read["knee"]["gbs"] == pytest.approx(5 + (156 - 140) / 40 * 5)
    assert mixed["not_monotone"] == [0] and len(mixed["points"]) == 3
    assert mixed["knee"]["base_ns"] == 135 and mixed["bandwidth_counted"] == "planted"


# -- on this machine ------------------------------------------------------------------------

def _two_cpus():
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs: a chaser and a loader")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "numascope", *args], capture_output=True,
                          check=False, text=True, timeout=300)


def test_lat_loaded_mix_read_and_1to1_gives_two_curves_with_traffic_as_stated(tmp_path):
    _two_cpus()
    png = tmp_path / "mix.png"
    p = _run("lat", "--loaded", "--mix", "read,1:1", "--delays", "0,1000", "--samples", "3",
             "--json", "--plot", str(png))
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert png.stat().st_size > 0
    assert [c["mix"] for c in d["curves"]] == ["read", "1:1"]
    assert all(len(c["points"]) == 2 and c["knee_text"] for c in d["curves"])
    read = [r for r in d["results"] if "mix" not in r["params"]]
    mixed = [r for r in d["results"] if r["params"].get("mix") == "1:1"]
    assert len(read) == len(mixed) == 2
    assert all(r["case"].startswith("loaded delay=") for r in read)       # as it always was
    for r in mixed:
        m = {k: r["metrics"][k]["median"] for k in ("bandwidth", "read_bandwidth",
                                                     "write_bandwidth")}
        assert m["read_bandwidth"] > 0 and m["write_bandwidth"] > 0
        wa = r["params"]["write_allocate"]
        want = {"yes": m["read_bandwidth"] + 2 * m["write_bandwidth"],
                "no": m["read_bandwidth"] + m["write_bandwidth"],
                "unknown": m["read_bandwidth"] + m["write_bandwidth"]}[wa]
        assert m["bandwidth"] == pytest.approx(want)
        assert r["params"]["traffic"] in r["metrics"]["bandwidth"]["note"]
        assert any(n.startswith("stores checked: ") for n in r["notes"])
    t = _run("lat", "--loaded", "--mix", "read,1:1", "--delays", "0,1000", "--samples", "2",
             "--size", "8M", "--loads", "4096")
    assert t.returncode == 0, t.stderr
    assert "mix 1:1" in t.stdout and "DRAM traffic" in t.stdout and "knee" in t.stdout


def test_without_mix_the_json_document_is_as_it_was():
    _two_cpus()
    p = _run("lat", "--loaded", "--delays", "0", "--size", "1M", "--samples", "2",
             "--loads", "1024", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert "curves" not in d and "mix" not in d["results"][0]["params"]
    assert set(d["results"][0]["metrics"]) >= {"bandwidth", "latency"}
    assert "write_bandwidth" not in d["results"][0]["metrics"]


@pytest.mark.parametrize("args,words", [
    (["--mix", "1:1"], "--mix"),                              # only with --loaded
    (["--loaded", "--mix", "5:0"], "no stores"),
    (["--loaded", "--mix", "read,read"], "given twice"),
])
def test_bad_mix_flags_exit_2_with_one_line(args, words):
    p = _run("lat", *args)
    assert p.returncode == 2 and words in p.stderr and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("mix", ["1:1", "nt"])
def test_the_write_generator_really_stores(mix):
    """Every delay stores a new pattern and reads it back: with the stores left out (a
    test-only switch of the C call) the check must fail."""
    _two_cpus()
    from numascope import _core
    m = Mix.parse(mix)
    cpus = sorted(os.sched_getaffinity(0))[:2]
    kw = {"reads": m.reads, "writes": m.writes, "nt": m.nt}
    args = (4 << 20, cpus[0], [cpus[1]], [0, 2000], None, 4 << 20, "tlb", 262144, 2, 4096, 1,
            256)
    r = _core.lat_loaded(*args, **kw)
    for pt in r["points"]:
        assert pt["lines_checked"] > 0 and pt["loader_written_bytes"] > 0
    with pytest.raises(RuntimeError, match="stores did not happen"):
        _core.lat_loaded(*args, **kw, skip_stores=True)
