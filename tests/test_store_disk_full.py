"""A store on a full disk says "disk full: PATH: N bytes free", never that SQLite cannot use
the file system nor that the store is damaged: a new store that could not be made, and an
existing one (with the -wal and -shm an earlier try left beside it), for `numascope run`
and for `fleet run --no-mpi`, each exiting as the store's other write errors (2). The disk
is a 512 KiB tmpfs (mounted as root; skipped, with the reason, where it cannot be)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from numascope.results import store as st
from numascope.results.store import Store, StoreFull

NUMASCOPE = [sys.executable, "-m", "numascope"]
COMMANDS = {
    "run": ["run", "--stage", "topology"],
    "fleet run": ["fleet", "run", "--no-mpi", "--stage", "topology"],
}


@pytest.fixture
def tmpfs(tmp_path):
    d = tmp_path / "small"
    d.mkdir()
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(d)],
                       check=False, capture_output=True, text=True)
    if m.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): "
                    f"{m.stderr.strip() or m.returncode}")
    yield d
    subprocess.run(["umount", "-l", str(d)], check=False)


def _fill(d: Path) -> None:
    with open(d / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as e:
            assert e.errno == errno.ENOSPC
    s = os.statvfs(d)
    assert s.f_bavail * s.f_frsize == 0


def _numascope(cmd: str, db: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*NUMASCOPE, *COMMANDS[cmd], "--store", str(db)], check=False,
                          capture_output=True, text=True, timeout=300, cwd=cwd,
                          env=dict(os.environ, NUMASCOPE_FLEET_MPI="0"))


def _said_disk_full(p: subprocess.CompletedProcess, db: Path) -> str:
    errs = [ln for ln in p.stderr.splitlines() if ln.startswith("numascope: error:")]
    assert p.returncode == 2 and len(errs) == 1, p.stdout + p.stderr
    assert f"disk full: {db}: 0 bytes free" in errs[0], errs[0]
    for wrong in ("cannot use this file system", "local disk", "damaged", "Traceback"):
        assert wrong not in p.stdout + p.stderr, p.stderr
    return errs[0]


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_a_new_store_on_a_full_disk_is_disk_full(cmd, tmpfs, tmp_path):
    _fill(tmpfs)
    db = tmpfs / "x.db"
    line = _said_disk_full(_numascope(cmd, db, tmp_path), db)
    assert "no store was made" in line
    assert not db.exists()


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_an_existing_store_on_a_full_disk_is_disk_full(cmd, tmpfs, tmp_path):
    db = tmpfs / "x.db"
    Store.open(db, write=True).close()
    _fill(tmpfs)
    # the first try leaves an empty -wal and a -shm it could not grow; the second (a
    # reader's open, no longer immutable with a -wal beside it) must say the same
    for _ in range(2):
        line = _said_disk_full(_numascope(cmd, db, tmp_path), db)
        assert "the store itself is intact" in line
    (tmpfs / "filler").unlink()
    with Store.open(db) as s:           # intact: it reads, with nothing in it
        assert s.list_runs() == []


def test_enospc_while_making_the_store_is_disk_full(tmp_path):
    e = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    full = st._full(tmp_path / "x.db", e, created=False)
    assert isinstance(full, StoreFull) and full.exit_code == 2
    assert str(full).startswith(f"disk full: {tmp_path / 'x.db'}: ")
    assert "bytes free (No space left on device); no store was made" in str(full)
    assert st._full(tmp_path / "x.db", OSError(errno.EACCES, "Permission denied")) is None


def test_unable_to_open_is_disk_full_only_without_room(tmp_path, monkeypatch):
    e = sqlite3_error("unable to open database file", 14)     # SQLITE_CANTOPEN
    assert st._full(tmp_path / "x.db", e) is None            # room left: not the disk
    monkeypatch.setattr(st, "_free_bytes", lambda p: 4096)
    full = st._full(tmp_path / "x.db", e)
    assert full is not None and ": 4096 bytes free (unable to open" in str(full)


def sqlite3_error(msg: str, code: int) -> Exception:
    import sqlite3
    e = sqlite3.OperationalError(msg)
    e.sqlite_errorcode = code
    return e
