"""The across-runs figure: bars per configuration (runs grouped by their tags) with the
significance `compare` computes, benchstat's way: "~" where the change is not significant,
the change and adjusted p where it is; constants (no spread) written "untested"."""

from __future__ import annotations

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from numascope.analysis.compare import compare_runs
from numascope.console import show
from numascope.plotting import marks
from numascope.report.figures import comparison, render
from tests.test_store_helpers import make_result, make_run


def _side(tag: str, per_run: list[list[float]]):
    return [make_run({"nps": tag}, [make_result(values=v)]) for v in per_run]


def _panel(runs):
    (title, fig), = comparison.figures(runs)
    ax = fig.axes[0]
    return title, fig, ax, [t.get_text() for t in ax.texts]


def _verdict(a, b) -> str:
    return compare_runs(a, b).diffs[0].verdict


def test_significant_change_is_written_with_its_p_and_no_tilde():
    a = _side("1", [[100.0, 101.0, 99.0], [100.5, 100.0, 101.0], [99.5, 100.0, 99.0]])
    b = _side("4", [[120.0, 121.0, 119.0], [120.5, 121.0, 120.0], [119.0, 120.0, 119.5]])
    assert _verdict(a, b) == "better"
    title, fig, ax, texts = _panel(a + b)
    assert title == "Across runs: bandwidth"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["nps=1", "nps=4"]
    d = compare_runs(a, b).diffs[0]
    assert [p.get_height() for p in ax.patches] == [d.median_a, d.median_b]
    assert not any(comparison.NOT_SIGNIFICANT in t for t in texts)
    assert any(f"{d.change_pct:+.1f} %" in t and "p=" in t for t in texts)
    assert any(show(d.median_b) in t for t in texts)
    assert "GB/s" in ax.get_ylabel() and marks.caption_of(fig)


def test_three_runs_zero_spread_equal_is_tilde_and_different_is_untested():
    same = _side("1", [[100.0] * 5] * 3) + _side("4", [[100.0] * 5] * 3)
    assert _verdict(same[:3], same[3:]) == "equal within resolution"
    *_, texts = _panel(same)
    assert any(t.startswith(comparison.NOT_SIGNIFICANT + "\n") for t in texts)
    moved = _side("1", [[100.0] * 5] * 3) + _side("4", [[120.0] * 5] * 3)
    assert _verdict(moved[:3], moved[3:]) == "no spread"
    *_, texts = _panel(moved)
    assert not any(comparison.NOT_SIGNIFICANT in t for t in texts)
    assert any("+20.0 % untested" in t for t in texts)


def test_quantised_values_not_significant_show_tilde():
    a = _side("1", [[100.0, 100.0, 110.0], [110.0, 110.0, 100.0], [100.0, 100.0, 100.0]])
    b = _side("4", [[110.0, 110.0, 110.0], [100.0, 100.0, 110.0], [110.0, 100.0, 110.0]])
    assert _verdict(a, b) not in ("better", "worse")
    _title, _fig, ax, texts = _panel(a + b)
    assert any(t.startswith("~\n") for t in texts)
    # error bars: the lowest and highest run's median
    segs = [s for c in ax.collections for s in c.get_segments()]
    assert any(s[0][1] == 100.0 and s[1][1] == 110.0 for s in segs)


def test_one_run_per_side_is_never_significant_and_one_run_draws_nothing():
    a = _side("1", [[100.0, 101.0, 99.0]])
    b = _side("4", [[150.0, 151.0, 149.0]])
    *_, texts = _panel(a + b)
    assert any(t.startswith("~\n") for t in texts)       # "too few": no claim
    assert comparison.figures(_side("1", [[1.0, 2.0]])) == []


def test_configurations_named_by_the_tags_that_differ():
    runs = [make_run({"nps": n, "host": "x"}) for n in ("1", "4", "1")]
    confs = comparison.configurations(runs)
    assert [(n, len(rs)) for n, rs in confs] == [("nps=1", 2), ("nps=4", 1)]
    same = [make_run({"host": "x"}) for _ in range(2)]
    assert [n for n, _ in comparison.configurations(same)] == [r.run_id for r in same]


def test_comparison_svg_has_the_numbers_and_no_script():
    a = _side("1", [[100.0, 101.0, 99.0]] * 3)
    b = _side("4", [[80.0, 81.0, 79.0]] * 3)
    (title, fig), = comparison.figures(a + b)
    h = render.embed(title, fig, marks.caption_of(fig))
    assert "<script" not in h and "100" in h and "80" in h and "nps=4" in h


def test_smoke_runs_are_not_set_beside_measured_ones():
    a = _side("1", [[100.0, 101.0, 99.0]] * 3)
    b = _side("4", [[80.0, 81.0, 79.0]] * 3)
    for r in b:
        r.profile = "smoke"
    assert comparison.figures(a + b) == []
