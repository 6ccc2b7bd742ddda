"""`fleet check` judges the right run: this host's latest (named with --host, else the
local name), never another host's or an older complete one; a run too old, failed or
interrupted, or no run at all, is one line and exit 5; a --confirm second measurement is
what later checks judge; a tag that only labels a run does not move it out of its group;
a baseline of groups under 3 nodes is refused at save (or saved marked)."""

from __future__ import annotations

import json
import random

import pytest
from fleet_synth import fleet, node

from numascope.cli import main
from numascope.fleet.command import worse as _worse
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord, StageInfo
from numascope.results.store import Store

BW = "bandwidth/triad compact 96T/bandwidth"


def _save(path, runs) -> None:
    with Store.open(path, write=True) as st:
        for r in runs:
            st.save_run(r)


@pytest.fixture
def db(tmp_path, capsys):
    p = tmp_path / "node.db"
    _save(p, fleet(8, {}, seed=51, fleet_id="b", spread=(0.01, 0.02)))
    assert main(["fleet", "baseline", "save", "gold", "--store", str(p)]) == 0
    capsys.readouterr()
    return p


def _check(db, capsys, *argv: str) -> tuple[int, dict]:
    rc = main(["fleet", "check", "--baseline", "gold", "--store", str(db), *argv, "--json"])
    return rc, json.loads(capsys.readouterr().out)


def _text(db, capsys, *argv: str) -> tuple[int, str]:
    rc = main(["fleet", "check", "--baseline", "gold", "--store", str(db), *argv])
    return rc, capsys.readouterr().out


def _run(host: str, factors=None, seed: int = 1, **tags: str):
    r = node(host, "later", factors or {}, rng=random.Random(seed))
    r.tags.update(tags)
    return r


def test_latest_is_this_hosts_latest_run_never_another_hosts(db, capsys, monkeypatch):
    mine = _run("n0002", {BW: 0.5})           # this host: slow
    _save(db, [mine, _run("n0005", seed=2)])  # another host's newer, healthy run
    monkeypatch.setenv("NUMASCOPE_HOSTNAME", "n0002")
    rc, doc = _check(db, capsys, "latest")
    assert rc == 1 and doc["host"] == "n0002" and doc["run_id"] == mine.run_id
    rc, text = _text(db, capsys, "latest")
    assert rc == 1
    assert text.splitlines()[0] == "baseline gold: out of baseline (host n0002)"
    assert f"run {mine.run_id}" in text               # the line names the run judged
    # --host names it explicitly; the other host's run is healthy
    rc, doc = _check(db, capsys, "--host", "n0005")
    assert rc == 0 and doc["run_id"] != mine.run_id


def test_no_run_of_this_host_is_exit_5_in_one_line(db, capsys, monkeypatch):
    monkeypatch.setenv("NUMASCOPE_HOSTNAME", "elsewhere")
    rc, text = _text(db, capsys, "latest")
    assert rc == 5 and text.splitlines()[0] == "baseline gold: cannot judge (host elsewhere)"
    assert "no run of host elsewhere" in text and len(text.strip().splitlines()) <= 3


def test_a_run_older_than_max_age_cannot_be_judged(db, capsys):
    old = _run("x03")
    old.started = old.finished = "2026-01-02T03:04:05+00:00"
    _save(db, [old])
    rc, text = _text(db, capsys, "--host", "x03")
    assert rc == 5 and "older than --max-age 24.0 h" in " ".join(text.split())
    assert _text(db, capsys, "--host", "x03", "--max-age", "none")[0] == 0
    assert _text(db, capsys, "--host", "x03", "--max-age", "400d")[0] == 0
    assert main(["fleet", "check", "--baseline", "gold", "--store", str(db), "--host",
                 "x03", "--max-age", "soon"]) == 2
    assert "--max-age 'soon'" in capsys.readouterr().err


@pytest.mark.parametrize("status,rc", [("failed", 1), ("interrupted", 5)])
def test_the_hosts_latest_run_failed_or_interrupted_is_judged_not_an_older_pass(
        db, capsys, status, rc):
    """A host whose latest run failed is out of the baseline (exit 1: its own run failed,
    a health check must not pass it); one interrupted after some results cannot be judged
    (exit 5); neither falls back on an older passing run."""
    good, bad = _run("x04", seed=3), _run("x04", seed=4)
    bad.started = bad.finished = "2099-01-01T00:00:00+00:00"    # later than good
    bad.stages.append(StageInfo("latency", status, "disk full"))
    bad.status = "failed" if status == "failed" else "interrupted"
    _save(db, [good, bad])
    got, text = _text(db, capsys, "--host", "x04", "--max-age", "none")
    assert got == rc and f"stage latency {status}: disk full" in " ".join(text.split()), text


def test_a_confirmation_is_what_later_checks_judge(db, capsys):
    first = _run("x06", {BW: 0.5}, seed=5)               # flagged: slow once
    second = _run("x06", seed=6, confirm_of=first.run_id)  # measured again: healthy
    _save(db, [first, second])
    rc, doc = _check(db, capsys, "--host", "x06")
    assert rc == 0 and doc["run_id"] == second.run_id and doc["confirm_of"] == first.run_id
    rc, text = _text(db, capsys, "--host", "x06")
    assert f"the --confirm measurement of run {first.run_id}" in " ".join(text.split())


def test_a_label_tag_does_not_move_a_run_out_of_its_group(db, capsys):
    _save(db, [_run("x07", seed=7, source="prolog")])
    rc, doc = _check(db, capsys, "--host", "x07")
    assert rc == 0, doc["errors"]
    assert not any("no baseline group" in str(v) for v in doc["results"])


def test_a_baseline_of_groups_under_3_nodes_is_refused_at_save(tmp_path, capsys):
    p = tmp_path / "two.db"
    _save(p, fleet(2, {}, seed=52, fleet_id="pair", spread=(0.01, 0.02)))
    assert main(["fleet", "baseline", "save", "duo", "--store", str(p)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "fewer than 3 nodes" in err
    assert main(["fleet", "baseline", "save", "duo", "--allow-small", "--store", str(p)]) == 0
    with Store.open(p) as st:
        from numascope.fleet import baseline
        assert baseline.load(st, "duo")["small"]


def test_worse_is_said_as_the_report_says_it():
    assert _worse(23.94) == "23.94 % worse" or _worse(23.94).endswith("% worse")
    assert _worse(-280.0).endswith("% better") and "-" not in _worse(-280.0)


def test_a_fleet_check_judges_each_confirmed_node_by_its_second_measurement(tmp_path, capsys):
    p = tmp_path / "f.db"
    _save(p, fleet(8, {}, seed=53, fleet_id="base", spread=(0.01, 0.02)))
    assert main(["fleet", "baseline", "save", "gold", "--store", str(p)]) == 0
    later = fleet(4, {1: {BW: 0.5}}, seed=54, fleet_id="later", spread=(0.01, 0.02))
    second = node(later[1].host["hostname"], "later", {}, rng=random.Random(55))
    second.tags["confirm_of"] = later[1].run_id          # measured again: healthy
    _save(p, [*later, second])
    capsys.readouterr()
    rc, doc = _check(p, capsys, "--fleet", "later")
    assert rc == 0, doc["errors"]
    assert second.run_id in {v["run_id"] for v in doc["results"]}


# -- which run: never an advise --verify run, never a partial run alone ---------------------

def test_an_advise_verify_run_is_never_the_latest(db, capsys):
    full = _run("x20", seed=20)
    verify = RunRecord.new(tags={"verify": "2x1", "recipe": "2 ranks x 1 thread"})
    verify.host = dict(full.host)
    verify.results = [BenchResult("bandwidth", "triad verify rank 0",
                                  {"kernel": "triad", "sweep": "verify"},
                                  {"bandwidth": Metric("bandwidth", "GB/s", True, [90.0])})]
    verify.stages = [StageInfo("bandwidth", "done", "", 1)]
    verify.status, verify.finished = "complete", verify.started
    _save(db, [full, verify])
    rc, doc = _check(db, capsys, "--host", "x20")
    assert rc == 0 and doc["run_id"] == full.run_id, doc["errors"]


def _c2c(rec, ns: float = 40.0):
    rec.results.append(BenchResult("c2c", "same L3", {},
                                   {"latency": Metric("latency", "ns", False, [ns, ns])}))
    rec.stages.append(StageInfo("c2c", "done", "", 1))
    return rec


@pytest.fixture
def c2c_db(tmp_path, capsys):
    p = tmp_path / "node.db"
    _save(p, [_c2c(r) for r in fleet(8, {}, seed=56, fleet_id="b", spread=(0.01, 0.02))])
    assert main(["fleet", "baseline", "save", "gold", "--store", str(p)]) == 0
    capsys.readouterr()
    return p


def _c2c_only(host: str, seed: int):
    """`run --stage c2c`: the c2c stage alone."""
    r = _c2c(_run(host, seed=seed))
    r.results = [x for x in r.results if x.family == "c2c"]
    r.stages = [StageInfo("topology", "done"), StageInfo("c2c", "done", "", 1)]
    return r


def test_a_partial_latest_run_does_not_hide_the_last_full_run_out_of_baseline(c2c_db,
                                                                            capsys):
    full = _c2c(_run("x21", {BW: 0.5}, seed=21))       # out: half its bandwidth
    part = _c2c_only("x21", 22)                          # later: c2c alone, healthy
    _save(c2c_db, [full, part])
    rc, doc = _check(c2c_db, capsys, "--host", "x21")
    assert rc == 1 and doc["run_id"] == part.run_id
    (v,) = doc["results"]
    assert [p["metric"] for p in v["problems"]] == [BW]
    assert [(p["run_id"], p["families"]) for p in doc["older_runs"]] == [
        (full.run_id, ["bandwidth", "latency", "matrix"])]
    rc, text = _text(c2c_db, capsys, "--host", "x21")
    flat = " ".join(text.split())
    assert rc == 1 and f"judged: run {part.run_id}" in flat
    assert f"bandwidth, latency, matrix from run {full.run_id}" in flat


def test_a_stage_last_measured_before_max_age_is_said_not_judged(c2c_db, capsys):
    full = _c2c(_run("x22", {BW: 0.5}, seed=23))
    full.started = full.finished = "2026-01-02T03:04:05+00:00"
    part = _c2c_only("x22", 24)
    _save(c2c_db, [full, part])
    rc, doc = _check(c2c_db, capsys, "--host", "x22")
    assert rc == 0 and not doc["older_runs"]
    assert [(p["run_id"], p["families"]) for p in doc["not_judged"]] == [
        (full.run_id, ["bandwidth", "latency", "matrix"])]
    rc, text = _text(c2c_db, capsys, "--host", "x22")
    assert f"not judged: last measured in run {full.run_id}" in " ".join(text.split())
    # a stage this host never measured is not checked, as before (a prolog's partial run)
    _save(c2c_db, [_c2c_only("x23", 25)])
    rc, doc = _check(c2c_db, capsys, "--host", "x23")
    assert rc == 0 and not doc["older_runs"] and not doc["not_judged"]
