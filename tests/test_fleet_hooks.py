"""The fleet's test hooks cannot reach a user: they act only under the explicit switch
(NUMASCOPE_TEST_HOOKS=falsify-results), a hook variable left in a normal environment is
ignored and said, and a record made with a hook says so in every output (fleet run's rows,
report text and JSON, the HTML report) while `fleet prom`, `--prom-dir`, `baseline save`
and `fleet check` refuse it."""

from __future__ import annotations

import json

import pytest
from fleet_synth import fleet

from numascope.cli import main
from numascope.fleet import node
from numascope.profile import profile
from numascope.results.store import Store


def _topology_stage() -> list:
    from numascope import suite
    return suite.chosen(["topology"], suite.all_stages())


IDENT = {"id": "f1", "host": "h7", "rank": 0, "ranks": 1, "launcher": "none", "slurm": {}}


def test_a_hook_variable_without_the_switch_does_nothing_and_is_said(monkeypatch, capsys):
    monkeypatch.delenv(node.HOOKS_SWITCH, raising=False)
    monkeypatch.setenv("NUMASCOPE_FLEET_TEST_FAIL", "h7")
    rec = node.run_node(IDENT, profile("smoke"), _topology_stage(), {})
    assert rec.status != "failed" and node.hooks_of(rec) == []
    assert ("NUMASCOPE_FLEET_TEST_FAIL is a test hook and is ignored (NUMASCOPE_TEST_HOOKS "
            "is not set)") in capsys.readouterr().err
    # a switch that is merely truthy is not the switch
    monkeypatch.setenv(node.HOOKS_SWITCH, "1")
    assert not node.hooks_on() and node.ignored_hooks() == ["NUMASCOPE_FLEET_TEST_FAIL"]


def test_under_the_switch_the_hook_acts_and_the_record_says_so(monkeypatch):
    monkeypatch.setenv(node.HOOKS_SWITCH, node.HOOKS_ON)
    monkeypatch.setenv("NUMASCOPE_FLEET_TEST_FAIL", "0")      # by rank
    rec = node.run_node(IDENT, profile("smoke"), _topology_stage(), {})
    assert rec.status == "failed" and "fails on purpose" in rec.stages[0].reason
    assert node.hooks_of(rec) == ["NUMASCOPE_FLEET_TEST_FAIL"]
    assert node.hooks_of(type(rec).from_dict(rec.to_dict())) == ["NUMASCOPE_FLEET_TEST_FAIL"]


@pytest.fixture
def hooked_db(tmp_path):
    runs = fleet(6, {}, seed=5, fleet_id="h-1", spread=(0.02, 0.03))
    slow = runs[2]
    node._slow_once(slow)          # what NUMASCOPE_FLEET_TEST_SLOW does to a node's record
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        for r in runs:
            st.save_run(r)
    return db, slow.host["hostname"]


def test_every_output_marks_a_hooked_run_and_none_exports_it(hooked_db, capsys, tmp_path):
    db, host = hooked_db
    assert main(["fleet", "report", "--store", str(db)]) == 0
    text = " ".join(capsys.readouterr().out.split())     # as read, whatever the wrap
    assert "made with test hooks" in text and f"{host} (NUMASCOPE_FLEET_TEST_SLOW)" in text
    assert main(["fleet", "report", "--store", str(db), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["test_hooks"] == {host: ["NUMASCOPE_FLEET_TEST_SLOW"]}
    out = tmp_path / "n.prom"
    assert main(["fleet", "prom", "--out", str(out), "--store", str(db)]) == 2
    err = capsys.readouterr().err
    assert "test hook NUMASCOPE_FLEET_TEST_SLOW" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    assert main(["fleet", "baseline", "save", "gold", "--store", str(db)]) == 2
    assert "not used for a baseline" in capsys.readouterr().err
    from numascope.report.fleet_html import fleet_section
    with Store.open(db) as st:
        runs = [st.get_run(r.run_id) for r in st.list_runs()]
    assert "Made with test hooks" in fleet_section(runs, with_figures=False)
    from numascope.fleet.command import hooked_note
    from numascope.fleet.command import node_row as _node_row
    row = _node_row(next(r for r in runs if r.host["hostname"] == host))
    assert "TEST HOOK NUMASCOPE_FLEET_TEST_SLOW" in hooked_note(row["test_hooks"])
