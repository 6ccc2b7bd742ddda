import math

import pytest
from test_store_helpers import make_result, make_run, noisy

from numascope.analysis.compare import compare_runs, compare_samples
from numascope.analysis.stats import bootstrap_median_ratio, mann_whitney_u
from numascope.cli import main as cli
from numascope.results.store import Store


def test_mwu_exact_small_samples():
    # Completely separated 3 vs 3: the most extreme of C(6,3)=20 orderings, two-sided.
    r = mann_whitney_u([1, 2, 3], [4, 5, 6])
    assert r.method == "exact" and r.u == 0 and r.p == pytest.approx(2 / 20)
    # 5 vs 5 separated: 2 / C(10,5) = 2/252
    assert mann_whitney_u([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]).p == pytest.approx(2 / 252)
    # Interleaved samples are not different.
    assert mann_whitney_u([1, 3, 5, 7], [2, 4, 6, 8]).p > 0.5


def test_mwu_exact_matches_permutation_count():
    import itertools
    a, b = [1.1, 2.7, 3.3, 8.0], [2.0, 4.5, 5.0, 6.1, 7.2]
    pooled = a + b
    u_obs = mann_whitney_u(a, b).u
    us = []
    for idx in itertools.combinations(range(9), 4):
        x = [pooled[i] for i in idx]
        y = [pooled[i] for i in range(9) if i not in idx]
        us.append(sum(1 for xi in x for yi in y if xi > yi))
    lo = min(u_obs, 20 - u_obs)
    p = 2 * sum(1 for u in us if u <= lo) / len(us)
    assert mann_whitney_u(a, b).p == pytest.approx(min(1.0, p))


def test_mwu_normal_with_ties():
    r = mann_whitney_u([1, 1, 2, 2, 3] * 6, [3, 3, 4, 4, 5] * 6)
    assert r.method == "normal" and r.p < 1e-6
    assert mann_whitney_u([5.0] * 10, [5.0] * 10).p == 1.0


def test_twenty_percent_is_significant_half_percent_is_not():
    a = noisy(100.0, 10, 0.01, seed=1)
    faster = noisy(120.0, 10, 0.01, seed=2)
    same = noisy(100.5, 10, 0.02, seed=3)   # 0.5 % shift inside 2 % noise
    d = compare_samples(a, faster, higher_is_better=True)
    assert d["verdict"] == "better" and d["p_value"] < 0.01
    assert d["change_pct"] == pytest.approx(20, abs=3)
    assert d["ci_low"] > 1.1
    d = compare_samples(a, same, higher_is_better=True)
    assert d["verdict"] == "no significant change"
    assert d["ci_low"] <= 1.0 <= d["ci_high"] and d["p_value"] > 0.05
    # Tight repetitions make 0.5 % statistically real, yet below the 1 % practical threshold.
    tight_a, tight_b = noisy(100.0, 10, 0.0005, 6), noisy(100.5, 10, 0.0005, 7)
    assert compare_samples(tight_a, tight_b, True)["verdict"] == "below threshold"
    assert compare_samples(tight_a, tight_b, True, min_effect_pct=0)["verdict"] == "better"
    # Lower is better (latency): +20 % is worse.
    assert compare_samples(a, faster, higher_is_better=False)["verdict"] == "worse"
    assert compare_samples([1.0], [2.0], True)["verdict"] == "too few"


def test_bootstrap_interval_contains_true_ratio():
    lo, hi = bootstrap_median_ratio(noisy(50, 30, 0.02, 4), noisy(60, 30, 0.02, 5))
    assert lo < 1.2 < hi and hi - lo < 0.05
    assert all(math.isnan(x) for x in bootstrap_median_ratio([], [1.0]))


def test_groups_pool_and_config_differences():
    a = [make_run({"nps": "1"}, [make_result(values=noisy(100, 5, 0.01, s))],
                  memory_mode="NPS1") for s in (1, 2)]
    b = [make_run({"nps": "4"}, [make_result(values=noisy(80, 5, 0.01, s)),
                                 make_result("latency", "x", [1.0, 2.0])],
                  memory_mode="NPS4", bios_version="2.0") for s in (3, 4)]
    cmp = compare_runs(a, b)
    (d,) = cmp.diffs
    assert d.n_a == 10 and d.n_b == 10 and d.verdict == "worse"
    assert cmp.config["tag:nps"] == (["1"], ["4"])
    assert cmp.config["memory_mode"] == (["NPS1"], ["NPS4"])
    assert cmp.config["bios_version"] == (["1.0"], ["2.0"])
    assert "kernel" not in cmp.config
    assert cmp.only_b == ["latency/x/bandwidth"]


def test_cli_compare_by_tags(tmp_path, capsys):
    import json
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        for s in (1, 2):
            st.save_run(make_run({"nps": "1"}, [make_result(values=noisy(100, 6, 0.01, s))]))
        st.save_run(make_run({"nps": "4"}, [make_result(values=noisy(125, 6, 0.01, 9))]))
    assert cli(["compare", "nps=1", "nps=4", "--store", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config_differences"]["tag:nps"] == {"a": ["1"], "b": ["4"]}
    (m,) = out["metrics"]
    assert m["significant"] and m["verdict"] == "better" and m["change_pct"] > 15
    assert cli(["compare", "nps=1", "nps=4", "--store", str(db)]) == 0
    text = capsys.readouterr().out
    assert "nps" in text and "better" in text
    assert cli(["compare", "nps=1", "nps=1", "--store", str(db)]) == 2
    assert "same runs" in capsys.readouterr().err


def test_too_few_repetitions_to_ever_be_significant():
    from numascope.analysis.stats import smallest_p
    assert smallest_p(3, 3) == pytest.approx(0.1)
    assert smallest_p(5, 5) < 0.01
    # 3 vs 3, every B far above every A: still no test outcome could reach 5 %
    assert compare_samples([1.0, 1.01, 0.99], [2.0, 2.02, 1.98], True)["verdict"] == "too few"
    assert compare_samples([1.0, 1.01, 0.99, 1.02, 0.98],
                           [2.0, 2.02, 1.98, 2.01, 1.99], True)["verdict"] == "better"
