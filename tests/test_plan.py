"""What a run will measure and how long it will take, before it runs (numascope.plan,
`numascope run --plan`), on every replayed machine of ../shared/fixtures and on synthetic
big ones; the budget a run keeps to (`--budget`), headline cases first; the plan beside the
actual times in the record, and the calibration from a host's earlier runs."""

from __future__ import annotations

import json
import statistics
import time

import pytest
from conftest import HWLOC_FIXTURES
from synth_sysfs import machine
from test_topology_fixtures import NAMES

from numascope import plan as P
from numascope import suite
from numascope.cli import main
from numascope.errors import UserError
from numascope.profile import profile
from numascope.results.store import Store
from numascope.topology import read_topology

# the replayed machines numascope reads (x86 and the listed others: test_topology_fixtures)
FIXTURES = [HWLOC_FIXTURES / f"{n}.tar.bz2" for n in NAMES]


def _plan_json(capsys, *argv: str) -> dict:
    assert main(["run", "--plan", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)["plan"]


@pytest.mark.parametrize("dump", FIXTURES, ids=lambda p: p.name[:-8])
def test_the_plan_of_every_replayed_machine_lists_its_cases_and_their_parts(dump, capsys):
    """`run --plan --sysfs-root DUMP`: each stage with the cases its family builds there,
    each case's seconds the sum of its parts; the quick profile's budget holds every
    replayed machine: what it measures fits it, headline cases first."""
    doc = _plan_json(capsys, "--sysfs-root", str(dump))
    topo = read_topology(str(dump))
    prof = profile("quick")
    by_name = {s["name"]: s for s in doc["stages"]}
    for st in suite.all_stages():
        if st.bench is None or by_name[st.name]["skipped"]:
            continue
        _, cases = st.load(topo, prof)
        got = by_name[st.name]
        assert got["cases"] == len(cases) == len(got["case_plans"]), st.name
        for c in got["case_plans"]:
            assert c["seconds"] > 0 and c["parts"], (st.name, c)
            assert c["seconds"] == pytest.approx(sum(c["parts"].values()), abs=0.01)
    assert doc["budget_s"] == prof.budget_s
    plan = P.make_plan(topo, prof, suite.all_stages(), {}, prof.budget_s)
    kept, _ = plan.within()
    kept_s = sum(c.fixed for s in plan.stages for c in s.cases if (s.name, c.label) in kept)
    assert kept_s <= prof.budget_s
    heads = [(s.name, c.label) for s in plan.stages for c in s.cases if c.headline]
    if sum(c.seconds for s in plan.stages for c in s.cases if c.headline) < prof.budget_s - 1:
        assert set(heads) <= set(kept)              # the headline cases come first
    assert doc["within_budget"]["cases"] == len(kept)


def test_a_big_machine_s_plan_grows_and_the_budget_does_not(tmp_path):
    """A 2-socket EPYC 9654 in NPS2 (384 threads): the quick plan measures many times this
    host's cases; a budget it exceeds keeps the headline cases and leaves the rest out,
    said; the prolog gate (bandwidth under 30 s) fits its budget."""
    root = machine(tmp_path, sockets=2, l3_per_socket=12, cores_per_l3=8, smt=2,
                   nodes_per_socket=2)
    topo = read_topology(str(root))
    prof = profile("quick")
    plan = P.make_plan(topo, prof, suite.all_stages(), {}, prof.budget_s)
    bw = next(s for s in plan.stages if s.name == "bandwidth")
    assert len(bw.cases) > 20
    kept, out = plan.within(plan.seconds / 3)
    assert out and {(s.name, c.label) for s in plan.stages for c in s.cases
                    if c.headline} <= set(kept)
    gate = P.make_plan(topo, prof, [s for s in suite.all_stages() if s.name == "bandwidth"],
                       {}, 30.0)
    kept, out = gate.within()
    assert sum(c.fixed for s in gate.stages for c in s.cases
               if (s.name, c.label) in kept) <= 30.0
    assert any(label.startswith("triad compact") for _, label in kept)


@pytest.mark.parametrize("text,seconds", [("90", 90), ("90s", 90), ("2m", 120),
                                          ("1h30m", 5400), ("1.5m", 90), ("2m30s", 150)])
def test_durations(text, seconds):
    assert P.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "0", "-5", "soon", "5x", "1m2h"])
def test_bad_durations_are_one_line(text):
    with pytest.raises(UserError, match="--budget"):
        P.parse_duration(text)


def test_calibration_is_the_median_of_measured_over_modelled(tmp_path):
    from test_store_helpers import make_run
    runs = []
    for measured in (12.0, 10.0, 30.0):     # modelled 10 s each: x1.2, x1.0, x3.0
        r = make_run()
        st = r.stage("bandwidth")
        st.status, st.seconds = "done", measured
        st.plan = {"cases": 2, "seconds": 10.0, "modelled_seconds": 10.0}
        lat = r.stage("latency")   # left out by a budget: says nothing of the model
        lat.status, lat.seconds = "done", 1.0
        lat.plan = {"modelled_seconds": 10.0, "left_out": ["x"]}
        runs.append(r)
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        for r in runs:
            st.save_run(r)
        f = P.calibration(P.earlier_runs(st, None, runs[0].profile))
    # no pool in the model (nor a recorded spending): the pool use is 1, as a bound
    assert f == {"bandwidth": (pytest.approx(1.2), 3, 1.0)}


def _stage_run(measured: float, modelled: float, pool: float, spent: float,
               **plan) -> dict:
    """A stored stage (as RunSummary's stages are: plain dicts) with its plan."""
    return {"name": "bandwidth", "status": "done", "seconds": measured,
            "plan": {"modelled_seconds": modelled, "modelled_fixed": modelled - pool,
                     "modelled_pool": pool, "pool_spent": spent, **plan}}


class _Run:
    def __init__(self, *stages: dict):
        self.stages = list(stages)


def test_calibration_takes_the_pool_apart_from_the_fixed_seconds():
    """The factor is what a stage took less its pools' spending over the model less its
    pools; the pool use, what the pools spent over their seconds, each a median. Made-up
    figures of a stage whose cases are steady early: modelled 6.1 s of which a 4 s pool,
    taken 5.3-5.6 s, its pools spending 0.5-0.9 s of the 4."""
    runs = [_Run(_stage_run(5.6, 6.1, 4.0, 0.9)), _Run(_stage_run(5.3, 6.1, 4.0, 0.5)),
            _Run(_stage_run(5.4, 6.1, 4.0, 0.6))]
    f, n, use = P.calibration(runs)["bandwidth"]
    assert n == 3
    assert f == pytest.approx(statistics.median([4.7 / 2.1, 4.8 / 2.1, 4.8 / 2.1]))
    assert use == pytest.approx(0.6 / 4.0)
    # the plan that follows: factor × (model less pools) + pool use × pools, the measured
    # seconds of each run within a few % (a plan that counted the whole pool: ~1.7x)
    planned = f * 2.1 + use * 4.0
    for took in (5.6, 5.3, 5.4):
        assert 0.95 < took / planned < 1.05
        assert took / (f * 2.1 + 4.0) < 0.65


def test_calibration_pool_use_from_older_records_and_its_bounds():
    """A record without modelled_pool has it as modelled less fixed; a pool spent beyond
    its seconds (the last case's units overrun) counts as used up; a stage without a pool,
    or a record without pool_spent, says nothing of pool use (1: the bound)."""
    old = _stage_run(8.0, 10.0, 4.0, 2.0)
    del old["plan"]["modelled_pool"]
    over = _stage_run(12.0, 10.0, 4.0, 5.0)
    assert P.calibration([_Run(old)])["bandwidth"][2] == pytest.approx(0.5)
    assert P.calibration([_Run(over)])["bandwidth"][2] == 1.0
    nopool = _stage_run(8.0, 10.0, 0.0, 0.0)
    unspent = _stage_run(8.0, 10.0, 4.0, 0.0)
    del unspent["plan"]["pool_spent"]
    assert P.calibration([_Run(nopool)])["bandwidth"][2] == 1.0
    assert P.calibration([_Run(unspent)])["bandwidth"][2] == 1.0
    # only the latest CALIBRATION_RUNS count, for the pool use as for the factor
    runs = [_Run(_stage_run(8.0, 10.0, 4.0, 0.0))] * P.CALIBRATION_RUNS \
        + [_Run(_stage_run(8.0, 10.0, 4.0, 4.0))] * 3
    assert P.calibration(runs)["bandwidth"] == (pytest.approx(8.0 / 6.0),
                                                P.CALIBRATION_RUNS, 0.0)


class _PoolCost:
    """Two cases of 1 s fixed work and a 2 s steady pool share each."""

    @staticmethod
    def estimate(topo, cases):
        return [P.Estimate.of(work=1.0, steady_pool=2.0) for _ in cases]

    @staticmethod
    def headline(topo, cases):
        return [False for _ in cases]


def test_a_stage_plan_scales_the_fixed_parts_and_the_pool_apart(monkeypatch):
    """factor × the fixed parts + pool use × the pool share, per case; what a budget holds
    back (CasePlan.fixed) is the fixed part alone; an older 2-tuple entry keeps the pool
    whole; the nominal plan (no runs) keeps the model."""
    from numascope.benchmark import Case
    monkeypatch.setattr(P, "cost_module", lambda family: _PoolCost)

    class Bench:
        family = "fake"
    st = suite.Stage("bandwidth", "bandwidth", Bench)
    cases = [Case(f"c{i}", None) for i in range(2)]
    sp = P.stage_plan(st, None, cases, {"bandwidth": (1.5, 3, 0.25)})
    assert [c.seconds for c in sp.cases] == [pytest.approx(1.5 + 0.5)] * 2
    assert [c.fixed for c in sp.cases] == [pytest.approx(1.5)] * 2
    assert sp.modelled == pytest.approx(6.0) and sp.modelled_fixed == pytest.approx(2.0)
    assert sp.modelled_pool == pytest.approx(4.0)
    assert sp.to_dict()["pool_use"] == 0.25 and sp.calibrated_by == 3
    assert P.stage_plan(st, None, cases, {"bandwidth": (1.5, 3)}).seconds \
        == pytest.approx(2 * (1.5 + 2.0))
    assert P.stage_plan(st, None, cases, {}).seconds == pytest.approx(6.0)
    assert P.stage_plan(st, None, cases, {"bandwidth": (1.5, 3, float("nan"))}).seconds \
        == pytest.approx(2 * (1.5 + 2.0))


def test_run_plan_refuses_to_measure_a_replayed_machine(capsys):
    dump = FIXTURES[0] if FIXTURES else None
    if dump is None:
        pytest.skip("no fixtures")
    assert main(["run", "--sysfs-root", str(dump)]) == 2
    assert "--sysfs-root replays another machine" in capsys.readouterr().err


def test_a_budgeted_run_ends_on_time_with_its_headline_figures(tmp_path, capsys):
    """A real run here under a budget its plan exceeds (what the headline cases cannot give
    back, and a little): the headline cases measured (the all-core and one-core triad, the
    idle chase), the rest recorded as not measured, the run within 5 s of the budget, each
    stage's plan beside what it took."""
    db = tmp_path / "runs.db"
    argv = ["run", "--quick", "--stage", "bandwidth", "--stage", "latency", "--stage",
            "compress", "--store", str(db), "--no-report", "--json"]
    assert main(argv) == 0          # a first run calibrates the plan of the second
    capsys.readouterr()
    from numascope.plan import factors
    stages = [s for s in suite.all_stages() if s.name in ("bandwidth", "latency", "compress")]
    topo, quick = read_topology("/"), profile("quick")
    with Store.open(db) as st:
        plan = P.make_plan(topo, quick, stages, factors(topo, quick, st))
    # room for the headline cases (their first units as planned, three times that: the
    # plan of one earlier run on a shared, busy machine is not exact), at least half the
    # plan (a budget of a few seconds is the machine's noise, not the run's), and less
    # than the whole by more than the headline cases: something is left out. Where the
    # headline cases are a large share of the plan, the last bound wins; the headline
    # cases then still have half as much again as planned.
    heads = sum(c.fixed for st in plan.stages for c in st.cases if c.headline)
    reserve = suite.BUDGET_RESERVE_S
    budget = min(max(3 * heads + reserve + 1.0, plan.seconds / 2), plan.seconds - heads - 1.0)
    assert budget > 1.5 * heads + reserve, (budget, heads, plan.seconds)
    t0 = time.monotonic()
    rc = main([*argv, "--budget", f"{budget:.3f}s"])
    took = time.monotonic() - t0
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert took <= budget + 5.0, took
    stages = {s["name"]: s for s in doc["stages"]}
    cases = {r["case"] for r in doc["results"]}
    usable = len(read_topology("/").usable_cpus())
    # the headline cases go first (the triads, the idle chase, the default codec): the
    # first of them has the whole budget; a later one is measured, or, where a busy machine
    # made the ones before it overrun their plan, said left out, never silently missing
    why = {n: (s.get("status"), s.get("reason")) for n, s in stages.items()}
    assert f"triad compact {usable}T" in cases, why
    left_all = {c for s in stages.values() for c in s.get("plan", {}).get("left_out", [])}
    heads_planned = [c.label for st in plan.stages for c in st.cases if c.headline]
    assert "triad compact 1T" in heads_planned
    assert any(h.startswith("tlb ") for h in heads_planned)
    assert any(h.startswith("smooth lz4-5-shuffle") for h in heads_planned)
    # (a result's case name may carry more than its plan's label: "tlb 256 MiB stride 256")
    assert all(any(c.startswith(h) for c in cases | left_all) for h in heads_planned), \
        (heads_planned, sorted(cases), sorted(left_all))
    left = [c for s in stages.values() for c in s.get("plan", {}).get("left_out", [])]
    assert left and set(left).isdisjoint(cases)
    for s in stages.values():
        if s.get("plan", {}).get("left_out"):
            n, k = s["plan"]["cases"], len(s["plan"]["left_out"])
            assert s["reason"] == f"not measured: budget: {k} of {n} cases"
            assert s["case_seconds"] and len(s["case_seconds"]) + k == n
    assert doc["host"]["budget"]["seconds"] == pytest.approx(budget, abs=1e-3)


def test_the_record_keeps_the_plan_beside_what_each_stage_took(tmp_path, capsys):
    db = tmp_path / "runs.db"
    assert main(["run", "--smoke", "--stage", "c2c", "--store", str(db), "--no-report",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    c2c = next(s for s in doc["stages"] if s["name"] == "c2c")
    assert c2c["plan"]["cases"] == c2c["results"] == len(c2c["case_seconds"])
    assert c2c["plan"]["modelled_seconds"] > 0 and c2c["plan"]["calibrated_by"] == 0
    # the second run of the profile here is calibrated by the first
    assert main(["run", "--smoke", "--stage", "c2c", "--store", str(db), "--no-report",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    c2c = next(s for s in doc["stages"] if s["name"] == "c2c")
    assert c2c["plan"]["calibrated_by"] == 1


def test_in_a_log_each_stage_says_when_it_starts_and_ends(tmp_path, capsys):
    db = tmp_path / "runs.db"
    assert main(["run", "--smoke", "--stage", "c2c", "--store", str(db), "--no-report"]) == 0
    err = capsys.readouterr().err
    assert "  plan: 1 case, about " in err
    assert err.index("  c2c: 1 case, about ") < err.index("  c2c: done (1 result")


class _Cost:
    """A cost module for the fake families: 0.4 s a case, the last case a headline."""

    @staticmethod
    def estimate(topo, cases):
        return [P.Estimate.of(work=0.4) for _ in cases]

    @staticmethod
    def headline(topo, cases):
        return [i == len(cases) - 1 for i in range(len(cases))]


def test_a_budget_measures_the_headline_cases_first_then_what_fits(tmp_path, monkeypatch,
                                                                    capsys):
    """Two stages of three 0.4 s cases (planned and taken), their last cases the headlines,
    under 2.3 s (1.3 s once the run's end is kept back): both headlines first, then one
    more case, the rest recorded as not measured, said in each stage's reason."""
    from test_run import FakeBench, _install
    stages = [suite.Stage("topology", "topology", None),
              suite.Stage("one", "first", _install(monkeypatch, "fake_one", cases=3)),
              suite.Stage("two", "second", _install(monkeypatch, "fake_two", cases=3))]
    monkeypatch.setattr(suite, "all_stages", lambda: list(stages))
    monkeypatch.setattr(FakeBench, "interrupt_at", None)
    monkeypatch.setattr(FakeBench, "fail_at", None)
    monkeypatch.setattr(P, "cost_module", lambda family: _Cost)
    measure = FakeBench.measure

    def slow(self, topo, case):
        time.sleep(0.4)
        return measure(self, topo, case)
    monkeypatch.setattr(FakeBench, "measure", slow)
    db = tmp_path / "runs.db"
    assert main(["run", "--budget", "2.3", "--store", str(db), "--no-report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    order = [r["case"] for r in doc["results"]]
    assert order[:2] == ["fake_one case 2", "fake_two case 2"]     # the headlines first
    assert order[2:] == ["fake_one case 0"] and len(order) == 3
    st = {s["name"]: s for s in doc["stages"]}
    assert st["one"]["plan"]["left_out"] == ["fake_one case 1"]
    assert st["two"]["plan"]["left_out"] == ["fake_two case 0", "fake_two case 1"]
    assert st["two"]["reason"] == "not measured: budget: 2 of 3 cases"
    assert st["one"]["status"] == st["two"]["status"] == "done"
    # and the plan says the same before anything runs
    assert main(["run", "--plan", "--budget", "2.3", "--json", "--store", str(db)]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert plan["within_budget"] == {"cases": 3, "left_out": [
        "one: fake_one case 1", "two: fake_two case 0", "two: fake_two case 1"]}


def test_the_summary_says_what_a_budget_left_out():
    from test_store_helpers import make_run

    from numascope.report.summary import problems
    r = make_run()
    r.stages[0].plan = {"cases": 23, "left_out": [f"c{i}" for i in range(20)]}
    r.host["budget"] = {"seconds": 120.0, "used": 118.2}
    said = problems(r, [])
    assert "Not measured (a budget of 120 s): bandwidth 20 of 23 cases; the headline cases " \
        "went first (docs/plan.md)." in said


def test_every_built_in_family_with_a_cost_model_has_it_found():
    """Each folder's cost.py is the plan's model of its family, wherever its class lives
    (bench.py or family.py): none falls back to the flat guess."""
    from pathlib import Path

    from numascope import families
    from numascope.plan import cost_module
    for cls in families.families():
        folder = Path(families.__file__).parent / cls.family
        if (folder / "cost.py").exists():
            assert cost_module(cls.family) is not None, cls.family
