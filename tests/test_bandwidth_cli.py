"""`numascope bw` through a real subprocess: JSON on success, one line and exit 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _bw(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "numascope", "bw", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def test_triad_json():
    p = _bw("--kernel", "triad", "--threads", "1", "--size", "64M", "--reps", "3", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    (r,) = doc["results"]
    assert r["family"] == "bandwidth" and r["validated"]
    assert r["params"]["kernel"] == "triad" and r["params"]["array_bytes"] == 64 << 20
    # every repetition is either kept or listed as excluded (implausibly fast)
    assert len(r["metrics"]["bandwidth"]["values"]) + len(r["params"]["excluded_reps"]) == 3
    assert r["metrics"]["bandwidth"]["best"] > 0
    assert len(r["placement"]["cpus"]) == 1
    assert "10^9" in r["metrics"]["bandwidth"]["note"]


def test_table_output():
    p = _bw("--kernel", "read,copy", "--threads", "1", "--size", "8M", "--reps", "2")
    assert p.returncode == 0, p.stderr
    assert "read" in p.stdout and "copy" in p.stdout and "GB/s" in p.stdout


@pytest.mark.parametrize("args", [
    ["--cpus", "4096"],
    ["--threads", "0"],
    ["--threads", "100000"],
    ["--membind", "999"],
    ["--interleave", "0,999"],
    ["--domain", "N999"],
    ["--size", "1P"],
    ["--size", "900000G"],
    ["--kernel", "nope"],
    ["--reps", "0"],
    ["--cpus", "0", "--domain", "S0"],
    ["--plot", "x.pdf"],
])
def test_bad_input_one_line_exit_2(args):
    p = _bw(*args)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("numascope: error:"), p.stderr


# -- in process: the runner, the envelope, the old spellings, the table ----------------------
def _no_measuring(monkeypatch):
    from numascope.errors import MeasurementError
    from numascope.families.bandwidth import bench as bandwidth

    def refuse(*a, **kw):
        raise MeasurementError("measured although the input was bad")
    monkeypatch.setattr(bandwidth, "run", refuse)


@pytest.mark.parametrize("plot", ["out.txt", "/nonexistent/x.png"])
def test_plot_path_is_checked_before_measuring(monkeypatch, capsys, plot):
    from numascope.cli import main
    _no_measuring(monkeypatch)
    assert main(["bw", "--size", "8M", "--reps", "1", "--plot", plot]) == 2
    assert "--plot" in capsys.readouterr().err


def test_hugetlb_without_pool_is_unavailable_before_measuring(monkeypatch, capsys, tmp_path):
    from numascope import host as hostmod
    from numascope.cli import main
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "meminfo").write_text(
        "MemAvailable: 8388608 kB\nHugePages_Free: 0\nHugepagesize: 2048 kB\n")
    fake = hostmod.Host(tmp_path)
    from numascope.families.bandwidth import bench as bandwidth
    monkeypatch.setattr(bandwidth, "live_host", lambda topo: fake)
    _no_measuring(monkeypatch)
    assert main(["bw", "--pages", "hugetlb", "--size", "8M", "--reps", "1"]) == 4
    assert "pool has 0 B free" in capsys.readouterr().err


def test_envelope_and_old_spellings(capsys):
    from numascope.cli import main
    rc = main(["bw", "--kernel", "read", "--domain", "all", "--huge", "none", "--threads", "1",
               "--size", "4M", "--reps", "2", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert list(doc) == ["schema_version", "command", "results", "errors", "units"]
    assert doc["command"] == "bw" and doc["errors"] == []
    (r,) = doc["results"]
    assert r["placement"]["memory"] == {"policy": "first-touch", "nodes": [], "pages": "none"}
    assert r["params"]["where"] == "all" and r["params"]["sweep"] == "single"
    assert r["params"]["threads"] == 1 and r["params"]["reps"] == 2


def test_table_reads_old_records_and_fits(capsys):
    """A record written before MemorySpec ("huge" for the page kind) renders, in 80
    columns, with the memory placement and page kind in words."""
    from rich.console import Console

    from numascope.families.bandwidth.command import _print
    from numascope.results.record import BenchResult, Metric
    old = BenchResult(
        "bandwidth", "copy compact 2T",
        {"kernel": "copy", "isa": "avx2", "stores": "ordinary", "threads": 64, "reps": 3,
         "warmup": 1, "array_bytes": 1 << 30, "policies": ["compact", "spread"]},
        {"bandwidth": Metric("bandwidth", "GB/s", True, [1234.5, 1200.0, 1190.0]),
         "dram_bandwidth": Metric("dram_bandwidth", "GB/s", True, [1851.7, 1800.0])},
        {"cpulist": "0-31,128-159", "memory": {"policy": "interleave", "nodes": [0, 1, 2, 3],
                                                "huge": "none"},
         "pages_per_node": {0: 10, 1: 10, 2: 10, 3: 10}, "ok": False})
    import io
    con = Console(width=80, record=True, file=io.StringIO())
    _print([old], con)
    text = con.export_text()
    assert all(len(line.rstrip()) <= 80 for line in text.splitlines())
    assert "memory: interleave N0,N1,N2,N3; base pages" in text
    assert "128-159" in text and "(64)" in text and "compact," in text
    assert "(!) = not where asked" in " ".join(text.split())
    assert "…" not in text and "True" not in text.split()
