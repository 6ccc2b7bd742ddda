"""fleet.figures, the columnar read of a fleet's figures: its light runs give the analysis
what whole records give it, on the cases the matrix has to get right (a key measured twice
by one node, a key with two units among the nodes, an unvalidated result, a value that is
not finite, a node in another group)."""

from __future__ import annotations

import json
import math
import random

from fleet_synth import fleet, node

from numascope.fleet import outliers
from numascope.results.record import BenchResult, Metric


def _stored(tmp_path, runs):
    from numascope.results.store import Store
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        for r in runs:
            st.save_run(r)
    return db


def _both(db, runs):
    from numascope.fleet.load import analysis_runs
    from numascope.results.store import Store
    ids = [r.run_id for r in runs]
    with Store.open(db) as st:
        return [st.get_run(i) for i in ids], analysis_runs(st, ids)


def test_light_runs_over_the_columns_analyse_as_whole_records(tmp_path):
    runs = fleet(30, {3: {"bandwidth/triad compact 96T/bandwidth": 0.5}}, seed=5)
    runs += [node(f"m{i}", "f1", {}, rng=random.Random(i), model="Other CPU")
             for i in range(4)]
    for r in runs[:10]:      # the same case twice in one run: its last value is the one
        r.results.append(BenchResult("latency", "dup", {}, {
            "latency": Metric("latency", "ns", False, [90.0 + random.random()])}))
        r.results.append(BenchResult("latency", "dup", {}, {
            "latency": Metric("latency", "ns", False, [100.0 + random.random()])}))
    runs[4].results[0].validated = False
    runs[6].results[1].metrics[next(iter(runs[6].results[1].metrics))].values = [math.inf]
    whole, light = _both(_stored(tmp_path, runs), runs)
    a, b = outliers.analyze(whole, fleet="f1"), outliers.analyze(light, fleet="f1")
    assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())
    for w, x in zip(whole, light):
        assert list(outliers.node_values(w).items()) == list(outliers.node_values(x).items())
        assert outliers.stream(w) == outliers.stream(x)
    assert light[0].figures is not None and "latency/dup/latency" in b.groups[0].metrics
    assert outliers.node_values(light[0])["latency/dup/latency"][0] >= 100.0


def test_a_key_with_two_units_among_the_nodes_is_read_from_each_nodes_values(tmp_path):
    """The matrix has one unit per key; where nodes disagree, the analysis reads each
    node's values as for whole records (the first node's unit names the column)."""
    runs = fleet(12, {}, seed=9)
    for r in runs[5:]:
        m = r.results[0].metrics
        name = next(iter(m))
        m[name] = Metric(name, "MB/s", m[name].higher_is_better, m[name].values)
    db = _stored(tmp_path, runs)
    whole, light = _both(db, runs)
    assert light[0].figures[0].matrix() is None
    a, b = outliers.analyze(whole, fleet="f1"), outliers.analyze(light, fleet="f1")
    assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())


def test_a_light_runs_results_are_built_when_read_and_replaceable(tmp_path):
    runs = fleet(5, {}, seed=3)
    whole, light = _both(_stored(tmp_path, runs), runs)
    rec = light[2]
    assert [r.case for r in rec.results] == [r.case for r in whole[2].results]
    assert all(len(m.values) <= 1 for r in rec.results for m in r.metrics.values())
    rec.results = whole[2].results          # replaced: no longer a row of the columns
    assert rec.figures is None
    assert outliers.node_values(rec) == outliers.node_values(whole[2])
