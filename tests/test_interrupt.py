"""Ctrl-C during a long C call takes effect between units of work, not at the end."""

import subprocess
import sys

SCRIPT = r"""
import os, signal, threading, time
import numpy as np
from numascope import _core

cpus = sorted(os.sched_getaffinity(0))[:2]
data = np.random.default_rng(1).random((256 << 20) // 8)   # incompressible: slow to pack
def pack(buf):
    t0 = time.perf_counter()
    _core.cz_store_new(buf, 256 << 10, 8, "zlib", 9, "shuffle", cpus, 0)
    return time.perf_counter() - t0

whole = pack(data[: len(data) // 8]) * 8   # estimate for the whole buffer
threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
t0 = time.perf_counter()
try:
    pack(data)
    print("not interrupted")
except KeyboardInterrupt:
    print(f"interrupted after {time.perf_counter() - t0:.2f} of ~{whole:.2f} s")
    raise SystemExit(0 if time.perf_counter() - t0 < whole / 2 else 1)
"""


def test_ctrl_c_stops_compression_between_chunks():
    p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                       timeout=300, check=False)
    assert "interrupted after" in p.stdout, p.stdout + p.stderr
    assert p.returncode == 0, p.stdout
