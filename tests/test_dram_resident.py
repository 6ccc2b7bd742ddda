"""One definition of a DRAM bandwidth figure (families.bandwidth.resident), read by the
fleet's STREAM floor, the efficiency table, the headline and the placement model: a
working-set sweep's cache points and a memory tier's share are not a node's DRAM bandwidth,
whatever their case is called."""

from __future__ import annotations

import random

import pytest
from fleet_synth import PEAK, node
from test_predict import NODE0, bw, rec
from test_report_summary import run_of, triad

from numascope.analysis.efficiency import efficiency_table, measured_from
from numascope.families.bandwidth.resident import dram_resident, why_not
from numascope.fleet import outliers
from numascope.predict.model import points
from numascope.report.headline import headlines
from numascope.results.record import BenchResult, Metric

KIB = 1024
MIB = 1024 * KIB


def sweep_point(gbs: float, working_set: int = 24 * KIB, threads: int = 1) -> BenchResult:
    """A `--bw-sweep` working-set point as sweep.py records it."""
    return BenchResult("bandwidth", f"sweep triad {working_set // KIB} KiB {threads}T",
                       {"kernel": "triad", "threads": threads, "policy": "compact",
                        "sweep": True, "working_set": working_set,
                        "array_bytes": working_set // 3, "llc_bytes": 32 * MIB},
                       {"bandwidth": Metric("bandwidth", "GB/s", True, [gbs] * 5)})


def test_what_is_a_dram_figure():
    dram = triad("triad compact 2T", 2, [30.0], array_bytes=128 * MIB, llc_bytes=32 * MIB)
    assert dram_resident(dram) and why_not(dram) == ""
    assert not dram_resident(sweep_point(75.0)) and "sweep" in why_not(sweep_point(75.0))
    plateau = triad("plateau L1 triad 1T", 1, [70.0], sweep=True, plateau="L1")
    assert not dram_resident(plateau)
    mix = triad("triad cpus 0", 1, [40.0], sweep="tier-ratio", ratio="3:1")
    assert not dram_resident(mix) and "3:1" in why_not(mix)
    assert dram_resident(triad("triad cpus 0", 1, [40.0], sweep="tier-ratio", ratio="1:0"))
    assert dram_resident(triad("triad compact 2T", 2, [30.0]))   # an old record: no sizes
    assert not dram_resident(BenchResult("latency", "dram N0", {}, {}))


def test_a_node_at_30_percent_of_its_peak_is_under_the_floor_whatever_its_l1_triad():
    runs = [node(f"n{i:02d}", "f1", {}, rng=random.Random(i)) for i in range(6)]
    slow = runs[0]
    for res in slow.results:          # every DRAM figure at 30 % of the peak ...
        if res.family == "bandwidth":
            res.metrics["bandwidth"].values = [0.30 * PEAK] * 2
    slow.results.append(sweep_point(0.75 * PEAK))     # ... and a 24 KiB triad at 75 %
    assert outliers.stream(slow) == pytest.approx(0.30 * PEAK)
    a = outliers.analyze(runs)
    floor = [f for f in a.flags if f.kind == "floor"]
    assert [f.host for f in floor] == ["n00"] and floor[0].pct == pytest.approx(30.0)
    assert a.floor_nodes == 6
    # a node whose only triads are sweep points has no STREAM figure: not checked, and said
    only_sweep = node("n99", "f1", {}, rng=random.Random(9))
    only_sweep.results = [sweep_point(0.75 * PEAK)]
    assert outliers.stream(only_sweep) is None
    assert "no DRAM-resident triad" in outliers.analyze([*runs, only_sweep]).method()


def test_the_efficiency_table_sets_only_a_dram_figure_against_the_dram_peak():
    mix = triad("triad cpus 0", 1, [60.0], sweep="tier-ratio", ratio="3:1")
    dram = triad("triad compact 2T", 2, [30.0], array_bytes=128 * MIB, llc_bytes=32 * MIB)
    assert measured_from([mix, dram, sweep_point(75.0)])["dram_gbs"] == 30.0
    peaks = {"dram": {"value": 100.0}}
    row = next(r for r in efficiency_table(peaks, results=[mix, sweep_point(75.0)])
               if r.what == "DRAM bandwidth")
    assert row.measured is None and row.percent is None
    assert "no bandwidth result measured DRAM" in row.note and "3:1" in row.note
    assert "working-set sweep points" in row.note


def test_the_headline_names_no_cache_figure_a_stream_triad():
    run = run_of(triad("triad compact 2T", 2, [30.0] * 5), sweep_point(75.0))
    got = {h.key: h for h in headlines(run)}
    assert got["triad_all_cores"].value == 30.0 and "triad_one_core" not in got
    alone = run_of(sweep_point(75.0))
    assert not [h for h in headlines(alone) if h.key.startswith("triad")]


def test_the_placement_model_takes_no_cache_point_for_a_saturation_point():
    pt = bw("sweep triad 24 KiB 1T", [0], 80.0)
    pt.params.update(sweep=True, working_set=24 * KIB)
    mix = bw("triad cpus 0 3:1", [0], 60.0)
    mix.params.update(sweep="tier-ratio", ratio="3:1")
    assert {p.case for p in points(rec(pt, mix, *NODE0))} == {x.case for x in NODE0}
