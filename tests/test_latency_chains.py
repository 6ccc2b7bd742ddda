"""lat --chains: the knee and Little's law on planted timings; the C walk's validation and
shape; on this machine, 1 chain against `lat` and the gain of 16 chains over one."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

import pytest
from test_latency_distribution import assert_group_follows_the_timer

from numascope import _core
from numascope.families.latency import bench as lat
from numascope.families.latency import chains, distribution, family, mlp
from numascope.families.latency.distribution import TAIL_GROUPS
from numascope.families.latency.options import TABLE, WINDOW
from numascope.topology import read_topology


@pytest.fixture(scope="module")
def topo():
    return read_topology("/")


# -- planted timings: no C -----------------------------------------------------------------

def _saturating(latency: float, limit: float, counts: list[int]) -> list[mlp.Point]:
    """A core with `latency` ns per miss alone and at most `limit` loads per ns: a step of
    N chains takes the longer of the latency and N / limit."""
    return [mlp.Point(n, max(latency, n / limit)) for n in counts]


def test_knee_where_throughput_stops_rising_and_littles_law():
    k = mlp.knee(_saturating(100.0, 0.08, [1, 2, 4, 8, 16, 32]))
    assert k.reached and k.knee == 8
    assert [c for c, _ in k.gains] == [2, 4, 8, 16, 32]
    assert k.gains[0][1] == pytest.approx(1.0) and k.gains[3][1] == pytest.approx(0.0)
    assert k.plateau.loads_per_ns == pytest.approx(0.08)
    assert k.plateau.gbs == pytest.approx(0.08 * 64)
    assert k.outstanding == pytest.approx(8.0)          # 0.08 loads/ns x 100 ns
    assert k.headline() == "misses in flight per core ≈ 8.0"
    text = k.arithmetic()
    assert "0.0800 loads/ns" in text and "5.12 GB/s" in text and "100.0 ns" in text \
        and "= 8.0" in text
    assert "knee at 8 chains: 16 chains add +0% throughput, under the 10% rule" == k.rule()


def test_knee_rule_is_the_first_gain_under_ten_percent():
    # throughput 0.01, 0.02, 0.03, 0.0315 (+5 %), 0.05 (a late jump does not move the knee)
    ns = {1: 100.0, 2: 100.0, 4: 4 / 0.03, 8: 8 / 0.0315, 16: 16 / 0.05}
    k = mlp.knee([mlp.Point(n, v) for n, v in ns.items()])
    assert k.knee == 4 and k.reached
    assert k.plateau.chains == 16          # the plateau is the highest throughput measured
    assert k.outstanding == pytest.approx(0.05 * 100)
    # a gain just above the rule is still rising
    k = mlp.knee([mlp.Point(1, 100.0), mlp.Point(2, 2 / 0.0111)])
    assert not k.reached and k.knee == 2
    assert k.headline().startswith("misses in flight per core ≥ ")
    assert "no knee" in k.rule()


def test_knee_needs_two_counts_and_uses_the_fewest_without_one_chain():
    assert mlp.knee([mlp.Point(1, 90.0)]) is None
    assert mlp.knee([]) is None
    k = mlp.knee(_saturating(80.0, 0.1, [2, 4, 8, 16, 32]))
    assert k.base.chains == 2 and "no 1-chain figure" in k.arithmetic()
    assert k.knee == 8 and k.outstanding == pytest.approx(0.1 * 80.0)
    # order of the points does not matter
    assert mlp.knee(list(reversed(_saturating(80.0, 0.1, [2, 4, 8, 16])))).knee == 8


# -- the C walk ----------------------------------------------------------------------------

def _args(cpu: int, **kw) -> dict:
    """Every argument of _core.lat_chains (it has no defaults), from the option table and
    LatencyParams, as chains.run passes them; `kw` replaces some."""
    d = {"bytes": 1 << 20, "cpu": cpu, "chains": 4, "memory": None,
         "mode": TABLE["mode"].default, "window": WINDOW, "samples": TABLE["samples"].default,
         "loads": 1 << 14, "stride": TABLE["stride"].default, "seed": lat.LatencyParams.seed,
         "hist_groups": 0, "hist_group": lat.LatencyParams.dist_group,
         "layout": TABLE["chain_layout"].default}
    return d | kw


def test_chains_walk_validates_every_chain(topo):
    cpu = topo.usable_cpus()[0]
    # arena (the default): every chain through every element of the buffer
    r = _core.lat_chains(**_args(cpu, mode="random", samples=3))
    assert r["validated"] and r["chains"] == 4 and r["lines"] == (1 << 20) // 256
    assert r["params"]["layout"] == "arena" and r["bytes"] == 1 << 20
    assert r["cycle_walked"] == r["lines"] and r["steps"] == (1 << 14) // 4
    assert len(r["ns"]) == 3 and all(v > 0 for v in r["ns"] + r["tsc"])
    r = _core.lat_chains(**_args(cpu, chains=64, samples=2, loads=100, stride=512))
    assert r["validated"] and r["lines"] == 2048 and r["steps"] == 1
    # regions: each chain over its own 1/N of the buffer
    r = _core.lat_chains(**_args(cpu, mode="random", samples=3, layout="regions"))
    assert r["validated"] and r["lines"] == (1 << 20) // 256 // 4
    assert r["cycle_walked"] == r["lines"] and r["params"]["layout"] == "regions"
    r = _core.lat_chains(**_args(cpu, chains=64, samples=2, loads=100, stride=128,
                                 layout="regions"))
    assert r["validated"] and r["lines"] == 128 and r["steps"] == 1
    assert r["params"]["window_lines"] == WINDOW // 128


def test_the_arena_gives_each_chain_its_own_slot_of_every_element(topo):
    """32 chains at a 256 B stride fill every 8 B slot of every element exactly once: the
    buffer's words, read as pointers, are each some chain's link to a slot of an element,
    and every chain walked its whole cycle (validated) over all elements."""
    r = _core.lat_chains(**_args(topo.usable_cpus()[0], chains=32, bytes=1 << 18, samples=2,
                                 loads=1 << 12))
    assert r["validated"] and r["lines"] == (1 << 18) // 256 and r["cycle_walked"] == r["lines"]


def test_a_forced_group_is_the_group_timed(topo):
    r = _core.lat_chains(**_args(topo.usable_cpus()[0], samples=2, hist_groups=1024,
                                 hist_group=2))
    assert r["hist"]["group"] == 2 and r["params"]["hist_group"] == 2


@pytest.mark.parametrize("kw,words", [
    ({"chains": 0}, "chains must be in"),
    ({"chains": 65}, "chains must be in"),
    ({"chains": 4, "bytes": 256}, "at least two lines"),
    ({"chains": 2, "mode": "zigzag"}, "unknown chase mode"),
    ({"stride": 96}, "power of two"),
    ({"samples": 0}, "samples must be in"),
    ({"loads": 0}, "loads per sample"),
    ({"window": 256}, "fewer than two 256 B lines"),
    ({"window": -1}, "window must be"),
    ({"hist_groups": -1}, "groups per distribution chunk"),
    ({"hist_group": 999}, "loads per timed group"),
    ({"layout": "spiral"}, "unknown chain layout"),
    ({"chains": 33}, "at most stride/8 chains: 33 chains need a stride of at least 264"),
    ({"chains": 2, "bytes": 256, "layout": "regions"}, "at least two lines"),
])
def test_chains_bad_input(topo, kw, words):
    with pytest.raises(ValueError, match=words):
        _core.lat_chains(**_args(topo.usable_cpus()[0], **kw))


@pytest.mark.parametrize("missing", ["memory", "mode", "window", "samples", "loads",
                                     "stride", "seed", "hist_groups", "hist_group", "layout"])
def test_chains_kernel_has_no_defaults_of_its_own(topo, missing):
    """A parameter left out is refused, not filled in by C: the option table is the one
    source (a C default could drift from it unseen)."""
    args = _args(topo.usable_cpus()[0])
    del args[missing]
    with pytest.raises(TypeError, match=missing):
        _core.lat_chains(**args)


def test_the_kernel_walks_the_option_tables_defaults(topo):
    """lat --chains with nothing but the counts: the parameters the kernel echoes (what it
    walked) are the latency option table's defaults (stride, mode, samples), LatencyParams'
    window and seed, the resolved loads per sample, the distribution's groups; the record's
    params are the kernel's echo. A default changed in the table reaches the kernel, and
    one the kernel invented would fail here."""
    seen = []
    real = _core.lat_chains

    def spy(**kw):
        r = real(**kw)
        seen.append(r["params"])
        return r
    base = lat.LatencyParams(bytes=2 << 20, clock=False)
    (case,) = chains.cases(topo, base, [2])
    mp = pytest.MonkeyPatch()
    mp.setattr(_core, "lat_chains", spy)
    try:
        rec = chains.run(topo, case.params)
    finally:
        mp.undo()
    (used,) = seen
    assert used["stride"] == TABLE["stride"].default == 256
    assert used["mode"] == TABLE["mode"].default
    assert used["samples"] == TABLE["samples"].default
    assert used["window"] == WINDOW and used["window_lines"] == WINDOW // used["stride"]
    assert used["seed"] == lat.LatencyParams.seed
    assert used["loads"] == case.params.base.loads == 1 << 16     # <= 64 MiB: short samples
    assert used["hist_groups"] == distribution.DIST_GROUPS
    assert used["chains"] == 2 and used["bytes"] == 2 << 20
    for k in ("stride", "mode", "samples", "seed", "window", "chains", "bytes"):
        assert rec.params[k] == used[k], k


# -- this machine: the two checks ----------------------------------------------------

def _best(r) -> float:
    return r.metrics["latency"].min


def test_one_chain_is_lats_idle_latency_within_5_percent(topo):
    """The same buffer size, stride, mode and cycle (seed), alternating, best sample of
    each so far: neighbours on this shared host only ever add time, so the bests meet once
    each side has had a quiet sample; up to 6 rounds. A 1-chain walk slower or faster than
    `lat` by more than 5 % never meets it."""
    cpu = topo.usable_cpus()[0]
    base = lat.LatencyParams(bytes=lat.dram_size(topo, cpu), cpu=cpu, samples=15,
                             loads=1 << 14, clock=False).checked(topo)
    (case,) = chains.cases(topo, base, [1])
    plain, one = [], []
    for _ in range(6):
        plain.append(_best(lat.run(topo, base)))
        one.append(_best(chains.run(topo, case.params)))
        if min(one) == pytest.approx(min(plain), rel=0.05):
            break
    assert min(one) == pytest.approx(min(plain), rel=0.05), (plain, one)


def test_sixteen_chains_give_three_times_the_loads_of_one_in_dram(topo):
    cpu = topo.usable_cpus()[0]
    base = lat.LatencyParams(bytes=lat.dram_size(topo, cpu), cpu=cpu, samples=5,
                             clock=False).checked(topo)
    one, sixteen = (chains.run(topo, c.params) for c in chains.cases(topo, base, [1, 16]))
    ratio = sixteen.metrics["loads_per_ns"].median / one.metrics["loads_per_ns"].median
    assert ratio >= 3, ratio
    assert sixteen.metrics["bandwidth"].median == pytest.approx(
        sixteen.metrics["loads_per_ns"].median * 64)


def test_every_chains_record_carries_the_tail_of_its_steps(topo):
    """After the samples, single lockstep steps are timed (hist.h's pass): each record has
    latency_p50 ... latency_p999 and the histogram; a step with 16 misses in flight takes
    longer than one load alone at the median; hist_groups=0 makes no pass."""
    cpu = topo.usable_cpus()[0]
    base = lat.LatencyParams(bytes=lat.dram_size(topo, cpu), cpu=cpu, samples=3,
                             clock=False).checked(topo)
    one, sixteen = (chains.run(topo, c.params) for c in chains.cases(topo, base, [1, 16]))
    for r in (one, sixteen):
        q = [statistics.median(r.metrics[f"latency_p{p}"].values) for p in (50, 90, 99, 999)]
        assert 0 < q[0] <= q[1] <= q[2] <= q[3], q
        d = r.distributions["latency"]
        assert "lockstep" in d["method"]
        assert_group_follows_the_timer(d, r.metrics["latency"].median)
        # 3 chunks of 16384 would hold fewer than the pass's least (TAIL_GROUPS): 33334 each
        assert sum(d["counts"]) == d["groups"] == 3 * 33334 >= TAIL_GROUPS
        assert d["beyond"]["latency_p999"] == 100 and d["thin"] == []
        assert "lockstep step" in r.metrics["latency_p999"].note
    assert statistics.median(sixteen.metrics["latency_p50"].values) > \
        statistics.median(one.metrics["latency_p50"].values)
    r = _core.lat_chains(**_args(cpu, samples=2, loads=1 << 12, hist_groups=0))
    assert r["hist"] is None and r["validated"]


# -- the command ---------------------------------------------------------------------------

def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "numascope", *args], capture_output=True,
                          check=False, text=True, timeout=300)


def test_lat_chains_json_and_text():
    p = _run("lat", "--chains", "4,1,2", "--size", "2M", "--samples", "2", "--loads",
             "4096", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert [r["params"]["chains"] for r in d["results"]] == [1, 2, 4]
    assert all(r["params"]["kind"] == "chains" for r in d["results"])
    (s,) = d["mlp"]
    assert [c["chains"] for c in s["counts"]] == [1, 2, 4]
    assert s["knee"]["base_chains"] == 1 and "Little's law" in s["knee"]["text"]
    p = _run("lat", "--chains", "1,2", "--size", "2M", "--samples", "2", "--loads", "4096")
    assert p.returncode == 0, p.stderr
    assert "misses in flight per core" in p.stdout and "Little's law" in p.stdout


@pytest.mark.parametrize("args", [
    ["--chains", "0"],
    ["--chains", "65"],
    ["--chains", "1,x"],
    ["--chains", "4", "--sweep"],
    ["--chains", "4", "--loaded"],
    ["--chains", "64", "--size", "16K"],
])
def test_lat_chains_bad_input_one_line_exit_2(args):
    p = _run("lat", *args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


# -- the suite -----------------------------------------------------------------------------

def test_one_core_per_l3_kind(topo):
    from dataclasses import replace

    from numascope.topology.model import L3Domain
    cpus = topo.usable_cpus()
    a, b = cpus[0], cpus[-1]
    mib = 1 << 20
    t = replace(topo, l3s=[L3Domain(0, 32 * mib, (a,), None, ()),
                           L3Domain(1, 96 * mib, (b,), None, ()),     # stacked cache: a kind
                           L3Domain(2, 32 * mib, (b,), None, ())])    # a first kind again
    assert chains.l3_kind_cpus(t) == sorted({a, b})
    assert chains.l3_kind_cpus(replace(topo, l3s=[])) == [cpus[0]]


def test_the_suite_has_chains_in_both_profiles_named_by_role(topo):
    """quick (the default) and full measure the counts on the first core of each L3 kind;
    the case names the role, never the CPU number (a fleet's nodes bound elsewhere measure
    the same case)."""
    from numascope.profile import FULL, QUICK
    want = [(cpu, n) for cpu in chains.l3_kind_cpus(topo) for n in chains.SUITE_COUNTS]
    for prof in (QUICK, FULL):
        got = [c for c in family.suite_cases(topo, prof) if c.params.kind == "chains"]
        assert [(c.params.base.cpu, c.params.chains) for c in got] == want
        assert all(c.params.base.samples == prof.samples for c in got)
        assert not any(f"cpu{c.params.base.cpu}" in c.params.label() for c in got)
    full = [c for c in family.suite_cases(topo, FULL) if c.params.kind == "chains"]
    assert all(c.params.base.bytes == lat.dram_size(topo, c.params.base.cpu) for c in full)
    quick = [c for c in family.suite_cases(topo, QUICK) if c.params.kind == "chains"]
    assert all(c.params.base.loads == 1 << 17 for c in quick)


def _planted(n: int, ns: float, node: int | None = None):
    from numascope.results.record import BenchResult, Metric
    return BenchResult(
        family="latency", case=f"chains={n}",
        params={"kind": "chains", "chains": n, "cpu": 0, "node": node, "bytes": 1 << 30,
                "mode": "tlb", "pages": "none", "stride": 256},
        metrics={"latency": Metric("latency", "ns", False, [ns]),
                 "loads_per_ns": Metric("loads_per_ns", "loads/ns", True, [n / ns]),
                 "bandwidth": Metric("bandwidth", "GB/s", True, [n / ns * 64]),
                 "tsc_cycles": Metric("tsc_cycles", "TSC cycles", False, [ns * 2.5])})


def test_series_summaries_and_the_plot_on_planted_results():
    from numascope.families.latency import figures
    local = [_planted(n, max(100.0, n / 0.08)) for n in (1, 2, 4, 8, 16)]
    remote = [_planted(n, max(200.0, n / 0.05), node=1) for n in (1, 2, 4, 8, 16, 32)]
    sums = chains.summaries(local + remote)
    assert [s["node"] for s in sums] == [None, 1]
    assert sums[0]["knee"]["knee_chains"] == 8 and sums[0]["knee"]["outstanding"] == \
        pytest.approx(8.0)
    assert sums[1]["knee"]["knee_chains"] == 16 and sums[1]["knee"]["outstanding"] == \
        pytest.approx(10.0)                                  # 0.05 loads/ns x 200 ns
    titles = [t for t, _ in figures.figures(local + remote)]
    assert "Memory-level parallelism" in titles


def test_matrix_chains_adds_misses_in_flight_per_pair():
    p = _run("matrix", "--what", "latency", "--chains", "4", "--size", "2M", "--samples", "2",
             "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    for r in d["results"]:
        m = r["metrics"]
        assert m["mlp"]["unit"] == "misses" and all(v > 0 for v in m["mlp"]["values"])
        # Little's law: GB/s / 64 B = loads per ns; x the pair's 1-chain latency
        lat_ns = statistics.median(m["latency"]["values"])
        assert m["mlp"]["values"][0] == pytest.approx(
            m["mlp_bandwidth"]["values"][0] / 64 * lat_ns, rel=0.02)
    assert set(d["ratios_by_distance"]) == {"latency", "mlp", "mlp_bandwidth"}
    p = _run("matrix", "--what", "bandwidth", "--chains", "4")
    assert p.returncode == 2 and "applies only with --what" in p.stderr


CTRL_C = r"""
import os, signal, threading, time
from numascope import _core

cpu = sorted(os.sched_getaffinity(0))[0]
def call(samples):
    return _core.lat_chains(32 << 20, cpu, 8, None, "tlb", 256 << 10, samples, 1 << 18, 256,
                            1, 0, 0, "arena")

t0 = time.perf_counter()
call(3)
short = time.perf_counter() - t0             # setup + 3 samples
threading.Timer(2 * short, os.kill, (os.getpid(), signal.SIGINT)).start()
t0 = time.perf_counter()
try:
    call(120)                                # >= 40x the short call
    print("not interrupted")
except KeyboardInterrupt:
    took = time.perf_counter() - t0
    print(f"interrupted after {took:.2f} s (short call {short:.2f} s)")
    raise SystemExit(0 if took < 10 * short else 1)
"""


def test_ctrl_c_stops_the_chains_between_pieces():
    p = subprocess.run([sys.executable, "-c", CTRL_C], capture_output=True, text=True,
                       timeout=600, check=False)
    assert "interrupted after" in p.stdout, p.stdout + p.stderr
    assert p.returncode == 0, p.stdout


def test_the_report_carries_the_mlp_plot():
    from test_store_helpers import make_run

    from numascope.report import html as report_html
    run = make_run(results=[_planted(n, max(100.0, n / 0.08)) for n in (1, 2, 4, 8, 16)])
    text = report_html.render([run])
    assert text.count('aria-label="Memory-level parallelism"') == 1       # drawn once, not twice
    assert "plots of numascope.families.latency.figures failed" not in text


def test_plot_file_holds_the_modes_figure_and_extras_are_named_for_what_they_show(tmp_path):
    from numascope.command.runner import Outcome, save_plot
    results = [_planted(n, max(100.0, n / 0.08)) for n in (1, 2, 4, 8, 16)]
    import matplotlib
    matplotlib.use("Agg")
    from numascope.families.latency import figures
    titles = [t for t, _ in figures.figures(results)]
    assert titles[0] == "Memory-level parallelism"
    save_plot(tmp_path / "mlp.png", "latency.figures", Outcome(results=results))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert "mlp.png" in names and not any(n.startswith("mlp-2") for n in names), names
    assert all(n == "mlp.png" or n.startswith("mlp-latency-") for n in names), names
