import json

import pytest
from test_store_helpers import make_topo

from numascope import suite
from numascope.benchmark import Case
from numascope.cli import main as cli
from numascope.errors import MeasurementError, Unavailable
from numascope.results.record import BenchResult, Metric
from numascope.results.store import Store


class FakeBench:
    """A tiny real family: sums a list on the Python side and validates the sum."""

    family = "fake"
    interrupt_at: str | None = None
    fail_at: str | None = None

    def cases(self, topo, **opts):
        return [Case("one", {"n": 10})]

    def measure(self, topo, case):
        if case.label == self.interrupt_at:
            raise KeyboardInterrupt
        if case.label == self.fail_at:
            raise MeasurementError("sum mismatch")
        n = case.params["n"]
        s = sum(range(n))
        if s != n * (n - 1) // 2:
            raise MeasurementError("bad sum")
        return BenchResult("fake", case.label, dict(case.params),
                           {"rate": Metric("rate", "Melem/s", True, [n * 1.0, n * 1.1, n * 0.9])})


FAKES: dict[str, type] = {}


def _install(monkeypatch, name, cases=3, unavailable=None):
    """A family class named `name`, derived from FakeBench, with its own suite cases."""
    def suite_cases(self, topo, profile):
        if unavailable:
            raise Unavailable(unavailable)
        k = cases if profile.name == "quick" else cases * 2
        return [Case(f"{name} case {i}", {"n": 1000 + i}) for i in range(k)]

    cls = type(name, (FakeBench,), {"family": name, "title": name,
                                    "suite_cases": suite_cases})
    FAKES[name] = cls
    return cls


@pytest.fixture
def fake_suite(monkeypatch):
    stages = [suite.Stage("topology", "topo", None),
              suite.Stage("one", "first fake", _install(monkeypatch, "fake_one")),
              suite.Stage("blocked", "cannot run", _install(
                  monkeypatch, "fake_blocked", unavailable="needs root to read MSRs")),
              suite.Stage("two", "second fake", _install(monkeypatch, "fake_two", cases=2))]
    monkeypatch.setattr(suite, "all_stages", lambda: list(stages))
    monkeypatch.setattr(suite, "load_topology", lambda: make_topo())
    monkeypatch.setattr(suite, "clock_probe", lambda: (lambda: 3.0))
    monkeypatch.setattr(FakeBench, "interrupt_at", None)
    monkeypatch.setattr(FakeBench, "fail_at", None)
    return stages


def test_run_quick_stores_reports_and_skips_with_reason(fake_suite, tmp_path, capsys):
    db, html = tmp_path / "runs.db", tmp_path / "r.html"
    rc = cli(["run", "--quick", "--tag", "nps=4", "--tag", "smt=on", "--store", str(db),
              "--report", str(html), "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    stages = {s["name"]: s for s in out["stages"]}
    assert stages["one"]["status"] == "done" and stages["one"]["results"] == 3
    assert stages["two"]["status"] == "done" and stages["two"]["results"] == 2
    assert stages["blocked"]["status"] == "skipped"
    assert "needs root" in stages["blocked"]["reason"]
    assert out["status"] == "complete" and out["tags"] == {"nps": "4", "smt": "on"}
    assert out["host"]["clock_ghz"] == 3.0 and out["host"]["memory_mode"] == "NPS1"
    assert out["noise"]["clock_ghz_end"] == 3.0 and "steal_fraction" in out["noise"]
    with Store.open(db) as st:
        rec = st.get_run(out["run_id"])
    assert [r.case for r in rec.results] == [f"fake_one case {i}" for i in range(3)] + \
        [f"fake_two case {i}" for i in range(2)]
    assert out["command"] == "run" and out["errors"] == [] and out["report"] == str(html)
    assert rec.to_dict() == record_of(out)
    text = html.read_text()
    assert "needs root to read MSRs" in text and "fake_two case 1" in text


def record_of(doc: dict) -> dict:
    """The run record an envelope of `run --json` carries: its fields beside the envelope's,
    its results as the envelope's results."""
    rec = {k: v for k, v in doc.items() if k not in ("command", "errors", "report",
                                                      "record_schema_version")}
    rec["schema_version"] = doc["record_schema_version"]
    return rec


def test_full_profile_and_stage_filter(fake_suite, tmp_path, capsys):
    db = tmp_path / "runs.db"
    assert cli(["run", "--full", "--stage", "two", "--store", str(db), "--no-report",
                "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in out["stages"]] == ["topology", "two"]
    assert out["profile"] == "full" and len(out["results"]) == 4
    assert cli(["run", "--stage", "nope", "--store", str(db)]) == 2
    assert "unknown stage" in capsys.readouterr().err


def test_ctrl_c_mid_run_keeps_finished_results(fake_suite, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(FakeBench, "interrupt_at", "fake_one case 2")
    db, html = tmp_path / "runs.db", tmp_path / "r.html"
    rc = cli(["run", "--store", str(db), "--report", str(html), "--json"])
    assert rc == 130
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "interrupted"
    assert [e["kind"] for e in out["errors"]] == ["interrupted"]
    assert out["errors"][0]["exit_code"] == 130
    stages = {s["name"]: s["status"] for s in out["stages"]}
    # (every stage's cases are listed before the first is measured: blocked was skipped)
    assert stages == {"topology": "done", "one": "interrupted", "blocked": "skipped",
                      "two": "not run"}
    with Store.open(db) as st:
        (summary,) = st.list_runs()
        rec = st.get_run(summary.run_id)
    assert summary.status == "interrupted"
    assert [r.case for r in rec.results] == ["fake_one case 0", "fake_one case 1"]
    assert "fake_one case 1" in html.read_text()


def test_failed_validation_marks_stage_failed_and_exit_3(fake_suite, tmp_path, monkeypatch,
                                                          capsys):
    monkeypatch.setattr(FakeBench, "fail_at", "fake_one case 1")
    db = tmp_path / "runs.db"
    assert cli(["run", "--store", str(db), "--no-report", "--json"]) == 3
    out = json.loads(capsys.readouterr().out)
    one = next(s for s in out["stages"] if s["name"] == "one")
    assert one["status"] == "failed" and "validation failed" in one["reason"]
    assert out["errors"] == [{"kind": "validation", "exit_code": 3,
                              "message": "stage one: validation failed: sum mismatch"}]
    assert [r["case"] for r in out["results"]] == ["fake_one case 0", "fake_two case 0",
                                                   "fake_two case 1"]


def test_bad_store_refused_before_measuring(fake_suite, tmp_path, capsys):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello")
    assert cli(["run", "--store", str(bad), "--no-report"]) == 2
    assert "not a numascope store" in capsys.readouterr().err
    assert bad.read_text() == "hello"


def test_runs_and_show_commands(fake_suite, tmp_path, capsys):
    db = tmp_path / "runs.db"
    assert cli(["run", "--tag", "nps=4", "--store", str(db), "--no-report", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert cli(["runs", "--store", str(db), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "runs" and doc["store"] == str(db)
    (row,) = doc["results"]
    assert row["run_id"] == run_id and row["tags"] == {"nps": "4"} and row["results"] == 5
    assert cli(["runs", "--store", str(db), "--tag", "nps=1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"] == []
    assert cli(["runs", "--store", str(db), "--tag", "nps=1"]) == 0
    assert capsys.readouterr().out.startswith("no runs with tags nps=1 in ")
    assert cli(["show", run_id[:17], "--store", str(db), "--json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)["results"]
    assert shown["run_id"] == run_id and len(shown["results"]) == 5
    assert cli(["show", "latest", "--store", str(db)]) == 0
    assert "fake_two" in capsys.readouterr().out
    assert cli(["show", "nothere", "--store", str(db)]) == 2


def test_registry_names_real_families():
    names = [s.name for s in suite.all_stages()]
    assert names[0] == "topology"
    assert {"compute", "bandwidth", "latency", "matrix", "compress", "c2c", "storage"} \
        <= set(names)


@pytest.mark.parametrize("cmd", ["run", "runs", "show", "compare", "report", "export"])
def test_command_help(cmd, capsys):
    assert cli([cmd, "--help"]) == 0 and "--store" in capsys.readouterr().out


def test_a_bug_in_a_family_fails_its_stage_only(fake_suite, tmp_path, monkeypatch, capsys):
    def broken(self, topo, case):
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(FAKES["fake_one"], "measure", broken)
    db = tmp_path / "runs.db"
    assert cli(["run", "--store", str(db), "--no-report", "--json"]) == 3
    out = json.loads(capsys.readouterr().out)
    st = {s["name"]: s for s in out["stages"]}
    assert st["one"]["status"] == "failed" and "ZeroDivisionError" in st["one"]["reason"]
    assert st["blocked"]["status"] == "skipped" and st["two"]["status"] == "done"


def test_ctrl_c_while_listing_cases_measures_nothing_and_says_so(fake_suite, tmp_path,
                                                                 monkeypatch, capsys):
    """Every stage's cases are listed (and planned) before the first is measured: a stop
    while a family lists its cases marks that stage interrupted, the run interrupted and
    stored, and the stages before it not run (nothing of theirs was measured)."""
    def interrupted(self, topo, profile):
        raise KeyboardInterrupt

    monkeypatch.setattr(FAKES["fake_two"], "suite_cases", interrupted)
    db = tmp_path / "runs.db"
    assert cli(["run", "--store", str(db), "--no-report", "--json"]) == 130
    out = json.loads(capsys.readouterr().out)
    st = {s["name"]: s for s in out["stages"]}
    assert st["two"]["status"] == "interrupted" and st["blocked"]["status"] == "skipped"
    assert st["one"]["status"] == "not run" and out["results"] == []
    with Store.open(db) as store:
        assert store.list_runs()[0].status == "interrupted"


def test_bad_report_path_costs_no_measurement(fake_suite, tmp_path, monkeypatch, capsys):
    measured = []
    monkeypatch.setattr(FakeBench, "measure", lambda self, topo, case: measured.append(case))
    db = tmp_path / "runs.db"
    for report, says in ((tmp_path / "no" / "r.html", "does not exist"),
                         (tmp_path / "r.txt", "must end in .html"),
                         (tmp_path, "is a folder")):
        assert cli(["run", "--report", str(report), "--store", str(db)]) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1
    assert measured == [] and not db.exists()


def test_run_summary_fits_80_columns(fake_suite, tmp_path, monkeypatch, capsys):
    from numascope import console
    monkeypatch.setattr(console.out, "_width", 80, raising=False)
    db = tmp_path / "runs.db"
    assert cli(["run", "--tag", "note=[red]a long label that will need to wrap somewhere[/]",
                "--store", str(db), "--report", str(tmp_path / "r.html")]) == 0
    assert "fake_two case 1" not in capsys.readouterr().out   # the results: --all-results
    assert cli(["run", "--tag", "note=[red]a long label that will need to wrap somewhere[/]",
                "--store", str(db), "--report", str(tmp_path / "r.html"),
                "--all-results"]) == 0
    cap = capsys.readouterr()
    lines = cap.out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    assert "…" not in cap.out and "True" not in cap.out.split()
    assert "needs root to read MSRs" in cap.out              # the skipped stage's reason
    assert "fake_two case 1" in cap.out and "[red]a long label" in cap.out
    assert "  one: done (3 results" in cap.err and "blocked: skipped (0 results" in cap.err


def test_list_stages_json(capsys):
    assert cli(["run", "--list-stages", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "run" and doc["results"][0] == {
        "name": "topology", "title": "machine topology, memory mode, devices"}


# -- a store that fills mid-run ----------------------------------------------------------------
def _store_fills_at(monkeypatch, n: int, *, update_fits: bool = True) -> list[str]:
    """SQLite says "database or disk is full" from the `n`th result on (through the store's
    own transaction and its disk-full rule); with `update_fits` False, for the run's final
    update too. Returns the cases measured, in order."""
    import sqlite3

    from numascope.results import store as store_mod
    measured: list[str] = []
    real_measure = FakeBench.measure

    def measure(self, topo, case):
        measured.append(case.label)
        return real_measure(self, topo, case)
    monkeypatch.setattr(FakeBench, "measure", measure)
    real_insert, real_put = store_mod._insert_result, store_mod._put_run
    calls = {"results": 0, "full": False}

    def insert(c, run_id, res, *more):
        calls["results"] += 1
        if calls["results"] >= n:
            calls["full"] = True
            raise sqlite3.OperationalError("database or disk is full")
        return real_insert(c, run_id, res, *more)

    def put(c, rec, insert):
        if calls["full"] and not update_fits:
            raise sqlite3.OperationalError("database or disk is full")
        return real_put(c, rec, insert)
    monkeypatch.setattr(store_mod, "_insert_result", insert)
    monkeypatch.setattr(store_mod, "_put_run", put)
    return measured


def test_a_store_that_fills_mid_run_stops_it_and_records_it_failed(fake_suite, tmp_path,
                                                                    monkeypatch, capsys):
    measured = _store_fills_at(monkeypatch, 2)
    db = tmp_path / "runs.db"
    assert cli(["run", "--store", str(db), "--no-report"]) == 2
    cap = capsys.readouterr()
    errs = [ln for ln in cap.err.splitlines() if ln.startswith("numascope: error:")]
    assert len(errs) == 1 and "Traceback" not in cap.err, cap.err
    assert "disk full" in errs[0] and "the store itself is intact" in errs[0]
    assert "stopped at its one stage, nothing more measured: recorded as failed " \
           "(1 result stored)" in errs[0], errs[0]
    # nothing measured after the store was known full: not stage two, not one's last case
    assert measured == ["fake_one case 0", "fake_one case 1"]
    with Store.open(db) as st:
        (summary,) = st.list_runs()
        rec = st.get_run(summary.run_id)
    assert rec.status == "failed" and rec.finished is not None
    stages = {s.name: (s.status, s.reason) for s in rec.stages}
    assert stages["topology"][0] == "done" and stages["blocked"][0] == "skipped"
    assert stages["one"][0] == "failed" and "disk full" in stages["one"][1]
    assert stages["two"] == ("not run", "the store is full")
    assert [r.case for r in rec.results] == ["fake_one case 0"]
    assert not any(s.status == "pending" for s in rec.stages)


def test_a_store_too_full_for_the_final_update_says_the_record_is_not_final(
        fake_suite, tmp_path, monkeypatch, capsys):
    measured = _store_fills_at(monkeypatch, 2, update_fits=False)
    db = tmp_path / "runs.db"
    assert cli(["run", "--store", str(db), "--no-report", "--json"]) == 2
    cap = capsys.readouterr()
    (e,) = json.loads(cap.out)["errors"]
    assert e["exit_code"] == 2 and "disk full" in e["message"]
    assert "its record could not be finalized (it stays 'running' in the store, 1 result " \
           "stored)" in e["message"], e["message"]
    assert measured == ["fake_one case 0", "fake_one case 1"]
    with Store.open(db) as st:
        (summary,) = st.list_runs()
        assert summary.status == "running" and summary.results == 1
