"""`numascope fleet` gather / report / baseline / check / prom on stored synthetic fleets:
gather is idempotent and refuses a damaged folder whole; the Prometheus file parses with
prometheus_client's parser; a baseline catches a node that fell out and exits 1."""

from __future__ import annotations

import json
import random
import statistics

import pytest
from fleet_synth import fleet, node

from numascope.cli import main
from numascope.fleet import files, prom
from numascope.results.store import Store

BW = "bandwidth/triad compact 96T/bandwidth"
LAT = "latency/dram N0/latency"


def _store(path, runs) -> None:
    with Store.open(path, write=True) as st:
        for r in runs:
            st.save_run(r)


def _json(capsys, argv: list[str]) -> tuple[int, dict]:
    rc = main([*argv, "--json"])
    return rc, json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def fleet_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("fleet") / "runs.db"
    # 30 nodes: a MAD from 30 values is itself noisy, so a tighter natural spread (2-4 %)
    # than the 1000-node tests keeps the fixture about the planted nodes
    _store(db, fleet(30, {}, seed=21, fleet_id="base-1", spread=(0.02, 0.04)))
    _store(db, fleet(30, {3: {BW: 0.5}, 4: {LAT: 1.6}}, seed=22, fleet_id="later-2",
                     spread=(0.02, 0.04)))
    return db


# -- gather ---------------------------------------------------------------------------------

def test_gather_is_idempotent_and_merges_new_files(tmp_path, capsys):
    shared, db = tmp_path / "shared", tmp_path / "g.db"
    shared.mkdir()
    runs = fleet(3, {}, seed=1)
    for r in runs[:2]:
        files.write_record(shared, r)
    assert not [f for f in shared.iterdir() if f.name.startswith(".")]   # no temp left
    rc, doc = _json(capsys, ["fleet", "gather", str(shared), "--store", str(db)])
    assert rc == 0 and doc["added"] == 2 and doc["already"] == 0
    rc, doc = _json(capsys, ["fleet", "gather", str(shared), "--store", str(db)])
    assert rc == 0 and doc["added"] == 0 and doc["already"] == 2
    files.write_record(shared, runs[2])            # a late node
    rc, doc = _json(capsys, ["fleet", "gather", str(shared), "--store", str(db)])
    assert doc["added"] == 1 and doc["already"] == 2
    with Store.open(db) as st:
        ids = [r.run_id for r in st.list_runs()]
        got = st.get_run(runs[0].run_id)
    assert sorted(ids) == sorted(r.run_id for r in runs)
    # the store holds the node's brief (each metric's median), its file the full record
    from numascope.fleet import full
    want = runs[0].results[0].metrics["bandwidth"]
    assert got.results[0].metrics["bandwidth"].values == [want.median]
    assert full.fetch(got)[0].results[0].metrics["bandwidth"].values == want.values


def test_gather_refuses_a_damaged_file_before_touching_the_store(tmp_path, capsys):
    shared, db = tmp_path / "shared", tmp_path / "g.db"
    shared.mkdir()
    files.write_record(shared, fleet(1, {}, seed=2)[0])
    (shared / "bad.x.numascope.json").write_text('{"run_id": "x", "started": ')
    assert main(["fleet", "gather", str(shared), "--store", str(db)]) == 2
    assert "bad.x.numascope.json is not a numascope record" in capsys.readouterr().err
    assert not db.exists()


# -- report ---------------------------------------------------------------------------------

def test_report_finds_the_slow_nodes_of_the_latest_fleet(fleet_db, capsys, tmp_path):
    plot = tmp_path / "fleet.png"
    rc, doc = _json(capsys, ["fleet", "report", "--store", str(fleet_db), "--plot",
                             str(plot)])
    assert rc == 0 and doc["fleet"] == "later-2" and doc["nodes"] == 30
    flagged = {f["host"] for f in doc["results"] if f["kind"] == "outlier"}
    assert {"n0003", "n0004"} <= flagged and len(flagged) <= 3, flagged
    assert doc["results"][0]["severity"] >= doc["results"][-1]["severity"]
    assert plot.stat().st_size > 10_000
    rc, doc = _json(capsys, ["fleet", "report", "--store", str(fleet_db), "--fleet", "base"])
    # no planted node: at most one natural one (a MAD of 30 values is noisy)
    assert doc["fleet"] == "base-1"
    assert len([f for f in doc["results"] if f["kind"] == "outlier"]) <= 1


def test_report_table_fits_80_columns(fleet_db, capsys):
    assert main(["fleet", "report", "--store", str(fleet_db)]) == 0
    text = capsys.readouterr().out
    assert "n0003  [outlier]  " + BW in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_html_fleet_section(fleet_db):
    from numascope.report.fleet_html import fleet_section
    with Store.open(fleet_db) as st:
        runs = [st.get_run(r.run_id) for r in st.list_runs()]
    html = fleet_section(runs, with_figures=False)
    assert html.count("<h3>fleet ") == 2 and "n0003" in html and "data:image" not in html
    html = fleet_section([r for r in runs if r.tags["fleet"] == "later-2"])
    assert html.count("<h3>fleet ") == 1 and html.count("data:image/png") == 1
    assert fleet_section([r for r in runs if False]) == ""
    from numascope.report.html import render
    page = render([r for r in runs if r.tags["fleet"] == "later-2"])
    assert '<section id="fleet"><h2>Fleet</h2>' in page and page.count("<h3>fleet ") == 1
    assert '<section id="fleet">' not in render(runs[:1] if not runs[0].tags.get("fleet")
                                                  else [_plain(runs[0])])


# -- baselines ------------------------------------------------------------------------------

def test_baseline_save_then_check_exits_1_for_the_nodes_that_fell_out(fleet_db, capsys,
                                                                      tmp_path):
    db = tmp_path / "b.db"
    db.write_bytes(fleet_db.read_bytes())
    rc, doc = _json(capsys, ["fleet", "baseline", "save", "gold", "--fleet", "base-1",
                             "--store", str(db)])
    assert rc == 0 and doc["name"] == "gold"
    assert main(["fleet", "baseline", "save", "gold", "--fleet", "base-1", "--store",
                 str(db)]) == 2
    assert "exists; give --replace" in capsys.readouterr().err
    rc, doc = _json(capsys, ["fleet", "check", "--baseline", "gold", "--store", str(db)])
    assert rc == 1 and doc["fleet"] == "later-2"
    out = {v["host"] for v in doc["results"] if not v["ok"]}
    assert out == {"n0003", "n0004"}
    prob = next(v for v in doc["results"] if v["host"] == "n0003")["problems"]
    assert any(p["metric"] == BW and p["pct"] < -40 for p in prob)
    # a loose tolerance for everything lets every node pass: exit 0
    assert main(["fleet", "check", "--baseline", "gold", "--store", str(db),
                 "--tolerance", "*=70%"]) == 0
    capsys.readouterr()
    # a per-family tolerance: latency loose, bandwidth loose, the rest default
    rc, doc = _json(capsys, ["fleet", "check", "--baseline", "gold", "--store", str(db),
                             "--tolerance", "latency=70%", "--tolerance", "bandwidth=60%",
                             "--tolerance", "matrix=60"])
    assert rc == 0, doc["errors"]
    # the baseline fleet itself checks clean against its own medians at 30 %
    assert main(["fleet", "check", "--baseline", "gold", "--fleet", "base-1", "--store",
                 str(db), "--tolerance", "*=30%"]) == 0
    assert "30 of 30 nodes within tolerance" in capsys.readouterr().out
    rc, doc = _json(capsys, ["fleet", "baseline", "list", "--store", str(db)])
    assert [b["name"] for b in doc["results"]] == ["gold"]


def test_an_old_store_without_the_baseline_table_still_opens(fleet_db, capsys):
    rc, doc = _json(capsys, ["fleet", "baseline", "list", "--store", str(fleet_db)])
    assert rc == 0 and doc["results"] == []
    assert main(["fleet", "check", "--baseline", "gold", "--store", str(fleet_db)]) == 2
    assert "no baseline 'gold'" in capsys.readouterr().err


def test_check_a_node_with_another_configuration_falls_out(tmp_path, capsys):
    db = tmp_path / "c.db"
    _store(db, fleet(10, {}, seed=3, fleet_id="b"))
    assert main(["fleet", "baseline", "save", "g", "--store", str(db)]) == 0
    capsys.readouterr()
    odd = node("odd", "c", {}, rng=random.Random(1), mode="NPS4")
    _store(db, [odd])
    rc, doc = _json(capsys, ["fleet", "check", "--baseline", "g", "--store", str(db),
                             odd.run_id])
    assert rc == 1 and "no baseline group for its configuration" in doc["errors"][0]["message"]


# -- Prometheus -----------------------------------------------------------------------------

def test_prometheus_exposition_parses_with_prometheus_client(tmp_path):
    from prometheus_client.parser import text_string_to_metric_families
    runs = fleet(3, {}, seed=5)
    runs[1].results[0].case = 'triad "quoted" \\ case'
    runs[2].status = "failed"
    text = prom.exposition(runs)
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    # base units, as Prometheus' conventions require: bytes per second, seconds
    bw = fams["numascope_bandwidth_bytes_per_second"]
    assert bw.type == "gauge" and "higher is better" in bw.documentation
    cases = {s.labels["case"] for s in bw.samples}
    assert 'triad "quoted" \\ case' in cases
    assert {s.labels["host"] for s in bw.samples} == {"n0000", "n0001", "n0002"}
    assert set(bw.samples[0].labels) == {"host", "case"}
    assert bw.samples[0].value == pytest.approx(
        statistics.median(runs[0].results[0].metrics["bandwidth"].values) * 1e9, rel=1e-6)
    lat = fams["numascope_latency_seconds"]
    assert lat.samples[0].value == pytest.approx(
        statistics.median(runs[0].results[2].metrics["latency"].values) * 1e-9, rel=1e-6)
    ok = {s.labels["host"]: s.value for s in fams["numascope_node_ok"].samples}
    assert ok == {"n0000": 1.0, "n0001": 1.0, "n0002": 0.0}


def test_prometheus_names_are_in_base_units_and_help_is_escaped():
    from prometheus_client.parser import text_string_to_metric_families

    from numascope.results.record import BenchResult, Metric
    runs = fleet(1, {}, seed=6)
    runs[0].results = [BenchResult("compute", "clock", {}, {
        "all_busy_ghz": Metric("all_busy_ghz", "GHz", True, [3.5]),
        "pct_of_peak": Metric("pct_of_peak", "%", True, [80.0]),
        "tsc_cycles": Metric("tsc_cycles", "TSC cycles", False, [300.0])}),
        BenchResult("odd\nfamily \\ x", 'a "case"', {}, {"x": Metric("x", "s", False, [2.0])})]
    text = prom.exposition(runs)
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    assert fams["numascope_compute_all_busy_clock_hertz"].samples[0].value == 3.5e9
    assert fams["numascope_compute_peak_ratio"].samples[0].value == pytest.approx(0.8)
    assert fams["numascope_compute_tsc_cycles"].samples[0].value == 300.0   # no base unit
    odd = fams["numascope_odd_family_x_x_seconds"]
    assert odd.samples[0].labels["case"] == 'a "case"'
    assert odd.documentation.startswith("numascope odd\nfamily \\ x x,")


def test_prom_command_writes_atomically_one_run_per_host(fleet_db, tmp_path, capsys):
    from prometheus_client.parser import text_string_to_metric_families
    out = tmp_path / "numascope.prom"
    out.write_text("old\n")
    rc, doc = _json(capsys, ["fleet", "prom", "--out", str(out), "--store", str(fleet_db)])
    assert rc == 0 and len(doc["results"]) == 30
    fams = list(text_string_to_metric_families(out.read_text()))
    # 3 values (2 bandwidths, a latency), run_info, node_ok, stage_ok, the finish time and
    # the fleet's outlier verdict
    assert len(fams) == 8 and sorted(p.name for p in tmp_path.iterdir()) == ["numascope.prom"]


def test_without_mpi_a_hung_node_writes_its_failed_record_and_exits_1(tmp_path):
    """The watchdog of a task without MPI: past --node-timeout the node's own record file
    says so (gather then finds the node), even when the node ignores stop signals."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, NUMASCOPE_FLEET_TEST_HANG="hung-node",
               NUMASCOPE_HOSTNAME="hung-node", NUMASCOPE_TEST_HOOKS="falsify-results")
    p = subprocess.run([sys.executable, "-m", "numascope", "fleet", "run", "--no-mpi",
                        "--stage", "topology", "--shared-dir", str(tmp_path),
                        "--node-timeout", "2", "--fleet-id", "f9"],
                       check=False, capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 1, p.stderr
    assert "hung-node: exceeded --node-timeout 2 s" in p.stderr
    ((_, rec),) = files.read_records(tmp_path)
    assert rec.status == "failed" and rec.tags["fleet"] == "f9"
    assert rec.stages[0].reason == "exceeded --node-timeout 2 s"


def _plain(run):
    """The same record without its fleet tag: an ordinary run has no fleet section."""
    import copy
    r = copy.deepcopy(run)
    r.tags.pop("fleet", None)
    return r


# -- case identity --------------------------------------------------------------------------

def test_latency_case_names_do_not_depend_on_the_cpu_a_task_was_bound_to():
    """A launcher that binds tasks gives each node's task another first CPU: the suite's
    latency cases (quick and full) must keep one name, the CPU used going to params."""
    import os

    from numascope.families.latency import family as latency
    from numascope.profile import FULL, QUICK
    from numascope.topology import read_topology
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("needs two CPUs to bind to")
    seen: dict[int, list[tuple[str, int]]] = {}
    try:
        for cpu in allowed[:2]:
            os.sched_setaffinity(0, {cpu})
            topo = read_topology("/")
            seen[cpu] = [(c.params.label(), c.params.cpu)
                         for prof in (QUICK, FULL) for c in latency.suite_cases(topo, prof)]
    finally:
        os.sched_setaffinity(0, allowed)
    a, b = seen.values()
    assert a and [name for name, _ in a] == [name for name, _ in b]
    assert {c for _, c in a} == {allowed[0]} and {c for _, c in b} == {allowed[1]}
    assert not any(f"cpu{allowed[0]}" in name for name, _ in a)
    # a CPU the user names is part of what was asked: it stays in the label
    named = latency.LatencyParams(cpu=allowed[1], bytes=1 << 20).checked(read_topology("/"))
    assert named.label() == f"tlb 1 MiB stride 256 cpu{allowed[1]}"


# -- fleet check: healthy, out, inconclusive -------------------------------------------------

def _stage(rec, family: str, status: str, reason: str = ""):
    """`rec` as if its `family` stage ended with `status` (no results of it kept)."""
    from numascope.results.run import StageInfo
    rec.results = [r for r in rec.results if r.family != family]
    rec.stages = [s for s in rec.stages if s.name != family] + \
        [StageInfo(family, status, reason)]
    return rec


@pytest.fixture
def gold_db(tmp_path, capsys):
    db = tmp_path / "g.db"
    _store(db, fleet(10, {}, seed=31, fleet_id="b", spread=(0.01, 0.02)))
    assert main(["fleet", "baseline", "save", "gold", "--fleet", "b", "--store", str(db)]) == 0
    capsys.readouterr()
    return db


def test_check_exit_codes_healthy_out_and_inconclusive(gold_db, capsys):
    from numascope.fleet.baseline import INCONCLUSIVE_EXIT
    runs = fleet(4, {}, seed=32, fleet_id="later", spread=(0.01, 0.02))
    skipped = _stage(runs[0], "latency", "skipped", "no permission")
    only_bw = runs[1]               # asked for bandwidth alone: no latency stage, no result
    only_bw.results = [r for r in only_bw.results if r.family != "latency"]
    failed = _stage(runs[2], "latency", "failed", "validation failed: chase ended early")
    _store(gold_db, runs)
    check = ["fleet", "check", "--baseline", "gold", "--store", str(gold_db)]
    # a stage this run did not ask for is not checked: healthy
    assert main([*check, only_bw.run_id]) == 0
    assert "1 of 1 node within tolerance" in capsys.readouterr().out
    # a stage skipped on the node: nothing is out, but it cannot be judged
    rc, doc = _json(capsys, [*check, skipped.run_id])
    assert rc == INCONCLUSIVE_EXIT == 5 and doc["inconclusive"] == 1 and doc["failed"] == 0
    (v,) = doc["results"]
    assert v["status"] == "inconclusive" and not v["ok"] and v["problems"] == []
    assert v["unjudged"][0]["why"] == "stage latency skipped: no permission"
    assert doc["errors"] == [{"kind": "inconclusive", "exit_code": 5, "message":
                              f"{v['host']}: stage latency skipped: no permission"}]
    assert main([*check, skipped.run_id]) == 5
    assert "inconclusive: latency: stage latency skipped" in capsys.readouterr().out
    # a stage that failed is a fault of the node; out of baseline outranks inconclusive
    assert main([*check, failed.run_id]) == 1
    assert "stage latency failed: validation failed" in capsys.readouterr().out
    assert main([*check, failed.run_id, skipped.run_id, runs[3].run_id]) == 1
    capsys.readouterr()
    assert main([*check, runs[3].run_id]) == 0


def test_check_against_a_baseline_of_two_nodes_is_inconclusive(tmp_path, capsys):
    """A median of two nodes is moved by either one's fault: too few to judge a node by."""
    db = tmp_path / "two.db"
    pair = fleet(2, {}, seed=33, fleet_id="pair", spread=(0.01, 0.02))
    _store(db, pair)
    # refused at save (one line), unless asked for, then saved marked
    assert main(["fleet", "baseline", "save", "duo", "--store", str(db)]) == 2
    err = capsys.readouterr().err
    assert "1 group of fewer than 3 nodes" in err and "--allow-small" in err
    assert main(["fleet", "baseline", "save", "duo", "--allow-small", "--store", str(db)]) == 0
    assert "marked: 1 group of fewer than 3 nodes" in " ".join(capsys.readouterr().out.split())
    rc, doc = _json(capsys, ["fleet", "check", "--baseline", "duo", "--store", str(db)])
    assert rc == 5 and doc["inconclusive"] == 2, doc["errors"]
    assert all(v["status"] == "inconclusive" and v["checked"] == 0 for v in doc["results"])
    assert "baseline median of 2 nodes: too few to judge (3 needed)" in \
        doc["results"][0]["unjudged"][0]["why"]
    # one reason per node (not one per metric), and one error for the whole check
    assert all(len(v["unjudged"]) == 1 for v in doc["results"])
    assert [e["kind"] for e in doc["errors"]] == ["inconclusive"]
    assert "too few to judge" in doc["errors"][0]["message"]
    # as text: one line saying why, not a line per metric per node
    assert main(["fleet", "check", "--baseline", "duo", "--store", str(db)]) == 5
    out = capsys.readouterr().out.rstrip()
    # one paragraph (wrapped to the terminal: its next lines indented)
    assert all(line.startswith(" ") for line in out.splitlines()[1:]), out
    assert " ".join(out.split()) == ("baseline duo: medians of at most 2 nodes per group, too "
                                     "few to judge (3 needed): 2 nodes inconclusive")
    # still out when the node fails outright: nothing to weigh
    bad = fleet(1, {}, seed=34, fleet_id="pair")[0]
    bad.status = "failed"
    _store(db, [bad])
    assert main(["fleet", "check", "--baseline", "duo", "--store", str(db), bad.run_id]) == 1


def test_a_baseline_of_the_older_latency_names_checks_the_new_ones(tmp_path, capsys):
    """Baselines saved before the chaser became a role name it ("… cpu0"): a fleet measured
    now, its cases without the number, is checked against them, not reported missing."""
    def named(runs, case):
        for r in runs:
            for res in r.results:
                if res.family == "latency":
                    res.case = case
        return runs
    db = tmp_path / "old.db"
    _store(db, named(fleet(10, {}, seed=41, fleet_id="old", spread=(0.01, 0.02)),
                     "tlb 256 MiB stride 256 cpu0"))
    assert main(["fleet", "baseline", "save", "gold", "--store", str(db)]) == 0
    _store(db, named(fleet(5, {2: {LAT: 1.5}}, seed=42, fleet_id="new",
                           spread=(0.01, 0.02)), "tlb 256 MiB stride 256"))
    capsys.readouterr()
    rc, doc = _json(capsys, ["fleet", "check", "--baseline", "gold", "--store", str(db)])
    assert rc == 1 and doc["fleet"] == "new"
    assert {v["host"] for v in doc["results"] if not v["ok"]} == {"n0002"}
    assert all(v["checked"] == 4 for v in doc["results"]), doc["results"]
    (p,) = next(v for v in doc["results"] if v["host"] == "n0002")["problems"]
    assert p["metric"] == "latency/tlb 256 MiB stride 256/latency" and p["pct"] > 40


# -- bad input that needs a stored baseline (tests/surface_fleet.py holds the rest) ---------

def test_a_tolerance_naming_nothing_in_the_baseline_is_exit_2_naming_what_it_knows(
        gold_db, capsys):
    check = ["fleet", "check", "--baseline", "gold", "--store", str(gold_db)]
    before = gold_db.read_bytes()
    for bad in ("nosuchmetric=5%", "bandwidth/nosuch=5%", "bandwith=5%"):
        assert main([*check, "--tolerance", bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("numascope: error: --tolerance "), err
        assert "baseline gold holds no such family or metric" in err[0]
        assert "bandwidth" in err[0] and "latency" in err[0], err[0]
        rc, doc = _json(capsys, [*check, "--tolerance", bad])
        assert rc == 2 and doc["errors"][0]["kind"] == "bad-input"
        assert bad.partition("=")[0] in doc["errors"][0]["message"]
    assert gold_db.read_bytes() == before
    # every name the baseline knows is taken: family, metric, family/metric, key, *
    for good in ("bandwidth=5%", "latency=8", f"{BW}=5%", "bandwidth/bandwidth=5%", "*=30%"):
        assert main([*check, "--tolerance", good]) in (0, 1, 5), good
        assert "error" not in capsys.readouterr().err


def test_one_node_is_one_node(tmp_path, capsys):
    db = tmp_path / "one.db"
    _store(db, fleet(1, {}, seed=5, fleet_id="solo"))
    assert main(["fleet", "report", "--store", str(db)]) == 0
    text = capsys.readouterr().out
    assert "solo: 1 node (" in text and "1 nodes" not in text


def test_the_bound_task_warning_fits_80_columns(capsys):
    from types import SimpleNamespace

    from numascope.fleet import node
    topo = SimpleNamespace(cpus=[SimpleNamespace(id=i, online=True) for i in range(192)],
                           usable_cpus=lambda: [0])
    got = node.bound_to(topo, "a-rather-long-host-name-in-a-big-cluster.example.org")
    assert got == {"cpus_allowed": 1, "cpus_online": 192}
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) > 1 and all(len(line) <= 80 for line in lines), lines
    said = " ".join(line.strip() for line in lines)
    assert "this task may use 1 of 192 CPUs" in said and "--cpu-bind=none" in said


def test_gather_refuses_an_oversized_record_file_naming_it(tmp_path, capsys, monkeypatch):
    (tmp_path / "n1.x.numascope.json").write_text("{}" + " " * 100)
    monkeypatch.setattr(files, "RECORD_MAX", 50)
    assert main(["fleet", "gather", str(tmp_path), "--store", str(tmp_path / "s.db")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "n1.x.numascope.json: 102 bytes" in err[0], err
    assert not (tmp_path / "s.db").exists()


def test_report_says_a_group_too_small_to_judge_is_inconclusive(tmp_path, capsys):
    """A group of 2 (another CPU model) is listed inconclusive and never flagged by its
    numbers, though one of its two nodes is half the other's bandwidth."""
    rng = random.Random(36)
    bw = "bandwidth/triad compact 96T/bandwidth"
    runs = fleet(9, {}, seed=36) + [node("x0", "f1", {}, rng=rng, model="Other CPU"),
                                     node("x1", "f1", {bw: 0.5}, rng=rng, model="Other CPU")]
    db = tmp_path / "s.db"
    _store(db, runs)
    assert main(["fleet", "report", "--store", str(db)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Other CPU, mode NPS1, DIMMs 24x DDR5-4800: 2 nodes, 4 metrics (inconclusive: " \
           "too few nodes to judge)" in text
    rc, doc = _json(capsys, ["fleet", "report", "--store", str(db)])
    assert rc == 0 and doc["inconclusive_nodes"] == 2
    assert not [f for f in doc["results"] if f["host"].startswith("x") and
                f["kind"] == "outlier"]
    small = next(g for g in doc["groups"] if g["nodes"] == 2)
    assert small["inconclusive"] and all(m["df"] == 0 for m in small["metrics"])
    rows = {r["host"]: r for r in doc["per_node"]}
    assert rows["x1"]["inconclusive"] and not rows["n0001"]["inconclusive"]


def test_fleet_run_records_the_users_memory_and_links_as_run_does(tmp_path, capsys):
    """`fleet run --memory SPEC --links SPEC` without the compute stage: each node's peaks
    hold the user's DRAM and link figures (origin "user"), the same entries `numascope run`
    records with the same options and stages."""
    given = ["--stage", "topology", "--memory", "12x DDR5-4800", "--links", "xgmi:4x16@32"]
    assert main(["run", *given, "--store", str(tmp_path / "run.db"), "--no-report",
                 "--json"]) == 0
    single = json.loads(capsys.readouterr().out)["host"]["peaks"]
    (tmp_path / "f").mkdir()
    assert main(["fleet", "run", "--no-mpi", *given, "--shared-dir", str(tmp_path / "f"),
                 "--fleet-id", "mem-1"]) == 0
    capsys.readouterr()
    ((_, rec),) = files.read_records(tmp_path / "f")
    got = rec.host["peaks"]
    # 12 channels x 4.8 GT/s x 8 B; 4 links x 16 lanes x 32 Gb/s x 2 directions / 8
    for key, value in (("dram", 12 * 4.8 * 8), ("links", 4 * 16 * 32 * 2 / 8)):
        assert got[key]["origin"] == "user" and got[key]["value"] == pytest.approx(value)
        assert got[key] == single[key], key
