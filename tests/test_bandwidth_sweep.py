"""bw --sweep: the working sets, the caches they fit, the plateaus of planted curves (noisy,
quantised, a missing L3, an indistinct L2, a smaller effective LLC …), the records of a real
sweep on small sizes, the command line's bad input, and the figure."""

from __future__ import annotations

import json
import math
import random
import re
from itertools import pairwise

import pytest
from conftest import hwloc_fixture

from numascope.families.bandwidth import plateaus as pl
from numascope.families.bandwidth import sweep
from numascope.results.record import BenchResult, Metric
from numascope.topology import read_topology

KIB, MIB = 1 << 10, 1 << 20
CAPS = [("L1", 32 * KIB), ("L2", 1 * MIB), ("L3", 32 * MIB)]
SIZES = sweep.sizes(4 * KIB, 128 * MIB)          # 4 per octave, as the sweep takes them


def curve(l1=200.0, l2=100.0, l3=50.0, dram=15.0, e1=28 * KIB, e2=900 * KIB, e3=24 * MIB,
          noise=0.0, seed=0, quantum=None):
    """A planted curve: a level's GB/s up to its edge, Gaussian noise, values rounded."""
    rng = random.Random(seed)
    out = []
    for ws in SIZES:
        v = l1 if ws <= e1 else l2 if ws <= e2 else l3 if ws <= e3 else dram
        v *= 1 + rng.gauss(0, noise)
        out.append((ws, round(v / quantum) * quantum if quantum else v))
    return out


def names(found):
    return [p.name for p in found]


# -- the plateaus of planted curves -----------------------------------------------------------
def test_a_clean_hierarchy_lines_up_with_its_caches():
    found = pl.find(curve(), CAPS)
    assert names(found) == ["L1", "L2", "L3", "DRAM"]
    assert all(p.lines_up for p in found)
    assert [p.gbs for p in found] == [200, 100, 50, 15]
    assert "consistent with L2 = 1 MiB" in found[1].verdict
    assert found[-1].last == SIZES[-1] and found[-1].expected is None


@pytest.mark.parametrize("seed", range(5))
def test_noisy_curves_keep_their_four_levels(seed):
    found = pl.find(curve(noise=0.10, seed=seed), CAPS)
    assert names(found) == ["L1", "L2", "L3", "DRAM"]
    for p, want in zip(found, (200, 100, 50, 15)):
        assert abs(p.gbs / want - 1) < 0.10


@pytest.mark.parametrize("quantum", [1.0, 5.0])
def test_quantised_values_neither_split_nor_merge_levels(quantum):
    """Flat plateaus have zero differences (no noise to scale the penalty by): the floor
    keeps a rounding step from becoming a level, and a level from being missed."""
    for noise in (0.0, 0.03):
        found = pl.find(curve(noise=noise, quantum=quantum, seed=3), CAPS)
        assert names(found) == ["L1", "L2", "L3", "DRAM"]
        assert not [n for p in found for n in p.notes]      # no second stretch inside a level


def test_an_l3_the_topology_does_not_report_is_named_and_flagged():
    found = pl.find(curve(noise=0.03), CAPS[:2])
    assert names(found) == ["L1", "L2", "L3", "DRAM"]
    l3 = found[2]
    assert l3.expected is None and not l3.lines_up
    assert "does not report" in l3.verdict and "above DRAM's" in l3.verdict


def test_a_machine_without_l3_goes_from_l2_to_dram():
    found = pl.find(curve(l3=15.0, noise=0.03), CAPS[:2])
    assert names(found) == ["L1", "L2", "DRAM"]
    assert found[-1].first == min(ws for ws in SIZES if ws > 900 * KIB)
    assert all(p.lines_up for p in found)


def test_no_cache_reported_names_the_steps_in_order():
    found = pl.find(curve(noise=0.02), [])
    assert names(found) == ["L1", "L2", "L3", "DRAM"]
    assert not any(p.lines_up for p in found[:3])


def test_an_indistinct_l2_is_said_not_invented():
    """L2 within 1 % of L3: one plateau over both sizes, named by the edge its end lines up
    with (L3's); L2 gets none, and the reason is given."""
    pts = curve(l2=50.5, noise=0.03, seed=1)
    found = pl.find(pts, CAPS)
    assert names(found) == ["L1", "L3", "DRAM"]
    assert found[1].spans == ["L2", "L3"] and "spans the L2, L3 sizes" in found[1].verdict
    (missing,) = pl.levels_without_plateau(found, pts, CAPS)
    assert missing.startswith("L2 (1 MiB): no plateau of its own") and "L3 plateau" in missing


def test_a_smaller_effective_llc_is_flagged_on_both_sides():
    found = pl.find(curve(e3=6 * MIB, noise=0.02), CAPS)
    assert names(found) == ["L1", "L2", "L3", "DRAM"]
    l3, dram = found[2], found[3]
    assert not l3.lines_up and "before the 32 MiB L3 is full" in l3.verdict
    assert not dram.lines_up and "effective last-level cache is smaller" in dram.verdict


def test_a_plateau_lasting_past_its_cache_keeps_its_name_and_is_flagged():
    found = pl.find(curve(e1=80 * KIB), CAPS)
    assert names(found)[:2] == ["L1", "L2"]
    assert not found[0].lines_up and "beyond the 32 KiB L1" in found[0].verdict


def test_a_lone_disturbed_point_does_not_split_a_plateau():
    pts = curve()
    i = next(k for k, (ws, _) in enumerate(pts) if ws > 4 * MIB)
    pts[i] = (pts[i][0], pts[i][1] * 3)
    found = pl.find(pts, CAPS)
    assert names(found) == ["L1", "L2", "L3", "DRAM"]
    assert found[2].first <= 2 * MIB and found[2].last >= 16 * MIB
    assert not found[2].notes
    assert pts[i][1] in found[2].values                     # kept, not dropped


def test_a_second_stretch_inside_a_level_is_noted_not_recorded():
    """Single-pass timing reads the smallest working sets low: a low stretch, then the
    real L1 plateau; the one with more points is L1's, the other a note."""
    pts = [(ws, 40.0 if ws <= 7 * KIB else v) for ws, v in curve()]
    found = pl.find(pts, CAPS)
    assert names(found) == ["L1", "L2", "L3", "DRAM"]
    assert found[0].gbs == 200 and found[0].first > 7 * KIB
    assert "a second flat stretch inside L1's range" in found[0].notes[0]


def test_too_few_points_have_no_plateau():
    assert pl.find([(4 * KIB, 10.0), (8 * KIB, 10.0)], CAPS) == []
    assert pl.find([], CAPS) == []


def test_noise_has_a_floor():
    assert pl.noise([1.0] * 10) == pl.NOISE_FLOOR
    assert pl.noise([0, 0.2, 0, 0.2, 0, 0.2]) > 0.1


# -- working sets and the caches that hold them -----------------------------------------------
def test_sizes_are_geometric_and_checked():
    from numascope.errors import UserError
    s = sweep.sizes(4 * KIB, 64 * KIB, 4)
    assert s[0] == 4 * KIB and s[-1] == 64 * KIB and len(s) == 17
    assert all(abs(b / a - 2 ** 0.25) < 0.01 for a, b in pairwise(s))
    assert sweep.sizes(4 * KIB, 5 * KIB, 1) == [4 * KIB, 5 * KIB]
    for lo, hi, k, msg in ((8 * KIB, 4 * KIB, 4, "min <= max"),
                           (4 * KIB, 8 * KIB, 0, "at least 1"), (1, 1 << 50, 64, "points")):
        with pytest.raises(UserError, match=msg):
            sweep.sizes(lo, hi, k)


def test_capacities_follow_the_threads_caches():
    """4 sockets x 2 cores x 2 threads, L1 16 KiB and L2 1 MiB per core, L3 4 MiB per
    socket: SMT siblings share a core's caches, threads on two cores have two of them."""
    topo = read_topology(str(hwloc_fixture("16em64t-4s2c2t")))
    core = next(c for c in topo.cores if len(c.cpus) == 2)
    other = next(c for c in topo.cores if c.package == core.package and c is not core)
    assert sweep.capacities(topo, [core.cpus[0]]) == [("L1", 16 * KIB), ("L2", MIB),
                                                       ("L3", 4 * MIB)]
    assert sweep.capacities(topo, list(core.cpus)) == [("L1", 16 * KIB), ("L2", MIB),
                                                        ("L3", 4 * MIB)]
    two = [core.cpus[0], other.cpus[0]]
    assert sweep.capacities(topo, two) == [("L1", 32 * KIB), ("L2", 2 * MIB), ("L3", 4 * MIB)]
    every = topo.usable_cpus()
    assert dict(sweep.capacities(topo, every))["L3"] == 16 * MIB
    caps = sweep.capacities(topo, two)
    assert [sweep.level_of(n, caps) for n in (32 * KIB, 33 * KIB, 4 * MIB, 5 * MIB)] == \
        ["L1", "L2", "L3", "DRAM"]
    assert sweep.default_range(topo, two) == (8 * KIB, 16 * MIB)
    assert sweep.default_range(topo, two, 3) == (8 * KIB, 48 * MIB)      # triad's 3 arrays


def test_no_cache_reported_means_dram_and_a_gib():
    topo = read_topology(str(hwloc_fixture("2arm-2c")))
    assert sweep.capacities(topo, [0]) == []
    assert sweep.level_of(4 * KIB, []) == "DRAM"
    assert sweep.default_range(topo, [0]) == (4 * KIB, 1 << 30)


# -- records ------------------------------------------------------------------------------------
def point(kernel, threads, ws, gbs, caps=CAPS):
    params = {"sweep": True, "kernel": kernel, "threads": threads, "working_set": ws,
              "per_thread_bytes": ws // threads, "level": sweep.level_of(ws, caps),
              "level_bytes": dict(caps), "reps": 3, "isa": "avx2", "stores": "ordinary"}
    return BenchResult("bandwidth", f"sweep {kernel} {sweep.label_bytes(ws)} {threads}T",
                       params, {"bandwidth": Metric("bandwidth", "GB/s", True,
                                                    [gbs * 0.98, gbs, gbs * 1.01])},
                       {"cpus": [0], "cpulist": "0"})


def planted_results(kernel="triad", threads=1, **kw):
    return [point(kernel, threads, ws, v) for ws, v in curve(**kw)]


def test_plateau_records_keep_their_names_and_fields():
    pts = planted_results()
    recs = sweep.plateau_results(pts)
    assert [r.case for r in recs] == ["plateau L1 triad 1T", "plateau L2 triad 1T",
                                      "plateau L3 triad 1T", "plateau DRAM triad 1T"]
    for r in recs:
        p = r.params
        assert p["sweep"] is True and p["kernel"] == "triad" and p["threads"] == 1
        assert p["plateau"] == r.case.split()[1]
        lo, hi = p["working_set_range"]
        on = [x for x in pts if lo <= x.params["working_set"] <= hi]
        assert r.metrics["bandwidth"].values == [x.metrics["bandwidth"].median for x in on]
        assert r.metrics["bandwidth"].unit == "GB/s" and "medians" in r.metrics["bandwidth"].note
        assert sweep.is_plateau(r) and not sweep.is_point(r)


def test_plateau_records_per_kernel_and_thread_count():
    recs = sweep.plateau_results(planted_results("read", 2) + planted_results("triad", 1))
    assert {r.case.split(" ", 2)[2] for r in recs} == {"read 2T", "triad 1T"}


def test_a_level_without_plateau_is_noted_on_the_record():
    recs = sweep.plateau_results(planted_results(l2=50.5, noise=0.03, seed=1))
    assert [r.params["plateau"] for r in recs] == ["L1", "L3", "DRAM"]
    assert any("L2 (1 MiB): no plateau of its own" in n for n in recs[-1].notes)


def test_a_real_sweep_records_every_point():
    """The family's own kernel on small working sets: the records' names and fields, and
    plateaus found from whatever it measured (no timing asserted)."""
    from numascope.families.bandwidth.bench import ARRAYS, BandwidthParams
    from numascope.families.bandwidth.family import Bandwidth
    topo = read_topology("/")
    cpu = topo.usable_cpus()[0]
    cases = sweep.cases(topo, ["triad", "read"], [cpu], BandwidthParams(reps=2),
                        4 * KIB, 64 * KIB)
    asked = dict(zip((c.label for c in cases), 2 * sweep.sizes(4 * KIB, 64 * KIB)))
    bench = Bandwidth()
    res = [bench.measure(topo, c) for c in cases]
    caps = sweep.capacities(topo, [cpu])
    assert len(res) == 2 * 17
    for r in res:
        p = r.params
        assert re.fullmatch(r"sweep (triad|read) [0-9.]+(B|KiB) 1T", r.case), r.case
        assert p["sweep"] is True and p["threads"] == 1
        assert p["working_set"] == ARRAYS[p["kernel"]] * p["array_bytes"]
        # the nearest whole elements to the working set asked
        assert abs(p["working_set"] - asked[r.case]) <= 4 * ARRAYS[p["kernel"]]
        assert p["per_thread_bytes"] == p["working_set"]
        assert p["level"] == sweep.level_of(p["working_set"], caps)
        assert p["level_bytes"] == dict(caps)
        assert r.validated and r.metrics["bandwidth"].median > 0
        assert not any("caches inflate" in n for n in r.notes)
    for r in sweep.plateau_results(res):
        assert re.fullmatch(r"plateau (L\d|DRAM) (triad|read) 1T", r.case), r.case
        lo, hi = r.params["working_set_range"]
        ws = {x.params["working_set"] for x in res if x.params["kernel"] == r.params["kernel"]}
        assert lo in ws and hi in ws and lo <= hi


# -- the command line ---------------------------------------------------------------------------
def test_bw_sweep_json(capsys):
    from numascope.cli import main
    rc = main(["bw", "--sweep", "--kernel", "triad", "--min", "4K", "--max", "32K",
               "--reps", "2", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["errors"] == []
    pts = [r for r in doc["results"] if "working_set" in r["params"]]
    assert len(pts) == 13 and all(r["params"]["sweep"] is True for r in pts)
    assert [r["params"]["working_set"] for r in pts] == \
        sorted(r["params"]["working_set"] for r in pts)
    (summary,) = doc["sweep"]
    assert summary["kernel"] == "triad" and summary["threads"] == 1
    plateau_cases = [r["case"] for r in doc["results"] if "plateau" in r["params"]]
    assert plateau_cases == [f"plateau {p['plateau']} triad 1T" for p in summary["plateaus"]]


def test_bw_sweep_defaults_to_four_kernels_on_one_thread(capsys):
    from numascope.cli import main
    assert main(["bw", "--sweep", "--min", "6K", "--max", "8K", "--reps", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    pts = [r for r in doc["results"] if "working_set" in r["params"]]
    assert {r["params"]["kernel"] for r in pts} == set(sweep.DEFAULT_KERNELS)
    assert {r["params"]["threads"] for r in pts} == {1}


def test_bw_sweep_table(capsys):
    from numascope.cli import main
    assert main(["bw", "--sweep", "--kernel", "read", "--min", "4K", "--max", "16K",
                 "--reps", "1"]) == 0
    out = capsys.readouterr().out
    assert "read, 1 thread" in out and "Plateaus (read, 1T)" in out and "working set" in out


@pytest.mark.parametrize("argv,msg", [
    (["--sweep", "--size", "1M"], "leave out --size"),
    (["--sweep", "--min", "1M", "--max", "4K"], "min <= max"),
    (["--sweep", "--min", "100"], "below the smallest working set"),
    (["--min", "8K"], "applies only with --sweep"),
    (["--sweep", "--scaling"], "does not go with --scaling"),
    (["--sweep", "--tier-sweep"], "does not go with --tier-sweep"),
    (["--sweep", "--per-octave", "0"], "--per-octave"),
    (["--sweep", "--max", "100T"], "free"),
    (["--sweep", "--threads", "999"], "999 threads"),
])
def test_bad_input_is_one_line_before_measuring(monkeypatch, capsys, argv, msg):
    from numascope.cli import main
    from numascope.errors import MeasurementError
    from numascope.families.bandwidth import bench

    def refuse(*a, **kw):
        raise MeasurementError("measured although the input was bad")
    monkeypatch.setattr(bench, "run", refuse)
    assert main(["bw", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert msg in err and len(err.splitlines()) == 1, err


# -- the figure ---------------------------------------------------------------------------------
def latency_sweep():
    return [BenchResult("latency", f"tlb {b}", {"kind": "idle", "mode": "tlb", "bytes": b,
                                                "stride": 256, "pages": "none", "cpu": 0},
                        {"latency": Metric("latency", "ns", False, [ns, ns * 1.1])})
            for b, ns in ((16 * KIB, 1.2), (256 * KIB, 4.0), (8 * MIB, 12.0),
                          (128 * MIB, 90.0))]


def titles(results):
    from numascope.report.html import figure_modules
    out = []
    for mod in figure_modules():
        if hasattr(mod, "figures"):
            out += [t for t, _ in mod.figures(results)]
    return out


def test_the_report_draws_the_sweep_figure_once():
    pts = planted_results()
    res = pts + sweep.plateau_results(pts) + latency_sweep()
    assert sum(t.startswith("Bandwidth by working set") for t in titles(res)) == 1


def test_the_figure_has_both_curves_when_the_run_has_a_latency_sweep():
    import matplotlib.pyplot as plt

    from numascope.families.bandwidth import sweep_figures
    pts = planted_results()
    ((_, alone),) = sweep_figures.figures(pts)
    ((title, both),) = sweep_figures.figures(pts + sweep.plateau_results(pts) + latency_sweep())
    assert title == "Bandwidth by working set (1T)"
    assert len(alone.axes) == 1 and len(both.axes) == 2
    ax, ax2 = both.axes
    assert ax.get_xscale() == "log" and "GB/s" in ax.get_ylabel() and "ns" in ax2.get_ylabel()
    texts = [t.get_text() for t in ax.texts]
    assert {"L1 200.0", "L2 100.0", "L3 50.0", "DRAM 15.0"} <= set(texts)
    assert {"L1 32 KiB", "L2 1 MiB", "L3 32 MiB"} <= set(texts)
    assert math.isclose(len(ax.lines), 1 + 3)          # the curve and three cache lines
    plt.close("all")


def test_no_sweep_no_figure():
    from numascope.families.bandwidth import sweep_figures
    assert sweep_figures.figures(latency_sweep()) == []


# -- numascope run --bw-sweep -------------------------------------------------------------------
def test_run_bw_sweep_stores_points_and_plateaus_and_reports_them(tmp_path, capsys):
    from numascope.analysis.efficiency import measured_from
    from numascope.cli import main
    from numascope.families.bandwidth.family import Bandwidth
    from numascope.profile import SMOKE
    report = tmp_path / "r.html"
    assert main(["run", "--smoke", "--stage", "bandwidth", "--bw-sweep", "--store",
                 str(tmp_path / "runs.db"), "--report", str(report), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    res = [BenchResult.from_dict(r) for r in doc["results"]]
    pts = [r for r in res if sweep.is_point(r)]
    assert pts and {r.params["kernel"] for r in pts} == {"triad"}
    assert max(r.params["working_set"] for r in pts) <= SMOKE.working_set + 24
    # the plateaus are the points' (Bandwidth.derived), stored after them
    got = [r.to_dict() for r in res if sweep.is_plateau(r)]
    assert got == [r.to_dict() for r in Bandwidth().derived(pts)]
    assert any(not sweep.is_point(r) and not sweep.is_plateau(r) for r in res)   # the stage
    assert "Bandwidth by working set (1T)" in report.read_text()
    # a cache-sized point is not the machine's measured DRAM bandwidth
    assert not measured_from(res)["dram_by"].startswith(("sweep ", "plateau "))


def test_the_default_run_has_no_sweep():
    from numascope.families.bandwidth.family import Bandwidth
    topo = read_topology("/")
    assert not any(c.label.startswith("sweep ") for c in Bandwidth().suite_cases(topo, "quick"))
    assert any(c.label.startswith("sweep triad")
               for c in Bandwidth(bw_sweep=True).suite_cases(topo, "quick"))


def test_bw_sweep_on_two_threads_counts_per_thread_and_in_all(capsys):
    from numascope.cli import main
    topo = read_topology("/")
    if len(topo.usable_cpus()) < 2:
        pytest.skip("needs two CPUs")
    assert main(["bw", "--sweep", "--kernel", "copy", "--threads", "2", "--min", "16K",
                 "--max", "32K", "--reps", "2", "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    pts = [r for r in doc["results"] if "working_set" in r["params"]]
    cpus = pts[0]["placement"]["cpus"]
    caps = sweep.capacities(topo, cpus)
    assert len(cpus) == 2 and len(pts) == 5
    for r in pts:
        p = r["params"]
        assert p["threads"] == 2 and p["per_thread_bytes"] == p["working_set"] // 2
        assert p["level"] == sweep.level_of(p["working_set"], caps)
        assert r["case"].endswith(" 2T")
    # late thread starts, however many, are one warning for the sweep
    assert " ".join(captured.err.split()).count("threads started") <= 1


def test_a_stopped_sweep_keeps_its_points_and_claims_no_plateau(monkeypatch, capsys):
    """Ctrl-C after 5 working sets: exit 130, the 5 points in the JSON, no plateau (a curve
    cut short would put the last plateau's edge where the stop came)."""
    from numascope.cli import main
    from numascope.families.bandwidth import bench
    real, calls = bench.run, []

    def run(*a, **kw):
        if len(calls) == 5:
            raise KeyboardInterrupt
        calls.append(1)
        return real(*a, **kw)
    monkeypatch.setattr(bench, "run", run)
    assert main(["bw", "--sweep", "--kernel", "read", "--min", "4K", "--max", "64K",
                 "--reps", "1", "--json"]) == 130
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["results"]) == 5 and all("working_set" in r["params"]
                                            for r in doc["results"])
    assert doc["errors"] and doc["errors"][0]["kind"] == "interrupted"


def test_a_curve_alternating_between_two_modes_keeps_its_levels():
    """A disturbed run whose points alternate 15 % above and below: the noise estimate
    grows, the levels (a factor 2 or more apart) stay."""
    pts = [(ws, v * (1.15 if i % 2 else 0.85)) for i, (ws, v) in enumerate(curve())]
    found = pl.find(pts, CAPS)
    assert names(found) == ["L1", "L2", "L3", "DRAM"]
    assert pl.noise([math.log(v) for _, v in pts]) > 0.2


def test_private_caches_larger_in_all_than_the_shared_one():
    """Every CPU of 4 sockets with 2 MiB of L2 per core and 6 MiB of L3 per 8 cores: the
    L2s hold 128 MiB in all, the L3s 48: working sets up to 128 MiB are L2's, none is
    L3's, and DRAM starts past the L2s."""
    topo = read_topology(str(hwloc_fixture("64amd64-4s2n4ca2co")))
    cpus = topo.usable_cpus()
    caps = sweep.capacities(topo, cpus)
    assert caps == [("L1", MIB), ("L2", 128 * MIB), ("L3", 48 * MIB)]
    assert sweep.level_of(64 * MIB, caps) == "L2" and sweep.level_of(129 * MIB, caps) == "DRAM"
    assert sweep.default_range(topo, cpus) == (64 * 4 * KIB, 512 * MIB)
    pts = [(ws, 900.0 if ws <= MIB else 400.0 if ws <= 100 * MIB else 100.0)
           for ws in sweep.sizes(256 * KIB, 512 * MIB)]
    found = pl.find(pts, caps)
    assert names(found) == ["L1", "L2", "DRAM"]
    assert found[1].spans == ["L2"] and all(p.lines_up for p in found)
    assert pl.levels_without_plateau(found, pts, caps) == []     # no working set is L3's
