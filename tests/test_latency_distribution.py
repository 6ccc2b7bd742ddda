"""The single-load latency distribution: quantiles of planted histograms, the C pass's
buckets, a DRAM chase on this machine, the record, the table, the figure, and compare
--metric on the tail."""

from __future__ import annotations

import io
import itertools
import json
import math

import pytest
from rich.console import Console
from test_store_helpers import make_run, noisy

from numascope.cli import main as cli
from numascope.families.latency import bench as lat
from numascope.families.latency import distribution as dist
from numascope.results.record import BenchResult, Metric
from numascope.results.store import Store
from numascope.topology import read_topology


@pytest.fixture(scope="module")
def topo():
    return read_topology("/")


# -- planted histograms ---------------------------------------------------------------------

def test_quantiles_of_a_planted_histogram():
    edges, counts = [0, 10, 20, 30, 40], [10, 80, 9, 1]     # 100 values
    assert dist.quantile(edges, counts, 50) == pytest.approx(15.0)   # 10 + 10 x 40/80
    assert dist.quantile(edges, counts, 90) == pytest.approx(20.0)   # end of bucket 2
    assert dist.quantile(edges, counts, 99) == pytest.approx(30.0)
    assert dist.quantile(edges, counts, 99.9) == pytest.approx(39.0)  # 30 + 10 x 0.9/1
    assert dist.quantile(edges, counts, 0) == 0
    assert dist.quantile([0, 1, 2, 3], [0, 5, 0], 50) == pytest.approx(1.5)  # empties skipped
    assert math.isnan(dist.quantile([0, 1], [0], 50))
    with pytest.raises(ValueError):
        dist.quantile(edges, counts, 100.1)
    with pytest.raises(ValueError):
        dist.quantile(edges, counts[:-1], 50)


def _planted_hist(group: int = 1) -> dict:
    """lat_chase's "hist" as a fake timer would give it: 2 TSC ticks per ns; two chunks of
    1000 groups over buckets of 100 ticks (50 ns of a group)."""
    return {"edges": [0, 100, 200, 300, 400, 800], "group": group, "groups": 1000,
            "counts": [[0, 900, 90, 9, 1], [0, 800, 180, 18, 2]],
            "overhead": 60.0, "empty_p5": 52, "empty_p50": 60, "empty_p95": 78,
            "step": 2, "tsc_ghz": 2.0}


def test_planted_chunks_give_known_metrics_and_histogram():
    metrics, d = dist.from_core(_planted_hist())
    assert list(metrics) == ["latency_p50", "latency_p90", "latency_p99", "latency_p999"]
    # chunk 1: p50 at 500/900 of [50, 100) ns; chunk 2: 500/800 of it
    assert metrics["latency_p50"].values == pytest.approx([50 + 50 * 500 / 900,
                                                           50 + 50 * 500 / 800])
    assert metrics["latency_p90"].values == pytest.approx([100.0, 100 + 50 * 100 / 180])
    assert metrics["latency_p99"].values == pytest.approx([150.0, 150 + 50 * 10 / 18])
    assert metrics["latency_p999"].values == pytest.approx([200.0, 200 + 200 * 1 / 2])
    assert all(not m.higher_is_better and m.unit == "ns" for m in metrics.values())
    assert d["counts"] == [0, 1700, 270, 27, 3] and d["groups"] == 2000
    assert d["edges"] == [0, 50, 100, 150, 200, 400] and d["chunks"] == 2
    assert d["quantiles"]["latency_p999"] == pytest.approx(200 + 200 * 1 / 3, abs=1e-3)
    assert d["overhead_ns"] == 30 and d["tsc_step_ns"] == 1 and d["resolution_ns"] == 1
    assert d["loads_per_group"] == 1 and "rdtscp" in d["method"]


def test_groups_of_several_loads_give_ns_per_load():
    metrics, d = dist.from_core(_planted_hist(group=4))
    assert d["edges"] == [0, 12.5, 25, 37.5, 50, 100] and d["resolution_ns"] == 0.25
    assert metrics["latency_p999"].values == pytest.approx([50.0, 75.0])
    assert "groups of 4 loads" in metrics["latency_p99"].note


def test_no_pass_no_metrics():
    assert dist.from_core(None) == ({}, None)
    assert dist.from_core({**_planted_hist(), "tsc_ghz": 0}) == ({}, None)


# -- the C pass -----------------------------------------------------------------------------

def test_the_passes_buckets_are_log_linear(topo):
    from numascope import _core
    r = _core.lat_chase(1 << 20, topo.usable_cpus()[0], None, "tlb", 256 << 10, 2, 1 << 12,
                        256, 1, 4096)
    h = r["hist"]
    if h is None:
        pytest.skip("no serialising timestamp on this CPU")
    e = h["edges"]
    assert all(b > a for a, b in itertools.pairwise(e))
    assert all(b - a == 1 for a, b in itertools.pairwise(e) if b <= 64)            # exact below 64
    assert all(b - a <= a / 32 for a, b in itertools.pairwise(e) if a >= 64)       # 1/32 above
    assert all(len(c) == len(e) - 1 for c in h["counts"]) and len(h["counts"]) == 2
    assert [sum(c) for c in h["counts"]] == [4096, 4096]
    assert h["step"] >= 1 and h["empty_p5"] <= h["empty_p50"] <= h["empty_p95"]
    assert 0 < h["overhead"] <= h["empty_p95"] * 1.5 and h["tsc_ghz"] > 0.1
    with pytest.raises(ValueError):
        _core.lat_chase(1 << 20, topo.usable_cpus()[0], None, "tlb", 256 << 10, 2, 1 << 12,
                        256, 1, 4096, 999)
    assert _core.lat_chase(1 << 20, topo.usable_cpus()[0], None, "tlb", 256 << 10, 1,
                           1 << 12, 256, 1, 0)["hist"] is None                # none asked


def test_dram_chase_has_an_ordered_tail_near_the_mean(topo):
    cpu = topo.usable_cpus()[0]
    r = lat.chase(topo, lat.dram_size(topo, cpu), cpu, samples=5, loads=1 << 16,
                  clock=False)
    if "latency" not in r.distributions:
        pytest.skip("no serialising timestamp on this CPU")
    d = r.distributions["latency"]
    assert d["loads_per_group"] == 1                 # a DRAM load is timed alone
    q = d["quantiles"]
    assert q["latency_p999"] >= q["latency_p99"] >= q["latency_p90"] >= q["latency_p50"] > 0
    # the samples' best ns per load: on this shared 2-CPU host a sample's wall time also
    # holds the time other processes had the CPU (the single loads put that beyond p99.9)
    mean = r.metrics["latency"].min
    assert mean / 3 < q["latency_p50"] < mean * 2, (q, mean)
    assert mean / 3 < r.metrics["latency_p50"].median < mean * 2
    below = [(a + b) / 2 * c for a, b, c in zip(d["edges"], d["edges"][1:], d["counts"])
             if b <= q["latency_p999"]]       # the histogram's mean, up to p99.9
    assert mean / 3 < sum(below) / (0.999 * d["groups"]) < mean * 2   # overhead about right
    assert len(r.metrics["latency_p999"].values) == 5 and d["groups"] == 5 * dist.DIST_GROUPS
    assert 0 < d["overhead_ns"] < mean and 0 < d["resolution_ns"] < mean / 2
    back = BenchResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back.distributions == json.loads(json.dumps(r.distributions))


def test_records_without_a_distribution_keep_their_shape():
    r = BenchResult("bandwidth", "x", {}, {"bandwidth": Metric("bandwidth", "GB/s", True, [1.0])})
    assert "distributions" not in r.to_dict()
    assert BenchResult.from_dict(r.to_dict()).distributions == {}


# -- the table and the figure -----------------------------------------------------------------

def _record(p999: float = 600.0) -> BenchResult:
    metrics, d = dist.from_core(_planted_hist())
    metrics["latency_p999"] = Metric("latency_p999", "ns", False, [p999, p999 + 2])
    return BenchResult("latency", "tlb 1 GiB stride 256",
                       {"kind": "idle", "bytes": 1 << 30, "mode": "tlb", "stride": 256,
                        "pages": "none"},
                       {"latency": Metric("latency", "ns", False, [150.0, 151.0, 152.0]),
                        "tsc_cycles": Metric("tsc_cycles", "TSC cycles", False, [390.0]),
                        **metrics},
                       {"huge_fraction": 0.0}, distributions={"latency": d})


def test_table_prints_the_tail_beside_the_samples():
    from numascope.families.latency.command import _print
    con = Console(width=80, record=True, file=io.StringIO(), color_system=None)
    _print([_record()], {}, con)
    text = con.export_text()
    assert "p99.9" in text and "601.0" in text and "p99, p99.9 load: the tail of single" in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80 and "…" not in text


def test_the_distribution_is_drawn_by_lat_and_the_report():
    from numascope.families.latency.figures import figures
    from numascope.report.html import render
    names = [name for name, _ in figures([_record()])]
    assert "Latency distribution" in names
    assert 'alt="Latency distribution"' in render([make_run({}, [_record()])])


# -- compare --metric -------------------------------------------------------------------------

def _tail_run(tag: str, p999: float, seed: int):
    ns = noisy(150.0, 5, 0.005, seed)
    return make_run({"cfg": tag}, [BenchResult(
        "latency", "tlb 1 GiB stride 256", {"kind": "idle"},
        {"latency": Metric("latency", "ns", False, ns),
         "latency_p999": Metric("latency_p999", "ns", False, noisy(p999, 5, 0.01, seed + 50))})])


def test_compare_tests_the_tail_on_request(tmp_path, capsys):
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        for s in range(4):
            st.save_run(_tail_run("A", 600.0, s))
            st.save_run(_tail_run("B", 900.0, s + 10))     # the tail got worse, not the mean
    assert cli(["compare", "cfg=A", "cfg=B", "--store", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [m["metric"] for m in out["results"]] == ["latency"]      # primary by default
    assert cli(["compare", "cfg=A", "cfg=B", "--store", str(db), "--json",
                "--metric", "latency", "--metric", "latency_p999"]) == 0
    out = json.loads(capsys.readouterr().out)
    by = {m["metric"]: m for m in out["results"]}
    assert set(by) == {"latency", "latency_p999"} and out["scope"] == "chosen"
    assert by["latency_p999"]["verdict"] == "worse" and not by["latency_p999"]["primary"]
    assert by["latency"]["verdict"] != "worse" and out["tested"] == 2
    assert cli(["compare", "cfg=A", "cfg=B", "--store", str(db),
                "--metric", "latency_p9999"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no metric 'latency_p9999'" in err and "latency_p999" in err
    assert cli(["compare", "cfg=A", "cfg=B", "--store", str(db), "--all-metrics",
                "--metric", "latency"]) == 2     # one way to choose the metrics
    assert "--metric: not allowed with argument --all-metrics" in capsys.readouterr().err


def test_the_batches_of_samples_auto_make_one_histogram():
    """--samples auto chases in batches: their histograms (one grid) add bucket by bucket;
    two grids that differ give none rather than a wrong one."""
    from numascope.families.latency import distribution as d
    a = {"edges": [10.0, 11.0, 12.0], "counts": [3, 1], "loads_per_group": 1, "tsc_ghz": 2.6,
         "groups": 4, "chunks": 1, "overhead_ns": 20.0, "overhead_p5_ns": 19.0,
         "overhead_p95_ns": 21.0, "quantiles": {}}
    b = {**a, "edges": [11.0, 12.0, 13.0, 14.0], "counts": [2, 0, 4], "groups": 6,
         "overhead_ns": 25.0}
    c = d.combine([a, None, b])
    assert c["edges"] == [10.0, 11.0, 12.0, 13.0, 14.0] and c["counts"] == [3, 3, 0, 4]
    assert c["groups"] == 10 and c["chunks"] == 2 and c["overhead_ns"] == 23.0
    assert c["quantiles"]["latency_p50"] == round(d.quantile(c["edges"], c["counts"], 50), 3)
    assert d.combine([a]) is a and d.combine([None]) is None
    assert d.combine([a, {**b, "loads_per_group": 2}]) is None
    assert d.combine([a, {**b, "edges": [10.0, 12.0, 13.0], "counts": [1, 1]}]) is None
