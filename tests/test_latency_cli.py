"""CLI smoke tests for lat, matrix and c2c (small sizes), and their error exits."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import hwloc_fixture


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "numascope", *args], capture_output=True, check=False,
                          text=True, timeout=120)


def test_lat_json_small():
    p = _run("lat", "--size", "256K", "--samples", "3", "--loads", "4096", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    r = d["results"][0]
    assert r["family"] == "latency" and r["params"]["bytes"] == 256 * 1024
    assert len(r["metrics"]["latency"]["values"]) == 3
    assert r["params"]["stride"] == 256 and "256 B" in r["metrics"]["latency"]["note"]


def test_lat_stride_reaches_json_and_terminal():
    p = _run("lat", "--size", "256K", "--samples", "2", "--loads", "4096", "--stride", "128",
             "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)["results"][0]
    assert r["params"]["stride"] == 128 and "2048 lines" in " ".join(r["notes"])
    p = _run("lat", "--size", "256K", "--samples", "2", "--loads", "4096", "--stride", "128")
    assert p.returncode == 0, p.stderr
    assert "one pointer per 128 B" in p.stdout


def test_lat_sweep_plot(tmp_path):
    png = tmp_path / "sweep.png"
    p = _run("lat", "--sweep", "--min", "4K", "--max", "1M", "--per-octave", "1",
             "--samples", "2", "--loads", "4096", "--plot", str(png))
    assert p.returncode == 0, p.stderr
    assert "Detected levels" in p.stdout and png.stat().st_size > 0


def test_c2c_json_and_plot(tmp_path):
    png = tmp_path / "c2c.png"
    p = _run("c2c", "--samples", "3", "--trips", "200", "--json", "--plot", str(png))
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert all(r["metrics"]["latency"]["median"] > 0 for r in d["results"])
    assert png.exists()


def test_matrix_one_node_says_so():
    p = _run("matrix", "--what", "latency", "--size", "1M", "--samples", "2")
    assert p.returncode == 0, p.stderr
    if "one NUMA node" not in p.stdout:
        assert "remote/local" in p.stdout


def test_matrix_dry_run_replayed_8_nodes():
    p = _run("matrix", "--dry-run", "--json", "--sysfs-root",
             str(hwloc_fixture("16amd64-8n2c")))
    assert p.returncode == 0, p.stderr
    assert len(json.loads(p.stdout)["pairs"]) == 64


@pytest.mark.parametrize("args", [
    ["lat", "--node", "99"],
    ["lat", "--cpu", "4096"],
    ["lat", "--size", "64P"],
    ["lat", "--size", "100T"],
    ["lat", "--stride", "100"],
    ["lat", "--stride", "32"],
    ["lat", "--sweep", "--min", "256", "--max", "1M"],
    ["lat", "--loaded", "--stride", "8192"],
    ["matrix", "--to", "99"],
    ["c2c", "--cpus", "0,4096"],
])
def test_bad_input_one_line_exit_2(args):
    p = _run(*args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
