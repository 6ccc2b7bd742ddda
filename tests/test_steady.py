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
    Pool,
    Steady,
    median_interval,
    parse_reps,
    repeat,
    summary,
    unsteady,
    verdict_of,
)

# -- the interval ------------------------------------------------------------------------

def _coverage(n: int, k: int) -> float:
    """P(s[k] <= true median <= s[n+1-k]) for n values of any continuous distribution."""
    return 1 - 2 * sum(math.comb(n, j) for j in range(k)) / 2 ** n


@pytest.mark.parametrize("n", [6, 7, 10, 20, 31, 100])
def test_the_interval_is_the_widest_order_statistics_pair_at_95_percent(n):
    values = [float(v) for v in range(1, n + 1)]      # s[k] == k
    lo, hi = median_interval(values)
    k = int(lo)
    assert hi == n + 1 - k
    assert _coverage(n, k) >= 0.95 > _coverage(n, k + 1)


def test_known_intervals_and_too_few_values():
    assert median_interval([3, 1, 2, 6, 5, 4]) == (1, 6)      # 1 - 2/64 = 96.9 %
    assert median_interval(list(range(1, 11))) == (2, 9)      # the textbook n = 10 row
    assert median_interval([1, 2, 3, 4, 5]) is None           # 1 - 2/32 = 93.8 % < 95 %
    assert MIN_REPS == 6


# -- the rule on planted values ----------------------------------------------------------

class Planted:
    """A fake measurement: each call takes the next n planted values and advances a fake
    clock by `seconds` per repetition (plus `setup` per call)."""

    def __init__(self, values, seconds=0.1, setup=0.0):
        self.values, self.seconds, self.setup = list(values), seconds, setup
        self.now, self.got, self.calls = 0.0, [], []

    def clock(self) -> float:
        return self.now

    def __call__(self, n: int) -> list[float]:
        self.calls.append(n)
        self.got += self.values[len(self.got):len(self.got) + n]
        self.now += self.setup + n * self.seconds
        return list(self.got)


def test_a_steady_figure_stops_at_the_minimum():
    fake = Planted([100.0, 100.3, 99.8, 100.1, 99.9, 100.2] + [50.0] * 100)
    v = repeat(fake, Steady(), fake.clock)
    assert fake.calls == [MIN_REPS]
    assert (v.reps, v.batches, v.converged, v.stopped) == (6, 1, True, "converged")
    assert (v.low, v.high) == (99.8, 100.3) and v.half_width <= 0.01


def test_a_noisy_figure_runs_to_the_repetition_cap_unconverged():
    fake = Planted([80.0, 120.0] * 100, seconds=0.001)
    v = repeat(fake, Steady(max_reps=40), fake.clock)
    assert fake.calls == [6, 3, 4, 6, 9, 12]         # half the count so far, to the cap
    assert (v.reps, v.converged, v.stopped) == (40, False, "max reps")
    assert v.half_width == pytest.approx(0.2)


def test_a_noisy_figure_runs_to_the_time_budget_unconverged():
    fake = Planted([80.0, 120.0] * 100, seconds=1.0)
    v = repeat(fake, Steady(budget_s=20.0), fake.clock)
    # 6 s, then 3 (9 s), 4 (13 s), 6 (19 s); the next would need 1 s a rep: 1 more fits
    assert fake.calls == [6, 3, 4, 6, 1]
    assert (v.reps, v.converged, v.stopped) == (20, False, "time budget")
    assert v.seconds == 20.0 and v.budget_s == 20.0


def test_the_first_batch_runs_whatever_the_budget():
    fake = Planted([80.0, 120.0] * 10, seconds=5.0)
    v = repeat(fake, Steady(budget_s=1.0), fake.clock)
    assert fake.calls == [6] and (v.reps, v.stopped) == (6, "time budget")


def test_a_figure_that_settles_stops_when_its_interval_narrows():
    # noise first, then steady values: the interval's order statistics move inwards
    fake = Planted([70.0, 130.0, 100.0, 100.0, 100.0, 100.0] + [100.0] * 50)
    v = repeat(fake, Steady(), fake.clock)
    # n = 6: [70, 130]; n = 9: k = 2, [100, 100]
    assert fake.calls == [6, 3] and v.converged and v.reps == 9


def test_the_precision_decides():
    vals = [95.0, 105.0, 100.0, 98.0, 102.0, 100.0]
    assert not repeat(Planted(vals + [90.0, 110.0] * 50), Steady(max_reps=6)).converged
    assert repeat(Planted(vals), Steady(precision=0.05)).converged


def test_values_without_a_median_never_converge():
    fake = Planted([math.nan] * 30)
    v = repeat(fake, Steady(max_reps=12), fake.clock)
    assert not v.converged and v.values == 0 and v.stopped == "max reps"


def test_a_pool_shares_a_stage_budget_between_its_cases():
    rule = Steady(budget_s=1e9).pooled(10.0)
    rule.pool.cases = 2
    noisy = Planted([80.0, 120.0] * 100, seconds=1.0)
    v1 = repeat(noisy, rule, noisy.clock)
    # case 1: 6 s first, then its share 10/2 = 5 s: 3 + 2 more repetitions
    assert noisy.calls == [6, 3, 2] and v1.stopped == "time budget"
    assert rule.pool.spent == 5.0 and rule.pool.share() == 5.0
    steady = Planted([100.0] * 6, seconds=1.0)
    assert repeat(steady, rule, steady.clock).converged
    assert rule.pool.done == 2 and rule.pool.spent == 5.0
    assert Pool(10.0, cases=4, spent=8.0, done=2).share() == 1.0


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
    fake = Planted([80.0, 120.0] * 10)
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
    calls = _planted_kernel(monkeypatch, [0.0100, 0.01005, 0.00995, 0.0100, 0.0100, 0.01005]
                            + [0.02] * 50)
    r = _bw(Steady())
    assert calls == [6]
    assert r.params["reps"] == 6 and len(r.metrics["bandwidth"].values) == 6
    s = r.params["steady"]
    assert s["converged"] and s["stopped"] == "converged" and s["metric"] == "bandwidth"


def test_bandwidth_gathers_noisy_planted_times_in_calls_to_its_cap(monkeypatch):
    calls = _planted_kernel(monkeypatch, [0.010, 0.014] * 20)
    r = _bw(Steady(max_reps=12))
    assert calls == [6, 3, 3]                         # three real calls, 12 repetitions
    assert r.params["reps"] == 12 and len(r.metrics["seconds"].values) == 12
    assert r.metrics["seconds"].values == [0.010, 0.014] * 6     # in the order measured
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
    lo, hi = s["interval"]
    assert lo <= s["median"] <= hi
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
    steady_run = _auto_run(True, [100.0, 101.0, 99.0, 100.0, 100.5, 99.5])
    shaky_run = _auto_run(False, [80.0, 120.0] * 10)

    def text(show, x) -> str:
        c = Console(file=io.StringIO(), width=80, color_system=None)
        show(x, c)
        return c.file.getvalue()
    out = text(print_run, shaky_run)
    assert "12*" in out and "0 of 1 figure converged" in out and "* = not steady" in out
    out = text(print_run, steady_run)
    assert "1 of 1 figure converged; 6 repetitions each" in out and "* = not" not in out

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
