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
