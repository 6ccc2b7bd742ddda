"""Helpers for the interruption tests: send a signal only once a C call is surely running.

A C call of numascope runs its work on a team of threads each pinned to one CPU
(team.c), so "the call is running" is visible from outside: some thread of the process
has a one-CPU affinity. The tests wait for that instead of guessing with a timer, and judge
promptness against the call's full duration, never against an absolute time."""

from __future__ import annotations

import inspect
import os
import signal
import subprocess
import sys
import time

import pytest

SIGNALS = [pytest.param(signal.SIGINT, id="SIGINT"), pytest.param(signal.SIGTERM, id="SIGTERM")]


def pinned_threads(pid: int) -> int:
    """Threads of process `pid` allowed on exactly one CPU: members of a C-core team."""
    import pathlib
    n = 0
    for st in pathlib.Path(f"/proc/{pid}/task").glob("*/status"):
        try:
            text = st.read_text()
        except OSError:   # the thread ended meanwhile
            continue
        for line in text.splitlines():
            if line.startswith("Cpus_allowed_list:"):
                n += line.split(":", 1)[1].strip().isdigit()
    return n


# For scripts run in a child interpreter (python -c): the same function, as source.
PINNED_SRC = inspect.getsource(pinned_threads)


def two_cpus() -> list[int]:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:   # with one CPU every thread looks pinned, and c2c needs two
        pytest.skip("needs at least two CPUs in the affinity mask")
    return cpus[:2]


def signal_when_running(proc: subprocess.Popen, signum: int, guard_s: float = 300) -> float:
    """Wait until `proc` runs a C team, then send `signum`; returns when it was sent
    (time.monotonic). Fails if the process ends first. `guard_s` only stops a hung test."""
    end = time.monotonic() + guard_s
    while not pinned_threads(proc.pid):
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"process ended (rc {proc.returncode}) before its C call was seen "
                        f"running:\n{out}\n{err}")
        if time.monotonic() > end:
            proc.kill()
            pytest.fail("the C call never started")
        time.sleep(0.005)
    sent = time.monotonic()
    proc.send_signal(signum)
    return sent


def start(*args: str) -> subprocess.Popen:
    """This interpreter with ARGS in a child process, output captured as text."""
    return subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen, guard_s: float) -> tuple[str, str, float]:
    """Wait for the process; (stdout, stderr, when it ended, time.monotonic)."""
    try:
        out, err = proc.communicate(timeout=guard_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"did not stop within {guard_s:.0f} s of the signal:\n{out}\n{err}")
    return out, err, time.monotonic()
