"""The single-load latency distribution: quantiles of planted histograms, the C pass's
buckets, a DRAM chase on this machine, the record, the table, the figure, and compare
--metric on the tail."""

from __future__ import annotations

import io
import itertools
import json
import math
import random
from dataclasses import replace

import pytest
from rich.console import Console
from test_store_helpers import make_run, noisy

from numascope.cli import main as cli
from numascope.families.latency import bench as lat
from numascope.families.latency import distribution as dist
from numascope.results.record import BenchResult, Metric
from numascope.results.store import Store
from numascope.topology import read_topology


@pytest.fixture(scope="module")
def topo():
    return read_topology("/")


# -- planted histograms ---------------------------------------------------------------------

def test_quantiles_of_a_planted_histogram():
    edges, counts = [0, 10, 20, 30, 40], [10, 80, 9, 1]     # 100 values
    assert dist.quantile(edges, counts, 50) == pytest.approx(15.0)   # 10 + 10 x 40/80
    assert dist.quantile(edges, counts, 90) == pytest.approx(20.0)   # end of bucket 2
    assert dist.quantile(edges, counts, 99) == pytest.approx(30.0)
    assert dist.quantile(edges, counts, 99.9) == pytest.approx(39.0)  # 30 + 10 x 0.9/1
    assert dist.quantile(edges, counts, 0) == 0
    assert dist.quantile([0, 1, 2, 3], [0, 5, 0], 50) == pytest.approx(1.5)  # empties skipped
    assert math.isnan(dist.quantile([0, 1], [0], 50))
    with pytest.raises(ValueError):
        dist.quantile(edges, counts, 100.1)
    with pytest.raises(ValueError):
        dist.quantile(edges, counts[:-1], 50)


def _planted_hist(group: int = 1) -> dict:
    """lat_chase's "hist" as a fake timer would give it: 2 TSC ticks per ns; two chunks of
    1000 groups over buckets of 100 ticks (50 ns of a group)."""
    return {"edges": [0, 100, 200, 300, 400, 800], "group": group, "groups": 1000,
            "counts": [[0, 900, 90, 9, 1], [0, 800, 180, 18, 2]],
            "overhead": 60.0, "empty_p5": 52, "empty_p50": 60, "empty_p95": 78,
            "step": 2, "tsc_ghz": 2.0}


def test_planted_chunks_give_known_metrics_and_histogram():
    metrics, d = dist.from_core(_planted_hist())
    assert list(metrics) == ["latency_p50", "latency_p90", "latency_p99", "latency_p999"]
    assert d["counts"] == [0, 1700, 270, 27, 3] and d["groups"] == 2000
    assert d["edges"] == [0, 50, 100, 150, 200, 400] and d["chunks"] == 2
    # one value each, from the merged histogram: p50 at 1000/1700 of [50, 100) ns ...
    assert metrics["latency_p50"].values == pytest.approx([50 + 50 * 1000 / 1700], abs=1e-3)
    assert metrics["latency_p90"].values == pytest.approx([100 + 50 * 100 / 270], abs=1e-3)
    assert metrics["latency_p99"].values == pytest.approx([150 + 50 * 10 / 27], abs=1e-3)
    assert metrics["latency_p999"].values == pytest.approx([200 + 200 * 1 / 3], abs=1e-3)
    # ... not the median of the chunks' own p99.9 (200 and 300 ns: 250)
    assert metrics["latency_p999"].median != pytest.approx(250.0, abs=1)
    assert d["quantiles"]["latency_p999"] == metrics["latency_p999"].values[0]
    assert all(not m.higher_is_better and m.unit == "ns" for m in metrics.values())
    assert d["overhead_ns"] == 30 and d["tsc_step_ns"] == 1 and d["resolution_ns"] == 1
    assert d["loads_per_group"] == 1 and "rdtscp" in d["method"]
    # 2000 groups: 1000, 200, 20 and 2 beyond; p99 and p99.9 rest on fewer than 100
    assert d["beyond"] == {"latency_p50": 1000, "latency_p90": 200, "latency_p99": 20,
                           "latency_p999": 2}
    assert d["thin"] == ["latency_p99", "latency_p999"] and d["min_beyond"] == 100
    assert "2000 timed groups (2 chunks merged), 2 beyond it (†" in metrics["latency_p999"].note
    assert "†" not in metrics["latency_p90"].note


def test_groups_of_several_loads_give_ns_per_load():
    metrics, d = dist.from_core(_planted_hist(group=4))
    assert d["edges"] == [0, 12.5, 25, 37.5, 50, 100] and d["resolution_ns"] == 0.25
    assert metrics["latency_p999"].values == pytest.approx([50 + 50 / 3], abs=1e-3)
    assert "groups of 4 loads" in metrics["latency_p99"].note


def test_no_pass_no_metrics():
    assert dist.from_core(None) == ({}, None)
    assert dist.from_core({**_planted_hist(), "tsc_ghz": 0}) == ({}, None)


# -- one histogram of a case's loads ---------------------------------------------------------

def _index(v: int) -> int:
    """hist.h's hist_index: the bucket of v TSC ticks (exact below 64, then 32 per power
    of two)."""
    v = min(v, (1 << 36) - 1)
    if v < 64:
        return v
    shift = v.bit_length() - 1 - 5
    return shift * 32 + (v >> shift)


def _lower(i: int) -> int:
    """hist.c's hist_lower_edge: the smallest value bucket i holds."""
    shift = 0 if i < 64 else i // 32 - 1
    return (i - shift * 32) << shift


def _hist(chunks: list[list[int]], ghz: float = 2.6, group: int = 1) -> dict:
    """lat_chase's "hist" of these chunks of group times (ticks), as hist_to_py gives it:
    the buckets from the first used to the last, in every chunk."""
    used = [_index(v) for c in chunks for v in c]
    lo, hi = min(used), max(used) + 1
    counts = []
    for c in chunks:
        row = [0] * (hi - lo)
        for v in c:
            row[_index(v) - lo] += 1
        counts.append(row)
    return {"edges": [_lower(i) for i in range(lo, hi + 1)], "counts": counts,
            "group": group, "groups": max(map(len, chunks)), "overhead": 60.0,
            "empty_p5": 52, "empty_p50": 60, "empty_p95": 78, "step": 1, "tsc_ghz": ghz}


def _loads(n: int, seed: int) -> list[int]:
    """n group times in ticks: ~390 (150 ns) with a heavy tail to ~10^6 (preemptions)."""
    rng = random.Random(seed)
    return [int(390 * rng.lognormvariate(0, 0.3) / (rng.random() ** 0.4)) for _ in range(n)]


def test_the_python_buckets_are_the_c_ones():
    assert [_lower(_index(v)) for v in (0, 63, 64, 65, 66, 127, 128, 129, 131, 132, 4000)] \
        == [0, 63, 64, 64, 66, 126, 128, 128, 128, 132, 3968]
    assert all(_lower(_index(_lower(i))) == _lower(i) for i in range(1024))


def test_the_merged_histogram_is_the_histogram_of_all_the_loads():
    loads = _loads(30_000, 1)
    chunks = [loads[k:k + 6000] for k in range(0, len(loads), 6000)]
    m_chunks, d_chunks = dist.from_core(_hist(chunks))
    m_all, d_all = dist.from_core(_hist([loads]))
    assert d_chunks["counts"] == d_all["counts"] and d_chunks["edges"] == d_all["edges"]
    assert d_chunks["chunks"] == 5 and d_all["chunks"] == 1 and d_chunks["groups"] == 30_000
    for k in ("quantiles", "beyond", "thin"):
        assert d_chunks[k] == d_all[k]
    assert {k: m.values for k, m in m_chunks.items()} == {k: m.values for k, m in m_all.items()}


def test_batches_with_their_own_tsc_rate_merge_into_the_histogram_of_all_loads():
    """--samples auto: each batch's pass measures the TSC's rate anew (in the 5th digit);
    the batches' buckets are one grid of ticks and add up to the histogram of every load."""
    a, b, c = _loads(20_000, 2), _loads(12_000, 3), _loads(500, 4)
    b[0] = 5_000_000                                  # one batch reaches further
    rates = (2.59606, 2.59589, 2.59602)
    parts = [dist.from_core(_hist([x[:len(x) // 2], x[len(x) // 2:]], ghz))[1]
             for x, ghz in zip((a, b, c), rates)]
    got = dist.combine(parts)
    ghz = (2.59606 * 20_000 + 2.59589 * 12_000 + 2.59602 * 500) / 32_500
    _, want = dist.from_core(_hist([a + b + c], ghz))
    assert got["counts"] == want["counts"] and got["groups"] == 32_500 and got["chunks"] == 6
    assert got["edges"] == pytest.approx(want["edges"], abs=2e-4)
    assert got["tsc_ghz"] == pytest.approx(ghz)
    assert got["beyond"] == want["beyond"] and got["thin"] == want["thin"] == ["latency_p999"]
    assert got["quantiles"] == pytest.approx(want["quantiles"], abs=2e-3)
    metrics = dist.metrics(got)
    assert metrics["latency_p999"].values == [got["quantiles"]["latency_p999"]]
    assert "32500 timed groups (6 chunks merged), 32 beyond" in metrics["latency_p999"].note


@pytest.mark.parametrize("n", [1000, 2000, 16384, 99_999, 100_000, 245_760])
def test_the_loads_beyond_each_percentile_are_counted_right(n):
    values = random.Random(n).sample(range(10 * n), n)          # distinct
    s = sorted(values)
    for name, q in dist.QUANTILES:
        at = s[math.ceil(n * q / 100 - 1e-9) - 1]           # the percentile's rank
        assert dist.beyond(n, q) == sum(v > at for v in values), (name, n)
    assert dist.beyond(16384, 99.9) == 16                 # one chunk: ~16 beyond p99.9
    assert dist.beyond(dist.TAIL_GROUPS, 99.9) == dist.MIN_BEYOND   # the pass's least
    assert dist.beyond(dist.TAIL_GROUPS - 1, 99.9) == dist.MIN_BEYOND - 1


def test_a_record_from_before_marks_its_one_chunk_tails():
    """Records from before held one value per chunk of 16384 groups: 16 beyond p99.9."""
    old = BenchResult("latency", "x", {}, {}, distributions={"latency": {
        "groups": 5 * 16384, "chunks": 5, "loads_per_group": 1}})
    assert dist.thin(old) == ["latency_p999"]
    assert dist.thin(BenchResult("latency", "x", {}, {})) == []


def test_a_tail_from_enough_loads_is_not_marked():
    loads = _loads(dist.TAIL_GROUPS, 5)
    metrics, d = dist.from_core(_hist([loads[:50_000], loads[50_000:]]))
    assert d["beyond"]["latency_p999"] == 100 and d["thin"] == []
    assert "†" not in metrics["latency_p999"].note
    _, d = dist.from_core(_hist([loads[:-1]]))
    assert d["beyond"]["latency_p999"] == 99 and d["thin"] == ["latency_p999"]


# -- the C pass -----------------------------------------------------------------------------

def test_the_passes_buckets_are_log_linear(topo):
    from numascope import _core
    r = _core.lat_chase(1 << 20, topo.usable_cpus()[0], None, "tlb", 256 << 10, 2, 1 << 12,
                        256, 1, 4096)
    h = r["hist"]
    if h is None:
        pytest.skip("no serialising timestamp on this CPU")
    e = h["edges"]
    assert all(b > a for a, b in itertools.pairwise(e))
    assert all(b - a == 1 for a, b in itertools.pairwise(e) if b <= 64)            # exact below 64
    assert all(b - a <= a / 32 for a, b in itertools.pairwise(e) if a >= 64)       # 1/32 above
    assert all(len(c) == len(e) - 1 for c in h["counts"]) and len(h["counts"]) == 2
    assert all(_lower(_index(x)) == x for x in e)                   # hist.h's grid
    # 4096 groups asked per chunk, but a pass times TAIL_GROUPS at least: 50000 each
    assert [sum(c) for c in h["counts"]] == [50_000, 50_000] and h["groups"] == 50_000
    assert h["step"] >= 1 and h["empty_p5"] <= h["empty_p50"] <= h["empty_p95"]
    assert 0 < h["overhead"] <= h["empty_p95"] * 1.5 and h["tsc_ghz"] > 0.1
    with pytest.raises(ValueError):
        _core.lat_chase(1 << 20, topo.usable_cpus()[0], None, "tlb", 256 << 10, 2, 1 << 12,
                        256, 1, 4096, 999)
    assert _core.lat_chase(1 << 20, topo.usable_cpus()[0], None, "tlb", 256 << 10, 1,
                           1 << 12, 256, 1, 0)["hist"] is None                # none asked


def assert_group_follows_the_timer(d: dict, ns_per_load: float) -> None:
    """hist.c's rule: the smallest power of two g with g x (a load's time) >= 4 x the
    timer's overhead, told from the pass's own figures (10 % slack: the C side judges by the
    samples' median in TSC ticks, the record's median is in ns)."""
    g, four = d["loads_per_group"], 4 * d["overhead_ns"]
    assert g >= 1 and g & (g - 1) == 0, g
    assert g * ns_per_load * 1.1 >= four, (g, ns_per_load, d["overhead_ns"])
    assert g == 1 or (g // 2) * ns_per_load * 0.9 < four, (g, ns_per_load, d["overhead_ns"])


def test_dram_chase_has_an_ordered_tail_near_the_mean(topo):
    cpu = topo.usable_cpus()[0]
    # a sample is 65,536 loads (~8 ms): under other work every sample of one chase can hold
    # slices of other processes (a best sample of 443 ns/load against single loads' p50 of
    # 134 ns was seen at load 5), so the chase is taken again, up to 3 times, and the least
    # disturbed one judged (the single loads' histogram is what is under test)
    best = None
    for _ in range(3):
        r = lat.chase(topo, lat.dram_size(topo, cpu), cpu, samples=5, loads=1 << 16,
                      clock=False)
        if "latency" not in r.distributions:
            pytest.skip("no serialising timestamp on this CPU")
        if best is None or r.metrics["latency"].min < best.metrics["latency"].min:
            best = r
        if best.metrics["latency"].min < 3 * best.distributions["latency"]["quantiles"][
                "latency_p50"]:
            break
    r = best
    d = r.distributions["latency"]
    # the pass chose its group from this host's timer: a DRAM load alone where it lasts 4x
    # the timer's overhead (AMD Zen here), 2 or more loads where the timer costs more
    assert_group_follows_the_timer(d, r.metrics["latency"].median)
    q = d["quantiles"]
    assert q["latency_p999"] >= q["latency_p99"] >= q["latency_p90"] >= q["latency_p50"] > 0
    # the samples' best ns per load: on this shared 2-CPU host a sample's wall time also
    # holds the time other processes had the CPU (the single loads put that beyond p99.9)
    mean = r.metrics["latency"].min
    assert mean / 3 < q["latency_p50"] < mean * 2, (q, mean)
    assert mean / 3 < r.metrics["latency_p50"].median < mean * 2
    below = [(a + b) / 2 * c for a, b, c in zip(d["edges"], d["edges"][1:], d["counts"])
             if b <= q["latency_p999"]]       # the histogram's mean, up to p99.9
    assert mean / 3 < sum(below) / (0.999 * d["groups"]) < mean * 2   # overhead about right
    # 5 chunks of 16384 would hold 81920 groups: 20000 each instead, 100 beyond p99.9
    assert r.metrics["latency_p999"].values == [q["latency_p999"]] and d["chunks"] == 5
    assert d["groups"] == dist.TAIL_GROUPS and d["beyond"]["latency_p999"] == 100
    assert d["thin"] == []
    assert 0 < d["overhead_ns"] < mean and 0 < d["resolution_ns"] < mean / 2
    back = BenchResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back.distributions == json.loads(json.dumps(r.distributions))


def test_samples_auto_reads_the_tail_from_every_batch(topo):
    """--samples auto chases in units (separate calls, each its own allocation): each pass
    measures the TSC's rate anew, yet their histograms merge into one (the later units time
    groups as the first did), and the tail metrics are that histogram's, one value each."""
    from numascope.steady import Steady
    r = lat.chase(topo, 1 << 20, topo.usable_cpus()[0], loads=1 << 10, clock=False,
                  samples=Steady(precision=0.001, max_reps=15, budget_s=60))
    if "latency" not in r.distributions:
        pytest.skip("no serialising timestamp on this CPU")
    n, units = r.params["samples"], r.params["steady"]["units"]
    assert units >= 4          # the least units a verdict is made from: several to merge
    d = r.distributions["latency"]
    # each unit's pass times its share of the case's tail: merged, the case has them all
    assert d["chunks"] == n and d["groups"] == sum(d["counts"]) >= dist.TAIL_GROUPS
    assert r.metrics["latency_p999"].values == [d["quantiles"]["latency_p999"]]
    assert d["beyond"]["latency_p999"] == dist.beyond(d["groups"], 99.9) and d["thin"] == []


def _planted_units(topo, kind: str, monkeypatch):
    """--samples auto over planted units (lat_chase / lat_chains answering with 10000 groups
    each of ~390 ticks): unit 0 with 30 groups at ~10^5 ticks, unit 1 with 30 at ~5 x 10^4,
    the rest none. Each unit's p99.9 (10 groups beyond it) is in its own tail or body; the
    merged one (40 beyond of 40000) falls among unit 1's groups, far from the median of the
    units' p99.9s. The samples agree exactly, so the rule stops at its least units."""
    from numascope import _core
    from numascope.families.latency import chains
    from numascope.steady import MIN_UNITS, Steady
    tails = [[100_000] * 30, [50_000] * 30] + [[] for _ in range(MIN_UNITS)]
    hists: list[dict] = []

    def answer(samples: int, **extra) -> dict:
        k = len(hists)
        body = [390 + (i % 7) for i in range(10_000 - len(tails[k]))]
        hists.append(_hist([body + tails[k]]))
        return {"ns": [150.0] * samples, "tsc": [390.0] * samples, "huge_fraction": 0.0,
                "cycle_walked": 0, "where": {}, "hist": hists[-1], **extra}

    rule = Steady(precision=0.01, budget_s=60)
    cpu = topo.usable_cpus()[0]
    if kind == "idle":
        monkeypatch.setattr(_core, "lat_chase", lambda *a: answer(a[5]))
        p = lat.LatencyParams(bytes=1 << 20, cpu=cpu, clock=False).checked(topo)
        res = lat.run(topo, replace(p, samples=rule))
    else:
        def lat_chains(**kw) -> dict:
            return answer(kw["samples"], steps=kw["loads"] // kw["chains"], lines=4096,
                          params={**kw, "layout": kw["layout"]})
        monkeypatch.setattr(_core, "lat_chains", lat_chains)
        base = lat.LatencyParams(bytes=1 << 20, cpu=cpu, clock=False)
        (case,) = chains.cases(topo, base, [2])
        res = chains.run(topo, replace(case.params, base=replace(case.params.base,
                                                                 samples=rule)))
    return res, [dist.from_core(h)[1] for h in hists]


@pytest.mark.parametrize("kind", ["idle", "chains"])
def test_samples_auto_tails_are_the_merged_histograms_not_a_median_of_units(
        topo, kind, monkeypatch):
    """The idle chase and lat --chains under --samples auto: one value per tail metric, the
    merged histogram's quantile, with its note and † from the merged count; never the
    median of the units' own quantiles (which here differs by half)."""
    import statistics
    res, units = _planted_units(topo, kind, monkeypatch)
    assert res.params["steady"]["units"] == len(units) == 4
    d = res.distributions["latency"]
    assert d["groups"] == 40_000 and d["chunks"] == 4
    merged = d["quantiles"]["latency_p999"]
    per_unit = statistics.median(u["quantiles"]["latency_p999"] for u in units)
    assert merged > 1.5 * per_unit           # the hard case: the two readings disagree
    for name, _ in dist.QUANTILES:
        assert res.metrics[name].values == [d["quantiles"][name]], name
    m = res.metrics["latency_p999"]
    assert m.median == merged and "one histogram of the case's 40000 timed groups (4 chunks " \
        "merged), 40 beyond it (†: fewer than 100)" in m.note
    assert ("lockstep step" in m.note) == (kind == "chains")
    assert dist.thin(res) == d["thin"] == ["latency_p999"]     # 400 beyond p99, 40 p99.9


def test_units_whose_histograms_do_not_merge_give_no_tail_figure():
    """Where the units' grids differ (another group size), no histogram and no tail metric:
    the per-unit values steady.gather joined are not the case's quantiles."""
    a = dist.from_core(_hist([_loads(5000, 7)]))
    b = dist.from_core(_hist([_loads(5000, 8)], group=2))
    units = [BenchResult("latency", "x", {}, {**m, "latency": Metric("latency", "ns", False,
                                                                      [150.0])},
                         distributions={"latency": d}) for m, d in (a, b)]
    res = BenchResult("latency", "x", {}, {
        "latency": Metric("latency", "ns", False, [150.0, 150.0]),
        **{n: Metric(n, "ns", False, [u.metrics[n].values[0] for u in units])
           for n, _ in dist.QUANTILES}})
    dist.merge_units(res, units)
    assert list(res.metrics) == ["latency"] and res.distributions == {}
    assert any("do not merge" in n for n in res.notes)


def test_the_thin_note_counts_what_the_mark_counts():
    """The † counts timed groups beyond the figure (dist.beyond of the groups); with groups
    of 4 loads that is a quarter of the loads, and the note says groups, never loads."""
    metrics, d = dist.from_core(_planted_hist(group=4))
    assert d["beyond"]["latency_p999"] == dist.beyond(d["groups"], 99.9)
    assert "timed groups beyond it" in dist.THIN_NOTE and "loads beyond" not in dist.THIN_NOTE
    assert f"{d['beyond']['latency_p999']} beyond it" in metrics["latency_p999"].note


def test_records_without_a_distribution_keep_their_shape():
    r = BenchResult("bandwidth", "x", {}, {"bandwidth": Metric("bandwidth", "GB/s", True, [1.0])})
    assert "distributions" not in r.to_dict()
    assert BenchResult.from_dict(r.to_dict()).distributions == {}


# -- the table and the figure -----------------------------------------------------------------

def _record(hist: dict | None = None) -> BenchResult:
    """A 1 GiB idle result with the tail of `hist` (default: the planted 2000 groups, whose
    p99 and p99.9 rest on 20 and 2 groups beyond them)."""
    metrics, d = dist.from_core(hist or _planted_hist())
    return BenchResult("latency", "tlb 1 GiB stride 256",
                       {"kind": "idle", "bytes": 1 << 30, "mode": "tlb", "stride": 256,
                        "pages": "none"},
                       {"latency": Metric("latency", "ns", False, [150.0, 151.0, 152.0]),
                        "tsc_cycles": Metric("tsc_cycles", "TSC cycles", False, [390.0]),
                        **metrics},
                       {"huge_fraction": 0.0}, distributions={"latency": d})


def _table(results: list[BenchResult]) -> str:
    from numascope.families.latency.command import _print
    con = Console(width=80, record=True, file=io.StringIO(), color_system=None)
    _print(results, {}, con)
    return con.export_text()


def test_table_prints_the_tail_beside_the_samples():
    text = _table([_record(_hist([_loads(dist.TAIL_GROUPS, 6)]))])
    assert "p99.9" in text and "p99, p99.9 load: the tail of single" in text
    assert "one histogram of the case's 100000 timed groups" in " ".join(text.split())
    assert "†" not in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80 and "…" not in text


def test_a_tail_from_fewer_than_100_loads_is_marked_in_the_table():
    text = _table([_record()])
    assert "266.7†" in text and "168.5†" in text        # p99.9, p99: 2 and 20 beyond
    assert dist.THIN_NOTE.split(":")[0] in " ".join(text.split())
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80 and "…" not in text


def test_a_thin_tail_is_marked_in_the_report():
    from numascope.report.html import render
    from numascope.report.terminal import print_run
    run = make_run({}, [_record()])
    html = render([run])
    assert "266.667†" in html or "266.7†" in html
    assert dist.THIN_NOTE.split(":")[0] in html
    con = Console(width=120, record=True, file=io.StringIO(), color_system=None)
    print_run(run, con, all_metrics=True)
    text = con.export_text()
    assert "†" in text and "fewer than 100 timed groups beyond" in " ".join(text.split())
    con = Console(width=120, record=True, file=io.StringIO(), color_system=None)
    print_run(make_run({}, [_record(_hist([_loads(dist.TAIL_GROUPS, 6)]))]), con,
              all_metrics=True)
    assert "†" not in con.export_text()
    assert "†" not in render([make_run({}, [_record(_hist([_loads(dist.TAIL_GROUPS, 6)]))])])


def test_the_distribution_is_drawn_by_lat_and_the_report():
    from numascope.families.latency.figures import figures
    from numascope.report.html import render
    names = [name for name, _ in figures([_record()])]
    assert "Latency distribution" in names
    assert 'aria-label="Latency distribution"' in render([make_run({}, [_record()])])


# -- compare --metric -------------------------------------------------------------------------

def _tail_run(tag: str, p999: float, seed: int, group: int | None = None):
    """A run of one idle case: the samples, the tail and (`group`: its loads per timed
    group) the histogram's record of how it was timed."""
    ns = noisy(150.0, 5, 0.005, seed)
    dists = {} if group is None else {"latency": {"loads_per_group": group, "groups": 245760}}
    return make_run({"cfg": tag}, [BenchResult(
        "latency", "tlb 1 GiB stride 256", {"kind": "idle"},
        {"latency": Metric("latency", "ns", False, ns),
         "latency_p999": Metric("latency_p999", "ns", False, noisy(p999, 1, 0.01, seed + 50))},
        distributions=dists)])


def test_compare_tests_the_tail_on_request(tmp_path, capsys):
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        for s in range(4):
            st.save_run(_tail_run("A", 600.0, s))
            st.save_run(_tail_run("B", 900.0, s + 10))     # the tail got worse, not the mean
    assert cli(["compare", "cfg=A", "cfg=B", "--store", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [m["metric"] for m in out["results"]] == ["latency"]      # primary by default
    assert cli(["compare", "cfg=A", "cfg=B", "--store", str(db), "--json",
                "--metric", "latency", "--metric", "latency_p999"]) == 0
    out = json.loads(capsys.readouterr().out)
    by = {m["metric"]: m for m in out["results"]}
    assert set(by) == {"latency", "latency_p999"} and out["scope"] == "chosen"
    assert by["latency_p999"]["verdict"] == "worse" and not by["latency_p999"]["primary"]
    assert by["latency"]["verdict"] != "worse" and out["tested"] == 2
    assert cli(["compare", "cfg=A", "cfg=B", "--store", str(db),
                "--metric", "latency_p9999"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no metric 'latency_p9999'" in err and "latency_p999" in err
    assert cli(["compare", "cfg=A", "cfg=B", "--store", str(db), "--all-metrics",
                "--metric", "latency"]) == 2     # one way to choose the metrics
    assert "--metric: not allowed with argument --all-metrics" in capsys.readouterr().err


def test_the_batches_of_samples_auto_make_one_histogram():
    """--samples auto chases in batches: their histograms (one grid) add bucket by bucket;
    two grids that differ give none rather than a wrong one."""
    from numascope.families.latency import distribution as d
    a = {"edges": [10.0, 11.0, 12.0], "counts": [3, 1], "loads_per_group": 1, "tsc_ghz": 1.0,
         "groups": 4, "chunks": 1, "overhead_ns": 20.0, "overhead_p5_ns": 19.0,
         "overhead_p95_ns": 21.0, "quantiles": {}}
    b = {**a, "edges": [11.0, 12.0, 13.0, 14.0], "counts": [2, 0, 4], "groups": 6,
         "overhead_ns": 25.0}
    c = d.combine([a, None, b])
    assert c["edges"] == [10.0, 11.0, 12.0, 13.0, 14.0] and c["counts"] == [3, 3, 0, 4]
    assert c["groups"] == 10 and c["chunks"] == 2 and c["overhead_ns"] == 23.0
    assert c["quantiles"]["latency_p50"] == round(d.quantile(c["edges"], c["counts"], 50), 3)
    assert c["beyond"]["latency_p50"] == 5 and c["thin"] == [n for n, _ in d.QUANTILES]
    assert d.combine([a]) is a and d.combine([None]) is None
    assert d.combine([a, {**b, "loads_per_group": 2}]) is None
    assert d.combine([a, {**b, "edges": [10.0, 12.0, 13.0], "counts": [1, 1]}]) is None


def test_compare_refuses_tails_timed_with_other_loads_per_group(tmp_path, capsys):
    """A group's time over its loads is their mean: a tail of groups of 4 loads is not one
    of single loads, so compare says so instead of testing it; the means still compare."""
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        for s in range(3):
            st.save_run(_tail_run("A", 600.0, s, group=1))
            st.save_run(_tail_run("B", 300.0, s + 10, group=4))
            st.save_run(_tail_run("C", 610.0, s + 20, group=1))
    tail = ["--metric", "latency", "--metric", "latency_p999"]
    assert cli(["compare", "cfg=A", "cfg=B", "--store", str(db), *tail]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tlb 1 GiB stride 256" in err
    assert "groups of 1 load(s) in A and 4 in B" in err and "Traceback" not in err
    assert cli(["compare", "cfg=A", "cfg=B", "--store", str(db), "--all-metrics"]) == 2
    assert "groups of 1 load(s) in A and 4 in B" in capsys.readouterr().err
    assert cli(["compare", "cfg=A", "cfg=B", "--store", str(db), "--json"]) == 0  # primary
    capsys.readouterr()
    assert cli(["compare", "cfg=A", "cfg=C", "--store", str(db), "--json", *tail]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {m["metric"] for m in out["results"]} == {"latency", "latency_p999"}
    # a side whose own runs mix group sizes is refused too; without a tail, nothing to refuse
    from numascope.analysis.compare import tail_groups_mixed
    a = [_tail_run("A", 600.0, 1, group=1)]
    b = [_tail_run("B", 600.0, 2, group=1), _tail_run("B", 300.0, 3, group=4)]
    assert "groups of 1 load(s) in A and 1 and 4 in B" in \
        tail_groups_mixed(a, b, metrics=["latency_p999"])
    assert tail_groups_mixed(a, b) is None and tail_groups_mixed(a, b, metrics=["latency"]) is None
    assert tail_groups_mixed(a, b[:1], all_metrics=True) is None
