"""The STREAM floor is said as applied: `fleet report` (text, JSON, the method) and the HTML
report claim it only for the nodes it was checked on (a known DRAM peak and a DRAM-resident
triad)."""

from __future__ import annotations

import json

from fleet_synth import fleet, wide_fleet

from numascope.cli import main
from numascope.fleet import outliers
from numascope.results.store import Store


def _report(tmp_path, runs, capsys, *more: str) -> str:
    db = tmp_path / "f.db"
    with Store.open(db, write=True) as st:
        for r in runs:
            st.save_run(r)
    assert main(["fleet", "report", "--store", str(db), *more]) == 0
    return capsys.readouterr().out


def test_no_dram_peak_no_floor_claimed(tmp_path, capsys):
    runs = wide_fleet(8, {}, seed=1, noise=(0.005, 0.01))   # no host.peaks
    text = " ".join(_report(tmp_path, runs, capsys).split())
    assert ("the STREAM floor not applied (no node has a known DRAM peak and a "
            "DRAM-resident triad)") in text
    assert "72 %" not in text and "72%" not in text
    a = outliers.analyze(runs)
    assert a.floor_nodes == 0 and "not applied" in a.method() and "72%" not in a.method()
    assert main(["fleet", "report", "--store", str(tmp_path / "f.db"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["floor_nodes"] == 0 and "not applied" in doc["method"]


def test_the_floor_is_claimed_where_it_was_applied(tmp_path, capsys):
    runs = fleet(8, {}, seed=2, spread=(0.01, 0.02))     # every node with a DRAM peak
    text = " ".join(_report(tmp_path, runs, capsys).split())
    assert f"or STREAM (best triad) under {outliers.FLOOR:.0%} of the node's DRAM peak)" in text
    del runs[0].host["peaks"]
    a = outliers.analyze(runs)
    assert a.floor_nodes == 7 and "applied to 7 of 8 nodes" in a.method()


def test_the_html_report_says_the_floor_as_applied():
    from numascope.report.fleet_html import fleet_section
    html = fleet_section(wide_fleet(6, {}, seed=3, noise=(0.005, 0.01)), with_figures=False)
    assert "STREAM floor not applied" in html and "72%" not in html
