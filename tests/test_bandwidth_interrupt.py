"""Ctrl-C during a bandwidth call stops it between repetitions, not after the last one."""

import subprocess
import sys

SCRIPT = r"""
import os, signal, threading, time
from numascope import _core

cpu = [min(os.sched_getaffinity(0))]
n = (8 << 20) // 8
def run(reps):
    t0 = time.perf_counter()
    _core.bw_run("copy", cpu, n, reps, [("scalar", False)], warmup=0)
    return time.perf_counter() - t0

per_rep = run(50) / 50
reps = max(200, int(20 / per_rep))         # about 20 s uninterrupted
threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
t0 = time.perf_counter()
try:
    run(reps)
    print("not interrupted")
except KeyboardInterrupt:
    took = time.perf_counter() - t0
    print(f"interrupted after {took:.2f} of ~{reps * per_rep:.1f} s")
    raise SystemExit(0 if took < reps * per_rep / 4 else 1)
"""


def test_ctrl_c_stops_bandwidth_between_repetitions():
    p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                       timeout=300, check=False)
    assert "interrupted after" in p.stdout, p.stdout + p.stderr
    assert p.returncode == 0, p.stdout
