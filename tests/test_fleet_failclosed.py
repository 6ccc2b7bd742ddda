"""A fleet fails closed, under a real `mpirun -np 3 --oversubscribe` on this host (one rank
per played node, NUMASCOPE_HOSTNAME=node{rank}): a stage that fails makes its node failed
(fleet run exits 1, the report lists it); the interconnect stage's own mpirun runs inside
the fleet's job; a rank SIGKILLed mid-run and a job stopped by SIGTERM leave every node
accounted for in the store; a store on a full file system is "disk full", the job ends,
and its records are kept as files to gather."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid

import pytest
from conftest import mpirun_or_skip

from numascope.results.store import Store

NUMASCOPE = [sys.executable, "-m", "numascope"]


_mpirun = mpirun_or_skip


def _argv(ranks: int, *fleet_args: str, path_first: str = "") -> list[str]:
    """The documented launch (--bind-to none: each rank has the whole node); with
    `path_first`, each rank's PATH starts with that folder (set inside the rank: mpirun
    started by its absolute path puts its own bin folder first)."""
    argv = [_mpirun(), "-np", str(ranks), "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    for k in ("NUMASCOPE_HOSTNAME", "NUMASCOPE_TEST_TOKEN"):
        argv += ["-x", k]
    prog = [*NUMASCOPE, "fleet", "run", *fleet_args]
    if path_first:
        prog = ["env", f"PATH={path_first}:{os.environ['PATH']}", *prog]
    return argv + prog


def _env(token: str = "", **more: str) -> dict[str, str]:
    return dict(os.environ, NUMASCOPE_HOSTNAME="node{rank}", NUMASCOPE_TEST_TOKEN=token,
                **more)


def _runs(db) -> list:
    with Store.open(db) as st:
        return [st.get_run(r.run_id) for r in st.list_runs()]


def _report(db) -> dict:
    p = subprocess.run([*NUMASCOPE, "fleet", "report", "--json", "--store", str(db)],
                       check=False, capture_output=True, text=True, timeout=120)
    doc = json.loads(p.stdout)
    # a failed, interrupted or missing node counts in the exit code
    assert p.returncode == (1 if doc["failed_nodes"] else 0), p.stderr
    return doc


def test_a_stage_that_fails_on_every_node_fails_the_fleet(tmp_path):
    """A node's MPI is broken (its mpirun exits 1): its interconnect stage fails, so the
    node is failed with that reason, fleet run exits 1, the report lists every node."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "mpirun").write_text("#!/bin/sh\necho 'mpirun: broken on purpose' >&2\nexit 1\n")
    (fake / "mpirun").chmod(0o755)
    mpicc = shutil.which("mpicc")
    if mpicc is None:
        pytest.skip("mpicc not installed (Open MPI's compiler wrapper)")
    (fake / "mpicc").symlink_to(mpicc)
    db = tmp_path / "f.db"
    p = subprocess.run(_argv(3, "--smoke", "--stage", "interconnect", "--store", str(db),
                             "--json", "--node-timeout", "200", path_first=str(fake)),
                       check=False, capture_output=True, text=True, timeout=300, env=_env())
    doc = json.loads(p.stdout[p.stdout.index("{"):p.stdout.rindex("}") + 1])
    assert [r["status"] for r in doc["results"]] == ["failed"] * 3, p.stderr[-2000:]
    for r in doc["results"]:
        # the broken mpirun started no rank: a launch failure, said as such, mpirun's words
        assert r["reason"].startswith("stage interconnect failed: launch failed: ") and \
            "broken on purpose" in r["reason"], r
        assert r["stages"] == {"topology": "done", "interconnect": "failed"}
    assert doc["expected"] == 3 and len(doc["errors"]) == 3
    assert p.returncode != 0        # rank 0 returned 1: mpirun passes it on
    runs = _runs(db)
    assert sorted(r.status for r in runs) == ["failed"] * 3
    rep = _report(db)
    assert rep["nodes"] == 3 and {f["status"] for f in rep["failed_nodes"]} == {"failed"}


def test_the_interconnect_stage_runs_inside_the_fleets_own_mpi_job(tmp_path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("the interconnect stage needs two CPUs")
    db = tmp_path / "f.db"
    p = subprocess.run(_argv(2, "--smoke", "--stage", "interconnect", "--store", str(db),
                             "--node-timeout", "200"),
                       check=False, capture_output=True, text=True, timeout=300, env=_env())
    assert p.returncode == 0, p.stdout + p.stderr[-2000:]
    runs = _runs(db)
    assert [r.status for r in runs] == ["complete"] * 2
    for r in runs:
        assert {s.name: s.status for s in r.stages}["interconnect"] == "done"
        assert {x.family for x in r.results} == {"interconnect"}


def _pids_of(token: str, rank: int) -> list[int]:
    """The pids of the fleet's rank `rank` (its environment holds this test's token)."""
    out = []
    want = {f"NUMASCOPE_TEST_TOKEN={token}".encode(), f"OMPI_COMM_WORLD_RANK={rank}".encode()}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/environ", "rb") as f:
                env = set(f.read().split(b"\0"))
        except OSError:
            continue
        if want <= env:
            out.append(int(p))
    return out


def _placeholders_stored(db, n: int, limit: float = 120.0) -> None:
    """Wait until rank 0 has written the fleet's n nodes down (then a kill is mid-run)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
                if c.execute("SELECT count(*) FROM runs").fetchone()[0] >= n:
                    return
        except sqlite3.Error:
            pass
        time.sleep(0.2)
    pytest.fail(f"rank 0 wrote no placeholders within {limit:g} s")


def test_a_rank_killed_mid_run_is_missing_not_vanished(tmp_path):
    """SIGKILL to one rank after the fleet began: Open MPI ends the job; the store still
    holds all 3 nodes, the killed one missing (the store file whole without its -wal)."""
    token = uuid.uuid4().hex
    db = tmp_path / "f.db"
    proc = subprocess.Popen(_argv(3, "--quick", "--stage", "latency", "--store", str(db),
                                  "--node-timeout", "200"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(token))
    try:
        _placeholders_stored(db, 3)
        pids = _pids_of(token, 2)
        assert pids, "rank 2 not found"
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=200)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode != 0
    # the store file alone (as a copy or a backup would take it) knows every node
    alone = tmp_path / "copy.db"
    shutil.copyfile(db, alone)
    rep = _report(alone)
    assert rep["nodes"] == 3, (out, err[-2000:])
    statuses = {f["host"]: f["status"] for f in rep["failed_nodes"]}
    lost = statuses.get("node2", statuses.get("rank2"))
    assert lost == "missing", rep["failed_nodes"]


def test_sigterm_ends_every_rank_with_143_and_keeps_what_finished(tmp_path):
    """mpirun forwards SIGTERM and SIGKILLs its ranks 1 s later (Open MPI's
    odls_base_sigkill_timeout): each rank says its line at once, rank 0 stores and prints
    what came in time; every node is in the store either way, none complete."""
    token = uuid.uuid4().hex
    db = tmp_path / "f.db"
    proc = subprocess.Popen(_argv(3, "--quick", "--stage", "latency", "--store", str(db),
                                  "--node-timeout", "200"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(token))
    try:
        _placeholders_stored(db, 3)
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)      # mpirun forwards it to every rank
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err, err[-3000:]
    # ranks 1 and 2 say so on stderr at once; rank 0, when mpirun left it the time, prints
    # the nodes and its own line. A rank says it when its case's current unit ends: on a
    # loaded host that can be after mpirun's SIGKILL (a fresh clone on a 2-vCPU Xeon:
    # stderr empty), so the lines are checked for what they say, not counted
    stopped = [ln for ln in err.splitlines() if "stopped by SIGTERM; its record" in ln]
    assert sorted(ln.split()[1] for ln in stopped) in (["node1", "node2"], ["node1"],
                                                        ["node2"], []), err[-2000:]
    if "the nodes' finished results are stored" in err:
        assert "3 interrupted" in " ".join(out.split()), out
    rep = _report(db)
    assert rep["nodes"] == 3
    assert not any(r["status"] == "complete" for r in rep["per_node"]), rep["per_node"]
    assert {f["status"] for f in rep["failed_nodes"]} <= {"interrupted", "missing"}


@pytest.fixture
def full_fs(tmp_path):
    """A 1 MiB tmpfs (root only), unmounted after."""
    d = tmp_path / "full"
    d.mkdir()
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(d)],
                       check=False, capture_output=True, text=True)
    if m.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {m.stderr.strip() or m.returncode}")
    yield d
    subprocess.run(["umount", "-l", str(d)], check=False)


def _fill(d, leave: int) -> None:
    """Fill the file system at d, then free `leave` bytes."""
    filler = d / "filler"
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
        except OSError:
            pass
    os.truncate(filler, max(0, filler.stat().st_size - leave))


def test_a_store_on_a_full_disk_says_disk_full_and_keeps_the_records(full_fs, tmp_path):
    db = full_fs / "f.db"
    Store.open(db, write=True).close()
    _fill(full_fs, 96 << 10)        # room for the nodes' placeholders, not their records
    work = tmp_path / "work"
    work.mkdir()
    p = subprocess.run(_argv(3, "--smoke", "--stage", "latency", "--store", str(db),
                             "--node-timeout", "120"),
                       check=False, capture_output=True, text=True, timeout=300, env=_env(),
                       cwd=work)
    text = p.stdout + p.stderr
    assert p.returncode != 0
    assert "disk full" in text and "damaged" not in text and "Traceback" not in text, text
    assert "internal error" not in text
    # the summary counts what was measured apart from what reached the store: no node is
    # "complete" there, each row says where its record is instead
    said = " ".join(p.stdout.split())
    assert "3 nodes measured, 0 stored (not stored: 3 complete" in said, said
    assert "3 nodes (3 complete" not in said
    assert said.count("[not stored: kept as record files in") == 3, said
    (kept,) = list(work.iterdir())          # the records, as files to gather
    assert len(list(kept.glob("*.numascope.json"))) == 3
    (full_fs / "filler").unlink()
    g = subprocess.run([*NUMASCOPE, "fleet", "gather", str(kept), "--store", str(db)],
                       check=False, capture_output=True, text=True, timeout=120)
    assert g.returncode == 0, g.stderr
    # each record replaced its node's placeholder: 3 nodes, all complete
    assert sorted(r.status for r in _runs(db)) == ["complete"] * 3


def test_a_lone_task_whose_record_does_not_fit_is_measured_not_stored(full_fs, tmp_path):
    """Without MPI: the store opens (room for its placeholder at most), the record does not
    fit. The summary and --json say 1 measured, 0 stored, where the record is; exit 1; the
    record gathered later is the node's one run in the store."""
    db = full_fs / "f.db"
    Store.open(db, write=True).close()
    _fill(full_fs, 48 << 10)
    env = dict(os.environ, NUMASCOPE_FLEET_MPI="0")
    argv = [*NUMASCOPE, "fleet", "run", "--no-mpi", "--smoke", "--stage", "topology",
            "--store", str(db)]
    work, jwork = tmp_path / "work", tmp_path / "jwork"
    work.mkdir()
    jwork.mkdir()
    p = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=300,
                       env=env, cwd=work)
    said = " ".join(p.stdout.split())
    assert p.returncode == 1, p.stdout + p.stderr
    assert "1 node measured, 0 stored (not stored: 1 complete" in said, said
    assert "(1 complete" not in said and "[not stored: kept as record files in" in said
    assert "disk full" in p.stderr and "Traceback" not in p.stderr
    j = subprocess.run([*argv, "--json"], check=False, capture_output=True, text=True,
                       timeout=300, env=env, cwd=jwork)
    doc = json.loads(j.stdout)
    assert j.returncode == 1 and doc["stored"] == 0, j.stdout
    (row,) = doc["results"]
    assert row["status"] == "complete" and row["stored"] is False
    assert "record files in" in row["kept"]
    assert [i["kind"] for i in doc["errors"]] == ["node-not-stored"], doc["errors"]
    (full_fs / "filler").unlink()
    for w in (work, jwork):
        (kept,) = list(w.iterdir())
        g = subprocess.run([*NUMASCOPE, "fleet", "gather", str(kept), "--store", str(db)],
                           check=False, capture_output=True, text=True, timeout=120)
        assert g.returncode == 0, g.stderr
    runs = _runs(db)
    assert sorted(r.status for r in runs) == ["complete"] * 2, [r.status for r in runs]


def test_a_node_local_store_on_a_full_disk_is_one_line_disk_full(full_fs, tmp_path):
    db = full_fs / "node.db"
    Store.open(db, write=True).close()
    _fill(full_fs, 0)
    p = subprocess.run([*NUMASCOPE, "fleet", "run", "--no-mpi", "--smoke", "--stage",
                        "topology", "--store", str(db)],
                       check=False, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, NUMASCOPE_FLEET_MPI="0"))
    errs = [ln for ln in p.stderr.splitlines() if ln.startswith("numascope: error:")]
    assert p.returncode == 2 and len(errs) == 1, p.stderr
    assert "disk full" in errs[0] and "damaged" not in p.stderr


def test_fleet_run_io_dir_reaches_the_storage_stage(tmp_path):
    if shutil.which("fio") is None:
        pytest.skip("fio not installed: the storage stage would be skipped for that")
    io = tmp_path / "io"
    io.mkdir()
    db = tmp_path / "f.db"
    p = subprocess.run([*NUMASCOPE, "fleet", "run", "--no-mpi", "--smoke", "--stage",
                        "storage", "--io-dir", str(io), "--store", str(db), "--json"],
                       check=False, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, NUMASCOPE_FLEET_MPI="0"))
    doc = json.loads(p.stdout)
    (row,) = doc["results"]
    (rec,) = _runs(db)
    storage = next(s for s in rec.stages if s.name == "storage")
    assert "--io-dir" not in storage.reason, storage
    assert storage.status == "done" and row["status"] == "complete", (storage, p.stderr)
    assert p.returncode == 0


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_lone_task_stopped_exits_128_plus_the_signal_with_its_record_stored(
        tmp_path, sig, code):
    db = tmp_path / "node.db"
    proc = subprocess.Popen([*NUMASCOPE, "fleet", "run", "--no-mpi", "--quick", "--stage",
                             "latency", "--store", str(db)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, NUMASCOPE_FLEET_MPI="0"))
    try:
        _placeholders_stored(db, 1)
        time.sleep(1.0)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == code, err[-2000:]
    assert "Traceback" not in err
    assert [ln for ln in err.splitlines() if ln.startswith("interrupted (")] == [
        f"interrupted ({signal.Signals(sig).name}): the nodes' finished results are stored"]
    assert "1 interrupted" in " ".join(out.split())
    wal = tmp_path / "node.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0     # all in the store file itself
    (rec,) = _runs(db)
    assert rec.status == "interrupted" and rec.host["fleet"]["reason"].startswith(
        "stage latency interrupted: stopped by ")
