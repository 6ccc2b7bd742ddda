"""A stage asked for and not done is not ok anywhere: one whose cases were built and that
could not measure them (a PermissionError part-way, fio missing with --io-dir given) is
`incomplete`, and numascope_node_ok, numascope_stage_ok, the fleet's verdict and `fleet
check` agree on it (0, 0, incomplete, inconclusive); a stage that does not apply here (no
--io-dir) stays `skipped` and ok."""

from __future__ import annotations

import json
import random

from fleet_synth import fleet, node
from prometheus_client.parser import text_string_to_metric_families
from test_store_helpers import make_topo

from numascope import suite
from numascope.benchmark import Case
from numascope.cli import main
from numascope.families.latency.bench import LatencyParams
from numascope.fleet import baseline, outliers, prom
from numascope.fleet.verdict import verdict
from numascope.profile import profile
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord
from numascope.results.store import Store


class _DeniedPartWay:
    """A latency stage whose second case meets a file it may not read."""
    family = "latency"
    title = "latency"

    def suite_cases(self, topo, prof):
        p = LatencyParams(bytes=1 << 20, cpu=0)          # what the planner reads
        return [Case("dram N0", p), Case("dram N1", p)]

    def measure(self, topo, case):
        if case.label == "dram N1":
            raise PermissionError(13, "Permission denied", "/sys/kernel/mm/x")
        return BenchResult("latency", case.label, {},
                           {"latency": Metric("latency", "ns", False, [110.0, 111.0])})


def _ok(text: str) -> tuple[dict, dict]:
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    node_ok = {s.labels["host"]: s.value for s in fams["numascope_node_ok"].samples}
    stage_ok = {(s.labels["host"], s.labels["stage"]): s.value
                for s in fams["numascope_stage_ok"].samples}
    return node_ok, stage_ok


def test_a_permission_error_part_way_is_not_ok_in_prom_as_check_cannot_judge_it(tmp_path):
    rec = node("n0001", "f2", {}, rng=random.Random(1))
    rec.results = [r for r in rec.results if r.family != "latency"]
    topo, prof = make_topo(), profile("quick")
    r = suite._StageRun(suite.Stage("latency", "latency", _DeniedPartWay))
    suite._load([r], topo, rec, prof, {}, None)          # as run_suite does
    suite._run_stage(r, topo, rec, prof, lambda info: lambda res: rec.results.append(res),
                     None, None, None, suite._Budget(None))
    info = rec.stage("latency")
    assert info.status == "incomplete" and "Permission denied" in info.reason
    assert [r.case for r in rec.results if r.family == "latency"] == ["dram N0"]
    node_ok, stage_ok = _ok(prom.exposition([rec]))
    assert node_ok == {"n0001": 0.0} and stage_ok[("n0001", "latency")] == 0.0
    v = verdict(rec)
    assert not v.ok and v.status == "incomplete" and "stage latency incomplete" in v.reason
    # fleet check of the same record: inconclusive, for the same reason
    gold = outliers.analyze(fleet(6, {}, seed=3, fleet_id="b", spread=(0.01, 0.02)))
    with Store.open(tmp_path / "g.db", write=True) as st:
        base = baseline.save(st, "gold", gold)
    (c,) = baseline.check(base, [rec], {})
    assert c.status == "inconclusive" and "stage latency incomplete" in c.unjudged[0]["why"]


def test_fio_missing_with_an_io_dir_is_incomplete_without_one_skipped(tmp_path, capsys,
                                                                       monkeypatch):
    monkeypatch.setenv("NUMASCOPE_FIO", str(tmp_path / "no-fio"))
    db = tmp_path / "runs.db"
    argv = ["run", "--quick", "--stage", "storage", "--store", str(db), "--no-report",
            "--json"]
    assert main([*argv, "--io-dir", str(tmp_path)]) == 0
    asked = {s["name"]: s for s in json.loads(capsys.readouterr().out)["stages"]}
    assert asked["storage"]["status"] == "incomplete", asked
    assert "fio not found" in asked["storage"]["reason"]
    assert main(argv) == 0                      # no --io-dir: the stage does not apply
    not_asked = {s["name"]: s for s in json.loads(capsys.readouterr().out)["stages"]}
    assert not_asked["storage"]["status"] == "skipped"
    with Store.open(db) as st:
        runs: list[RunRecord] = [st.get_run(r.run_id) for r in st.list_runs()]
    node_ok, stage_ok = _ok(prom.exposition(runs[:1]))
    assert list(node_ok.values()) == [0.0] and list(stage_ok.values())[-1] == 0.0
    node_ok, stage_ok = _ok(prom.exposition(runs[1:]))
    assert list(node_ok.values()) == [1.0] and list(stage_ok.values())[-1] == 1.0
