"""Measured compute through numpy's BLAS (small sizes), the Compute benchmark shape, HPL
through hpcc when installed, and the `numascope peak` command."""

from __future__ import annotations

import json
import shutil

import pytest

from numascope.benchmark import Case
from numascope.cli import main as cli_main
from numascope.errors import UserError
from numascope.families.compute import bench as compute
from numascope.peaks import blas, hpcc
from numascope.topology import read_topology


@pytest.fixture(scope="module")
def topo():
    return read_topology("/")


def test_flop_counts():
    assert compute.dgemm_flop(1000) == 2e9
    assert compute.lu_flop(1000) == pytest.approx(2 / 3 * 1e9 + 2e6)


def test_dgemm_and_lu_validate():
    r = compute.run_dgemm(200, reps=2)
    assert len(r["seconds"]) == 2 and r["check"] < 16
    r = compute.run_lu(300, reps=2)
    assert len(r["residuals"]) == 2 and max(r["residuals"]) < 16


def test_size_checks():
    with pytest.raises(UserError, match="too small"):
        compute.run_dgemm(4)
    with pytest.raises(UserError, match="smaller --size"):
        compute.run_lu(10**6)


def test_compute_benchmark(topo):
    b = compute.Compute()
    cases = b.cases(topo, dgemm=(128,), lu=(160,), reps=2)
    assert [c.label for c in cases] == ["clock", "dgemm n=128", "lu n=160"]
    b = compute.Compute(compute.ComputeParams(clock_ghz=3.0))   # a given clock: no clock case
    cases = b.cases(topo, dgemm=(128,), lu=(160,), reps=2)
    assert [c.label for c in cases] == ["dgemm n=128", "lu n=160"]
    for c in cases:
        r = b.measure(topo, c)
        assert r.family == "compute" and r.validated
        assert len(r.metric("gflops").values) == 2 and r.metric("gflops").best > 0
        assert r.notes[0].startswith("BLAS:")
        if r.params["peak_gflops"]:
            assert r.metric("pct_of_peak").best > 0
            assert b.peaks(topo)["flops"]["ghz_source"].startswith("given")
    with pytest.raises(UserError):
        b.measure(topo, Case("x", {"kind": "nope"}))


def test_params_are_checked_once_when_made():
    for bad in ({"reps": 0}, {"dgemm": (8,)}, {"clock_ghz": float("inf")},
                {"clock_ghz": 0.0}, {"hpl_np": 0}, {"hpl_n": 10}, {"memory": ""},
                {"memory": "12x DDR9-4800"}, {"links": "x"}):
        with pytest.raises(UserError):
            compute.ComputeParams(**bad)


def test_suite_cases(topo):
    from numascope.profile import FULL, QUICK
    quick = compute.suite_cases(topo, QUICK)
    assert [c.params["kind"] for c in quick] == ["clock", "dgemm", "lu"]
    full = compute.suite_cases(topo, FULL)
    assert ("hpl" in [c.params["kind"] for c in full]) == (shutil.which("hpcc") is not None)


def test_numpy_blas_identified():
    info = blas.numpy_blas()
    assert info["library"]
    assert blas.classify("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3") == "reference"
    assert blas.classify("/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3") \
        == "optimized"
    assert "reference" in blas.warning_for({"kind": "reference", "path": "x"}, "hpcc")


@pytest.mark.skipif(shutil.which("hpcc") is None, reason="hpcc not installed")
def test_hpl_through_hpcc_small():
    r = hpcc.run_hpl(1, n=400, nb=64)
    assert r.passed and r.n == 400 and r.gflops > 0 and r.residual < 16


def test_cli_peak_bad_specs(capsys):
    assert cli_main(["peak", "--memory", "twelve DDR5", "--no-compute"]) == 2
    assert "--memory" in capsys.readouterr().err
    assert cli_main(["peak", "--links", "4x16", "--no-compute"]) == 2
    err = capsys.readouterr().err
    assert "--links" in err and "Traceback" not in err


def test_cli_peak_json_no_compute(capsys):
    rc = cli_main(["peak", "--no-compute", "--memory", "12x DDR5-4800",
                   "--links", "xgmi:4x16@32", "--reps", "1", "--dram-gbs", "368.64", "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert [r["case"] for r in d["results"]] == ["clock"]   # the clock case, through the runner
    assert d["peaks"]["links"]["value"] == 512.0
    assert d["peaks"]["clock"]["single_ghz"] > 0.5
    sockets = max(1, len(read_topology("/").packages))
    assert d["peaks"]["dram"]["value"] == pytest.approx(460.8 * sockets)
    dram_row = next(r for r in d["efficiency"] if r["what"] == "DRAM bandwidth")
    assert dram_row["percent"] == pytest.approx(100 * 368.64 / (460.8 * sockets))


def test_clock_case_and_figures(topo):
    from numascope.families.compute.figures import figures
    b = compute.Compute()
    clk = b.measure(topo, Case("clock", {"kind": "clock", "reps": 1}))
    assert set(clk.params["per_cpu"]) == set(topo.usable_cpus())
    assert all(0.5 < v < 6 for v in clk.metric("single_ghz").values)
    assert "flops" in clk.params["peaks"] and "clock" not in clk.params["peaks"]
    lu = b.measure(topo, Case("lu n=128", {"kind": "lu", "n": 128, "reps": 1}))
    titles = [t for t, _ in figures([clk, lu])]
    assert titles == ["Measured core clock", "Measured FLOP/s vs peak"]
    assert figures([]) == []


def fake_root(tmp_path):
    """A 4-core Zen 2 machine as a sysfs/procfs dump."""
    base = tmp_path / "sys/devices/system/cpu"
    for c in range(4):
        t = base / f"cpu{c}" / "topology"
        t.mkdir(parents=True)
        (t / "physical_package_id").write_text("0\n")
        (t / "core_id").write_text(f"{c}\n")
        (t / "thread_siblings_list").write_text(f"{c}\n")
    (base / "online").write_text("0-3\n")
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cpuinfo").write_text(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 23\nmodel\t\t: 49\n"
        "flags\t\t: fpu sse2 avx fma avx2\n\n")
    return tmp_path


def test_cli_peak_replay_with_given_clock(capsys, tmp_path):
    root = fake_root(tmp_path)
    assert cli_main(["peak", "--sysfs-root", str(root), "--json"]) == 2  # measuring a replay
    capsys.readouterr()
    assert cli_main(["peak", "--no-compute", "--sysfs-root", str(root), "--clock", "2.2",
                     "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    f = d["peaks"]["flops"]
    assert f["value"] == pytest.approx(4 * 16 * 2.2) and f["ghz_source"].startswith("given")
    assert d["peaks"]["dram"]["value"] is None and "dmi" in d["peaks"]["dram"]["reason"]
