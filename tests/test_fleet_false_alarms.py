"""False alarms of the fleet screen at any fleet size (numascope.fleet.screen): synthetic
fleets of the quick run's 20 metrics (7 families), generated here from seeds, 3-5 % node-to-
node noise, a few nodes planted >= 15 % worse on every metric. Every planted node is found
and at most 3 healthy ones are flagged, at 1,000 and 10,000 nodes (50,000: benchmarks/
fleet_scale.py); a metric's own spread sets how much worse a flagged node must be."""

from __future__ import annotations

import numpy as np
import pytest
from fleet_synth import wide_fleet

from numascope.fleet import outliers, screen


def _planted(n: int, count: int, effect: float, offset: int = 3) -> dict[int, float]:
    return {i: effect for i in range(offset, n, n // count)}


def _found(a: outliers.Analysis, planted: dict[int, float]) -> tuple[set[str], set[str]]:
    flagged = {f.host for f in a.flags if f.kind == "outlier"}
    want = {f"n{i:05d}" for i in planted}
    return want - flagged, flagged - want


@pytest.mark.parametrize(("seed", "noise", "effect", "count"), [
    (21, (0.03, 0.03), 0.15, 10), (22, (0.05, 0.05), 0.15, 10), (23, (0.03, 0.05), 0.20, 10),
    (24, (0.03, 0.05), 0.15, 3), (25, (0.05, 0.05), 0.30, 25), (26, (0.03, 0.05), 0.0, 1)])
def test_1000_nodes_every_planted_node_found_at_most_3_healthy_flagged(seed, noise, effect,
                                                                        count):
    planted = _planted(1000, count, effect) if effect else {}
    a = outliers.analyze(wide_fleet(1000, planted, seed, noise))
    missed, false = _found(a, planted)
    assert not missed, sorted(missed)
    assert len(false) <= 3, sorted(false)
    assert a.multiple_testing and a.to_dict()["fdr"] == screen.Q


def test_10000_nodes_with_5_percent_noise_the_10_planted_found_at_most_3_others():
    planted = _planted(10_000, 10, 0.15)
    a = outliers.analyze(wide_fleet(10_000, planted, 31, (0.05, 0.05)))
    missed, false = _found(a, planted)
    assert not missed and len(false) <= 3, (sorted(missed), sorted(false))


def test_10000_healthy_nodes_a_fixed_z_limit_floods_the_fleet_the_screen_does_not():
    runs = wide_fleet(10_000, {}, 32, (0.03, 0.05))
    a = outliers.analyze(runs)
    assert len({f.host for f in a.flags}) <= 3
    # the old rule, one robust-z test at 3.5 per node and metric: dozens of healthy nodes
    fixed = outliers.analyze(runs, z_limit=3.5)
    assert not fixed.multiple_testing and len({f.host for f in fixed.flags}) > 20
    # the per-test limit the screen used grows with the tests made
    assert a.z_limit > outliers.analyze(runs[:1000]).z_limit > 3.5


def test_a_metrics_own_spread_sets_how_much_worse_a_flagged_node_must_be():
    # 4 % spread on every metric: the practical floor is 2 x 4 % = 8 %. A node 7 % worse
    # on all 20 metrics is statistically clear (its metrics' median z, combined) but under
    # every metric's floor: not flagged. A node 15 % worse is.
    runs = wide_fleet(2000, {5: 0.07, 6: 0.15}, 41, (0.04, 0.04))
    a = outliers.analyze(runs)
    flagged = {f.host for f in a.flags}
    assert "n00006" in flagged and "n00005" not in flagged
    g = a.groups[0]
    for m in g.metrics.values():
        # the floor is 2 x the moderated spread; in one group of 2000 that is the group's
        # own robust relative sd (within its small-sample correction, c_2000 - 1 < 0.1 %)
        rel_sd = 1.4826 * m.mad / abs(m.median) * 100
        assert m.floor_pct == pytest.approx(max(5.0, 2 * m.spread_pct))
        assert m.spread_pct == pytest.approx(rel_sd, rel=1e-3)
        assert 7.0 < m.floor_pct < 9.0
    node5 = next(n for n in a.per_node if n["host"] == "n00005")
    assert node5["families"]["all"]["z"] > a.z_limit     # only the floor kept it out
    # and no single metric is statistically conclusive on its own
    assert max(abs(v["z"]) for v in node5["metrics"].values()) < a.z_limit


def test_a_node_worse_on_most_of_one_family_is_flagged_by_that_family():
    runs = wide_fleet(1000, {}, 42, (0.04, 0.04))
    comp = [k for k in outliers.node_values(runs[0]) if k.startswith("compress/")]
    assert len(comp) == 8
    # 13 % worse on 6 of the 8 compression metrics: z ~3 each, no single metric conclusive
    for res in runs[9].results:
        if res.family == "compress" and not res.case.endswith(("zstd-1-shuffle 1T",
                                                                "zstd-1-shuffle 2T")):
            for m in res.metrics.values():
                m.values = [v * 0.87 for v in m.values]
    a = outliers.analyze(runs)
    hits = [f for f in a.flags if f.host == "n00009"]
    assert [f.metric for f in hits] == ["compress/* (8 metrics)"], hits
    assert hits[0].z > a.z_limit and 10 < hits[0].severity < 16
    assert "over the compress metrics" in hits[0].why
    assert len({f.host for f in a.flags}) <= 4


def test_benjamini_hochberg_cutoff():
    p = np.array([0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216])
    # q i / N = 0.005 i: 0.001 <= 0.005 and 0.008 <= 0.010; 0.039 > 0.015 and so on
    assert screen.bh_cutoff(p, 0.05) == pytest.approx(0.010)
    assert screen.bh_cutoff(np.array([0.5, 0.9]), 0.05) is None
    # a p-value that underflowed to 0 is a discovery, not "none"
    assert screen.bh_cutoff(np.array([0.0, 0.9]), 0.05) == pytest.approx(0.025)
    assert screen.z_for(0.05 / 1000) == pytest.approx(3.8906, abs=1e-3)
