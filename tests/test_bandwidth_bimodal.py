"""Exclusion that cannot bias (bw_outliers): the rule for implausibly fast repetitions
excludes a few broken ones, and when it would cut more (or a fast mode too large to be its
minority) it excludes nothing and marks the case bimodal, a disturbed run, with both modes'
medians; advice and the reports treat it as a disturbed run. Hard cases: 49 bimodal
repetitions, one broken among 20, zero spread, quantised values, three repetitions."""

from __future__ import annotations

import copy
import io
import json
import math
import random
import statistics
from pathlib import Path

import pytest

from numascope.advice import BIMODAL, advise, disturbed
from numascope.analysis.efficiency import measured_from
from numascope.families.bandwidth.outliers import (
    MAX_SHARE,
    MIN_REPS,
    allowed,
    bimodal_cases,
    limit_of,
    screen,
    split,
)
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord

DATA = Path(__file__).parent / "data" / "advise_quick_run.json"


def _around(center: float, n: int, rel: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [center * (1 + rng.uniform(-rel, rel)) for _ in range(n)]


def _mixed(slow: list[float], fast: list[float], seed: int = 3) -> list[float]:
    """The two modes interleaved at random, as a shared host makes them."""
    v = slow + fast
    random.Random(seed).shuffle(v)
    return v


# -- the rule on its hard cases ----------------------------------------------------------------

def test_49_bimodal_repetitions_29_fast_nothing_excluded_both_modes_shown():
    """29 fast of 49: the median lies in the fast mode, so the one-sided rule excludes
    none, but the fast mode is implausible against the slow one (b): bimodal."""
    slow, fast = _around(20.0, 20, 0.02, 1), _around(36.0, 29, 0.02, 2)
    gbs = _mixed(slow, fast)
    s = screen(gbs)
    assert s.bimodal and s.excluded == [] and s.kept == list(range(49))
    lo, hi = s.modes
    assert (lo.reps, hi.reps) == (20, 29)
    assert lo.median == statistics.median(slow) and hi.median == statistics.median(fast)
    assert s.would_exclude == 0 and s.allowed == 4


def test_49_bimodal_repetitions_the_rule_would_cut_the_fast_mode():
    """The issue's run: the slow mode the majority, the old rule cut the fast mode whole
    (20 of 49); now nothing is excluded and the median is of all 49."""
    slow, fast = _around(20.0, 29, 0.02, 4), _around(36.0, 20, 0.02, 5)
    gbs = _mixed(slow, fast)
    _, limit = limit_of(gbs)
    assert sum(v > limit for v in gbs) == 20          # what the rule alone would exclude
    s = screen(gbs)
    assert s.bimodal and s.excluded == [] and len(s.kept) == 49
    assert s.would_exclude == 20 > s.allowed
    assert [m.reps for m in s.modes] == [29, 20]
    assert s.modes[0].median < 21 and s.modes[1].median > 34


def test_one_broken_repetition_among_20_is_still_excluded():
    gbs = _around(40.0, 20, 0.01, 6)
    gbs[13] = 90.0
    s = screen(gbs)
    assert not s.bimodal and s.excluded == [13] and len(s.kept) == 19


def test_as_many_broken_as_allowed_are_excluded_one_more_is_a_disturbed_run():
    for n in (5, 10, 20, 49, 100):
        k = allowed(n)
        gbs = _around(40.0, n, 0.01, n)
        for i in range(k):
            gbs[i] = 90.0 + i
        s = screen(gbs)
        assert not s.bimodal and s.excluded == list(range(k)), n
        gbs[k] = 95.0
        s = screen(gbs)
        assert s.bimodal and s.excluded == [] and s.would_exclude == k + 1, n
        assert s.modes[1].reps == k + 1


def test_zero_spread():
    s = screen([30.0] * 12)
    assert s.judged and not s.bimodal and s.excluded == [] and len(s.kept) == 12
    assert split([30.0] * 12) is None


def test_quantised_values():
    # a coarse clock: two levels 5 % apart are noise, not modes
    q = [10.0] * 15 + [10.5] * 5
    s = screen(q)
    assert not s.bimodal and s.excluded == []
    # one broken repetition among quantised ones (MAD 0: the 25 % margin decides)
    s = screen([10.0] * 12 + [10.5] * 7 + [30.0])
    assert not s.bimodal and s.excluded == [19]
    # two quantised modes twice apart, the fast one more than the allowed 2 of 20
    s = screen([10.0, 20.0, 10.0, 10.0, 20.0] * 4)
    assert s.bimodal and s.excluded == []
    assert [(m.median, m.reps) for m in s.modes] == [(10.0, 12), (20.0, 8)]


def test_three_repetitions_are_not_judged():
    s = screen([20.0, 21.0, 80.0])
    assert not s.judged and not s.bimodal and s.excluded == [] and s.kept == [0, 1, 2]
    assert MIN_REPS > 3


def test_a_long_slow_tail_is_not_bimodal():
    """Preemption slows some repetitions by every amount: a tail, not a mode the rule would
    exclude (the fast side is within 25 % of the slow side's median)."""
    gbs = [40.0] * 12 + [39.0, 36.0, 33.0, 31.0, 34.0, 37.0, 38.0, 35.0]
    s = screen(gbs)
    assert not s.bimodal and s.excluded == []


def test_split_is_exact_two_means():
    assert split([1.0, 12.0, 2.0, 11.0, 3.0, 10.0]) == ([0, 2, 4], [1, 3, 5])
    # equal values stay together; the cut with the least within-mode sum of squares
    v = [5.0, 5.0, 5.0, 6.0, 9.0, 9.0]
    slow, fast = split(v)
    assert slow == [0, 1, 2, 3] and fast == [4, 5]
    best = min(sum((x - sum(a) / len(a)) ** 2 for a in (sorted(v)[:k], sorted(v)[k:])
                   for x in a) for k in range(1, len(v)))
    got = sum((v[i] - sum(v[j] for j in g) / len(g)) ** 2 for g in (slow, fast) for i in g)
    assert got == pytest.approx(best)


def test_the_documented_share_holds_binomially():
    """An undisturbed run breaking each repetition with probability 1 % (the module's
    argument) is marked disturbed with probability at most 1.6 %, for 5 to 1000
    repetitions; at 10 % a run with a fast mode of 11 % or more is."""
    from scipy.stats import binom
    worst = max(binom.sf(allowed(n), n, 0.01) for n in range(MIN_REPS, 1001))
    assert worst < 0.016
    assert all(allowed(n) == max(1, math.floor(MAX_SHARE * n)) for n in range(1, 200))


# -- the record, the table, the report, advice ------------------------------------------------

def _bimodal_result() -> BenchResult:
    """A result as bench._result writes it for a bimodal variant."""
    from numascope.families.bandwidth import bench as bw
    gbs = _mixed(_around(20.0, 29, 0.02, 7), _around(36.0, 20, 0.02, 8))
    n = 1 << 20
    raw = {"variants": [("avx2", 0)], "times": [[24 * n / (g * 1e9) for g in gbs]]}
    notes: list[str] = []
    bimodal: list[dict] = []
    per_variant, excluded = bw._screen_variants("triad", raw, n, notes, bimodal)
    assert excluded == [] and len(per_variant[0][3]) == 49
    return BenchResult("bandwidth", "triad avx2 2T compact all",
                       {"kernel": "triad", "isa": "avx2", "stores": "ordinary", "threads": 2,
                        "reps": 49, "warmup": 1, "array_bytes": 8 * n, "excluded_reps": [],
                        "bimodal": bimodal},
                       {"bandwidth": Metric("bandwidth", "GB/s", True, per_variant[0][3])},
                       {"cpulist": "0,1", "memory": {"policy": "first-touch", "nodes": [],
                                                     "pages": "thp"}, "ok": True}, notes)


def test_the_record_keeps_every_repetition_and_both_modes():
    r = _bimodal_result()
    (b,) = r.params["bimodal"]
    assert b["variant"] == "avx2" and b["reps"] == 49 and b["would_exclude"] == 20
    assert b["allowed"] == 4 and b["split"] == "2-means"
    slow, fast = b["modes"]
    assert slow["reps"] == 29 and fast["reps"] == 20 and slow["median"] < fast["median"]
    assert any("repetitions bimodal" in n and "none is excluded" in n for n in r.notes)
    json.dumps(r.to_dict())
    assert bimodal_cases([r])[0]["case"] == r.case


def test_table_and_efficiency_say_bimodal():
    from rich.console import Console

    from numascope.families.bandwidth.command import _print
    r = _bimodal_result()
    con = Console(width=80, record=True, file=io.StringIO())
    _print([r], con)
    raw = con.export_text()
    assert all(len(line.rstrip()) <= 80 for line in raw.splitlines())
    text = " ".join(raw.split())
    assert " (b)" in text and "(b) = repetitions bimodal (1 case)" in text
    assert "implausibly fast repetition" not in text
    d = measured_from([r])
    assert "median of 49 repetitions" in d["dram_by"] and "bimodal" in d["dram_by"]


def test_advice_treats_a_bimodal_case_as_a_disturbed_run():
    """A quiet run (noise check clean) with one bimodal bandwidth case: one item, re-run on
    a quiet machine, with both modes as evidence; no rule reads its numbers."""
    rec = RunRecord.from_dict(json.loads(DATA.read_text()))
    rec.noise.update(other_busy_fraction=0.004, steal_fraction=0.0, warnings=[])
    rec.host.pop("readiness", None)
    rec.host["governor"] = "performance"
    assert disturbed(rec) == []
    bi = copy.deepcopy(rec)
    bi.results.append(_bimodal_result())
    (line,) = disturbed(bi)
    assert "triad avx2 2T compact all (avx2): repetitions bimodal" in line
    (a,) = advise([bi])
    assert a.rule == "disturbed" and a.title.endswith("re-run on a quiet machine")
    ev = [e for e in a.evidence if e["check"] == "bimodal"]
    assert len(ev) == 1 and [m["reps"] for m in ev[0]["modes"]] == [29, 20]
    assert "fell in two modes" in a.detail and "noise check" not in a.detail
    assert a.threshold is BIMODAL and "Iglewicz" in a.threshold.source
    assert a.figures["bimodal_cases"] == 1
    # among quiet runs only it is set aside
    assert [x.rule for x in advise([bi, rec])] == ["disturbed"] + \
        [x.rule for x in advise([rec])]


def test_reports_list_a_bimodal_case_as_a_disturbance():
    from rich.console import Console

    from numascope.report.html import _noise_section
    from numascope.report.terminal import print_run
    rec = RunRecord.from_dict(json.loads(DATA.read_text()))
    rec.noise["warnings"] = []
    rec.results.append(_bimodal_result())
    html = _noise_section([rec])
    assert "repetitions bimodal" in html and "no disturbance recorded" not in html
    con = Console(width=120, record=True, file=io.StringIO())
    print_run(rec, con)
    assert "disturbed: triad avx2 2T compact all (avx2): repetitions bimodal" in \
        " ".join(con.export_text().split())
