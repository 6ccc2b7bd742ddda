"""Ctrl-C during a long chase (idle or loaded) stops it between units of work: the C call
raises KeyboardInterrupt well before the time the whole call would take.

The signal is sent only once the call is surely running: its delay is scaled from a short
call of the same shape measured just before (setup plus a few samples), and the long call
asks for many times that many samples."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import os, signal, sys, threading, time
from numascope import _core

cpus = sorted(os.sched_getaffinity(0))
kind = sys.argv[1]
SIZE, LOADS = 32 << 20, 1 << 18

def call(samples):
    if kind == "idle":
        return _core.lat_chase(SIZE, cpus[0], None, "tlb", 256 << 10, samples, LOADS,
                               stride=256)
    return _core.lat_loaded(SIZE, cpus[0], cpus[1:2], [0] * 2, None, 16 << 20, "tlb",
                            256 << 10, samples, LOADS, stride=256)

t0 = time.perf_counter()
call(3)
short = time.perf_counter() - t0           # setup + 3 samples (x2 delays when loaded)
whole = short * 40                          # the long call: 120 samples, so >= 40x
signal_at = 2 * short                       # well inside the long call
threading.Timer(signal_at, os.kill, (os.getpid(), signal.SIGINT)).start()
t0 = time.perf_counter()
try:
    call(120)
    print(f"not interrupted: ran {time.perf_counter() - t0:.2f} s")
except KeyboardInterrupt:
    took = time.perf_counter() - t0
    print(f"interrupted after {took:.2f} s (signal at {signal_at:.2f}, whole ~{whole:.2f} s)")
    raise SystemExit(0 if took < whole / 4 else 1)
"""


@pytest.mark.parametrize("kind", ["idle", "loaded"])
def test_ctrl_c_stops_the_chase_between_samples(kind):
    if kind == "loaded" and len(os.sched_getaffinity(0)) < 2:
        pytest.skip("loaded latency needs two CPUs")
    p = subprocess.run([sys.executable, "-c", SCRIPT, kind], capture_output=True, text=True,
                       timeout=600, check=False)
    assert "interrupted after" in p.stdout, p.stdout + p.stderr
    assert p.returncode == 0, p.stdout
