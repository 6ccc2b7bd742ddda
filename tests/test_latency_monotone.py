"""Loaded latency: a curve whose latency falls as bandwidth rises, beyond the samples' own
noise, is flagged (note, terminal warning, figure); noise alone is not."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from numascope.families.latency import bench as lat
from numascope.families.latency import family
from numascope.families.latency.command import _print
from numascope.families.latency.figures import figures
from numascope.results.record import BenchResult, Metric


def point(delay: int, gbs: float, ns: list[float], cpu: int = 0) -> BenchResult:
    return BenchResult(
        family="latency", case=f"loaded delay={delay} 1 loaders stride 256",
        params={"kind": "loaded", "delay": delay, "bytes": 1 << 30, "mode": "tlb", "cpu": cpu,
                "load_cpus": [1], "load_bytes": 1 << 28, "node": None, "samples": len(ns),
                "loads_per_sample": 1 << 16, "stride": 256},
        metrics={"latency": Metric("latency", "ns", False, list(ns)),
                 "tsc_cycles": Metric("tsc_cycles", "TSC cycles", False, [x * 2.6 for x in ns]),
                 "bandwidth": Metric("bandwidth", "GB/s", True, [gbs])})


def monotone() -> list[BenchResult]:
    return [point(10000, 0.5, [130, 131, 130, 132, 131]),
            point(800, 1.3, [131, 132, 131, 133, 132]),
            point(100, 5.0, [140, 141, 139, 142, 140]),
            point(0, 10.0, [180, 178, 183, 181, 179])]


def non_monotone() -> list[BenchResult]:
    """The reported case: 134 ns at 1.3 GB/s, 123 ns at 10 GB/s, tight samples."""
    return [point(10000, 0.5, [133, 134, 133, 135, 134]),
            point(800, 1.3, [134, 133, 135, 134, 134]),
            point(100, 5.0, [128, 129, 128, 130, 129]),
            point(0, 10.0, [123, 124, 122, 123, 124])]


def noisy_but_ok() -> list[BenchResult]:
    """p50 drops by 3 ns, but each point's samples spread over +-8 ns: within noise."""
    return [point(800, 1.3, [126, 134, 142, 130, 138]),
            point(0, 10.0, [123, 131, 139, 127, 135])]


def test_monotone_curve_has_no_inversion():
    assert lat.inversions(monotone()) == []


def test_noisy_curve_within_its_own_spread_is_not_flagged():
    assert lat.inversions(noisy_but_ok()) == []


def test_non_monotone_curve_is_flagged_against_the_worst_earlier_point():
    invs = lat.inversions(non_monotone())
    by_high = {inv.high.params["delay"]: inv for inv in invs}
    assert set(by_high) == {100, 0}
    inv = by_high[0]
    assert inv.low.params["delay"] in (10000, 800)
    assert inv.drop_ns == pytest.approx(11.0) and inv.noise_ns < inv.drop_ns
    assert "not monotone" in inv.note() and "10.0 GB/s" in inv.note()


def test_the_same_drop_with_tight_samples_is_flagged_but_with_wide_samples_is_not():
    tight = [point(800, 1.3, [134] * 5), point(0, 10.0, [131] * 5)]
    wide = [point(800, 1.3, [130, 134, 138, 132, 136]), point(0, 10.0, [127, 131, 135, 129, 133])]
    assert len(lat.inversions(tight)) == 1
    assert lat.inversions(wide) == []


def test_a_drop_below_one_percent_is_never_flagged():
    assert lat.inversions([point(800, 1.3, [134.0] * 3), point(0, 10.0, [133.0] * 3)]) == []


def test_points_are_ordered_by_bandwidth_not_by_delay():
    # listed out of order; by bandwidth the curve rises: no inversion
    pts = [point(0, 10.0, [180] * 3), point(10000, 0.5, [130] * 3), point(100, 5.0, [140] * 3)]
    assert lat.inversions(pts) == []


def test_suite_style_one_delay_per_case_gets_the_note_when_the_pair_completes():
    b = family.Latency()
    pts = non_monotone()
    # the suite measures delay 0 first (most bandwidth), then the lighter loads
    for r in reversed(pts):
        b._on_curve(r)
    flagged = [r.params["delay"] for r in pts if any("not monotone" in n for n in r.notes)]
    assert flagged and set(flagged) <= {10000, 800, 100}
    b2 = family.Latency()
    for r in monotone():
        assert not any("not monotone" in n for n in b2._on_curve(r).notes)


def test_different_curves_are_not_compared():
    b = family.Latency()
    b._on_curve(point(800, 1.3, [134] * 5, cpu=0))
    r = b._on_curve(point(0, 10.0, [120] * 5, cpu=1))
    assert not any("not monotone" in n for n in r.notes)


def _terminal(results) -> str:
    buf = io.StringIO()
    _print(results, {}, Console(file=buf, width=200, color_system=None))
    return buf.getvalue()


def test_terminal_warns_on_a_non_monotone_curve_only():
    assert "warning: loaded latency not monotone" in _terminal(non_monotone())
    assert "not monotone" not in _terminal(monotone())
    assert "one pointer per 256 B" in _terminal(monotone())


def test_figure_marks_a_non_monotone_curve():
    [(title, fig)] = figures(non_monotone())
    assert "not monotone" in title and "WARNING" in fig.axes[0].get_title()
    [(title, fig)] = figures(monotone())
    assert "not monotone" not in title and "WARNING" not in fig.axes[0].get_title()
