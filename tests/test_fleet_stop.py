"""The ways a job is stopped lose nothing (issue #44): Slurm's time limit sends SIGTERM twice,
milliseconds apart, and SIGKILLs after its grace time; Open MPI's mpirun forwards SIGTERM
and SIGKILLs its ranks 1 s later. Every finished result is in the store file itself (not only
its -wal) as it finishes, and a second signal changes nothing."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from conftest import mpirun_or_skip

from numascope import signals
from numascope.results.store import Store

NUMASCOPE = [sys.executable, "-m", "numascope"]


def _results_in_file(db, limit: float = 120.0) -> int:
    """Wait until the store *file* alone (a copy, without its -wal) holds a result."""
    t0 = time.monotonic()
    copy = f"{db}.peek"
    while time.monotonic() - t0 < limit:
        try:
            shutil.copyfile(db, copy)
            with sqlite3.connect(f"file:{copy}?mode=ro&immutable=1", uri=True) as c:
                n = c.execute("SELECT count(*) FROM results").fetchone()[0]
            if n:
                return n
        except (OSError, sqlite3.Error):
            pass
        time.sleep(0.05)
    pytest.fail(f"no result reached the store file within {limit:g} s")


def _alone(db, tmp_path):
    """The store file as a copy or backup takes it: without its -wal and -shm."""
    copy = tmp_path / "alone.db"
    shutil.copyfile(db, copy)
    with Store.open(copy) as st:
        return [st.get_run(r.run_id) for r in st.list_runs()]


def _lone(db):
    return subprocess.Popen([*NUMASCOPE, "fleet", "run", "--no-mpi", "--quick", "--stage",
                             "latency", "--store", str(db)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, NUMASCOPE_FLEET_MPI="0",
                                     NUMASCOPE_HOSTNAME="node0"))


def test_a_second_signal_while_the_first_is_handled_changes_nothing():
    with signals.handled():
        with pytest.raises(signals.Stop):
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):
                pass
        # the stop is being handled: a second SIGTERM (and a SIGINT) raise nothing
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            pass
        assert signals.received() == signal.SIGTERM
        assert signals.exit_code() == 143


@pytest.mark.parametrize("attempt", [1, 2])
def test_two_sigterms_10_ms_apart_keep_every_finished_result(tmp_path, attempt):
    """Slurm's time limit: SIGTERM, then SIGTERM again 10 ms later, once a result has
    finished. The node is interrupted (never "before its run began"), its results kept,
    all in the store file itself."""
    db = tmp_path / "node.db"
    proc = _lone(db)
    try:
        _results_in_file(db)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143, err[-2000:]
    assert "Traceback" not in err and "before its run began" not in out + err, out + err
    (rec,) = _alone(db, tmp_path)
    assert rec.status == "interrupted" and len(rec.results) >= 1, (rec.status, out)
    assert rec.host["fleet"]["reason"] == "stage latency interrupted: stopped by SIGTERM"
    assert rec.host["hostname"] == "node0"


def test_a_sigkill_mid_run_leaves_the_finished_results_in_the_store_file(tmp_path):
    """Killed with no chance to clean up (a launcher's SIGKILL): the results that finished
    are in the store file alone, the node interrupted ("never finished"), not missing."""
    db = tmp_path / "node.db"
    proc = _lone(db)
    try:
        n = _results_in_file(db)
        proc.kill()
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    (rec,) = _alone(db, tmp_path)
    assert len(rec.results) >= n and rec.status == "running"
    from numascope.fleet.verdict import verdict
    v = verdict(rec)
    assert v.status == "interrupted" and "never finished" in v.reason, v
    assert rec.tags["host"] == "node0" and rec.tags.get("fleet")


_mpirun = mpirun_or_skip


def _runs_with_results(db) -> int:
    copy = f"{db}.peek"
    try:
        shutil.copyfile(db, copy)
        with sqlite3.connect(f"file:{copy}?mode=ro&immutable=1", uri=True) as c:
            return c.execute("SELECT count(DISTINCT run_id) FROM results").fetchone()[0]
    except (OSError, sqlite3.Error):
        return 0


def test_sigterm_to_mpirun_leaves_every_nodes_results_and_the_signal_in_the_store_file(
        tmp_path):
    """mpirun forwards SIGTERM and SIGKILLs its ranks 1 s later: every rank's finished
    results already reached rank 0's store file as they finished, and every node's record
    there names the signal. mpirun itself exits 1 whatever its ranks return (documented)."""
    argv = [_mpirun(), "-np", "3", "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    db = tmp_path / "f.db"
    argv += ["-x", "NUMASCOPE_HOSTNAME", *NUMASCOPE, "fleet", "run", "--quick", "--stage",
             "latency", "--node-timeout", "200", "--store", str(db)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, NUMASCOPE_HOSTNAME="node{rank}"))
    try:
        t0 = time.monotonic()
        while _runs_with_results(db) < 3:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() - t0 < 200, "no result from every rank"
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode != 0
    assert "Traceback" not in err, err[-3000:]
    runs = _alone(db, tmp_path)
    assert sorted(r.host["hostname"] for r in runs) == ["node0", "node1", "node2"]
    from numascope.fleet.verdict import verdict
    for r in runs:
        v = verdict(r)
        assert len(r.results) >= 1 and v.status == "interrupted", (r.host["hostname"], v)
        assert "SIGTERM" in v.reason, (r.host["hostname"], v.reason)


def test_run_records_numascope_hostname_as_fleet_does(monkeypatch):
    from numascope.results.run import local_hostname
    monkeypatch.setenv("NUMASCOPE_HOSTNAME", "gpu017")
    assert local_hostname() == "gpu017"
    monkeypatch.delenv("NUMASCOPE_HOSTNAME")
    import socket
    assert local_hostname() == socket.gethostname()


def test_run_selections_after_options_are_taken(tmp_path, capsys):
    """`fleet baseline save gold --store f.db host=a host=b`: the selections after --store
    are runs, not "unrecognized arguments"; an unknown option still is one line, exit 2."""
    from fleet_synth import fleet

    from numascope.cli import main
    db = tmp_path / "f.db"
    runs = fleet(3, {}, seed=1)
    with Store.open(db, write=True) as st:
        for r in runs:
            st.save_run(r)
    hosts = [f"host={r.host['hostname']}" for r in runs]
    assert main(["fleet", "baseline", "save", "gold", "--store", str(db), *hosts]) == 0
    assert "unrecognized" not in capsys.readouterr().err
    assert main(["fleet", "baseline", "list", "--store", str(db)]) == 0
    out = capsys.readouterr().out
    assert "gold" in out and "None" not in out and "from runs named" in out
    assert main(["fleet", "baseline", "save", "g2", "--store", str(db), "--bogus"]) == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_a_node_whose_own_run_failed_fails_its_check_and_prom_agrees(tmp_path):
    """A node whose run failed, or was interrupted before any result, is out of the
    baseline (exit 1), not inconclusive: NUMASCOPE_UNKNOWN=ok must not pass it; prom says
    baseline_out 1 and gives it no node_outlier (it was not screened), never 0."""
    from fleet_synth import fleet

    from numascope.fleet import node as fnode
    db = tmp_path / "f.db"
    runs = fleet(3, {}, seed=1)
    with Store.open(db, write=True) as st:
        for r in runs:
            st.save_run(r)
    cli = [*NUMASCOPE, "fleet"]
    p = subprocess.run([*cli, "baseline", "save", "gold", "--store", str(db)],
                       capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    h1, h2 = runs[1].host["hostname"], runs[2].host["hostname"]
    ident = {"id": "f2", "host": h1, "rank": 1, "ranks": 3, "launcher": "mpi", "slurm": {}}
    with Store.open(db, write=True) as st:
        st.save_run(fnode.failed_record(ident, "quick", {}, "error: RuntimeError: boom"))
        st.save_run(fnode.failed_record({**ident, "host": h2, "rank": 2}, "quick", {},
                                        "stopped by SIGTERM before its run began",
                                        status="interrupted"))
    for h, why in ((h1, "run failed: error: RuntimeError: boom"),
                   (h2, "run interrupted with no result")):
        p = subprocess.run([*cli, "check", "--baseline", "gold", "--store", str(db), "--host",
                            h, "latest"], capture_output=True, text=True, timeout=120,
                           check=False)
        assert p.returncode == 1 and "out of baseline" in p.stdout and why in p.stdout, \
            (h, p.returncode, p.stdout, p.stderr)
    prom = tmp_path / "n.prom"
    p = subprocess.run([*cli, "prom", "--baseline", "gold", "--store", str(db), "--fleet",
                        "f2", "--out", str(prom)], capture_output=True, text=True,
                       timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    text = prom.read_text()
    for h in (h1, h2):
        assert f'numascope_baseline_out{{baseline="gold",host="{h}"}} 1.0' in text
        assert f'numascope_node_outlier{{host="{h}"}}' not in text
