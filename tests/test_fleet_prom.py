"""`numascope fleet prom` and `fleet run --prom-dir` in Prometheus' conventions: the unit
named once and in base units, ratios in 0-1, no label repeating the name, the run's
identity in an info gauge, the verdicts (node, stage, fleet screen, baseline) as gauges;
`promtool check metrics` (Debian's prometheus package) finds nothing in what is written.
`fleet baseline copy` puts a baseline alone into a node-local store."""

from __future__ import annotations

import copy
import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from fleet_synth import fleet, node
from prometheus_client.parser import text_string_to_metric_families

from numascope.cli import main
from numascope.fleet import prom
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord, StageInfo, migrate
from numascope.results.store import Store

DATA = Path(__file__).parent / "data"
BW = "bandwidth/triad compact 96T/bandwidth"


def _quick() -> RunRecord:
    return RunRecord.from_dict(migrate(json.loads((DATA / "advise_quick_run.json")
                                                  .read_text())))


def _fams(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def _save(path: Path, runs) -> None:
    with Store.open(path, write=True) as st:
        for r in runs:
            st.save_run(r)


def _promtool(text: str, tmp_path: Path) -> subprocess.CompletedProcess:
    tool = shutil.which("promtool")
    if tool is None:
        pytest.skip("promtool is not installed (scripts/install-system-deps.sh --slurm "
                    "installs Debian's prometheus package, which has it)")
    return subprocess.run([tool, "check", "metrics"], input=text, capture_output=True,
                          text=True, timeout=60, check=False)


# -- names ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("family", "metric", "unit", "name", "value", "exported"), [
    ("bandwidth", "dram_bandwidth", "GB/s", "numascope_bandwidth_dram_bytes_per_second",
     40.0, 4e10),
    ("compress", "compress_speed", "GB/s", "numascope_compress_speed_bytes_per_second",
     2.0, 2e9),
    ("bandwidth", "bandwidth", "GB/s", "numascope_bandwidth_bytes_per_second", 40.0, 4e10),
    ("latency", "latency", "ns", "numascope_latency_seconds", 110.0, 1.1e-7),
    ("compute", "all_busy_ghz", "GHz", "numascope_compute_all_busy_clock_hertz", 3.5,
     3.5e9),
    ("compute", "gflops", "GFLOP/s", "numascope_compute_flop_per_second", 50.0, 5e10),
    ("compute", "pct_of_peak", "%", "numascope_compute_peak_ratio", 80.0, 0.8),
    ("compute", "seconds", "s", "numascope_compute_duration_seconds", 2.0, 2.0),
    ("matrix", "loads_per_ns", "loads/ns", "numascope_matrix_loads_per_second", 0.5, 5e8),
    ("matrix", "mlp", "misses", "numascope_matrix_mlp_misses", 9.0, 9.0),
    ("net", "msg_rate", "msg/s", "numascope_net_messages_per_second", 1e6, 1e6),
    ("storage", "iops", "IO/s", "numascope_storage_operations_per_second", 1e5, 1e5),
    ("storage", "errors", "count", "numascope_storage_errors", 0.0, 0.0),
    ("compress", "speedup", "x", "numascope_compress_speedup", 2.5, 2.5),
    ("compress", "ratio", "x", "numascope_compress_compressed_size_ratio", 4.0, 0.25),
    ("latency", "tsc_cycles", "TSC cycles", "numascope_latency_tsc_cycles", 300.0, 300.0),
])
def test_names_say_the_unit_once_in_base_units(family, metric, unit, name, value, exported):
    rec = fleet(1, {}, seed=1)[0]
    rec.results = [BenchResult(family, "c", {}, {metric: Metric(metric, unit, True,
                                                               [value, value])})]
    fams = _fams(prom.exposition([rec]))
    assert fams[name].samples[0].value == pytest.approx(exported, rel=1e-6)
    assert set(fams[name].samples[0].labels) == {"host", "case"}


# a case parameter in the metric's name -> (the name, its labels beside host and case)
@pytest.mark.parametrize(("family", "metric", "unit", "name", "labels", "exported"), [
    ("interconnect", "bw_1048576", "MB/s",
     "numascope_interconnect_sweep_bandwidth_bytes_per_second",
     {"message_size_bytes": "1048576"}, 2e6),
    ("interconnect", "lat_8", "us", "numascope_interconnect_sweep_latency_seconds",
     {"message_size_bytes": "8"}, 2e-6),
    ("interconnect", "bibw_65536", "MB/s",
     "numascope_interconnect_sweep_bibw_bytes_per_second",
     {"message_size_bytes": "65536"}, 2e6),
    ("latency", "latency_p99", "ns", "numascope_latency_load_seconds",
     {"percentile": "99"}, 2e-9),
    ("latency", "latency_p999", "ns", "numascope_latency_load_seconds",
     {"percentile": "99.9"}, 2e-9),
    ("matrix", "latency_p50", "ns", "numascope_matrix_load_latency_seconds",
     {"percentile": "50"}, 2e-9),
    ("storage", "clat_p99.9", "us", "numascope_storage_clat_seconds",
     {"percentile": "99.9"}, 2e-6),
    ("storage", "write_clat_p99", "us", "numascope_storage_write_clat_seconds",
     {"percentile": "99"}, 2e-6),
    ("storage", "iops_t1", "IO/s", "numascope_storage_target_operations_per_second",
     {"target": "1"}, 2.0),
    ("storage", "clat_p99_t0", "us", "numascope_storage_target_clat_seconds",
     {"target": "0", "percentile": "99"}, 2e-6),
    ("bandwidth", "bandwidth[avx2-nt]", "GB/s", "numascope_bandwidth_variant_bytes_per_second",
     {"variant": "avx2-nt"}, 2e9),
])
def test_case_parameters_are_labels_not_words_of_the_name(family, metric, unit, name, labels,
                                                          exported):
    rec = fleet(1, {}, seed=1)[0]
    rec.results = [BenchResult(family, "c", {}, {metric: Metric(metric, unit, True, [2.0])})]
    fams = _fams(prom.exposition([rec]))
    (sample,) = fams[name].samples
    assert sample.labels == {"host": "n0000", "case": "c", **labels}
    assert sample.value == pytest.approx(exported, rel=1e-6)


def _sweeps() -> RunRecord:
    """A node with what a real interconnect, latency, storage (two targets) and bandwidth
    (nt=auto) run keep: each headline metric beside its sweep, tail or variants."""
    rec = fleet(1, {}, seed=1)[0]

    def ms(*specs):
        return {n: Metric(n, u, hib, [v, v * 1.01]) for n, u, hib, v in specs}
    sizes = (8, 4096, 1048576)
    rec.results = [
        BenchResult("interconnect", "N0 - N1", {}, ms(
            ("latency", "us", False, 1.0), ("bandwidth", "MB/s", True, 9000.0),
            ("bibw", "MB/s", True, 15000.0), ("msg_rate", "msg/s", True, 1e6),
            *((f"lat_{s}", "us", False, 1.0 + s / 1e5) for s in sizes),
            *((f"bw_{s}", "MB/s", True, 10.0 + s / 100) for s in sizes),
            *((f"bibw_{s}", "MB/s", True, 20.0 + s / 100) for s in sizes))),
        BenchResult("latency", "local", {}, ms(
            ("latency", "ns", False, 100.0), ("tsc_cycles", "TSC cycles", False, 300.0),
            ("latency_p50", "ns", False, 95.0), ("latency_p99", "ns", False, 400.0),
            ("latency_p999", "ns", False, 900.0))),
        BenchResult("storage", "two disks", {}, ms(
            ("iops", "IO/s", True, 2e5), ("clat_p50", "us", False, 50.0),
            ("clat_p99", "us", False, 90.0), ("clat_p99.9", "us", False, 200.0),
            ("iops_t0", "IO/s", True, 1e5), ("iops_t1", "IO/s", True, 1e5),
            ("clat_p99_t0", "us", False, 80.0), ("clat_p99_t1", "us", False, 95.0),
            ("write_clat_p99", "us", False, 99.0))),
        BenchResult("bandwidth", "triad", {}, ms(
            ("bandwidth", "GB/s", True, 40.0), ("dram_bandwidth", "GB/s", True, 50.0),
            ("bandwidth[avx2]", "GB/s", True, 38.0), ("bandwidth[avx2-nt]", "GB/s", True,
                                                      40.0))),
    ]
    return rec


def test_sweeps_tails_and_variants_keep_one_series_each_and_pass_promtool(tmp_path):
    """The hard case of the names: the message size, the percentile, the target and the
    variant in a metric's name. No name carries a number or repeats a word, every metric is
    one series (its parameters as labels), and promtool finds nothing."""
    rec = _sweeps()
    text = prom.exposition([rec])
    fams = _fams(text)
    series = {}
    for f in fams.values():
        assert f.type == "gauge" and not f.name.endswith("_total"), f.name
        words = f.name.split("_")
        assert not any(w.isdigit() for w in words), f.name
        assert len(words) == len(set(words)), f.name
        for smp in f.samples:
            series[(f.name, tuple(sorted(smp.labels.items())))] = smp.value
    assert "numascope_latency_latency_p99_seconds" not in fams
    assert not any("1048576" in n for n in fams)
    assert len([k for k in series if k[0] not in (
        "numascope_node_ok", "numascope_stage_ok", "numascope_run_info",
        "numascope_run_finished_timestamp_seconds")]) == \
        sum(len(r.metrics) for r in rec.results)
    sweep = {dict(k[1])["message_size_bytes"]: v for k, v in series.items()
             if k[0] == "numascope_interconnect_sweep_bandwidth_bytes_per_second"}
    assert sweep == {"8": pytest.approx(10.08e6 * 1.005, rel=1e-5),
                     "4096": pytest.approx(50.96e6 * 1.005, rel=1e-5),
                     "1048576": pytest.approx(10495.76e6 * 1.005, rel=1e-5)}
    assert fams["numascope_interconnect_sweep_bandwidth_bytes_per_second"].documentation \
        .startswith("numascope interconnect bandwidth by message_size_bytes, median")
    head = fams["numascope_interconnect_bandwidth_bytes_per_second"].samples
    assert [set(s.labels) for s in head] == [{"host", "case"}]
    p = _promtool(text, tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr


def test_a_compression_ratio_is_inverted_into_0_1_and_its_direction_said():
    rec = fleet(1, {}, seed=1)[0]
    rec.results = [BenchResult("compress", "c", {}, {"ratio": Metric("ratio", "x", True,
                                                                     [2.0, 4.0, 5.0])})]
    f = _fams(prom.exposition([rec]))["numascope_compress_compressed_size_ratio"]
    assert f.samples[0].value == pytest.approx(0.25)     # median of 1/2, 1/4, 1/5
    assert "inverted" in f.documentation and "lower is better" in f.documentation


def test_a_real_quick_run_has_one_name_per_metric_and_no_unit_word_twice():
    rec = _quick()
    fams = _fams(prom.exposition([rec]))
    names = {n for n in fams if n not in ("numascope_node_ok", "numascope_stage_ok",
                                          "numascope_run_info",
                                          "numascope_run_finished_timestamp_seconds")}
    pairs = {(r.family, m.name) for r in rec.results if r.validated
             for m in r.metrics.values()}
    series = {(f.name, tuple(sorted(smp.labels.items())))
              for n, f in fams.items() if n in names for smp in f.samples}
    per_metric = {(r.family, r.case, m.name) for r in rec.results if r.validated
                  for m in r.metrics.values()}
    assert len(series) == len(per_metric)     # no two metrics share a series
    assert len(names) <= len(pairs)
    for n in names:
        assert not any(w in n.split("_") for w in ("ghz", "gflops", "pct", "ns", "x",
                                                   "count")), n
        assert n.count("bytes") <= 1 and n.count("seconds") <= 1, n


def test_two_metrics_that_would_share_a_name_keep_their_own():
    rec = fleet(1, {}, seed=1)[0]
    rec.results = [BenchResult("compute", "c", {}, {
        "all_busy_ghz": Metric("all_busy_ghz", "GHz", True, [3.0]),
        "all_busy_mhz": Metric("all_busy_mhz", "MHz", True, [2000.0])})]
    fams = _fams(prom.exposition([rec]))
    assert fams["numascope_compute_all_busy_clock_hertz"].samples[0].value == 3e9
    assert fams["numascope_compute_all_busy_mhz_hertz"].samples[0].value == 2e9


# -- verdicts and identity ------------------------------------------------------------------

def test_node_ok_and_stage_ok_follow_the_stages():
    runs = fleet(4, {}, seed=2)
    runs[1].stages.append(StageInfo("storage", "skipped", "no fio"))
    runs[2].stages.append(StageInfo("latency", "failed", "chaser died"))
    runs[3].status = "interrupted"
    fams = _fams(prom.exposition(runs))
    ok = {s.labels["host"]: s.value for s in fams["numascope_node_ok"].samples}
    assert ok == {"n0000": 1.0, "n0001": 1.0, "n0002": 0.0, "n0003": 0.0}
    stage = {(s.labels["host"], s.labels["stage"]): s.value
             for s in fams["numascope_stage_ok"].samples}
    assert stage[("n0001", "storage")] == 1.0 and stage[("n0002", "latency")] == 0.0
    assert stage[("n0000", "bandwidth")] == 1.0
    assert prom.record_ok(runs[0]) and not prom.record_ok(runs[2])


def test_the_run_identity_is_one_info_gauge_not_labels_of_every_value():
    runs = fleet(2, {}, seed=3, fleet_id="slurm-42.0")
    fams = _fams(prom.exposition(runs))
    info = fams["numascope_run_info"].samples
    assert {(s.labels["host"], s.labels["fleet"], s.labels["run_id"], s.value)
            for s in info} == {(r.host["hostname"], "slurm-42.0", r.run_id, 1.0)
                               for r in runs}
    for name, f in fams.items():
        if name != "numascope_run_info":
            assert all("run_id" not in s.labels and "fleet" not in s.labels
                       for s in f.samples), name


def _store_fleet(tmp_path: Path, runs) -> Path:
    db = tmp_path / "fleet.db"
    _save(db, runs)
    return db


def test_prom_of_a_fleet_exports_the_outlier_verdict(tmp_path, capsys):
    runs = fleet(12, {4: {BW: 0.5}}, seed=4, fleet_id="f1", spread=(0.01, 0.02))
    db = _store_fleet(tmp_path, runs)
    out = tmp_path / "f.prom"
    assert main(["fleet", "prom", "--out", str(out), "--store", str(db)]) == 0
    outlier = {s.labels["host"]: s.value
               for s in _fams(out.read_text())["numascope_node_outlier"].samples}
    assert outlier["n0004"] == 1.0
    assert len(outlier) == 12 and sum(outlier.values()) == 1.0
    capsys.readouterr()


def test_after_confirm_a_flag_not_reproduced_is_no_outlier(tmp_path):
    """fleet run --confirm: a node slow once (its second measurement healthy) is 0, a node
    still slow the second time 1."""
    from numascope.fleet import confirm
    lat = "latency/dram N0/latency"
    runs = fleet(40, {4: {lat: 1.9}, 9: {lat: 1.9}}, seed=12, fleet_id="f1",
                 spread=(0.01, 0.02))
    again = []
    for i, factors in ((4, {}), (9, {lat: 1.9})):
        rec = node(runs[i].host["hostname"], "f1", factors, rng=random.Random(i))
        rec.tags[confirm.TAG] = runs[i].run_id
        again.append(rec)
    db = _store_fleet(tmp_path, runs + again)
    out = tmp_path / "f.prom"
    assert main(["fleet", "prom", "--out", str(out), "--store", str(db)]) == 0
    outlier = {s.labels["host"]: s.value
               for s in _fams(out.read_text())["numascope_node_outlier"].samples}
    assert len(outlier) == 40                       # the second runs are not nodes
    assert outlier["n0004"] == 0.0 and outlier["n0009"] == 1.0
    assert sum(outlier.values()) == 1.0


def test_a_group_too_small_to_screen_gets_no_outlier_verdict(tmp_path):
    """Two nodes: no median resists one bad node, so no verdict from the screen, neither 0
    nor 1; the STREAM floor, a node's own, still flags one under it."""
    db = _store_fleet(tmp_path, fleet(2, {1: {"latency/dram N0/latency": 1.6}}, seed=5,
                                      fleet_id="f2"))
    out = tmp_path / "f.prom"
    assert main(["fleet", "prom", "--out", str(out), "--store", str(db)]) == 0
    fams = _fams(out.read_text())
    assert "numascope_node_outlier" not in fams and "numascope_node_ok" in fams
    _save(db, fleet(2, {1: {BW: 0.5}}, seed=5, fleet_id="f3"))     # 50 % of the DRAM peak
    assert main(["fleet", "prom", "--out", str(out), "--store", str(db)]) == 0
    outlier = _fams(out.read_text())["numascope_node_outlier"].samples
    assert [(s.labels["host"], s.value) for s in outlier] == [("n0001", 1.0)]


def test_a_smoke_fleet_gets_no_outlier_verdict(tmp_path):
    runs = fleet(5, {1: {BW: 0.5}}, seed=6, fleet_id="f3")
    for r in runs:
        r.profile = "smoke"
    out = tmp_path / "f.prom"
    assert main(["fleet", "prom", "--out", str(out), "--store",
                 str(_store_fleet(tmp_path, runs))]) == 0
    assert "numascope_node_outlier" not in _fams(out.read_text())


def test_prom_with_a_baseline_exports_each_nodes_check(tmp_path, capsys):
    db = tmp_path / "fleet.db"
    _save(db, fleet(10, {}, seed=7, fleet_id="b", spread=(0.01, 0.02)))
    assert main(["fleet", "baseline", "save", "gold", "--store", str(db)]) == 0
    _save(db, fleet(6, {2: {BW: 0.5}}, seed=8, fleet_id="later", spread=(0.01, 0.02)))
    out = tmp_path / "f.prom"
    assert main(["fleet", "prom", "--out", str(out), "--store", str(db), "--baseline",
                 "gold"]) == 0
    fams = _fams(out.read_text())
    bad = {s.labels["host"]: s.value for s in fams["numascope_baseline_out"].samples}
    unsure = {s.labels["host"]: s.value
              for s in fams["numascope_baseline_inconclusive"].samples}
    assert bad == {f"n{i:04d}": float(i == 2) for i in range(6)}
    assert set(unsure.values()) == {0.0}
    assert {s.labels["baseline"] for s in fams["numascope_baseline_out"].samples} == {"gold"}
    capsys.readouterr()
    assert main(["fleet", "prom", "--out", str(out), "--store", str(db), "--tolerance",
                 "bandwidth=5%"]) == 2
    assert "give --baseline NAME too" in capsys.readouterr().err


def test_promtool_finds_nothing_in_a_node_file_and_a_fleet_file(tmp_path, capsys):
    text = prom.exposition([_quick()])
    p = _promtool(text, tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    db = tmp_path / "fleet.db"
    _save(db, fleet(10, {3: {BW: 0.5}}, seed=9, fleet_id="b"))
    assert main(["fleet", "baseline", "save", "gold", "--store", str(db)]) == 0
    out = tmp_path / "f.prom"
    assert main(["fleet", "prom", "--out", str(out), "--store", str(db), "--baseline",
                 "gold"]) == 0
    text = out.read_text()
    assert "numascope_node_outlier" in text and "numascope_baseline_out" in text
    p = _promtool(text, tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    capsys.readouterr()


def test_promtool_sees_what_the_old_names_got_wrong(tmp_path):
    """The check is not empty: a gauge named _count, as errors/count was, is refused."""
    p = _promtool("# HELP numascope_storage_errors_count x\n# TYPE numascope_storage_errors_"
                  "count gauge\nnumascope_storage_errors_count 0\n", tmp_path)
    assert p.returncode != 0 and "_count" in p.stdout + p.stderr


# -- baseline copy --------------------------------------------------------------------------

def test_baseline_copy_puts_the_baseline_alone_into_a_node_store(tmp_path, capsys):
    db, node_db = tmp_path / "fleet.db", tmp_path / "node.db"
    _save(db, fleet(10, {}, seed=10, fleet_id="b", spread=(0.01, 0.02)))
    assert main(["fleet", "baseline", "save", "gold", "--store", str(db)]) == 0
    capsys.readouterr()
    assert main(["fleet", "baseline", "copy", "gold", "--store", str(db), "--to",
                 str(node_db), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["results"][0]["name"] == "gold" and doc["results"][0]["groups"] == 1
    with Store.open(db) as a, Store.open(node_db) as b:
        from numascope.fleet import baseline
        src, dst = baseline.load(a, "gold"), baseline.load(b, "gold")
        assert dst == src                          # created and fleet kept
        assert b.list_runs() == []                 # the baseline alone
    # the node's own run, checked against it there
    _save(node_db, [node("n1", "x", {BW: 0.5}, rng=random.Random(1))])
    assert main(["fleet", "check", "--baseline", "gold", "--store", str(node_db),
                 "--host", "n1", "latest"]) == 1
    capsys.readouterr()
    # again: refused without --replace, done with it
    argv = ["fleet", "baseline", "copy", "gold", "--store", str(db), "--to", str(node_db)]
    assert main(argv) == 2 and "give --replace" in capsys.readouterr().err
    assert main([*argv, "--replace"]) == 0


def test_baseline_copy_refuses_its_own_store_and_a_missing_baseline(tmp_path, capsys):
    db = tmp_path / "fleet.db"
    _save(db, fleet(4, {}, seed=11, fleet_id="b"))
    assert main(["fleet", "baseline", "save", "gold", "--store", str(db)]) == 0
    capsys.readouterr()
    assert main(["fleet", "baseline", "copy", "gold", "--store", str(db), "--to",
                 str(db)]) == 2
    assert "the store the baseline is read from" in capsys.readouterr().err
    to = tmp_path / "node.db"
    assert main(["fleet", "baseline", "copy", "silver", "--store", str(db), "--to",
                 str(to)]) == 2
    assert "no baseline 'silver'" in capsys.readouterr().err
    assert not to.exists()              # nothing created for a copy that did not happen


def test_prom_dir_writes_the_nodes_own_file(tmp_path):
    """fleet run --prom-dir's path: one record, its node verdict, promtool-clean."""
    rec = copy.deepcopy(_quick())
    out = prom.write(tmp_path / "numascope.prom", [rec])
    fams = _fams(out.read_text())
    assert fams["numascope_node_ok"].samples[0].value == 1.0
    assert "numascope_node_outlier" not in fams      # one node: no fleet verdict
    p = _promtool(out.read_text(), tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
