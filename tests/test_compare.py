import json
import math
import random

import pytest
from compare_sim import sides
from rich.console import Console
from test_store_helpers import make_result, make_run, noisy

from numascope.analysis.compare import ALPHA, MIN_RUNS, compare_runs
from numascope.analysis.primary import family_primary, primary_metrics
from numascope.analysis.stats import holm, one_sample, t_quantile, t_two_sided_p, variance, welch
from numascope.cli import main as cli
from numascope.report.terminal import print_comparison
from numascope.results.record import BenchResult, Metric
from numascope.results.store import Store

# -- statistics ------------------------------------------------------------------------------


def test_t_distribution_matches_tables_and_integration():
    # Textbook critical values (two-sided 5 %) and the normal limit
    assert t_two_sided_p(12.706205, 1) == pytest.approx(0.05, rel=1e-5)
    assert t_two_sided_p(2.228139, 10) == pytest.approx(0.05, rel=1e-5)
    assert t_two_sided_p(1.959964, 1e7) == pytest.approx(0.05, rel=1e-4)
    assert t_quantile(0.01, 5) == pytest.approx(4.032143, rel=1e-6)
    # Fractional degrees of freedom (Welch): against a Simpson integral of the density
    df, t = 3.7, 2.5
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    n, hi = 20000, 2000.0   # tail beyond 2000 is < 1e-11 for df 3.7

    def pdf(x):
        return c * (1 + x * x / df) ** (-(df + 1) / 2)
    h = (hi - t) / n
    area = pdf(t) + pdf(hi) + sum((4 if i % 2 else 2) * pdf(t + i * h) for i in range(1, n))
    assert t_two_sided_p(t, df) == pytest.approx(2 * area * h / 3, rel=1e-4)
    assert t_two_sided_p(t_quantile(0.003, df), df) == pytest.approx(0.003, rel=1e-8)


def test_welch():
    w = welch([1, 2, 3, 4], [3, 4, 5, 6, 7])
    assert w.diff == 2.5 and w.se == pytest.approx(math.sqrt(5 / 3 / 4 + 2.5 / 5))
    assert w.df == pytest.approx(6.9808, rel=1e-4) and w.p == pytest.approx(0.03494, rel=1e-3)
    lo, hi = w.interval()
    assert lo < 2.5 < hi and lo > 0              # p < 0.05: the interval excludes 0
    assert welch([1.0, 1.0], [1.0, 1.0]).p == 1.0
    # constants that differ are not tested: no p-value (it used to be 0, "significant")
    assert math.isnan(welch([1.0, 1.0], [2.0, 2.0]).p)
    # scipy.stats against textbook values (df = 9 in each)
    sample = [0.3, -1.2, 0.8, 2.1, 0.4, -0.2, 1.5, 0.9, 1.1, 0.6]
    t = one_sample(sample)
    assert t.df == 9 and t.diff == pytest.approx(0.63)
    assert t.t == pytest.approx(0.63 / math.sqrt(variance(sample) / 10))
    assert t.p == pytest.approx(t_two_sided_p(t.t, 9))
    assert t_quantile(0.05, 9) == pytest.approx(2.262157, rel=1e-6)
    with pytest.raises(ValueError):
        welch([1.0], [1.0, 2.0])


def test_holm_adjusts_step_down():
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.02]) == [0.02]
    assert holm([]) == []


# -- primary metrics -------------------------------------------------------------------------


def test_primary_metric_per_family():
    bw = ["bandwidth", "dram_bandwidth", "seconds", "bandwidth[avx2]", "bandwidth[avx2-nt]"]
    assert primary_metrics("bandwidth", bw) == ["bandwidth"]
    assert primary_metrics("latency", ["latency", "tsc_cycles", "core_cycles"]) == ["latency"]
    assert primary_metrics("latency", ["latency", "tsc_cycles", "bandwidth"]) == ["latency"]
    assert primary_metrics("matrix", ["latency", "bandwidth"]) == ["latency", "bandwidth"]
    assert primary_metrics("compress", ["decompress_sum", "plain_sum", "speedup", "ratio"]) \
        == ["decompress_sum"]
    assert primary_metrics("compute", ["single_ghz", "all_busy_ghz", "tsc_ghz"]) \
        == ["all_busy_ghz"]
    assert primary_metrics("compute", ["gflops", "seconds", "pct_of_peak"]) == ["gflops"]
    assert primary_metrics("storage", ["iops", "bandwidth"]) == ["iops"]   # not listed: 1st
    for fam in ("bandwidth", "latency", "c2c", "matrix", "compress", "compute", "storage"):
        assert family_primary(fam), fam


# -- runs as the unit ------------------------------------------------------------------------

def _run(tag: str, medians: dict[str, float], seed: int = 0, rel: float = 0.001):
    """A run whose metric m (family bandwidth, case m) has 5 repetitions around medians[m]."""
    return make_run({"cfg": tag}, [make_result(case=m, values=noisy(v, 5, rel, seed + i))
                                   for i, (m, v) in enumerate(medians.items())])


def test_repetitions_are_not_samples():
    # Three runs per side, each with 20 tight repetitions; the runs differ by 2 % among
    # themselves, which dwarfs the 1.5 % shift. Pooled repetitions would call the shift
    # significant; runs do not.
    a = [make_run({}, [make_result(values=noisy(c, 20, 0.002, s))])
         for s, c in enumerate((98, 100, 102))]
    b = [make_run({}, [make_result(values=noisy(c, 20, 0.002, s + 9))])
         for s, c in enumerate((99.5, 101.5, 103.5))]
    (d,) = compare_runs(a, b).diffs
    assert (d.n_a, d.n_b, d.reps_a, d.reps_b) == (3, 3, 60, 60)
    assert d.verdict == "no significant change" and d.p_value > 0.2
    pooled = [v for r in a for v in r.results[0].metrics["bandwidth"].values]
    pooled_b = [v for r in b for v in r.results[0].metrics["bandwidth"].values]
    assert welch(pooled, pooled_b).p < 1e-3      # what pooling repetitions would claim
    assert d.run_sd_pct > 1.5 and d.within_sd_a_pct < 0.5


def test_single_run_sides_are_too_few():
    a, b = [_run("A", {"x": 100, "y": 100}, rel=0.01)], [_run("B", {"x": 130, "y": 100.2},
                                                             rel=0.01)]
    x, y = compare_runs(a, b).diffs
    assert x.verdict == "too few" and x.change_pct == pytest.approx(30, abs=2)
    assert y.verdict == "below noise"             # inside the within-run sd
    for d in (x, y):
        assert not d.significant and math.isnan(d.p_value) and math.isnan(d.p_adjusted)
        assert 0.3 < d.noise_pct < 2 and d.within_sd_a_pct > 0.3
    # Two runs per side are still too few; three are enough
    a2 = [_run("A", {"x": 100}, s) for s in range(MIN_RUNS - 1)]
    b2 = [_run("B", {"x": 130}, s + 5) for s in range(MIN_RUNS - 1)]
    assert compare_runs(a2, b2).diffs[0].verdict == "too few"
    a3 = a2 + [_run("A", {"x": 100}, 40)]
    b3 = b2 + [_run("B", {"x": 130}, 41)]
    assert compare_runs(a3, b3).diffs[0].verdict == "better"


def test_correction_turns_a_lone_pass_into_a_fail():
    # x: run medians of A and B give p ~ 0.016 (+3 %, run-to-run sd 1.5 %): a change alone,
    # not among 30 metrics (Holm: 30 x 0.016 > 0.05).
    xa, xb = [100, 102, 98, 101, 99], [103, 104.5, 101, 104, 102]
    others = {f"m{k}": 50.0 + k for k in range(29)}
    a = [_run("A", {"x": v, **others}, seed=10 * i) for i, v in enumerate(xa)]
    b = [_run("B", {"x": v, **others}, seed=10 * i + 5) for i, v in enumerate(xb)]
    alone = compare_runs([_run("A", {"x": v}) for v in xa], [_run("B", {"x": v}) for v in xb])
    (d,) = alone.diffs
    assert 0.002 < d.p_value < ALPHA and d.verdict == "better" and alone.tested == 1
    many = compare_runs(a, b)
    x = next(d for d in many.diffs if d.case == "x")
    assert many.tested == 30 and x.p_value == pytest.approx(d.p_value, rel=0.2)
    assert x.p_adjusted == pytest.approx(30 * x.p_value) and x.p_adjusted > ALPHA
    assert x.verdict == "no significant change"
    assert "Holm-Bonferroni over the 30 metrics" in many.method


def test_noise_floor_and_min_effect():
    # Significant but smaller than the run-to-run sd: not a change
    rng = random.Random(1)
    a = [_run("A", {"x": v}) for v in (100, 104, 96, 102, 98, 101, 99, 103, 97, 100)]
    b = [_run("B", {"x": v * 1.025 + rng.uniform(-0.01, 0.01)})
         for v in (100, 104, 96, 102, 98, 101, 99, 103, 97, 100)]
    (d,) = compare_runs(a, b).diffs
    assert d.p_adjusted < ALPHA and d.run_sd_pct > abs(d.change_pct)
    assert d.verdict == "below noise"


def test_sides_without_spread_are_not_tested():
    """fio's bucketed p99 repeats one value in every run: a 1.8 % step between the sides
    is the bucket's width, not a significant change (it used to get p = 0)."""
    def p99(us: float) -> list:
        return [make_run({}, [make_result("storage", "randread", [us] * 3, "us",
                                          higher=False)]) for _ in range(3)]
    (d,) = compare_runs(p99(7503.872), p99(7634.944)).diffs
    assert d.verdict == "no spread" and not d.significant
    assert math.isnan(d.p_value) and math.isnan(d.p_adjusted) and compare_runs(
        p99(7503.872), p99(7634.944)).tested == 0
    assert d.note == ("no spread: difference +1.75 %, not tested (every run of each side "
                      "gave one value)")
    assert compare_runs(p99(7503.872), p99(7634.944), min_effect_pct=0).diffs[0].verdict \
        == "no spread"
    (d,) = compare_runs(p99(7503.872), p99(7503.872)).diffs
    assert d.verdict == "equal within resolution" and math.isnan(d.p_value)
    # one side with spread is tested as before
    varied = [make_run({}, [make_result("storage", "randread", [v] * 3, "us", higher=False)])
              for v in (7634.944, 7700.0, 7650.0)]
    (d,) = compare_runs(p99(7503.872), varied).diffs
    assert math.isfinite(d.p_value) and d.verdict in ("worse", "no significant change")


def test_lower_is_better_and_odd_values():
    a = [make_run({}, [make_result("c2c", "x", noisy(50, 5, 0.01, s), "ns", higher=False)])
         for s in range(4)]
    b = [make_run({}, [make_result("c2c", "x", noisy(60, 5, 0.01, s + 9), "ns", higher=False)])
         for s in range(4)]
    assert compare_runs(a, b).diffs[0].verdict == "worse"
    assert compare_runs(b, a).diffs[0].verdict == "better"
    # Non-positive values: compared relative to A's median instead of on logs; all zero: no
    # change can be measured, and nothing breaks.
    zeros = [make_run({}, [make_result(values=[0.0, 0.0])]) for _ in range(6)]
    (d,) = compare_runs(zeros[:3], zeros[3:]).diffs
    assert math.isnan(d.change_pct) and d.verdict == "equal within resolution"
    signed = [make_run({}, [make_result(values=[v])]) for v in (-1.0, 1.0, 2.0, -1.2, 0.9, 2.1)]
    (d,) = compare_runs(signed[:3], signed[3:]).diffs
    assert d.p_value > 0.5 and d.verdict == "no significant change"


# -- simulated quick runs: false positives and power -------------------------------------------

def _flagged(cmp) -> list[str]:
    return [f"{d.family}/{d.case}/{d.metric}" for d in cmp.diffs if d.significant]


def test_identical_configurations_make_no_claim():
    a, b = sides(seed=2024, n_a=5, n_b=5)
    cmp = compare_runs(a, b)
    assert len(cmp.diffs) == 29 and all(d.primary for d in cmp.diffs)
    assert {d.verdict for d in cmp.diffs} == {"no significant change"}
    everything = compare_runs(a, b, all_metrics=True)
    assert len(everything.diffs) == 79 and not _flagged(everything)


def _naive_flags(a, b) -> list[str]:
    """The old way: every repetition of every run a sample, no correction."""
    def pooled(runs):
        out: dict[str, list[float]] = {}
        for r in runs:
            for x in r.results:
                name = primary_metrics(x.family, list(x.metrics))[0]
                out.setdefault(f"{x.family}/{x.case}", []).extend(x.metrics[name].values)
        return out
    pa, pb = pooled(a), pooled(b)
    return [k for k in pa if len(pa[k]) > 1 and welch(pa[k], pb[k]).p < ALPHA]


def test_false_positive_rate_on_identical_runs():
    # 200 comparisons of 5 vs 5 identical simulated quick runs (79 metrics, 29 primary, run
    # offsets + repetition noise). Holm keeps the chance of any false claim <= 5 %.
    # A side with fewer runs (3) is tested as well: the rate must hold there too.
    trials, any_flag, naive_flag = 200, 0, 0
    for seed in range(trials):
        n = 5 if seed % 2 else MIN_RUNS
        a, b = sides(seed, n, n)
        any_flag += bool(_flagged(compare_runs(a, b)))
        naive_flag += bool(_naive_flags(a, b))
    assert any_flag <= 0.05 * trials, f"{any_flag} of {trials} identical comparisons flagged"
    assert naive_flag >= 0.9 * trials     # the bound above is one the old method fails


def test_planted_ten_percent_is_found():
    key = "bandwidth/triad avx2 64T/bandwidth"
    found, others, trials = 0, 0, 60
    for seed in range(trials):
        a, b = sides(1000 + seed, 5, 5, {key: 1.10})
        cmp = compare_runs(a, b)
        d = next(d for d in cmp.diffs if f"{d.family}/{d.case}/{d.metric}" == key)
        found += d.verdict == "better"
        others += bool([k for k in _flagged(cmp) if k != key])
    assert found >= 0.95 * trials, f"found in {found} of {trials}"
    assert others <= 0.05 * trials
    # Latency 10 % higher is worse; found among all 79 metrics as well
    a, b = sides(7, 5, 5, {"latency/tlb 1 GiB cpu0 node1/latency": 1.10})
    cmp = compare_runs(a, b, all_metrics=True)
    # the derived cycle counts move with it, nothing else does
    assert _flagged(cmp) == [f"latency/tlb 1 GiB cpu0 node1/{m}"
                             for m in ("latency", "tsc_cycles", "core_cycles")]
    assert {d.verdict for d in cmp.diffs if d.significant} == {"worse"}


# -- groups, configuration, CLI ----------------------------------------------------------------

def test_groups_and_config_differences():
    a = [make_run({"nps": "1"}, [make_result(values=noisy(100, 5, 0.01, s))],
                  memory_mode="NPS1") for s in (1, 2, 3)]
    b = [make_run({"nps": "4"}, [make_result(values=noisy(80, 5, 0.01, s)),
                                 make_result("latency", "x", [1.0, 2.0])],
                  memory_mode="NPS4", bios_version="2.0") for s in (4, 5, 6)]
    cmp = compare_runs(a, b)
    (d,) = cmp.diffs
    assert d.n_a == 3 and d.reps_a == 15 and d.verdict == "worse"
    assert d.ci_high < 0.85 and d.ci_low > 0.75
    assert cmp.config["tag:nps"] == (["1"], ["4"])
    assert cmp.config["memory_mode"] == (["NPS1"], ["NPS4"])
    assert cmp.config["bios_version"] == (["1.0"], ["2.0"])
    assert "kernel" not in cmp.config
    assert cmp.only_b == ["latency/x/bandwidth"]   # no 'latency' metric: its first one


def test_cli_compare_by_tags(tmp_path, capsys):
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        for s in range(3):
            st.save_run(make_run({"nps": "1"}, [make_result(values=noisy(100, 6, 0.01, s))]))
            st.save_run(make_run({"nps": "4"}, [make_result(values=noisy(125, 6, 0.01, s + 9))]))
    assert cli(["compare", "nps=1", "nps=4", "--store", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config_differences"]["tag:nps"] == {"a": ["1"], "b": ["4"]}
    assert out["correction"] == "Holm-Bonferroni" and "Holm-Bonferroni" in out["method"]
    assert out["command"] == "compare" and out["errors"] == []
    (m,) = out["results"]
    assert m["significant"] and m["verdict"] == "better" and m["change_pct"] > 15
    assert m["n_a"] == 3 and m["reps_a"] == 18
    assert cli(["compare", "nps=1", "nps=4", "--store", str(db)]) == 0
    text = capsys.readouterr().out
    assert "nps" in text and "better" in text and "verdict: 1 better" in text
    assert cli(["compare", "nps=1", "nps=1", "--store", str(db)]) == 2
    assert "same runs" in capsys.readouterr().err
    # one run per side, by id: too few
    with Store.open(db) as st:
        ids = [r.run_id for r in st.load(["nps=1"])], [r.run_id for r in st.load(["nps=4"])]
    assert cli(["compare", ids[0][0], ids[1][0], "--store", str(db)]) == 0
    assert "too few" in capsys.readouterr().out
    # --significant hides rows, not the verdict over all of them
    assert cli(["compare", ids[0][0], ids[1][0], "--store", str(db), "--significant"]) == 0
    text = capsys.readouterr().out
    assert "verdict: 1 too few (of 1 metric;" in text and "too few runs" in text
    assert cli(["compare", ",".join(ids[0]), ",".join(ids[1]), "--store", str(db),
                "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["verdict"] == "better"


def test_cli_scope_flags(tmp_path, capsys):
    db = tmp_path / "runs.db"
    a, b = sides(5, 3, 3)
    with Store.open(db, write=True) as st:
        for r in a + b:
            st.save_run(r)
    # of the 79, 3 are constants (two compression ratios, the TSC clock): not tested
    for args, n, tested in ((["--json"], 29, 29), (["--json", "--all-metrics"], 79, 76),
                            (["--json", "--family", "c2c"], 6, 6),
                            (["--json", "--family", "c2c", "--all-metrics"], 12, 12)):
        assert cli(["compare", "cfg=A", "cfg=B", "--store", str(db), *args]) == 0
        out = json.loads(capsys.readouterr().out)
        assert len(out["results"]) == n and out["tested"] == tested
        assert out["counts"]["equal within resolution"] == n - tested
        assert out["scope"] == ("all" if "--all-metrics" in args else "primary")


def test_terminal_fits_80_columns():
    a, b = sides(3, 5, 5, {"bandwidth/triad avx2 64T/bandwidth": 1.1})
    for cmp in (compare_runs(a, b), compare_runs(a, b, all_metrics=True),
                compare_runs(a[:1], b[:1])):
        con = Console(width=80, record=True, highlight=False)
        print_comparison(cmp, con)
        text = con.export_text()
        assert max(len(line) for line in text.splitlines()) <= 80
        assert "…" not in text                           # nothing cut
        assert "verdict:" in text
    assert "1 better" in text or "too few" in text


def test_metric_missing_in_some_runs_counts_runs_that_have_it():
    a = [_run("A", {"x": 100, "y": 5}, s) for s in range(3)]
    b = [_run("B", {"x": 100}, s + 3) for s in range(2)] + [_run("B", {"x": 100, "y": 5}, 9)]
    cmp = compare_runs(a, b)
    y = next(d for d in cmp.diffs if d.case == "y")
    assert (y.n_a, y.n_b) == (3, 1) and y.verdict in ("too few", "below noise")


def test_unvalidated_results_are_left_out():
    bad = BenchResult("bandwidth", "x", {}, {"bandwidth": Metric("bandwidth", "GB/s", True,
                                                                 [1.0, 2.0])}, validated=False)
    runs = [make_run({}, [bad]) for _ in range(6)]
    assert compare_runs(runs[:3], runs[3:]).diffs == []


def test_cli_family_names_are_checked(tmp_path, capsys):
    db = tmp_path / "runs.db"
    a, b = sides(5, 3, 3)
    with Store.open(db, write=True) as st:
        for r in a + b:
            st.save_run(r)
    assert cli(["compare", "cfg=A", "cfg=B", "--family", "nosuch", "--store", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown family 'nosuch'; families: bandwidth, c2c" in err
    # a stage name names its family: peaks is the compute family
    assert cli(["compare", "cfg=A", "cfg=B", "--family", "peaks", "--json",
                "--store", str(db)]) == 0
    assert {d["family"] for d in json.loads(capsys.readouterr().out)["results"]} <= {"compute"}
    for bad in ("-1", "nan", "inf"):
        assert cli(["compare", "cfg=A", "cfg=B", "--min-effect", bad, "--store", str(db)]) == 2
        assert "--min-effect must be" in capsys.readouterr().err


def test_terminal_separates_thousands_like_the_other_tables():
    from numascope.report.terminal import _num
    assert _num(14652.0) == "14,652" and _num(-999_999.0) == "-999,999"
    assert _num(999.5) == "999.5" and _num(2.5e6) == "2.5e6"
    a, b = sides(3, 5, 5, {"bandwidth/triad avx2 64T/bandwidth": 1.1})
    for side in (a, b):
        for rec in side:
            for res in rec.results:
                for m in res.metrics.values():
                    m.values = [v * 1000 + 14_000 for v in m.values]
    con = Console(width=80, record=True, highlight=False)
    print_comparison(compare_runs(a, b, all_metrics=True), con)
    text = con.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80, text
    assert "…" not in text and "," in text.split("B vs A")[1], text
