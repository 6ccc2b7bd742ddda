"""Adding a family costs one module plus its registration: a toy family defined here (and
nowhere else) runs as a stage of `numascope run`, is stored, shown, compared, exported and
reported without touching any other file."""

from __future__ import annotations

import json
import time

import pytest

from numascope import families
from numascope.benchmark import Case
from numascope.cli import main
from numascope.errors import MeasurementError
from numascope.results.record import BenchResult, Metric


class Toy:
    """Sums 0..n-1 in Python and checks the sum: a real, if slow, kernel."""

    family = "toy"
    title = "a toy family: Python sums"

    def cases(self, topo, sizes=(100_000,), reps=3):
        return [Case(f"sum {n}", {"n": n, "reps": reps}) for n in sizes]

    def suite_cases(self, topo, profile):
        return self.cases(topo, sizes=(100_000,) if profile.quick else (100_000, 200_000),
                          reps=profile.reps)

    def measure(self, topo, case):
        n, rates = case.params["n"], []
        for _ in range(case.params["reps"]):
            t0 = time.perf_counter()
            s = sum(range(n))
            dt = time.perf_counter() - t0
            if s != n * (n - 1) // 2:
                raise MeasurementError("sum mismatch")
            rates.append(n / dt / 1e6)
        return BenchResult(self.family, case.label, dict(case.params),
                           {"rate": Metric("rate", "Melem/s", True, rates)})


@pytest.fixture
def toy():
    families.register(Toy)
    yield Toy
    families.unregister(Toy)


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
