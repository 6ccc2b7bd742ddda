"""A stop signal during a long C call takes effect between units of work, not at the end.

Each test runs the call in a child interpreter. A watcher thread there sends the signal
once the call's pinned team exists (so never before the call starts nor after it ends),
and the call must return well within a fraction of its full duration (measured, or set
by the call's own arguments)."""

import json
import subprocess
import sys

import pytest
from interrupting import PINNED_SRC, SIGNALS, two_cpus

HARNESS = PINNED_SRC + r'''
import contextlib, json, os, signal, threading, time
import numpy as np
from numascope import _core, signals   # the core first: its handler is chained again

def interrupted(call, full, signum, handled=True):
    """Run call(); send signum once a pinned team thread exists; print what happened."""
    sent = {}
    def watch():
        while not pinned_threads(os.getpid()):
            time.sleep(0.002)
        sent["t"] = time.monotonic()
        os.kill(os.getpid(), signum)
    threading.Thread(target=watch, daemon=True).start()
    exc = None
    try:
        with signals.handled() if handled else contextlib.nullcontext():
            call()
    except KeyboardInterrupt as e:
        exc = e
    end = time.monotonic()
    print(json.dumps({"stopped": exc is not None, "type": type(exc).__name__,
                      "signum": getattr(exc, "signum", None), "full": full,
                      "after": end - sent["t"] if "t" in sent else None}))

def timed(call):
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0

cpus = sorted(os.sched_getaffinity(0))[:2]
'''


def _run(body: str) -> dict:
    p = subprocess.run([sys.executable, "-c", HARNESS + body], capture_output=True, text=True,
                       timeout=600, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def _assert_prompt(r: dict, signum: int | None, fraction: float = 4) -> None:
    assert r["stopped"], f"the call ran to its end: {r}"
    if signum is not None:
        assert r["type"] == "Stop" and r["signum"] == signum, r
    assert r["after"] < r["full"] / fraction, r


@pytest.mark.parametrize("signum", SIGNALS)
def test_clock_chain_stops_between_blocks(signum):
    r = _run(f"""
interrupted(lambda: _core.clock_chain(cpus, 20.0), 20.0, {int(signum)})
""")
    _assert_prompt(r, signum)


@pytest.mark.parametrize("signum", SIGNALS)
def test_pingpong_stops_between_samples(signum):
    two_cpus()
    r = _run(f"""
per_trip = timed(lambda: _core.c2c_pingpong(cpus[0], cpus[1], 3, 2000)) / 6000
trips = max(2000, int(0.02 / per_trip))        # about 20 ms per sample
samples = 1000
interrupted(lambda: _core.c2c_pingpong(cpus[0], cpus[1], samples, trips),
            samples * trips * per_trip, {int(signum)})
""")
    _assert_prompt(r, signum)


def test_ctrl_c_stops_compression_between_chunks():
    """Python's own SIGINT handler (no numascope handler installed): KeyboardInterrupt."""
    r = _run("""
data = np.random.default_rng(1).random((256 << 20) // 8)   # incompressible: slow to pack
def pack(buf):
    _core.cz_store_new(buf, 256 << 10, 8, "zlib", 9, "shuffle", cpus, 0)
whole = timed(lambda: pack(data[: len(data) // 8])) * 8   # estimate for the whole buffer
interrupted(lambda: pack(data), whole, signal.SIGINT, handled=False)
""")
    assert r["type"] == "KeyboardInterrupt"
    _assert_prompt(r, None)


@pytest.mark.parametrize("signum", SIGNALS)
def test_plain_and_compressed_sums_stop_between_chunks(signum):
    r = _run(f"""
data = np.random.default_rng(2).random((64 << 20) // 8)
chunk = 256 << 10
store = _core.cz_store_new(data, chunk, 8, "lz4", 1, "shuffle", cpus, 0)[0]
plain = _core.cz_plain_new(data, chunk, cpus)
rep = timed(lambda: _core.cz_measure(plain, store, cpus, "f8", 3, "buffer")) / 3
reps = max(3, int(20 / rep))                   # about 20 s in all
interrupted(lambda: _core.cz_measure(plain, store, cpus, "f8", reps, "buffer"), reps * rep,
            {int(signum)})
""")
    _assert_prompt(r, signum)

