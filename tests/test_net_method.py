"""A method change that kept its name: `net`'s default pages became the host's own setting
(`system`, no madvise) and its buffers OSU's one per rank, under the case names that older
records, measured with THP madvised and a buffer per window slot, already had (1 MiB windows
~1.5x faster with THP, docs/net.md). compare and fleet check read the method each record
holds (analysis.method) and never set the two against each other under one name; they say
so in one line."""

from __future__ import annotations

import json
import random

from fleet_synth import node

from numascope.analysis.compare import compare_runs, methods_mixed
from numascope.analysis.method import method
from numascope.cli import main
from numascope.results.record import BenchResult, Metric
from numascope.results.run import StageInfo
from numascope.results.store import Store

CASE = "same L3 (CPU 0 - CPU 1)"      # the name both the old and the new record give it
NET = {"sizes": [8, 1 << 20], "lat_iters": 1000, "bw_iters": 20, "window": 64, "pairs": 0,
       "reps": 3, "timeout": 120.0, "engine": "numascope", "tests": ["lat", "bw"]}


def net_result(old: bool, mbs: float, seed: int) -> BenchResult:
    """One `net` case: `old`, a record from before --pages system and --buffers (its net
    params without either: THP madvised, a buffer per window slot); else today's default
    (system pages, one buffer per rank)."""
    rng = random.Random(seed)
    net = dict(NET) if old else {**NET, "pages": "system", "buffers": "same"}
    params = {"mode": "path", "path": "same L3", "cpu_a": 0, "cpu_b": 1, "node_a": 0,
              "node_b": 0, "distance": 10, "net": net, "engine": "numascope"}
    if not old:
        params["buffers"] = "same"
    return BenchResult("interconnect", CASE, params, {
        "latency": Metric("latency", "us", False, [0.3 * (1 + rng.gauss(0, 0.01))
                                                   for _ in range(3)]),
        "bandwidth": Metric("bandwidth", "MB/s", True, [mbs * (1 + rng.gauss(0, 0.01))
                                                        for _ in range(3)])})


def net_node(host: str, fleet: str, old: bool, mbs: float, seed: int):
    rec = node(host, fleet, {}, rng=random.Random(seed))
    rec.results.append(net_result(old, mbs, seed))
    rec.stages.append(StageInfo("interconnect", "done", "", 1))
    return rec


def test_the_two_records_are_two_methods_under_one_name():
    old, new = net_result(True, 15000.0, 1), net_result(False, 10000.0, 2)
    assert old.case == new.case
    assert method("interconnect", old.params) == "pages thp, distinct buffers"
    assert method("interconnect", new.params) == "pages system, same buffers"
    assert method("bandwidth", {}) == ""


def _store(path, runs) -> None:
    with Store.open(path, write=True) as st:
        for r in runs:
            st.save_run(r)


def test_a_fleets_light_records_keep_the_method(tmp_path):
    """fleet.load reads only what the analysis needs; for net's results that includes what
    their method is read from, so a light record has the whole record's method."""
    from numascope.fleet.load import analysis_runs
    runs = [net_node("h1", "f", True, 15000.0, 1), net_node("h2", "f", False, 10000.0, 2)]
    db = tmp_path / "runs.db"
    _store(db, runs)
    with Store.open(db) as st:
        light = analysis_runs(st, [r.run_id for r in runs])
    got = [method("interconnect", r.results[-1].params) for r in light]
    assert got == ["pages thp, distinct buffers", "pages system, same buffers"]
    assert "sizes" in light[1].results[-1].params["net"]
    assert light[0].results[0].params in ({}, {"kernel": "triad"})   # the rest stays light


def test_compare_does_not_set_an_old_thp_record_against_a_new_one(tmp_path, capsys):
    """3 runs a side: the THP-madvised runs are 1.5x faster on 1 MiB windows. Under one
    name compare would call that a change; it leaves the case out, says so in one line,
    and still compares what was measured alike."""
    a = [net_node("h1", "f", True, 15000.0, s) for s in range(3)]
    b = [net_node("h1", "f", False, 10000.0, s + 10) for s in range(3)]
    for r in a:
        r.tags["cfg"] = "before"
    for r in b:
        r.tags["cfg"] = "after"
    cmp = compare_runs(a, b)
    assert not [d for d in cmp.diffs if d.family == "interconnect"]
    assert {d.family for d in cmp.diffs} >= {"bandwidth", "latency"}
    assert list(cmp.other_method) == [f"interconnect/{CASE}"]
    assert cmp.other_method[f"interconnect/{CASE}"] == (["pages thp, distinct buffers"],
                                                        ["pages system, same buffers"])
    # the old runs among themselves are one method
    assert methods_mixed(a[:1], a[1:]) == {}
    db = tmp_path / "runs.db"
    _store(db, a + b)
    assert main(["compare", "cfg=before", "cfg=after", "--store", str(db)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("not compared, measured another way under one name: interconnect case "
            f"'{CASE}' (pages thp, distinct buffers in A, pages system, same buffers in B)"
            ) in out
    assert main(["compare", "cfg=before", "cfg=after", "--store", str(db), "--json",
                 "--family", "interconnect"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["results"] == [] and doc["other_method"][0]["case"] == f"interconnect/{CASE}"


def test_fleet_check_does_not_drain_a_node_against_a_baseline_of_the_old_method(tmp_path,
                                                                                 capsys):
    """A baseline saved from older records (THP madvised, 15 GB/s) and a node measured
    after the upgrade with the new default (system pages, 10 GB/s, healthy): under one name
    the node is 33 % worse and out; measured another way it is not judged on that case
    (inconclusive, one line), and still judged on the rest. A baseline saved from nodes of
    the new method records it and judges the node."""
    db = tmp_path / "runs.db"
    _store(db, [net_node(f"b{i}", "old", True, 15000.0, i) for i in range(3)])
    assert main(["fleet", "baseline", "save", "gold", "--fleet", "old", "--store",
                 str(db), "--json"]) == 0
    (group,) = json.loads(capsys.readouterr().out)["results"]
    assert group["metrics"][f"interconnect/{CASE}/bandwidth"]["method"] == [
        "pages thp, distinct buffers"]
    _store(db, [net_node("n1", "new", False, 10000.0, 7)])
    rc = main(["fleet", "check", "--baseline", "gold", "--fleet", "new", "--store", str(db),
               "--json"])
    doc = json.loads(capsys.readouterr().out)
    (v,) = doc["results"]
    assert rc == 5 and v["status"] == "inconclusive" and v["problems"] == []
    (why,) = [u for u in v["unjudged"] if u["metric"] == "interconnect"]
    assert why["why"] == ("2 metrics measured another way than the baseline's (here pages "
                          "system, same buffers; the baseline's pages thp, distinct buffers): "
                          "not checked; save a baseline of this method")
    assert v["checked"] == 4          # the other families' metrics are judged
    # a baseline saved before methods were recorded cannot tell: not judged either
    with Store.open(db, write=True) as st:
        row = st.conn.execute("SELECT data FROM fleet_baselines WHERE name='gold'").fetchone()
        data = json.loads(row[0])
        for g in data["groups"].values():
            for m in g["metrics"].values():
                m.pop("method", None)
        st.conn.execute("UPDATE fleet_baselines SET data=? WHERE name='gold'",
                        (json.dumps(data),))
        st.conn.commit()
    assert main(["fleet", "check", "--baseline", "gold", "--fleet", "new", "--store",
                 str(db)]) == 5
    assert "the baseline's not recorded" in " ".join(capsys.readouterr().out.split())
    # the new method's own baseline judges the new node
    _store(db, [net_node(f"c{i}", "new2", False, 10000.0, 20 + i) for i in range(3)])
    assert main(["fleet", "baseline", "save", "silver", "--fleet", "new2", "--store",
                 str(db)]) == 0
    capsys.readouterr()
    assert main(["fleet", "check", "--baseline", "silver", "--fleet", "new", "--store",
                 str(db)]) == 0
