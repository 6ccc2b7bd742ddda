"""A fleet's shared store holds each node's brief and figures; its full record stays on the
node (numascope.fleet.full): measured on a real quick fleet run, fetched by `fleet show` and
`fleet gather --full`, and a store made before (records whole) still read by report, check,
prom and show."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from numascope.fleet import full, outliers
from numascope.fleet.load import analysis_runs
from numascope.results.run import RunRecord, migrate
from numascope.results.store import Store

DATA = Path(__file__).parent / "data" / "advise_quick_run.json"
HOST = "quick0"


def cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "numascope", *argv], capture_output=True,
                          text=True, check=False, env=env, timeout=600)


def _vacuumed(db: Path, to: Path) -> int:
    shutil.copy(db, to)
    c = sqlite3.connect(to)
    c.execute("VACUUM")
    c.close()
    return to.stat().st_size


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """One real `fleet run --quick` node (no MPI) into a shared store, its full record in
    a node folder."""
    tmp = tmp_path_factory.mktemp("quick")
    env = dict(os.environ, NUMASCOPE_NODE_DIR=str(tmp / "node"), NUMASCOPE_HOSTNAME=HOST)
    p = cli("fleet", "run", "--quick", "--no-mpi", "--store", str(tmp / "fleet.db"),
            "--json", env=env)
    assert p.returncode in (0, 1), p.stdout[-2000:] + p.stderr[-2000:]
    return tmp, env


def test_a_quick_node_takes_at_most_30_kB_of_the_shared_store(quick):
    tmp, _ = quick
    db = tmp / "fleet.db"
    with Store.open(tmp / "empty.db", write=True):
        pass
    per_node = _vacuumed(db, tmp / "v.db") - _vacuumed(tmp / "empty.db", tmp / "v0.db")
    (file,) = (tmp / "node").iterdir()
    whole = file.stat().st_size
    assert per_node <= 30_000, per_node
    assert per_node < whole / 3, (per_node, whole)      # the bulk stayed on the node
    with Store.open(db) as st:
        (run,) = st.list_runs()
        rec = st.get_run(run.run_id)
    assert full.where(rec)["path"] == str(file.resolve())
    assert not rec.topology and rec.results
    assert all(len(m.values) <= 1 for r in rec.results for m in r.metrics.values())
    assert any(len(m.values) > 1 for r in full.fetch(rec)[0].results
               for m in r.metrics.values())


def test_show_prints_the_full_record_and_says_where_it_lives_when_unreadable(quick):
    tmp, env = quick
    db = str(tmp / "fleet.db")
    p = cli("fleet", "show", HOST, "--store", db, "--json", env=env)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["full"] is True and doc["results"][0]["topology"]
    p = cli("fleet", "show", "nosuchnode", "--store", db, env=env)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        p.stderr.strip().splitlines()[0]] and "no node nosuchnode" in p.stderr
    moved = tmp / "node-moved"
    (tmp / "node").rename(moved)
    try:
        p = cli("fleet", "show", HOST, "--store", db, env=env)
        assert p.returncode == 0, p.stderr
        said = " ".join(p.stderr.split())
        assert "not readable from here" in said and str(tmp / "node") in said
        assert "fleet gather --full" in said
        p = cli("fleet", "gather", "--full", HOST, "--store", db, env=env)
        assert p.returncode == 2 and "nothing copied" in p.stderr
    finally:
        moved.rename(tmp / "node")


def test_report_check_prom_read_briefs_and_gather_full_copies_the_record(quick, tmp_path):
    tmp, env = quick
    # a copy: gather --full changes the store the module's other tests read as briefs
    db = str(tmp_path / "fleet.db")
    shutil.copy(tmp / "fleet.db", db)
    p = cli("fleet", "report", "--store", db, "--json", env=env)
    assert p.returncode in (0, 1), p.stderr
    assert json.loads(p.stdout)["nodes"] == 1
    p = cli("fleet", "prom", "--out", str(tmp_path / "n.prom"), "--store", db, env=env)
    assert p.returncode == 0, p.stderr
    assert "numascope_bandwidth" in (tmp_path / "n.prom").read_text()
    p = cli("fleet", "gather", "--full", HOST, "--store", db, env=env)
    assert p.returncode == 0, p.stderr
    assert "copied 1 full record" in " ".join(p.stdout.split())
    with Store.open(db) as st:
        (run,) = st.list_runs()
        rec = st.get_run(run.run_id)
    assert rec.topology and not full.is_brief(rec)
    p = cli("fleet", "gather", "--full", HOST, "--store", db, env=env)
    assert p.returncode == 0 and "already there whole" in " ".join(p.stdout.split())


def _fleet(n: int, fid: str) -> list[RunRecord]:
    base = RunRecord.from_dict(migrate(json.loads(DATA.read_text())))
    out = []
    for i in range(n):
        results = []
        for res in base.results:
            f = 1 + 0.01 * ((i * 7 + len(res.case)) % 5) - (0.3 if i == n - 1 else 0)
            metrics = {k: dataclasses.replace(m, values=[v * (f if m.higher_is_better
                                                              else 2 - f)
                                                         for v in m.values])
                       for k, m in res.metrics.items()}
            results.append(dataclasses.replace(res, metrics=metrics))
        host = f"n{i}"
        out.append(dataclasses.replace(
            base, run_id=f"{base.run_id}-{i:03d}", tags={"fleet": fid, "host": host},
            host={**base.host, "hostname": host, "fleet": {"id": fid, "host": host,
                                                           "rank": i, "ranks": n}},
            results=results))
    return out


def test_the_analysis_of_briefs_is_the_analysis_of_whole_records(tmp_path):
    recs = _fleet(6, "f1")
    with Store.open(tmp_path / "whole.db", write=True) as st:
        for r in recs:
            st.save_run(r)
        a = outliers.analyze(analysis_runs(st, [r.run_id for r in recs]), fleet="f1")
    with Store.open(tmp_path / "brief.db", write=True) as st:
        for r in recs:
            full.save(st, full.slim(r, tmp_path / f"{r.run_id}.json"))
        b = outliers.analyze(analysis_runs(st, [r.run_id for r in recs]), fleet="f1")
        again = st.get_run(recs[0].run_id)
    assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())
    assert {f.host for f in a.flags} == {"n5"}
    assert [(r.family, r.case, list(r.metrics)) for r in again.results] == \
        [(r.family, r.case, list(r.metrics)) for r in recs[0].results]


def test_a_store_of_whole_records_still_reads_for_report_check_prom_and_show(tmp_path):
    """A store made the old way (every record whole, figures and briefs indexed on its
    first opening for writing)."""
    db = tmp_path / "old.db"
    with Store.open(db, write=True) as st:
        for r in _fleet(5, "old"):
            st.save_run(r)
    s = str(db)
    p = cli("fleet", "report", "--store", s, "--json")
    assert p.returncode == 0, p.stderr
    assert {f["host"] for f in json.loads(p.stdout)["results"]} == {"n4"}
    p = cli("fleet", "baseline", "save", "gold", "--fleet", "old", "--store", s)
    assert p.returncode == 0, p.stderr
    p = cli("fleet", "check", "--baseline", "gold", "--fleet", "old", "--store", s, "--json")
    assert p.returncode == 1, p.stderr      # n4, 30 % worse, falls out
    assert {v["host"] for v in json.loads(p.stdout)["results"] if v["problems"]} == {"n4"}
    p = cli("fleet", "prom", "--out", str(tmp_path / "o.prom"), "--store", s)
    assert p.returncode == 0, p.stderr
    p = cli("fleet", "show", "n2", "--store", s, "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["full"] is True and doc["full_record"] is None
    assert any(len(m["values"]) > 1 for r in doc["results"][0]["results"]
               for m in r["metrics"].values())
    p = cli("fleet", "gather", "--full", "n2", "--store", s)
    assert p.returncode == 0 and "already there whole" in " ".join(p.stdout.split())
