"""One truth per node (numascope.fleet.verdict), and every output reading it: a node is
complete only when every stage asked ran and passed (a stage that does not apply is
skipped, not failed); a failed, interrupted or missing node is never "ok" in fleet report,
the HTML section or fleet check; a full disk is "disk full", never "damaged"."""

from __future__ import annotations

import json
import random
import sqlite3

import pytest
from fleet_synth import fleet, node

from numascope.cli import main
from numascope.fleet import manifest
from numascope.fleet.verdict import verdict
from numascope.results.run import StageInfo
from numascope.results.store import Store, StoreFull


def _with(rec, name: str, status: str, reason: str = ""):
    rec.stages = [s for s in rec.stages if s.name != name] + [StageInfo(name, status, reason)]
    return rec


def _one(**kw):
    return node("n1", "f", {}, rng=random.Random(1), **kw)


@pytest.mark.parametrize(("stage", "want"), [
    ("done", "complete"), ("skipped", "complete"), ("failed", "failed"),
    ("interrupted", "interrupted"), ("not run", "interrupted"), ("pending", "interrupted")])
def test_the_worst_stage_decides_a_complete_run(stage, want):
    rec = _with(_one(), "interconnect", stage, "why")
    v = verdict(rec)
    assert (v.ok, v.status) == (want == "complete", want)
    assert v.stages["interconnect"] == stage and v.stages["topology"] == "done"
    assert v.reason == ("" if v.ok else f"stage interconnect {stage}: why")


def test_failed_outranks_interrupted_and_the_record_status_counts():
    rec = _with(_with(_one(), "latency", "interrupted", "stopped by SIGTERM"),
                "interconnect", "failed", "a rank failed")
    assert verdict(rec)[:3] == (False, "failed", "stage interconnect failed: a rank failed")
    rec = _one()
    rec.status = "running"          # its process ended without closing the run
    assert verdict(rec).status == "interrupted" and "never finished" in verdict(rec).reason
    rec.status = "interrupted"
    assert not verdict(rec).ok


def test_a_placeholder_is_missing_with_its_reason():
    p = manifest.placeholder("f", 2, 3, "mpi", "quick", {"site": "a"}, {"SLURM_JOB_ID": "7",
                                                                       "SLURM_PROCID": "0"})
    v = verdict(p)
    assert (v.ok, v.status, v.reason) == (False, "missing", manifest.REASON)
    assert p.tags == {"site": "a", "fleet": "f", "host": "rank2", "slurm_job": "7"}
    assert p.host["fleet"]["rank"] == 2 and p.host["fleet"]["ranks"] == 3
    assert "SLURM_PROCID" not in p.host["fleet"]["slurm"]        # a task's, not the job's
    manifest.named(p, {"host": "node2", "slurm": {"SLURM_PROCID": "2"}})
    assert p.host["hostname"] == "node2" and p.tags["host"] == "node2"
    assert p.host["fleet"]["rank"] == 2 and verdict(p).status == "missing"


def _store(path, runs):
    with Store.open(path, write=True) as st:
        for r in runs:
            st.save_run(r)


def test_report_json_and_html_list_failed_interrupted_and_missing_nodes(tmp_path, capsys):
    from numascope.report.fleet_html import fleet_section
    runs = fleet(6, {}, seed=5, fleet_id="f6")
    _with(runs[0], "interconnect", "failed", "a rank failed")
    runs[0].status = "failed"
    _with(runs[1], "latency", "interrupted", "stopped by SIGTERM")
    runs[1].status = "interrupted"
    runs[2] = manifest.placeholder("f6", 2, 6, "mpi", "quick", {}, {})
    _store(tmp_path / "f.db", runs)
    # every node accounted for: the failed, interrupted and missing count in the exit code
    assert main(["fleet", "report", "--json", "--store", str(tmp_path / "f.db")]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["nodes"] == 6
    assert sorted(e["kind"] for e in doc["errors"]) == ["node-failed", "node-interrupted",
                                                       "node-missing"]
    got = {f["host"]: (f["status"], f["reason"]) for f in doc["failed_nodes"]}
    assert got == {"n0000": ("failed", "stage interconnect failed: a rank failed"),
                   "n0001": ("interrupted", "stage latency interrupted: stopped by SIGTERM"),
                   "rank2": ("missing", manifest.REASON)}
    assert main(["fleet", "report", "--store", str(tmp_path / "f.db")]) == 1
    text = capsys.readouterr().out
    assert "6 nodes (3 complete, 1 failed, 1 interrupted, 1 missing)" in text
    assert "rank2  missing: no record from this node" in text
    html = fleet_section(runs, with_figures=False)
    assert "rank2 (missing): no record from this node" in html and "a rank failed" in html


def test_check_fails_closed_on_a_run_that_did_not_do_all_it_was_asked(tmp_path, capsys):
    """Against a baseline where interconnect never ran (so it has no metric of it), a node
    whose interconnect stage failed is out (1), not ok; a missing node is out; an
    interrupted run is inconclusive (5: a person looks, it is not drained: a time limit or
    a Ctrl-C says nothing about the node)."""
    db = tmp_path / "g.db"
    _store(db, fleet(5, {}, seed=7, fleet_id="gold", spread=(0.01, 0.02)))
    assert main(["fleet", "baseline", "save", "gold", "--fleet", "gold", "--store",
                 str(db)]) == 0
    capsys.readouterr()
    later = fleet(4, {}, seed=8, fleet_id="later", spread=(0.01, 0.02))
    bad_stage = _with(later[0], "interconnect", "failed", "a rank failed")  # as `run` keeps it
    cut = _with(later[1], "latency", "interrupted", "stopped by SIGTERM")
    cut.status = "interrupted"
    lost = manifest.placeholder("later", 3, 4, "mpi", "quick", {}, {})
    later[3] = lost
    _store(db, later)
    check = ["fleet", "check", "--baseline", "gold", "--store", str(db), "--json"]
    for run, code, key, why in [
            (bad_stage, 1, "problems", "run failed: stage interconnect failed: a rank failed"),
            (lost, 1, "problems", f"run missing: {manifest.REASON}"),
            (cut, 5, "unjudged", ("run interrupted: stage latency interrupted: stopped "
                                  "by SIGTERM"))]:
        assert main([*check, run.run_id]) == code
        (v,) = json.loads(capsys.readouterr().out)["results"]
        assert v["ok"] is False and v[key][0]["why"] == why
    assert main([*check, later[2].run_id]) == 0
    capsys.readouterr()


def test_the_nested_mpirun_sees_no_launcher_but_keeps_site_settings():
    from numascope.fleet.node import fleet_stages, nested_launch_env
    from numascope.suite import all_stages
    env = {"PATH": "/usr/bin", "OMPI_COMM_WORLD_RANK": "1", "OMPI_MCA_orte_hnp_uri": "x",
           "PMIX_RANK": "1", "SLURM_JOB_ID": "7", "SLURM_NTASKS": "1", "OMPI_MCA_btl": "^vader",
           "OMPI_COMMAND": "python", "PMI_SIZE": "2"}
    assert nested_launch_env(env) == {"PATH": "/usr/bin", "OMPI_MCA_btl": "^vader",
                                      "OMPI_MCA_rmaps_base_oversubscribe": "1"}
    st = {s.name: s for s in fleet_stages(all_stages())}
    assert "env" in dict(st["interconnect"].options)
    assert dict(st["latency"].options) == {}


def test_a_full_disk_is_said_as_such_never_damaged(tmp_path):
    """SQLite's SQLITE_FULL (and an I/O error on a disk with no space left) is StoreFull;
    another error is still the damaged store's line."""
    from pathlib import Path

    from numascope.results import store as st
    e = sqlite3.OperationalError("database or disk is full")
    e.sqlite_errorcode = sqlite3.SQLITE_FULL
    full = st._full(Path(tmp_path / "x.db"), e)
    assert isinstance(full, StoreFull) and "disk full" in str(full)
    assert "damaged" not in str(full) and full.exit_code == 2
    other = sqlite3.DatabaseError("database disk image is malformed")
    other.sqlite_errorcode = sqlite3.SQLITE_CORRUPT
    assert st._full(Path(tmp_path / "x.db"), other) is None


def test_gather_stores_the_tasks_a_manifest_expects_and_a_late_record_replaces_one(
        tmp_path, capsys):
    from numascope.fleet import files
    shared = tmp_path / "shared"
    shared.mkdir()
    recs = fleet(3, {}, seed=9, fleet_id="slurm-7.0")
    for i, r in enumerate(recs):
        r.host["fleet"] = {"id": "slurm-7.0", "host": r.host["hostname"], "rank": i,
                           "ranks": 3, "launcher": "srun", "slurm": {}}
    manifest.write_manifest(shared, "slurm-7.0", 3, "srun", "quick", {},
                            {"SLURM_JOB_ID": "7", "SLURM_PROCID": "1"})
    for r in recs[:2]:
        files.write_record(shared, r)
    db = str(tmp_path / "f.db")
    assert main(["fleet", "gather", str(shared), "--store", db]) == 0
    assert "1 of them missing nodes" in capsys.readouterr().out
    with Store.open(db) as st:
        runs = [st.get_run(s.run_id) for s in st.list_runs()]
    assert sorted(r.status for r in runs) == ["complete", "complete", "missing"]
    (lost,) = [r for r in runs if r.status == "missing"]
    assert lost.host["fleet"]["rank"] == 2 and lost.tags["fleet"] == "slurm-7.0"
    # the third task's file arrives late (a slow shared file system): it replaces the
    # placeholder, and gathering again adds nothing
    files.write_record(shared, recs[2])
    for _ in range(2):
        assert main(["fleet", "gather", str(shared), "--store", db]) == 0
    capsys.readouterr()
    with Store.open(db) as st:
        runs = st.list_runs()
    assert sorted(r.status for r in runs) == ["complete"] * 3
