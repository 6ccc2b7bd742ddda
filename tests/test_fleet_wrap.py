"""Fleet text at 80 columns never breaks a metric's name (family/case/metric) across lines,
unless the name alone is wider than a line."""

from __future__ import annotations

from numascope.fleet.command import WIDTH
from numascope.fleet.command import para as _para

NAME = "latency/chains first core of L3 kind 0 16 chains/latency_p999"


def test_a_metric_name_is_kept_whole_on_one_line(capsys):
    for pad in range(0, 40, 3):
        _para(f"{'n' * pad}-host  [outlier]  {NAME}: 312 ns vs median 200", "  ", keep=(NAME,))
        lines = capsys.readouterr().out.splitlines()
        assert max(map(len, lines)) <= WIDTH
        assert any(NAME in line for line in lines), lines


def test_a_name_wider_than_a_line_is_broken_as_a_last_resort(capsys):
    long = "x/" + "y" * 100 + "/z"
    _para(f"host {long}", "  ", keep=(long,))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 2 and max(map(len, lines)) <= WIDTH
    assert "".join(line.strip() for line in lines).replace("host", "", 1) == long
