"""Adding a family costs one folder plus one line: the toy family (tests/toy_family/: its
options, bench, command and figures, and nowhere else) runs as a stage of `numascope run`
and as its own command, is stored, shown, compared, exported and reported without
touching any other file."""

from __future__ import annotations

import json

import pytest

from numascope import families
from numascope.cli import main


@pytest.fixture
def toy():
    families.add_folder("toy_family", "Toy")        # the one line that adds the family
    from toy_family.bench import Toy
    yield Toy
    families.remove_folder("toy_family")


def test_a_registered_family_runs_stores_compares_exports_and_reports(toy, tmp_path, capsys):
    db = tmp_path / "runs.db"
    for i in range(3):
        assert main(["run", "--stage", "toy", "--store", str(db), "--no-report",
                     "--tag", f"try={i % 2}"]) == 0
    capsys.readouterr()
    assert main(["runs", "--store", str(db), "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["results"]
    assert len(runs) == 3
    assert main(["show", "latest", "--store", str(db), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [r["family"] for r in shown["results"][0]["results"]] == ["toy"]
    assert main(["compare", "try=0", "try=1", "--store", str(db), "--family", "toy",
                 "--json"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["command"] == "compare" and not cmp["errors"]
    assert {r["family"] for r in cmp["results"]} == {"toy"}
    assert {r["metric"] for r in cmp["results"]} == {"rate"}   # Toy.primary: its first
    out = tmp_path / "toy.csv"
    assert main(["export", "latest", "-o", str(out), "--store", str(db)]) == 0
    assert "sum 100000" in out.read_text()
    html = tmp_path / "r.html"
    assert main(["report", "latest", "-o", str(html), "--store", str(db)]) == 0
    assert "sum 100000" in html.read_text()


def test_a_family_without_the_shape_is_refused():
    class NotAFamily:
        family = "x"

    with pytest.raises(TypeError, match="no title"):
        families.register(NotAFamily)


def test_the_folder_gives_the_command_its_options_and_checks(toy, capsys):
    assert main(["toy", "--n", "1000", "--reps", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "toy" and not doc["errors"]
    (r,) = doc["results"]
    assert r["family"] == "toy" and r["params"] == {"n": 1000, "reps": 2}
    assert len(r["metrics"]["rate"]["values"]) == 2
    assert main(["toy", "--n", "0"]) == 2                      # the table's bound
    assert "--n must be at least 1 (got 0)" in capsys.readouterr().err
    assert main(["toy", "--help"]) == 0
    assert "(default: 100000)" in capsys.readouterr().out


def test_the_folder_s_figures_reach_the_report(toy):
    from numascope.report.html import figure_modules
    assert "toy_family.figures" in [m.__name__ for m in figure_modules()]


def test_without_its_line_the_family_is_unknown(capsys):
    assert main(["toy"]) == 2
    assert "invalid choice: 'toy'" in capsys.readouterr().err



def test_the_folder_places_its_headline_section_and_tolerance(toy, tmp_path, capsys):
    """ORDER, SECTION, TOLERANCE_PCT and headline.py in the folder are all it takes: its
    headline line in the run's summary, its section in the report, its fleet tolerance."""
    from numascope.fleet.baseline import defaults_text, family_tolerance
    from numascope.report.sections import studies
    db = tmp_path / "runs.db"
    assert main(["run", "--stage", "toy", "--store", str(db), "--no-report"]) == 0
    assert "toy sum rate, n = 100000" in capsys.readouterr().out
    ids = [s.id for s in studies()]
    assert ids.index("compute") < ids.index("toy") < ids.index("compress")
    html = tmp_path / "r.html"
    assert main(["report", "latest", "-o", str(html), "--store", str(db)]) == 0
    text = html.read_text()
    assert 'id="toy"' in text and "Toy sums" in text and "toy sum rate" in text
    assert family_tolerance("toy") == 30.0 and "toy 30 %" in defaults_text()
