"""Child programs (fio, mpirun): finding them, and the one stop sequence for a child that
runs in its own session."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess


def which(name: str) -> str | None:
    """`name` on PATH, its directory's symlinks resolved (the program itself not: mpirun
    stays mpirun). Open MPI takes its install prefix from an absolute argv[0]: found as
    /bin/mpirun on a merged-/usr system (PATH with /bin first), the prefix is "/" and
    mpirun refuses to launch; /usr/bin/mpirun gives /usr."""
    found = shutil.which(name)
    if found is None:
        return None
    return os.path.join(os.path.realpath(os.path.dirname(found)), os.path.basename(found))


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
