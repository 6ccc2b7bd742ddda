"""The summary's headline figures and their verdicts on the hard cases: each rule at its
threshold and on either side, a figure that did not converge, bimodal repetitions, a
disturbed run, no peak, zero spread, quantised values, a 3-node machine, several pairs of
one relation, and published figures that match (Match-like objects: the rule reads only
quantity, value, unit, matched, notes and the reference's lab and date)."""

from __future__ import annotations

import math
import types

import pytest
from test_store_helpers import make_run

from numascope.report.headline import headlines
from numascope.report.verdicts import REFERENCE_SPREAD, judge, reference_text
from numascope.results.record import BenchResult, Metric


def triad(case: str, threads: int, values: list[float], policy: str = "compact",
          **params) -> BenchResult:
    return BenchResult("bandwidth", case, {"kernel": "triad", "threads": threads,
                                           "policy": policy, **params},
                       {"bandwidth": Metric("bandwidth", "GB/s", True, list(values))})


def run_of(*results: BenchResult, dram: float | None = 100.0, noise: list[str] = (),
           **host):
    run = make_run(results=list(results), **host)
    run.host["peaks"] = {"dram": {"value": dram, "unit": "GB/s"},
                         "flops": {"value": None}}
    run.noise = {"warnings": list(noise)}
    return run


def line(run, key: str):
    return next(h for h in headlines(run) if h.key == key)


@pytest.mark.parametrize(("gbs", "word"), [(58.9, "low"), (59.0, "ok"), (100.0, "ok"),
                                            (100.5, "check")])
def test_the_triad_against_the_fleet_floor(gbs, word):
    h = line(run_of(triad("triad compact 2T", 2, [gbs] * 5)), "triad_all_cores")
    assert h.verdict == word and h.peak_pct == pytest.approx(gbs)
    if word != "check":
        assert "59 %" in h.rule and "fleet.outliers.FLOOR" in h.rule and "Dell" in h.rule
    assert h.low == h.high == gbs            # zero spread: the range is one value


def test_a_zero_spread_over_allocations_is_said_not_a_zero_width_95_percent_interval():
    # --reps auto whose 4 allocations' medians agree exactly (quantised values): the t
    # interval has zero width; the line says no spread, not "95 % CI" over one value
    steady = {"metric": "bandwidth", "converged": True, "interval": [60.0, 60.0],
              "units": 4, "precision": 0.01, "stopped": "converged"}
    h = line(run_of(triad("triad compact 2T", 2, [60.0] * 8, steady=steady)),
             "triad_all_cores")
    assert "95 %" not in h.spread and "no spread" in h.spread and "4 alloc." in h.spread
    assert math.isnan(h.low) and math.isnan(h.high)
    steady["interval"] = [59.0, 61.0]
    h = line(run_of(triad("triad compact 2T", 2, [60.0] * 8, steady=steady)),
             "triad_all_cores")
    assert h.spread.startswith("95 % CI") and (h.low, h.high) == (59.0, 61.0)


def test_no_peak_no_percentage_and_no_verdict():
    h = line(run_of(triad("triad compact 2T", 2, [40, 41, 39]), dram=None),
             "triad_all_cores")
    assert h.peak_pct is None and h.verdict == "–" and "no published rule" in h.rule


def test_a_disturbed_run_an_unsteady_or_a_bimodal_figure_is_inconclusive():
    run = run_of(triad("triad compact 2T", 2, [50] * 5), noise=["steal 4% of the CPU time"])
    h = line(run, "triad_all_cores")
    assert h.verdict == "inconclusive"
    assert h.rule.startswith("the run was disturbed;")
    assert "the rule would say low: 50 % of peak" in h.rule
    steady = {"converged": False, "precision": 0.01, "stopped": "time budget",
              "interval": [60.0, 90.0], "units": 4, "metric": "bandwidth"}
    h = line(run_of(triad("triad compact 2T", 2, [70, 75, 80], steady=steady)),
             "triad_all_cores")
    assert h.verdict == "inconclusive" and "not steady" in h.rule
    assert (h.low, h.high) == (60.0, 90.0) and "4 alloc." in h.spread
    h = line(run_of(triad("triad compact 2T", 2, [70, 71, 90, 91, 70], bimodal=[{}])),
             "triad_all_cores")
    assert h.verdict == "inconclusive" and "bimodal" in h.rule


def test_quantised_values_keep_their_median_and_range():
    h = line(run_of(triad("triad compact 2T", 2, [64, 64, 64, 72, 64, 72])),
             "triad_all_cores")
    assert (h.value, h.low, h.high, h.n) == (64, 64, 72, 6)
    assert h.spread.startswith("range")                      # never an interval


@pytest.mark.parametrize(("share", "word"), [(0.95, "saturates"), (0.94, "short")])
def test_one_core_per_l3_against_all_cores(share, word):
    run = run_of(triad("triad compact 8T", 8, [80.0] * 5),
                 triad("triad per-l3 2T", 2, [80.0 * share] * 5, policy="per-l3"), l3s=2)
    h = line(run, "triad_one_per_l3")
    assert h.verdict == word and "advice.L3_SATURATION" in h.rule


def mat(src: int, dst: int, dist: int, ns: float) -> BenchResult:
    return BenchResult("matrix", f"N{src}->N{dst}", {"src": src, "dst": dst, "distance": dist},
                       {"latency": Metric("latency", "ns", False, [ns] * 3),
                        "bandwidth": Metric("bandwidth", "GB/s", True, [10.0] * 3)})


@pytest.mark.parametrize(("remote", "word"), [(105.0, "flat"), (106.0, "slower")])
def test_remote_over_local_on_a_3_node_machine(remote, word):
    # three nodes: the farthest by distance carries the line, not the slowest nearer one
    run = run_of(mat(0, 0, 10, 100.0), mat(0, 1, 12, 130.0), mat(0, 2, 32, remote))
    assert line(run, "remote_latency").source == "N0->N2"
    h = line(run, "remote_local_latency")
    assert h.value == pytest.approx(remote / 100) and h.verdict == word


def test_several_pairs_of_one_relation_give_their_median():
    def c2c(a, b, ns):
        return BenchResult("c2c", f"cpu{a}<->cpu{b}", {"a": a, "b": b, "relation": "package"},
                           {"latency": Metric("latency", "ns", False, [ns] * 5)})
    h = line(run_of(c2c(0, 1, 50), c2c(0, 2, 70), c2c(1, 2, 60)), "c2c_package")
    assert (h.value, h.low, h.high, h.n) == (60, 50, 70, 3) and h.metric == ""


def published(value: float, unit: str = "GB/s", quantity: str = "triad_all_cores"):
    ref = types.SimpleNamespace(lab_authors="Dell HPC and AI Innovation Lab (Kochhar)",
                                date="2018-09")
    return types.SimpleNamespace(ref=ref, quantity=quantity, value=value, unit=unit,
                                 matched=("CPU model", "memory mode", "DIMM population"),
                                 notes=())


@pytest.mark.parametrize(("measured", "word"),
                         [(90.0, "as published"), (110.0, "as published"),
                          (89.0, "low"), (111.0, "high")])
def test_a_published_figure_gives_the_verdict_where_no_rule_does(measured, word):
    run = run_of(triad("triad compact 2T", 2, [measured] * 5), dram=None)
    lines = headlines(run)
    judge(run, lines, [published(100.0)])
    h = lines[0]
    assert h.verdict == word and f"{REFERENCE_SPREAD:.0%}" in h.rule
    assert h.reference.startswith(f"{measured:.0f} % of the published 100 GB/s (Dell HPC "
                                  "and AI Innovation Lab, 2018; matched CPU model, memory "
                                  "mode, DIMM population)")


def test_the_peak_rule_wins_and_the_reference_is_still_said():
    run = run_of(triad("triad compact 2T", 2, [50.0] * 5))
    lines = headlines(run)
    judge(run, lines, [published(100.0)])
    assert lines[0].verdict == "low" and lines[0].reference.startswith("50 % of")


def test_a_latency_above_the_published_one_is_slow_and_units_are_normalised():
    h = types.SimpleNamespace(key="idle_latency", value=120.0, higher_is_better=False,
                              unit="ns")
    assert reference_text(h, [published(100.0, "ns", "idle_latency")])[0] == "slow"
    h.value = 85.0
    assert reference_text(h, [published(100.0, "ns", "idle_latency")])[0] == "fast"
    # a published 0.1 µs is 100 ns: units are normalised, and said in the text
    word, text, _ = reference_text(h, [published(0.1, "µs", "idle_latency")])
    assert word == "fast" and text.startswith("85 % of the published 0.1 µs")
    assert reference_text(h, [published(100.0, "GB/s", "idle_latency")]) is None


def test_a_line_comes_only_from_what_was_measured():
    assert headlines(run_of(dram=None)) == []
    keys = [h.key for h in headlines(run_of(triad("triad compact 1T", 1, [10.0] * 3)))]
    assert keys == ["triad_all_cores"]          # one thread is all there is: no second line


def test_hpl_is_set_beside_a_published_efficiency_by_its_percent_of_peak():
    hpl = BenchResult("compute", "hpl np=2", {"kind": "hpl", "n": 10000},
                      {"gflops": Metric("gflops", "GFLOP/s", True, [90.0] * 3)})
    run = run_of(hpl)
    run.host["peaks"]["flops"] = {"value": 100.0}
    lines = headlines(run)
    judge(run, lines, [published(95.0, "%", "hpl_efficiency")])
    (h,) = lines
    assert h.peak_pct == pytest.approx(90.0) and h.verdict == "as published"
    assert h.reference.startswith("95 % of the published 95 %")


def test_each_kind_of_domain_gives_its_slowest_and_one_measurement_one_line():
    def dom(name: str, domains: tuple, gbs: float) -> BenchResult:
        return triad(f"triad {name} 4T", 4, [gbs] * 3, domain=name, domains=list(domains))
    run = run_of(dom("S0", ("S0",), 70.0), dom("N0", ("N0", "L3:0"), 40.0),
                 dom("N1", ("N1", "L3:1"), 35.0))
    lines = {h.key: h for h in headlines(run)}
    assert lines["triad_node"].source == "triad N1 4T" and lines["triad_node"].value == 35
    assert lines["triad_node"].what == ("STREAM triad, one NUMA node (the slowest of 2: N1) "
                                        "(here also one L3)")
    assert lines["triad_node"].detail == "fastest N0: 40 GB/s"
    assert "triad_l3" not in lines and lines["triad_socket"].value == 70


def test_a_family_whose_results_lack_what_its_line_needs_is_said():
    from numascope.report.summary import summary_section
    broken = BenchResult("c2c", "cpu0<->cpu1", {"relation": "l3"},
                         {"latency": Metric("latency", "ns", False, [50.0, 52.0])})
    broken.metrics["latency"].values.clear()      # no values: no line, no error
    run = run_of(triad("triad compact 2T", 2, [70.0] * 3), broken)
    errors: list[str] = []
    assert [h.key for h in headlines(run, errors)] == ["triad_all_cores"] and errors == []
    run.results.append(BenchResult("compress", "x 2T", {"threads": 2},
                                   {"decompress_sum": Metric("decompress_sum", "GB/s", True,
                                                             [1.0])}))
    errors = []
    headlines(run, errors)
    assert errors and errors[0].startswith("compress: KeyError")
    assert "No headline line from compress: KeyError" in summary_section([run])


def test_problems_are_said_one_sentence_each():
    from numascope.report.summary import problems
    from numascope.results.run import StageInfo
    steady = {"converged": False, "precision": 0.01, "stopped": "max reps",
              "interval": [60.0, 90.0], "units": 4, "metric": "bandwidth"}
    run = run_of(triad("triad compact 2T", 2, [70.0] * 3, steady=steady),
                 triad("triad compact 1T", 1, [40.0] * 3, steady=steady), dram=None,
                 noise=["other processes used 81% of the CPU time"],
                 readiness=[{"id": "thp", "title": "transparent huge pages", "status": "warn",
                             "value": "never: no huge pages", "effect": "TLB misses"},
                            {"id": "governor", "status": "ok", "value": "performance"}])
    run.stages.append(StageInfo("latency", "failed", "validation failed: chase broke", 0, 1.0))
    said = problems(run, headlines(run))
    assert said == [
        ("Readiness: transparent huge pages: never (its effect and the command that changes "
        "it: appendix)."),
        ("Disturbed run: other processes used 81% of the CPU time; a verdict on its figures is "
        "inconclusive."),
        ("Not steady (the 95 % interval over separate allocations stayed wider than the "
        "precision asked; its verdict is inconclusive): triad compact 2T, triad compact 1T."),
        "Stage latency failed: validation failed: chase broke.",
        ("No DRAM peak, so no % of peak for the triad: the DIMMs are unknown (no reason "
        "recorded).")]
