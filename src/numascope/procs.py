"""Ending a child that runs in its own session (fio, mpirun): the one stop sequence."""

from __future__ import annotations

import os
import signal
import subprocess


def stop_group(proc: subprocess.Popen, graces: tuple[float, float] = (3.0, 2.0)) -> None:
    """SIGTERM to `proc`'s process group, wait up to graces[0]; then SIGKILL, wait up to
    graces[1]. Returns at once when it has already exited; a group already gone (or not
    ours to signal) is only reaped."""
    if proc.poll() is not None:
        return
    for sig, grace in zip((signal.SIGTERM, signal.SIGKILL), graces):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue
