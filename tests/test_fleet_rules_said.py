"""The fleet screen does what its method line prints: a fixed `--z Z` flags at t > Z, under
3.5 too; and when a group's healthy nodes agree exactly (quantised values, a MAD of 0), a
node far off is flagged: its own gap is not taken for the group's spread."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from fleet_synth import METRICS, PEAK, node

from numascope.cli import main
from numascope.fleet import outliers, screen
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord, StageInfo
from numascope.results.store import Store

# 21 healthy values 3 % apart at the normal's quantiles: a MAD of 3 % of the median
HEALTHY = [100 * (1 + 0.03 * z) for z in
           (-2.0, -1.5, -1.2, -1.0, -0.8, -0.6, -0.45, -0.3, -0.2, -0.1, 0.0,
            0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.2, 1.5, 2.0)]


def _one_metric(values: list[float]) -> list[RunRecord]:
    out = []
    for i, v in enumerate(values):
        rec = RunRecord.new(tags={"fleet": "f1", "host": f"n{i:02d}"})
        rec.host = {"hostname": f"n{i:02d}", "cpu_model": "X", "memory_mode": "NPS1"}
        rec.results = [BenchResult("bandwidth", "triad compact 8T", {},
                                   {"bandwidth": Metric("bandwidth", "GB/s", True, [v, v])})]
        rec.stages = [StageInfo("topology", "done")]
        rec.status, rec.finished = "complete", rec.started
        out.append(rec)
    return out


def _store(path, runs) -> None:
    with Store.open(path, write=True) as st:
        for r in runs:
            st.save_run(r)


def test_a_fixed_z_under_3_5_flags_at_the_t_it_prints(tmp_path, capsys):
    # one node 11 % under the median: t between 3 and 3.5, beyond the 6 % practical floor
    runs = _one_metric([*HEALTHY, 89.0])
    a = outliers.analyze(runs, z_limit=3.0)
    row = next(r for r in a.per_node if r["host"] == "n21")
    t = row["metrics"]["bandwidth/triad compact 8T/bandwidth"]["z"] if "metrics" in row else \
        None
    assert t is not None and -3.5 < t < -3.0
    assert "flagged when t > 3 " in a.method()
    assert [f.host for f in a.flags] == ["n21"]
    # 3.5 and the default rule do not flag it: the limit given is the one applied
    assert not outliers.analyze(runs, z_limit=3.5).flags and not outliers.analyze(runs).flags
    db = tmp_path / "f.db"
    _store(db, runs)
    assert main(["fleet", "report", "--store", str(db), "--z", "3"]) == 0
    out = capsys.readouterr().out
    assert "n21  [outlier]" in out and "no node flagged" not in out


def test_nine_nodes_in_exact_agreement_flag_a_tenth_50_percent_slower():
    x = np.array([[100.0]] * 9 + [[50.0]])
    sc = screen.screen_group(x, np.array([True]), ["bandwidth"], 5.0)
    assert sc.z[-1, 0] < -screen.MIN_Z and sc.p_metric[-1, 0] < 0.005
    cut = screen.bh_cutoff(sc.node_p())
    assert cut is not None and list(np.nonzero(sc.node_p() <= cut)[0]) == [9]
    # how many agree is the evidence: two in agreement do not flag a third, whatever its gap
    sc3 = screen.screen_group(np.array([[100.0], [100.0], [50.0]]), np.array([True]),
                              ["bandwidth"], 5.0)
    assert abs(sc3.z[-1, 0]) < screen.MIN_Z and sc3.p_metric[-1, 0] == 1.0


def test_a_step_at_the_practical_floor_is_not_beyond_it():
    # a value one quantum of 5 % off reads 5.000000000000001 % worse: not beyond 5 %
    x = np.array([[0.05 * 19]] + [[0.05 * 20]] * 19)
    sc = screen.screen_group(x, np.array([True]), ["bandwidth"], 5.0)
    assert sc.z[0, 0] < -screen.MIN_Z        # 19 in agreement: its t is beyond 3.5 ...
    assert sc.worse[0, 0] == pytest.approx(5.0) and sc.p_metric[0, 0] == 1.0   # ... not it


def _identical_nodes(slow: float) -> list[RunRecord]:
    """9 nodes with identical values, a 10th `slow` worse on every metric."""
    runs = []
    for i in range(10):
        rec = node(f"n{i:04d}", "q1", {}, rng=random.Random(0))
        f = slow if i == 9 else 0.0
        for res, (_, _, name, _, hib, centre) in zip(rec.results, METRICS):
            v = centre * (1 - f if hib else 1 + f)
            res.metrics[name].values = [v, v]
        runs.append(rec)
    return runs


def test_fleet_report_flags_a_node_21_percent_slower_than_nine_in_exact_agreement(
        tmp_path, capsys):
    runs = _identical_nodes(0.21)
    assert 0.79 * METRICS[0][5] > outliers.FLOOR * PEAK     # above the STREAM floor
    db = tmp_path / "f.db"
    _store(db, runs)
    assert main(["fleet", "report", "--store", str(db)]) == 0
    out = capsys.readouterr().out
    assert "no node flagged" not in out and "n0009  [outlier]" in out
    assert main(["fleet", "report", "--store", str(db), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {f["host"] for f in doc["results"]} == {"n0009"}
    assert all(f["kind"] == "outlier" for f in doc["results"])
