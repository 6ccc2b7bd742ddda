"""Confirmation of a fleet's outliers by a second measurement (numascope.fleet.confirm) on
synthetic fleets: what each flagged node measures again, and the verdict when its second
measurement agrees or not."""

from __future__ import annotations

import dataclasses
import random

from fleet_synth import fleet, node

from numascope.fleet import confirm, outliers

BW = "bandwidth/triad compact 96T/bandwidth"
LAT = "latency/dram N0/latency"


def _again(first, factors, seed, status="complete"):
    """A second measurement of `first`'s node: the factors given (1.0: a healthy node)."""
    rec = node(first.host["hostname"], "f1", factors, rng=random.Random(seed))
    rec.tags[confirm.TAG] = first.run_id
    rec.status = status
    return rec


def test_the_flagged_stages_are_measured_again_and_a_node_slow_once_is_not_reproduced():
    runs = fleet(300, {4: {BW: 0.5}, 9: {LAT: 1.9}, 12: {BW: 0.55}}, seed=31)
    a = outliers.analyze(runs, fleet="f1")
    flagged = {f.host for f in a.flags if f.kind == "outlier"}
    assert {"n0004", "n0009", "n0012"} <= flagged
    plan = confirm.plan(a)
    assert plan[runs[4].run_id] == ["bandwidth"] and plan[runs[9].run_id] == ["latency"]
    second = {runs[4].run_id: _again(runs[4], {}, 1),              # recovered
              runs[9].run_id: _again(runs[9], {LAT: 1.9}, 2)}      # still slow
    verdicts = {v.host: v for v in confirm.judge(a, second)}
    assert verdicts["n0004"].status == "not reproduced"
    assert verdicts["n0009"].status == "confirmed"
    assert verdicts["n0012"].status == "not measured again"
    # the report shows both measurements
    v = verdicts["n0009"]
    assert v.first and v.first[0]["metric"] == LAT and v.confirm_run_id == second[
        runs[9].run_id].run_id
    row = next(s for s in v.second if s["metric"] == LAT)
    assert row["flagged"] and row["value"] > 1.5 * a.groups[0].metrics[LAT].median
    assert not any(s["flagged"] for s in verdicts["n0004"].second)


def test_a_failed_second_measurement_confirms_nothing():
    runs = fleet(100, {3: {BW: 0.5}}, seed=32)
    a = outliers.analyze(runs)
    v, = [v for v in confirm.judge(a, {runs[3].run_id: _again(runs[3], {BW: 0.5}, 3,
                                                                status="failed")})
          if v.host == "n0003"]
    assert v.status == "not measured again"


def test_the_second_runs_are_not_nodes_of_the_fleet():
    runs = fleet(20, {}, seed=33)
    second = _again(runs[2], {}, 4)
    firsts, pairs = confirm.split(runs + [second])
    assert firsts == runs and pairs == {runs[2].run_id: second}
    # the confirm_of tag is bookkeeping: it does not make a configuration group of its own
    assert outliers.config(second) == outliers.config(runs[2])


def test_an_all_metrics_flag_measures_every_family_the_node_measured_again():
    runs = fleet(300, {7: {BW: 0.8, LAT: 1.25, "bandwidth/triad S0 48T/bandwidth": 0.8,
                           "matrix/N0->N1/bandwidth": 0.8}}, seed=34)
    a = outliers.analyze(runs)
    fl = [f for f in a.flags if f.host == "n0007"]
    assert fl
    stages = confirm.plan(a)[runs[7].run_id]
    fams = {f.metric.split("/")[0] for f in fl}
    if "all" in fams:
        assert stages == ["bandwidth", "latency", "matrix"]
    else:
        assert set(stages) == fams
    floor = dataclasses.replace(fl[0], kind="floor")
    a.flags = [floor]
    assert confirm.plan(a) == {runs[7].run_id: ["bandwidth"]}


def test_the_stream_floor_is_checked_on_the_second_triad():
    """A node alone in its group (another CPU model) under the STREAM floor: confirmed when
    its second triad is still under it, not reproduced when it is above."""
    rng = random.Random(35)
    alone = node("lone", "f1", {BW: 0.5}, rng=rng, model="Other CPU")
    runs = fleet(20, {}, seed=35) + [alone]
    a = outliers.analyze(runs)
    assert [f.kind for f in a.flags if f.host == "lone"] == ["floor"]
    assert confirm.plan(a)[alone.run_id] == ["bandwidth"]
    for factors, status in (({BW: 0.5}, "confirmed"), ({}, "not reproduced")):
        again = node("lone", "f1", factors, rng=rng, model="Other CPU")
        v, = [v for v in confirm.judge(a, {alone.run_id: again}) if v.host == "lone"]
        assert v.status == status and v.second[0]["flagged"] == (status == "confirmed")
