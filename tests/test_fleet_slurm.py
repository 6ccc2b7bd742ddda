"""`numascope fleet run` launched by a real Slurm: munged, slurmctld and slurmd started on
this machine from a temporary folder (tests/slurm/harness.py), torn down after. Skipped, with
the reason, only when a daemon cannot start here (not root, not installed, or its log's last
lines)."""

from __future__ import annotations

import json
import sys

import pytest
from slurm.harness import MiniSlurm, SlurmUnavailable

from numascope.results.store import Store

NUMASCOPE = [sys.executable, "-m", "numascope"]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    s = MiniSlurm(tmp_path_factory.mktemp("slurm"))
    try:
        s.start()
    except SlurmUnavailable as e:
        s.stop()
        pytest.skip(f"single-host Slurm cannot run here: {e}")
    yield s
    s.stop()


def test_srun_fleet_run_stores_a_record_with_the_slurm_ids(slurm, tmp_path):
    db = tmp_path / "fleet.db"
    p = slurm.run(["srun", "-N1", "-n1", "-J", "numascope-fleet", *NUMASCOPE, "fleet", "run",
                   "--smoke", "--stage", "latency", "--store", str(db), "--json"])
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    job = doc["results"][0]["slurm"]["SLURM_JOB_ID"]
    with Store.open(db) as st:
        (summary,) = st.list_runs()
        rec = st.get_run(summary.run_id)
    assert rec.status == "complete" and {r.family for r in rec.results} == {"latency"}
    assert rec.tags["slurm_job"] == job and rec.tags["slurm_step"] == "0"
    assert rec.tags["slurm_node"] == "0"
    assert rec.tags["fleet"] == f"slurm-{job}.0" == doc["fleet"]
    sl = rec.host["fleet"]["slurm"]
    assert sl["SLURM_JOB_NAME"] == "numascope-fleet" and sl["SLURM_CLUSTER_NAME"] == \
        "numascopetest"
    assert rec.host["fleet"]["launcher"] == "srun"
    # task/affinity binds `srun -n1` to one CPU, as production Slurm does: said and recorded
    n = rec.host["fleet"]["cpus_online"]
    assert rec.host["fleet"]["cpus_allowed"] == min(n, 1)
    if n > 1:
        assert f"this task may use 1 of {n} CPUs" in p.stderr and "--cpu-bind=none" in p.stderr


def test_srun_with_the_whole_node_measures_every_cpu(slurm, tmp_path):
    db = tmp_path / "fleet.db"
    n = slurm.cpus
    p = slurm.run(["srun", "-N1", "-n1", "--exclusive", "-c", str(n), "--cpu-bind=none",
                   *NUMASCOPE, "fleet", "run", "--smoke", "--stage", "latency", "--store",
                   str(db)])
    assert p.returncode == 0, p.stderr
    assert "this task may use" not in p.stderr
    with Store.open(db) as st:
        (summary,) = st.list_runs()
        rec = st.get_run(summary.run_id)
    assert rec.host["fleet"]["cpus_allowed"] == rec.host["fleet"]["cpus_online"] == n


def test_recipe_srun_lines_bind_as_expanded(slurm):
    """The srun lines numascope's recipes write, run by this Slurm (task/affinity): each
    task's Cpus_allowed_list is what recipes.expand_srun promised."""
    from numascope.placement import parse_cpulist
    from numascope.recipes import expand_srun, for_job
    from numascope.topology import read_topology
    topo = read_topology("/")
    n = len(topo.usable_cpus())
    shapes = [{"ranks": n, "threads": 1}, {"ranks": 1, "threads": n}]
    if n >= 2:
        shapes.append({"ranks": 2, "threads": 1, "unit": "core"})
    for shape in shapes:
        recipe = for_job(topo, program="true", **shape)
        srun = next(la for la in recipe.launches if la.argv[0] == "srun")
        argv = list(srun.argv)
        cut = argv.index("true")
        script = "echo $SLURM_PROCID $(grep Cpus_allowed_list /proc/self/status | cut -f2)"
        show = ["bash", "-c", script]
        p = slurm.run(argv[:cut] + show)
        assert p.returncode == 0, (argv, p.stderr)
        got = {int(r): parse_cpulist(c) for r, c in
               (line.split() for line in p.stdout.split("\n") if line.strip())}
        want = expand_srun(argv, topo)
        assert [got[i] for i in range(len(want))] == [sorted(w) for w in want], (argv, got)


def test_srun_two_tasks_without_mpi_write_files_and_gather_merges_them_once(slurm, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    db = tmp_path / "fleet.db"
    p = slurm.run(["srun", "-N1", "-n2", *NUMASCOPE, "fleet", "run", "--smoke", "--stage",
                   "latency", "--shared-dir", str(shared)],
                  env={"NUMASCOPE_HOSTNAME": "node{rank}"})
    assert p.returncode == 0, p.stderr
    names = sorted(f.name.split(".")[0] for f in shared.iterdir()
                   if f.name.endswith(".numascope.json"))
    assert names == ["node0", "node1"]
    # and the fleet's manifest (every task wrote the same one); no temporary file
    (man,) = [f for f in shared.iterdir() if not f.name.endswith(".numascope.json")]
    assert man.name.endswith(".numascope-fleet.json") and json.loads(man.read_text())[
        "ranks"] == 2
    for _ in range(2):
        g = slurm.run([*NUMASCOPE, "fleet", "gather", str(shared), "--store", str(db),
                       "--json"])
        assert g.returncode == 0, g.stderr
    assert json.loads(g.stdout)["added"] == 0 and json.loads(g.stdout)["already"] == 2
    with Store.open(db) as st:
        runs = [st.get_run(r.run_id) for r in st.list_runs()]
    assert sorted(r.host["hostname"] for r in runs) == ["node0", "node1"]
    assert len({r.tags["fleet"] for r in runs}) == 1          # slurm-JOB.STEP, shared
    assert {r.tags["slurm_job"] for r in runs} == {runs[0].tags["slurm_job"]}


def test_srun_several_tasks_without_mpi_or_shared_dir_is_refused(slurm, tmp_path):
    p = slurm.run(["srun", "-N1", "-n2", *NUMASCOPE, "fleet", "run", "--smoke", "--stage",
                   "latency", "--store", str(tmp_path / "x.db")])
    assert p.returncode == 2
    assert "2 tasks without MPI: give --shared-dir" in p.stderr
    assert not (tmp_path / "x.db").exists()


def test_srun_with_pmix_runs_the_mpi_path_rank_0_stores_both_nodes(slurm, tmp_path):
    """The production path: `srun --mpi=pmix -n N numascope fleet run` with mpi4py."""
    r = slurm.run(["srun", "--mpi=list"])
    if "pmix" not in r.stdout + r.stderr:
        pytest.skip(f"this Slurm has no pmix MPI plugin: {(r.stdout + r.stderr).strip()}")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip("mpi4py not installed (the test extra)")
    db = tmp_path / "fleet.db"
    p = slurm.run(["srun", "-N1", "-n2", "--mpi=pmix", *NUMASCOPE, "fleet", "run", "--smoke",
                   "--stage", "latency", "--store", str(db), "--json"],
                  env={"NUMASCOPE_HOSTNAME": "node{rank}"})
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)         # rank 0 alone prints
    assert doc["mode"] == "mpi" and [r["host"] for r in doc["results"]] == ["node0", "node1"]
    with Store.open(db) as st:
        runs = sorted((st.get_run(r.run_id) for r in st.list_runs()),
                      key=lambda r: r.host["hostname"])
    assert [r.status for r in runs] == ["complete", "complete"]
    assert [r.host["fleet"]["slurm"]["SLURM_PROCID"] for r in runs] == ["0", "1"]
    assert {r.tags["fleet"] for r in runs} == {doc["fleet"]}
    assert doc["fleet"].startswith("slurm-") and runs[1].tags["slurm_job"] in doc["fleet"]


# -- failing closed under Slurm ---------------------------------------------------------------

def test_the_documented_srun_line_runs_the_interconnect_stage_or_says_why_not(slurm,
                                                                               tmp_path):
    """`srun -N 1 --ntasks-per-node=1 --exclusive -c N --cpu-bind=none … --stage
    interconnect`: the stage's own mpirun runs outside the step (it saw one slot and failed
    with "not enough slots available"), so the node is complete; with one CPU there is no
    pair, and the stage is skipped with that reason, never failed."""
    db = tmp_path / "fleet.db"
    n = slurm.cpus
    p = slurm.run(["srun", "-N1", "--ntasks-per-node=1", "--exclusive", "-c", str(n),
                   "--cpu-bind=none", *NUMASCOPE, "fleet", "run", "--smoke", "--stage",
                   "interconnect", "--store", str(db), "--json"], timeout=300)
    (row,) = json.loads(p.stdout)["results"]
    assert p.returncode == 0 and row["status"] == "complete", (row, p.stderr[-2000:])
    with Store.open(db) as st:
        (summary,) = st.list_runs()
        rec = st.get_run(summary.run_id)
    stage = next(s for s in rec.stages if s.name == "interconnect")
    if n >= 2:
        assert stage.status == "done" and rec.results, stage
    else:
        assert stage.status == "skipped" and "fewer than two usable CPUs" in stage.reason


def _pmix(slurm) -> None:
    r = slurm.run(["srun", "--mpi=list"])
    if "pmix" not in r.stdout + r.stderr:
        pytest.skip(f"this Slurm has no pmix MPI plugin: {(r.stdout + r.stderr).strip()}")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip("mpi4py not installed (the test extra)")


def _wait_rows(db, n: int, limit: float = 120.0) -> None:
    import sqlite3
    import time
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
                if c.execute("SELECT count(*) FROM runs").fetchone()[0] >= n:
                    return
        except sqlite3.Error:
            pass
        time.sleep(0.2)
    pytest.fail(f"no {n} rows in {db} within {limit:g} s")


def _report(slurm, db) -> dict:
    p = slurm.run([*NUMASCOPE, "fleet", "report", "--json", "--store", str(db)])
    doc = json.loads(p.stdout)
    # a failed, interrupted or missing node counts in the exit code
    assert p.returncode == (1 if doc["failed_nodes"] else 0), p.stderr
    return doc


@pytest.mark.parametrize("how", ["sigkill-rank", "job-signal"])
def test_srun_pmix_a_killed_rank_or_a_stopped_job_leaves_every_node_accounted_for(
        slurm, tmp_path, how):
    """Three MPI tasks under `srun --mpi=pmix`: one task SIGKILLed mid-run (Slurm ends the
    step), or the step sent SIGTERM as a time limit does (scancel --signal=TERM): every
    node is in the store — the killed one missing, the stopped ones interrupted — and srun
    exits non-zero (143 for the stop: 128 + SIGTERM, every task with one line)."""
    import subprocess
    _pmix(slurm)
    db = tmp_path / "fleet.db"
    name = f"fc-{how}"
    proc = subprocess.Popen(["srun", "-N1", "-n3", "--overcommit", "--mpi=pmix", "-J", name,
                             *NUMASCOPE, "fleet", "run", "--quick", "--stage", "latency",
                             "--store", str(db), "--node-timeout", "200"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**slurm.env, "NUMASCOPE_HOSTNAME": "node{rank}"})
    try:
        _wait_rows(db, 3)
        if how == "sigkill-rank":
            # one task only: the step's rank 2, by its pid
            import os
            import signal
            want = {b"PMIX_RANK=2", f"SLURM_JOB_NAME={name}".encode()}
            killed = []
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open(f"/proc/{pid}/environ", "rb") as f:
                        if want <= set(f.read().split(b"\0")):
                            os.kill(int(pid), signal.SIGKILL)
                            killed.append(pid)
                except OSError:
                    continue
            assert killed, "rank 2 not found"
            k = subprocess.CompletedProcess([], 0, "", "")
        else:
            k = slurm.run(["scancel", "--signal=TERM", "--name", name])
        assert k.returncode == 0, k.stderr
        _, err = proc.communicate(timeout=200)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode != 0, err[-2000:]
    rep = _report(slurm, db)
    assert rep["nodes"] == 3, (err[-2000:], rep["failed_nodes"])
    got = {f["host"]: f["status"] for f in rep["failed_nodes"]}
    if how == "sigkill-rank":
        assert got.get("node2", got.get("rank2")) == "missing", got
    else:
        assert proc.returncode == 143, err[-2000:]
        assert set(got.values()) <= {"interrupted", "missing"} and len(got) == 3, got
        # each rank says it in one line: "stopped by SIGTERM" when the signal found it
        # measuring, "interrupted (SIGTERM)" when it found it before or after (load decides)
        assert "Traceback" not in err, err[-2000:]
        assert "stopped by SIGTERM" in err or "interrupted (SIGTERM)" in err, err[-2000:]
