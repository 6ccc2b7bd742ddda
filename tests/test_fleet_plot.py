"""fleet report --plot shows every node: each node's point is drawn above the median band
(drawn under it, every node inside the band was hidden, and the plot looked as if it held
only the flagged ones)."""

from __future__ import annotations

from fleet_synth import fleet

from numascope.fleet import outliers
from numascope.report.figures.fleet import fleet_figures


def test_every_node_is_a_visible_point_above_the_band():
    runs = fleet(12, {3: {"bandwidth/triad compact 96T/bandwidth": 0.5}}, seed=3,
                 fleet_id="p", spread=(0.02, 0.03))
    ((_, fig),) = fleet_figures(outliers.analyze(runs))
    for ax in fig.axes:
        (points,) = ax.collections[:1]
        assert len(points.get_offsets()) == 12                  # every node, not the flagged
        band = [p for p in ax.patches]
        assert band and all(points.get_zorder() > p.get_zorder() for p in band)
        assert all(points.get_zorder() > ln.get_zorder() for ln in ax.lines)


def test_fleet_figure_has_units_the_median_written_and_a_caption():
    from numascope.console import show
    from numascope.plotting.marks import caption_of
    runs = fleet(12, {3: {"bandwidth/triad compact 96T/bandwidth": 0.5}}, seed=3,
                 fleet_id="p", spread=(0.02, 0.03))
    a = outliers.analyze(runs)
    ((_, fig),) = fleet_figures(a)
    assert "practical gap" in caption_of(fig)
    for ax in fig.axes:
        assert "(" in ax.get_ylabel()
        med = ax.lines[0].get_ydata()[0]
        assert f"median {show(float(med))}" in [t.get_text() for t in ax.get_legend().texts]
