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
    assert list(d)[:5] == ["schema_version", "command", "results", "errors", "levels"]
    assert d["command"] == "lat" and d["errors"] == [] and d["levels"] == {}
    r = d["results"][0]
    assert r["family"] == "latency" and r["params"]["bytes"] == 256 * 1024
    assert r["placement"]["memory"] == {"policy": "first-touch", "nodes": [], "pages": "none"}
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


def test_lat_numactl_words_and_old_spellings_measure_the_same_case():
    new = _run("lat", "--cpus", "0", "--membind", "0", "--size", "256K", "--samples", "2",
               "--loads", "4096", "--json")
    old = _run("lat", "--cpu", "0", "--node", "0", "--size", "256K", "--samples", "2",
               "--loads", "4096", "--json")
    assert new.returncode == old.returncode == 0, new.stderr + old.stderr
    a, b = (json.loads(p.stdout)["results"][0] for p in (new, old))
    assert a["case"] == b["case"] == "tlb 256 KiB stride 256 cpu0 node0"
    assert a["placement"]["memory"] == {"policy": "bind", "nodes": [0], "pages": "none"}
    h = _run("lat", "--help").stdout
    assert "--cpus" in h and "--membind" in h and "--cpu " not in h and "--node" not in h


def test_lat_loaded_goes_through_the_runner_one_case_per_delay():
    import os
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs")
    p = _run("lat", "--loaded", "--delays", "0,500", "--size", "1M", "--samples", "2",
             "--loads", "1024", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["command"] == "lat" and [r["params"]["delay"] for r in d["results"]] == [0, 500]
    assert all(r["case"].endswith("1 loader stride 256") for r in d["results"])


def test_bad_plot_costs_no_measurement(tmp_path):
    p = _run("lat", "--size", "64M", "--samples", "50", "--plot", str(tmp_path / "no" / "a.png"))
    assert p.returncode == 2 and "does not exist" in p.stderr and p.stdout == ""


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


def test_matrix_json_envelope_with_its_summaries():
    p = _run("matrix", "--cpunodebind", "0", "--membind", "0", "--what", "latency", "--size",
             "1M", "--samples", "2", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert list(d) == ["schema_version", "command", "results", "errors",
                       "ratios_by_distance", "tiers", "nodes"]
    assert [r["case"] for r in d["results"]] == ["N0->N0"]
    assert list(d["ratios_by_distance"]) == ["latency"]


def test_matrix_dry_run_replayed_8_nodes():
    p = _run("matrix", "--dry-run", "--json", "--sysfs-root",
             str(hwloc_fixture("16amd64-8n2c")))
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert list(d)[:4] == ["schema_version", "command", "results", "errors"]
    assert len(d["pairs"]) == 64 and d["nodes"] == 8 and d["results"] == []


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
    ["matrix", "--membind", "99"],
    ["lat", "--cpus", "4096"],
    ["lat", "--membind", "99"],
    ["c2c", "--cpus", "0,4096"],
])
def test_bad_input_one_line_exit_2(args):
    p = _run(*args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
