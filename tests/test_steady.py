"""--reps auto: the stopping rule on planted values and a fake clock (known answers), the
option's spelling, the record through the store, and bandwidth gathering its repetitions in
real calls of the kernel."""

from __future__ import annotations

import math

import pytest
from test_store_helpers import make_result, make_run

from numascope.errors import UserError
from numascope.profile import FULL, QUICK, SMOKE
from numascope.results.store import Store
from numascope.steady import (
    MIN_REPS,
    MIN_UNITS,
    Pool,
    Steady,
    parse_reps,
    repeat,
    summary,
    t_interval,
    unsteady,
    verdict_of,
)

# -- the interval ------------------------------------------------------------------------

T_975 = {2: 4.302653, 3: 3.182446, 5: 2.570582}     # Student t, 97.5 % point, by df


def test_the_interval_is_students_t_over_the_units():
    lo, hi = t_interval([1.0, 2.0, 3.0])                # mean 2, sd 1, k = 3
    assert (lo + hi) / 2 == pytest.approx(2.0)
    assert (hi - lo) / 2 == pytest.approx(T_975[2] / math.sqrt(3), rel=1e-6)
    lo, hi = t_interval([10.0, 12.0, 11.0, 13.0])       # sd sqrt(5/3), k = 4
    assert (hi - lo) / 2 == pytest.approx(T_975[3] * math.sqrt(5 / 3) / 2, rel=1e-6)


def test_zero_spread_and_too_few_units():
    assert t_interval([5.0, 5.0, 5.0, 5.0]) == (5.0, 5.0)
    assert t_interval([5.0]) is None and t_interval([]) is None
    assert MIN_UNITS == 4 and MIN_REPS == 2 * MIN_UNITS and Steady().per_unit == 2
    assert Steady(min_reps=9).per_unit == 3                # quick latency: 4 units of 3


# -- the rule on planted units -----------------------------------------------------------

class Planted:
    """A fake measurement: each call is a unit that takes the next n planted values and
    advances a fake clock by `seconds` per repetition (plus `setup` per call)."""

    def __init__(self, values, seconds=0.1, setup=0.0):
        self.values, self.seconds, self.setup = list(values), seconds, setup
        self.now, self.used, self.units, self.calls = 0.0, 0, [], []

    def clock(self) -> float:
        return self.now

    def __call__(self, n: int) -> list[list[float]]:
        self.calls.append(n)
        self.units.append(self.values[self.used:self.used + n])
        self.used += n
        self.now += self.setup + n * self.seconds
        return [list(u) for u in self.units]

    @property
    def got(self) -> list[float]:
        return [v for u in self.units for v in u]


def test_a_steady_figure_stops_after_the_first_units():
    fake = Planted([100.0, 100.2, 99.9, 100.1, 100.0, 100.2, 100.1, 99.9] + [50.0] * 100)
    v = repeat(fake, Steady(), fake.clock)
    assert fake.calls == [2] * MIN_UNITS                  # four calls of two repetitions
    assert (v.reps, v.batches, v.units, v.converged, v.stopped) == (8, 4, 4, True,
                                                                     "converged")
    assert v.unit_medians == pytest.approx([100.1, 100.0, 100.1, 100.0])
    assert v.values_per_unit == [2, 2, 2, 2] and v.estimate == pytest.approx(100.05)
    assert v.low <= 100.0 and v.high >= 100.1 and v.half_width <= 0.01


def test_steady_repetitions_in_allocations_that_disagree_do_not_converge():
    # the hard case of issue 30: every allocation's repetitions agree to 0.01 %, the
    # allocations differ by 4 %; an interval over repetitions would call it steady
    units = [100.0, 104.0, 100.0, 104.0] * 20
    fake = Planted([u + 0.01 * r for u in units for r in (0, 1)], seconds=0.001)
    v = repeat(fake, Steady(max_reps=24), fake.clock)
    assert not v.converged and v.stopped == "max reps" and v.units == 12
    # the allocations' spread is in the interval (t(11) 2.20 x sd 2.09 x sqrt(2/12): 1.8 %,
    # where another run's estimate falls), not the repetitions' 0.01 %
    assert v.low < 102.005 < v.high and v.half_width == pytest.approx(0.0184, abs=0.001)


def test_a_noisy_figure_runs_to_the_repetition_cap_unconverged():
    fake = Planted([80.0, 80.0, 120.0, 120.0] * 100, seconds=0.001)
    v = repeat(fake, Steady(max_reps=40), fake.clock)
    # 4 units, then half the units so far: 2, 3, 4, 6, then 1 to the cap of 20 units
    assert fake.calls == [2] * 20 and v.batches == 20
    assert (v.reps, v.converged, v.stopped) == (40, False, "max reps")
    assert v.unit_medians == [80.0, 120.0] * 10


def test_a_noisy_figure_runs_to_the_time_budget_unconverged():
    fake = Planted([80.0, 80.0, 120.0, 120.0] * 100, seconds=1.0)
    v = repeat(fake, Steady(budget_s=20.0), fake.clock)
    # 4 units of 2 s: 8 s, then 2 (12 s), 3 (18 s); the next would need 2 s a unit: 1 fits
    assert len(fake.calls) == 10 and v.units == 10
    assert (v.reps, v.converged, v.stopped) == (20, False, "time budget")
    assert v.seconds == 20.0 and v.budget_s == 20.0


def test_the_first_units_run_whatever_the_budget():
    fake = Planted([80.0, 80.0, 120.0, 120.0] * 10, seconds=5.0)
    v = repeat(fake, Steady(budget_s=1.0), fake.clock)
    assert fake.calls == [2] * MIN_UNITS and (v.reps, v.stopped) == (8, "time budget")


def test_zero_spread_converges_with_a_zero_width_interval():
    fake = Planted([42.0] * 20)
    v = repeat(fake, Steady(), fake.clock)
    assert v.converged and v.units == MIN_UNITS and (v.low, v.high) == (42.0, 42.0)
    assert v.half_width == 0.0


def test_quantised_values_converge_only_with_both_levels_inside():
    # unit medians on a grid of 1: 100, 101, 100 … (a timer's tick)
    fake = Planted([100.0, 100.0, 101.0, 101.0] * 20)
    v = repeat(fake, Steady(precision=0.01), fake.clock)
    # 4 units: mean 100.5, sd 0.577, t(3) 3.18 x sqrt(2/4): ±1.30 %, not yet; 6 units:
    # sd 0.548, t(5) 2.57 x sqrt(2/6): ±0.81 %
    assert v.converged and v.units == 6
    assert v.low < 100.0 and v.high > 101.0


def test_bimodal_repetitions_whose_mix_changes_between_allocations_do_not_converge():
    # within a unit the repetitions jump between two modes; the mix differs per unit, so
    # the units' medians do too
    mixes = [[80.0, 80.0, 80.0], [80.0, 120.0, 120.0], [80.0, 80.0, 120.0],
             [120.0, 120.0, 120.0]] * 10
    fake = Planted([x for m in mixes for x in m], seconds=0.001)
    v = repeat(fake, Steady(min_reps=12, max_reps=30), fake.clock)
    assert not v.converged and v.stopped == "max reps" and v.units == 10
    assert v.unit_medians == [80.0, 120.0] * 5
    assert v.low < 100.0 < v.high and v.half_width > 0.1


def test_the_precision_decides():
    vals = [95.0, 95.0, 105.0, 105.0, 100.0, 100.0, 98.0, 98.0]
    assert not repeat(Planted(vals + [90.0, 110.0] * 50), Steady(max_reps=8)).converged
    assert repeat(Planted(vals), Steady(precision=0.1)).converged


def test_values_without_a_median_never_converge():
    fake = Planted([math.nan] * 30)
    v = repeat(fake, Steady(max_reps=12), fake.clock)
    assert not v.converged and v.values == 0 and v.units == 0 and v.stopped == "max reps"


def test_a_unit_whose_values_were_all_set_aside_is_not_a_unit():
    fake = Planted([100.0, 100.0, math.nan, math.nan] + [100.0] * 20)
    v = repeat(fake, Steady(), fake.clock)
    # after 4 calls only 3 units have a value: no interval yet, 2 more calls
    assert fake.calls == [2] * 6 and v.units == 5 and v.converged
    assert v.values_per_unit == [2, 0, 2, 2, 2, 2]


def test_a_pool_shares_a_stage_budget_between_its_cases():
    rule = Steady(budget_s=1e9).pooled(10.0)
    rule.pool.cases = 2
    noisy = Planted([80.0, 80.0, 120.0, 120.0] * 100, seconds=1.0)
    v1 = repeat(noisy, rule, noisy.clock)
    # case 1: 8 s first, then its share 10/2 = 5 s: 2 units (4 s); the third would not fit
    assert len(noisy.calls) == 6 and v1.stopped == "time budget"
    assert rule.pool.spent == 4.0 and rule.pool.share() == 6.0
    steady = Planted([100.0] * 8, seconds=1.0)
    assert repeat(steady, rule, steady.clock).converged
    assert rule.pool.done == 2 and rule.pool.spent == 4.0
    assert Pool(10.0, cases=4, spent=8.0, done=2).share() == 1.0


def test_separate_invocations_agree_as_an_honest_interval_promises():
    """Simulated separate runs (each its own allocations, a minority of them 5 % off, as
    huge pages granted or not): another run's estimate falls inside a converged run's
    interval in at least 75 % of pairs (it is the interval another run's estimate falls in,
    numascope.steady's doc)."""
    import random
    rng = random.Random(30)
    runs = []
    for _ in range(150):
        made: list[list[float]] = []

        def unit(n, made=made):
            shift = 0.05 if rng.random() < 0.3 else 0.0
            made.append([100 * (1 + shift + rng.gauss(0, 0.001)) for _ in range(n)])
            return made
        runs.append(repeat(unit, Steady(precision=0.05), lambda: 0.0))
    conv = [v for v in runs if v.converged]
    pairs = [(a, b) for a in conv for b in runs if a is not b]
    inside = sum(a.low <= b.estimate <= a.high for a, b in pairs)
    assert len(conv) > 100 and inside / len(pairs) >= 0.75


# -- the option --------------------------------------------------------------------------

@pytest.mark.parametrize("text,want", [
    ("10", 10), (" 7 ", 7), (3, 3), ("auto", Steady()), ("AUTO", Steady()),
    ("auto:0.5%", Steady(precision=0.005)), ("auto:2", Steady(precision=0.02)),
])
def test_the_spelling(text, want):
    assert parse_reps(text) == want


@pytest.mark.parametrize("text,says", [
    ("0", "at least 1"), ("1001", "at most 1000"), ("x", "expected a count"),
    ("auto:0%", "from 0.1 to 50"), ("auto:x", "from 0.1 to 50"), ("auto:60%", "0.1 to 50"),
    ("auto;1%", "expected a count"),
])
def test_bad_spellings_say_so(text, says):
    with pytest.raises(UserError, match=says):
        parse_reps(text, "--reps")


def test_measured_profiles_repeat_until_steady_smoke_does_not():
    assert isinstance(QUICK.repetitions(5), Steady) and QUICK.repetitions(5).pool.seconds == QUICK.steady_s == 6
    assert QUICK.repetitions(5).min_reps == MIN_REPS and QUICK.repetitions(9).min_reps == 9
    assert FULL.repetitions(10) == Steady(min_reps=10, max_reps=FULL.steady_max)
    assert SMOKE.repetitions(5) == 5
    a, b = QUICK.repetitions(5), QUICK.repetitions(5)
    assert a == b and a.pool is not b.pool        # one pool per stage, the rule compares equal


# -- the record --------------------------------------------------------------------------

def test_the_verdict_round_trips_through_the_store(tmp_path):
    fake = Planted([80.0, 80.0, 120.0, 120.0] * 10)
    v = repeat(fake, Steady(max_reps=12), fake.clock)
    res = make_result(values=fake.got)
    res.params["steady"] = v.to_dict()
    old = make_result("latency", "chase", [90.0, 91.0], "ns", False)    # fixed repetitions
    rec = make_run({}, [res, old])
    with Store.open(tmp_path / "runs.db", write=True) as st:
        st.save_run(rec)
    with Store.open(tmp_path / "runs.db") as st:
        back = st.get_run(rec.run_id)
    got, fixed = back.results
    assert verdict_of(got.params)["reps"] == 12 and unsteady(got.params)
    assert verdict_of(got.params)["units"] == 6
    assert verdict_of(got.params)["values_per_unit"] == [2] * 6
    assert verdict_of(fixed.params) is None and not unsteady(fixed.params)
    line = summary([r.params for r in back.results])
    assert "0 of 1 figure converged" in line and "1 did not (*)" in line
    assert summary([fixed.params]) is None


# -- bandwidth: each batch a real call of the kernel -------------------------------------

def _planted_kernel(monkeypatch, times: list[float]) -> list[int]:
    """Run the real kernel, then give each call the next planted times; returns the list
    of repetitions asked per call."""
    from numascope import _core
    from numascope.families.bandwidth import bench as bw
    real, calls, used = _core.bw_run, [], [0]

    def fake(kernel, cpus, n, reps, *args, **kw):
        raw = real(kernel, cpus, n, reps, *args, **kw)
        calls.append(reps)
        mine = times[used[0]:used[0] + reps]
        used[0] += reps
        raw["times"] = [list(mine) for _ in raw["times"]]
        raw["passes"] = [1] * len(raw["times"])   # a planted time is one pass's
        return raw
    monkeypatch.setattr(bw._core, "bw_run", fake)
    return calls


def _bw(reps):
    from numascope.families.bandwidth import bench as bw
    from numascope.topology import read_topology
    topo = read_topology("/")
    return bw.measure(topo, kernel="triad", cpus=topo.usable_cpus()[:1], size_bytes=1 << 20,
                      reps=reps, isa="scalar", nt="off")


def test_bandwidth_stops_at_the_minimum_on_steady_planted_times(monkeypatch):
    calls = _planted_kernel(monkeypatch, [0.0100, 0.01005, 0.00995, 0.0100, 0.0100, 0.01005,
                                          0.0100, 0.00995] + [0.02] * 50)
    r = _bw(Steady())
    assert calls == [2] * MIN_UNITS                   # a real call (its own arrays) a unit
    assert r.params["reps"] == 8 and len(r.metrics["bandwidth"].values) == 8
    s = r.params["steady"]
    assert s["converged"] and s["stopped"] == "converged" and s["metric"] == "bandwidth"
    assert (s["units"], s["values_per_unit"], s["reps_per_unit"]) == (4, [2] * 4, 2)
    gbs = [24 * (1 << 17) / t / 1e9 for t in (0.0100, 0.01005)]    # the first unit
    assert s["unit_medians"][0] == pytest.approx(sum(gbs) / 2)


def test_bandwidth_gathers_noisy_planted_times_in_calls_to_its_cap(monkeypatch):
    calls = _planted_kernel(monkeypatch, [0.010, 0.010, 0.014, 0.014] * 10)
    r = _bw(Steady(max_reps=12))
    assert calls == [2] * 6                           # six real calls, 12 repetitions
    assert r.params["reps"] == 12 and len(r.metrics["seconds"].values) == 12
    assert r.metrics["seconds"].values == [0.010, 0.010, 0.014, 0.014] * 3   # as measured
    assert r.params["steady"]["units"] == 6
    assert r.params["steady"]["stopped"] == "max reps" and unsteady(r.params)


def test_bandwidth_fixed_repetitions_keep_their_record():
    r = _bw(3)
    assert r.params["reps"] == 3 and "steady" not in r.params


# -- on this machine: real runs report their count and whether they converged -----------

def _cli(*args: str):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "numascope", *args], capture_output=True,
                          text=True, timeout=300, check=False)


def _consistent(s: dict, values: int) -> None:
    """A stored verdict that agrees with itself and with the values kept."""
    assert MIN_REPS <= s["reps"] <= s["max_reps"] and s["values"] == values
    assert MIN_UNITS <= s["units"] == s["batches"] == len(s["unit_medians"])
    assert sum(s["values_per_unit"]) == values and s["reps"] == s["units"] * s["reps_per_unit"]
    lo, hi = s["interval"]
    assert lo <= s["estimate"] <= hi
    assert s["estimate"] == pytest.approx(sum(s["unit_medians"]) / s["units"])
    assert s["converged"] == (s["half_width"] <= s["precision"])
    assert s["stopped"] == "converged" if s["converged"] else \
        s["stopped"] in ("max reps", "time budget")


def test_a_real_bw_run_reports_its_count_and_convergence():
    import json
    p = _cli("bw", "--kernel", "triad", "--threads", "1", "--size", "16M", "--isa", "scalar",
             "--nt", "off", "--reps", "auto:20%", "--json")
    assert p.returncode == 0, p.stderr
    (r,) = json.loads(p.stdout)["results"]
    s = r["params"]["steady"]
    kept = len(r["metrics"]["bandwidth"]["values"])
    assert r["params"]["reps"] == s["reps"] == kept + len(r["params"]["excluded_reps"])
    _consistent(s, kept)
    assert s["precision"] == 0.2 and s["metric"] == "bandwidth"
    table = _cli("bw", "--kernel", "triad", "--threads", "1", "--size", "16M", "--isa",
                 "scalar", "--nt", "off", "--reps", "auto:20%")
    assert table.returncode == 0, table.stderr
    assert "repetitions until steady (auto:20%" in table.stdout
    assert " n " in table.stdout                       # the column of counts


def test_a_real_lat_run_with_samples_auto():
    import json
    p = _cli("lat", "--size", "1M", "--loads", "4096", "--samples", "auto:20%", "--json")
    assert p.returncode == 0, p.stderr
    (r,) = json.loads(p.stdout)["results"]
    s = r["params"]["steady"]
    assert r["params"]["samples"] == s["reps"] == len(r["metrics"]["latency"]["values"])
    assert len(r["metrics"]["tsc_cycles"]["values"]) == s["reps"]
    _consistent(s, s["reps"])
    bad = _cli("lat", "--loaded", "--samples", "auto", "--size", "1M")
    assert bad.returncode == 2 and "applies to the idle chase" in bad.stderr


def test_lat_chains_with_samples_auto_measure_units_per_count():
    """`lat --chains 1,2 --samples auto` died on a Steady passed to the C kernel as a count
    (issue 30): each count is now measured in units of its own."""
    import json
    p = _cli("lat", "--chains", "1,2", "--samples", "auto:50%", "--size", "4M", "--loads",
             "4096", "--json")
    assert p.returncode == 0, p.stderr
    rs = json.loads(p.stdout)["results"]
    assert [r["params"]["chains"] for r in rs] == [1, 2]
    for r in rs:
        s = r["params"]["steady"]
        assert r["params"]["samples"] == s["reps"] == len(r["metrics"]["latency"]["values"])
        _consistent(s, s["reps"])


# -- marked in run's table, the report and compare ---------------------------------------

def _auto_run(converged: bool, values: list[float]):
    fake = Planted(values)
    v = repeat(fake, Steady(max_reps=12, precision=0.05), fake.clock)
    assert v.converged == converged
    r = make_result(values=fake.got)
    r.params["steady"] = v.to_dict() | {"metric": "bandwidth"}
    return make_run({}, [r])


def test_an_unconverged_figure_is_marked_in_run_report_and_compare():
    import io

    from rich.console import Console

    from numascope.analysis.compare import compare_runs
    from numascope.report.html import render
    from numascope.report.terminal import print_comparison, print_run
    steady_run = _auto_run(True, [100.0, 101.0, 99.0, 100.0, 100.5, 99.5, 100.0, 100.0])
    shaky_run = _auto_run(False, [80.0, 80.0, 120.0, 120.0] * 10)

    def text(show, x) -> str:
        c = Console(file=io.StringIO(), width=80, color_system=None)
        show(x, c)
        return c.file.getvalue()
    out = text(print_run, shaky_run)
    assert "12*" in out and "0 of 1 figure converged" in out and "* = not steady" in out
    out = text(print_run, steady_run)
    assert "1 of 1 figure converged; 8 repetitions each in 4 units" in out
    assert "* = not" not in out

    (d,) = compare_runs([steady_run], [shaky_run]).diffs
    assert (d.unsteady_a, d.unsteady_b, d.unsteady) == (0, 1, True)
    assert d.to_dict()["unsteady_b"] == 1
    out = text(print_comparison, compare_runs([steady_run], [shaky_run]))
    assert "triad 2T*" in out and "did not converge" in out
    (d,) = compare_runs([steady_run], [steady_run]).diffs
    assert not d.unsteady

    html = render([steady_run, shaky_run])
    assert 'id="repetitions"' in html and "triad 2T*" in html and "max reps" in html
    assert 'id="repetitions"' not in render([make_run({}, [make_result()])])   # fixed reps


# -- benchmarks/steady_reproducible.py: the hard check's plumbing ------------------------

def _script(*args: str):
    import subprocess
    import sys
    from pathlib import Path
    script = Path(__file__).parent.parent / "benchmarks" / "steady_reproducible.py"
    return subprocess.run([sys.executable, str(script), *args], capture_output=True,
                          text=True, timeout=300, check=False)


def test_the_reproducibility_script_counts_pairs_of_separate_invocations():
    p = _script("--quick", "--which", "bw")
    assert p.returncode in (0, 1), p.stderr          # 1: not reproducible (says so)
    runs = [ln for ln in p.stdout.splitlines() if ln.strip().startswith("run ")]
    assert len(runs) == 3 and all(" units " in ln and "interval [" in ln for ln in runs)
    assert "converged; other runs' medians inside a converged run's interval" in p.stdout
    bad = _script("--which", "net")
    assert bad.returncode == 2 and "--which takes lat, bw" in bad.stderr


def test_the_script_simulates_the_rule_on_planted_allocations():
    p = _script("--simulate", "--quick")
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("first units") == 9 and "estimates inside" in p.stdout
