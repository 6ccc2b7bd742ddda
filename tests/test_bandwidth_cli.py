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
