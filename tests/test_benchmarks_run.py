"""Every peer script in benchmarks/ runs from a clone with its quickest options: exit 0 and the
side-by-side lines with a ratio printed, or, for a peer tool that is not installed,
"skipped: TOOL not installed" and exit 0.

The scripts measure this host (that is their job), so these tests start real programs, one
script at a time: each test waits for its script, and the Makefile's --dist loadscope gives
this whole module to one worker. Each takes a few seconds to ~20 s on 2 cores. Figures are not
checked, only that both sides produced one and a ratio was formed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
TIMEOUT_S = 240
NUM = r"\d+\.\d+"


def run(script: str, *args: str, env: dict[str, str] | None = None) -> str:
    p = subprocess.run([sys.executable, str(BENCH / script), *args], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    out = p.stdout + p.stderr
    assert p.returncode == 0, f"{script} {' '.join(args)} exited {p.returncode}:\n{out[-3000:]}"
    assert "Traceback" not in out, out[-3000:]
    return p.stdout


def has_line(pattern: str, out: str) -> bool:
    return re.search(pattern, out, re.MULTILINE) is not None


def env_without(tmp_path: Path, tools: list[str]) -> dict[str, str]:
    """This environment with a PATH of one folder that links every program of the present
    PATH except `tools` (the editable build still finds its compiler, ninja and shell)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(d):
            continue
        for entry in os.scandir(d):
            link = bin_dir / entry.name
            if entry.name in tools or link.exists() or not os.access(entry.path, os.X_OK):
                continue
            link.symlink_to(entry.path)
    return dict(os.environ, PATH=str(bin_dir))


def test_latency_peers_quick():
    out = run("latency_peers.py", "--quick")
    if not shutil.which("gcc"):
        assert "skipped: gcc not installed" in out
        return
    assert "numascope: numascope lat --size 67108864 --mode tlb" in out
    assert "peer:      chase_peer -m 67108864 -s 256 -T 262144" in out
    assert "-T 67108864" in out                  # random: one cycle over the whole buffer
    for mode in ("tlb", "random"):
        assert has_line(rf"^  {mode}: median ns numascope {NUM} peer {NUM} ratio {NUM}; "
                         rf"best ns numascope {NUM} peer {NUM} ratio {NUM}$", out), out
    # parallel chases against multichase's parallelN method (chase_peer -p N)
    assert "peer:      chase_peer -m 67108864 -s 256 -T 262144 -n 3 -d 100" in out
    assert has_line(rf"^   4 chains: peer {NUM} loads/ns; numascope arena {NUM} "
                    rf"\(ratio {NUM}\)$", out), out


def test_io_peers_quick(tmp_path):
    out = run("io_peers.py", "--quick", "--dir", str(tmp_path))
    assert list(tmp_path.iterdir()) == []        # its temp folder and both files removed
    if not shutil.which("fio"):
        assert "skipped: fio not installed" in out
        return
    assert has_line(r"^numascope: numascope io --dir \S+/numascope-io-peers-\S+", out)
    assert has_line(r"^fio:       \S*fio --output-format=json \S+\.fio$", out), out
    for option in ("direct=1", "rw=randread", "iodepth=32", "time_based", "group_reporting"):
        assert has_line(rf"^  {option}$", out), option
    for label in ("IOPS", "MB/s", "clat p50", "clat p99"):
        assert has_line(rf"^  {re.escape(label)}\s+numascope\s+[\d,.]+\s+fio\s+[\d,.]+\s+"
                         rf"ratio {NUM}$", out), (label, out)


def test_bandwidth_peers_quick():
    out = run("bandwidth_peers.py", "--quick")
    assert "numascope bw --kernel triad --cpus 0 --size 4194304 --reps 1" in out
    if shutil.which("likwid-bench"):
        assert has_line(rf"ratio numascope / peer, --huge none: {NUM} \(vs likwid", out), out
    else:
        assert "skipped: likwid-bench not installed" in out
    if shutil.which("hpcc"):
        assert has_line(rf"^    hpcc       StarTriad \(x1 procs\)\s+{NUM}", out), out
        assert has_line(rf"best vs best: {NUM}", out), out
    else:
        assert "skipped: hpcc not installed" in out


def test_bw_cache_likwid_quick():
    out = run("bw_cache_likwid.py", "--quick")
    if not shutil.which("likwid-bench"):
        assert "skipped: likwid-bench not installed" in out
        return
    assert has_line(r"^  likwid-bench: likwid-bench -t stream_avx -w S0:16kB:1$", out), out
    assert has_line(r"^  numascope:    numascope bw --kernel triad --cpus \d+ --size \d+ ", out)
    # ratio, then bytes per cycle (ours, theirs) and the L1 ceiling of the core's ports: a
    # number where its vendor publishes them, "unknown" for any other core
    assert has_line(rf"^  L1\s+16 KiB triad\s+{NUM}\s+\S+\s+{NUM}\s+stream_avx( -i)?\s+{NUM}"
                    rf"\s+{NUM}\s+{NUM}\s+(\d+(\.\d+)?|unknown)$", out), out
    assert has_line(rf"B/cy: bytes per cycle at the measured clock {NUM} GHz", out), out


def test_compress_peers_quick():
    out = run("compress_peers.py", "--quick")
    assert has_line(rf"numascope / python-blosc2 \(its default layout\) = {NUM}x", out), out
    assert has_line(rf"/ python-blosc2 \(its best layout here\) = {NUM}x", out), out


def test_net_peers_quick():
    out = run("net_peers.py", "--quick")
    missing = [t for t in ("mpirun", "mpicc", "numactl") if not shutil.which(t)]
    if missing:
        assert f"skipped: {', '.join(missing)} not installed" in out, out
        return
    assert has_line(rf"^numascope / .+: latency .+ {NUM}, bandwidth .+ {NUM}", out), out


@pytest.mark.parametrize("script, args, tools", [
    ("latency_peers.py", ["--quick"], ["gcc"]),
    ("io_peers.py", ["--quick"], ["fio"]),
    ("bandwidth_peers.py", ["--quick", "--no-hpcc"], ["likwid-bench"]),
    ("bandwidth_peers.py", ["--quick", "--no-likwid"], ["hpcc"]),
    ("net_peers.py", ["--quick"], ["mpicc"]),
])
def test_missing_peer_tool_is_skipped_with_its_name(tmp_path, script, args, tools):
    out = run(script, *args, env=env_without(tmp_path, tools))
    for tool in tools:
        assert f"skipped: {tool} not installed" in out, out


def test_plan_accuracy_quick():
    out = run("plan_accuracy.py", "--quick")
    assert has_line(rf"^  c2c\s+planned\s+{NUM} s\s+measured\s+{NUM} s\s+ratio\s+{NUM}", out), out
    assert has_line(r"calibrated by 1 run\(s\)", out), out
    assert has_line(r"^  c2c\s+median \d+\.\d\d\s+range ", out), out


def test_fleet_scale_small():
    """fleet_scale.py with a small fleet: the store's size per node, fleet report's time and
    peak memory, the planted nodes found (figures not checked: they are the script's)."""
    out = run("fleet_scale.py", "--nodes", "60", "--planted", "3")
    assert has_line(rf"^store: 60 nodes .* {NUM} kB per node \(.*briefs\)$", out), out
    assert has_line(rf"^fleet report --json: {NUM} s, peak memory \d+ MiB; .*planted found "
                    r"\d of 3", out), out
    assert has_line(r"^in-process: fleet.load.analysis_runs .* total", out), out
