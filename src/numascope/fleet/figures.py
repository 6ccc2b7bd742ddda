"""A fleet's figures read from the store into numpy arrays: the columnar form the fleet
analysis reads (numascope.fleet.load makes its light runs over it).

The store's figures table has one row per result and metric with the median of its
repetitions (numascope.results.store). What the analysis reads of a result is its family's
primary metrics (or, with none of them, its first metric: analysis.primary's rule), so one
query reads those rows (and each result's first row, which every result has: ord 0, or -1
for a result without metrics); a batch of rows at a time goes into arrays, each row's
family, case, metric, unit, direction and kernel named by one small integer (a
"descriptor": the fleet's nodes measure the same few cases, so there are few). From those
arrays:

- `rows`: the rows kept, long-form (run index, result id, descriptor, value, validated),
  each run's in the order of its results and each result's in its family's order of
  primary metrics (as the record lists them);
- `matrix()`: runs x metric keys ("family/case/metric"), NaN where a run has no validated,
  finite value: what numascope.fleet.outliers groups and screens;
- `values(i)`: node_values' dict of run i (outliers.values_of over its rows);
- `results(i)`: run i's results as light BenchResults (its primary metrics, one value each,
  the median), for a reader of one node's record;
- `stream`: per run, outliers.stream's figure (NaN where none).

Reading 100,000 nodes' rows made ten Python objects per metric before (a tuple per result,
a dict per node, a key per value); here they are a few arrays.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from operator import itemgetter
from types import MappingProxyType, SimpleNamespace
from typing import Any

import numpy as np

from numascope.analysis.primary import family_primary
from numascope.families.bandwidth.resident import dram_resident
from numascope.fleet.outliers import metric_key
from numascope.results.record import BenchResult, Metric

# what a light result has none of (params without a kernel, placement, distributions; its
# notes), shared and read-only (a light record is not for changing)
EMPTY: Any = MappingProxyType({})
NO_NOTES: Any = ()
BATCH = 1 << 16      # rows converted to arrays at a time (a few tens of MB of tuples)


def sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


@dataclass(frozen=True)
class Descriptor:
    """What a figures row is, but for its value: its result's family, case and kernel, its
    metric's place, name, unit and direction, and what the analysis makes of it."""
    family: str
    case: str
    ord: int
    metric: str | None
    unit: str
    higher_is_better: bool
    kernel: str | None
    rank: int           # its place in its family's primary metrics; -1: not one of them
    key: str            # outliers.metric_key(family, case, metric)


@dataclass
class Figures:
    """The figures of runs 0..n-1 (the light runs' order), columnar (module doc)."""
    n: int
    descs: list[Descriptor]
    # the rows kept, sorted by (run, result id, primary rank)
    run: np.ndarray          # int64
    result: np.ndarray       # int64: the result id
    desc: np.ndarray         # int64: index into descs
    value: np.ndarray        # float64: the median, NaN where NULL (no finite repetition)
    validated: np.ndarray    # bool
    # per run: where its rows and its results start (n + 1 offsets)
    row_start: np.ndarray
    res_start: np.ndarray
    # the results, sorted by (run, result id): id, descriptor of its first row, validated
    res_id: np.ndarray
    res_desc: np.ndarray
    res_validated: np.ndarray
    params: dict[int, dict[str, Any]]   # result id -> its method params (analysis.method)
    stream: np.ndarray       # float64 per run: outliers.stream (NaN: none)

    def _row_slice(self, i: int) -> slice:
        return slice(int(self.row_start[i]), int(self.row_start[i + 1]))

    def value_rows(self, i: int) -> Iterator[tuple[str, float, str, bool]]:
        """Run i's (key, value, unit, higher_is_better) of its validated, finite values, in
        its results' order (outliers.values_of's form)."""
        s = self._row_slice(i)
        ok = self.validated[s] & np.isfinite(self.value[s])
        for d, v in zip(self.desc[s][ok].tolist(), self.value[s][ok].tolist()):
            dd = self.descs[d]
            yield dd.key, v, dd.unit, dd.higher_is_better

    def result_params(self, rid: int, d: Descriptor) -> Any:
        base = EMPTY if d.kernel is None else {"kernel": d.kernel}
        more = self.params.get(rid)     # read for its family's method (even if none set)
        return {**base, **more} if more is not None else base

    def results(self, i: int) -> list[BenchResult]:
        """Run i's results, light: each its kept metrics with one value, the median."""
        s = self._row_slice(i)
        by_result: dict[int, list[Metric]] = {}
        for rid, d, v in zip(self.result[s].tolist(), self.desc[s].tolist(),
                             self.value[s].tolist()):
            dd = self.descs[d]
            if dd.metric is not None:
                by_result.setdefault(rid, []).append(
                    Metric(dd.metric, dd.unit, dd.higher_is_better, [] if math.isnan(v) else [v]))
        out = []
        a, b = int(self.res_start[i]), int(self.res_start[i + 1])
        for rid, d, ok in zip(self.res_id[a:b].tolist(), self.res_desc[a:b].tolist(),
                              self.res_validated[a:b].tolist()):
            dd = self.descs[d]
            out.append(BenchResult(dd.family, dd.case, self.result_params(rid, dd),
                                   {m.name: m for m in by_result.get(rid, [])}, EMPTY,
                                   NO_NOTES, ok, EMPTY))
        return out

    def stream_of(self, i: int) -> float | None:
        v = float(self.stream[i])
        return None if math.isnan(v) else v

    def matrix(self) -> tuple[np.ndarray, list[str], list[str], np.ndarray] | None:
        """(runs x keys values, the keys, their units, their directions): each run's
        validated, finite values (NaN elsewhere; a key a run has twice: its last, as
        node_values' dict keeps it); None when a key has two units or directions among
        the runs (outliers then reads node_values' dicts: the first node's wins there)."""
        info: dict[str, tuple[str, bool]] = {}
        for d in self.descs:
            if d.metric is None:
                continue
            got = info.setdefault(d.key, (d.unit, d.higher_is_better))
            if got != (d.unit, d.higher_is_better):
                return None
        keys = sorted(info)
        col = {k: j for j, k in enumerate(keys)}
        desc_col = np.array([col.get(d.key, -1) if d.metric is not None else -1
                             for d in self.descs] or [-1], dtype=np.int64)
        ok = self.validated & np.isfinite(self.value)
        cols = desc_col[self.desc[ok]]
        flat = self.run[ok] * max(len(keys), 1) + cols
        vals = self.value[ok]
        # the last of a run's duplicates, as a dict assigned in order keeps it
        _, last = np.unique(flat[::-1], return_index=True)
        pick = flat.size - 1 - last
        x = np.full(self.n * len(keys), np.nan)
        x[flat[pick]] = vals[pick]
        return (x.reshape(self.n, len(keys)), keys, [info[k][0] for k in keys],
                np.array([info[k][1] for k in keys], dtype=bool))


def _ranges(store: Any, index: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                        dict[int, int], dict[str, int]]:
    """Where each run's results are: (starts, ends, run index) of the runs whose result ids
    are one unbroken range (a run's results are saved in one transaction), sorted by
    start; result id -> run index for the others; and every run's result count."""
    starts, ends, runs = [], [], []
    counts: dict[str, int] = {}
    broken: list[str] = []
    for run_id, lo, hi, k in store._q(
            "SELECT run_id, min(id), max(id), count(*) FROM results GROUP BY run_id"):
        counts[run_id] = k
        i = index.get(run_id)
        if i is None:
            continue
        if hi - lo + 1 == k:
            starts.append(lo)
            ends.append(hi)
            runs.append(i)
        else:
            broken.append(run_id)
    loose: dict[int, int] = {}
    for at in range(0, len(broken), 512):
        chunk = ", ".join(sql_str(r) for r in broken[at:at + 512])
        for rid, run_id in store._q(f"SELECT id, run_id FROM results WHERE run_id IN "
                                    f"({chunk})"):
            loose[rid] = index[run_id]
    order = np.argsort(np.array(starts, dtype=np.int64), kind="stable")
    return (np.array(starts, dtype=np.int64)[order], np.array(ends, dtype=np.int64)[order],
            np.array(runs, dtype=np.int64)[order], loose, counts)


def _run_of(rid: np.ndarray, ranges: tuple) -> np.ndarray:
    """The run index of each result id (-1: not one of the runs read)."""
    starts, ends, runs, loose, _ = ranges
    out = np.full(rid.shape, -1, dtype=np.int64)
    if starts.size:
        at = np.searchsorted(starts, rid, side="right") - 1
        inside = (at >= 0) & (rid <= ends[np.maximum(at, 0)])
        out[inside] = runs[at[inside]]
    if loose:
        for j in np.nonzero(out < 0)[0].tolist():
            out[j] = loose.get(int(rid[j]), -1)
    return out


def read(store: Any, run_ids: list[str]) -> tuple[Figures, list[int]]:
    """The figures of `run_ids` (run i: run_ids[i]), and the indices of the runs whose
    results are not all in the figures table (a store an older numascope wrote and that
    was only read since: their caller reads them whole; their rows here are empty)."""
    from numascope.families import ALIASES, families
    index = {r: i for i, r in enumerate(run_ids)}
    n = len(run_ids)
    fams = [cls.family for cls in families()] + list(ALIASES)
    primary = {f: family_primary(f) for f in fams}
    names = sorted({m for ms in primary.values() for m in ms})
    ranges = _ranges(store, index)
    ids: defaultdict[tuple, int] = defaultdict(itertools.count().__next__)
    cols: list[list[np.ndarray]] = [[], [], [], [], []]
    # the descriptor's columns first: one slice of the row names it (a transposition of
    # the batch, zip(*batch), took longer than the query)
    desc_of, rid_of, med_of, valid_of = itemgetter(slice(0, 7)), itemgetter(7), \
        itemgetter(8), itemgetter(9)
    for batch in store.batches(
            'SELECT family, "case", ord, metric, unit, higher_is_better, kernel, result_id, '
            "median, validated FROM figures WHERE ord <= 0 OR metric IN ("
            + ", ".join(sql_str(m) for m in names) + ")", BATCH):
        k = len(batch)
        rid = np.fromiter(map(rid_of, batch), np.int64, k)
        run = _run_of(rid, ranges)
        keep = run >= 0
        desc = np.fromiter(map(ids.__getitem__, map(desc_of, batch)), np.int64, k)
        # NULL (no finite repetition) is NaN
        med = np.array(list(map(med_of, batch)), dtype=float)
        valid = np.fromiter(map(valid_of, batch), bool, k)
        for c, a in zip(cols, (run, rid, desc, med, valid)):
            c.append(a[keep])
    descs = [_descriptor(k, primary) for k in ids]
    run, rid, desc, value, valid = (
        np.concatenate(c) if c else np.zeros(0, t)
        for c, t in zip(cols, (np.int64, np.int64, np.int64, float, bool)))
    rank = np.array([d.rank for d in descs] or [-1], dtype=np.int64)[desc]
    first = np.array([d.ord == 0 and d.metric is not None for d in descs] or [False])[desc]
    # the results: each one's first row (its family, case, kernel, validated flag)
    res_id, at, res_of = np.unique(rid, return_index=True, return_inverse=True)
    has_primary = np.zeros(res_id.size, dtype=bool)
    has_primary[res_of[rank >= 0]] = True
    kept = (rank >= 0) | (first & ~has_primary[res_of])
    res_run = run[at]
    # the runs not wholly indexed: read whole by the caller
    got = np.bincount(res_run, minlength=n)
    counts = ranges[4]
    short = [i for i, r in enumerate(run_ids) if got[i] != counts.get(r, 0)]
    if short:
        kept &= ~np.isin(run, short)
        drop = np.isin(res_run, short)
        res_id, at, res_run = res_id[~drop], at[~drop], res_run[~drop]
    order = np.lexsort((res_id, res_run))
    res_id, at, res_run = res_id[order], at[order], res_run[order]
    rows = np.lexsort((np.maximum(rank[kept], 0), rid[kept], run[kept]))
    run_k, rid_k = run[kept][rows], rid[kept][rows]
    desc_k, value_k, valid_k = desc[kept][rows], value[kept][rows], valid[kept][rows]
    figs = Figures(n, descs, run_k, rid_k, desc_k, value_k, valid_k,
                   np.searchsorted(run_k, np.arange(n + 1)),
                   np.searchsorted(res_run, np.arange(n + 1)),
                   res_id, desc[at], valid[at], {}, np.full(n, np.nan))
    _method_params(store, figs)
    figs.stream = _stream(figs)
    return figs, short


def _descriptor(k: tuple, primary: dict[str, tuple[str, ...]]) -> Descriptor:
    family, case, ord_, metric, unit, hib, kernel = k
    names = primary.get(family, ())
    rank = names.index(metric) if metric in names else -1
    return Descriptor(family, case, ord_, metric, unit or "", bool(hib), kernel, rank,
                      metric_key(family, case, metric) if metric is not None else "")


def _method_params(store: Any, figs: Figures) -> None:
    """The params a family's method reads (analysis.method: net's pages and buffers, which
    its case names did not always say), for the results of the families that have one, so
    that a baseline check never judges a figure against one measured another way."""
    from numascope.analysis.method import params_read
    fam = np.array([d.family for d in figs.descs] or [""], dtype=object)[figs.res_desc]
    for family in dict.fromkeys(d.family for d in figs.descs):
        keys = params_read(family)
        if not keys:
            continue
        ids = figs.res_id[fam == family].tolist()
        # the results by their primary key, a few thousand at a time; two paths or more:
        # json_extract gives one JSON array of their values
        paths = ", ".join(sql_str(f"$.params.{k}") for k in keys)
        for at in range(0, len(ids), 4096):
            chunk = ", ".join(map(str, ids[at:at + 4096]))
            for rid, got in store._q(f"SELECT id, json_extract(result, '$.family', {paths}) "
                                     f"FROM results WHERE id IN ({chunk})"):
                if got:
                    figs.params[rid] = {k: v for k, v in zip(keys, json.loads(got)[1:])
                                        if v is not None}


def _stream(figs: Figures) -> np.ndarray:
    """outliers.stream_of per run: the best validated, finite, DRAM-resident "bandwidth"
    of its triad results, else of its other bandwidth results (max with 0.0, as there)."""
    n = figs.n
    out = np.full(n, np.nan)
    is_bw = np.array([d.metric == "bandwidth" for d in figs.descs] or [False])[figs.desc]
    cand = np.nonzero(is_bw & figs.validated & np.isfinite(figs.value))[0]
    if not cand.size:
        return out
    # the result's params decide (dram_resident, kernel == triad): once per descriptor,
    # and per result for the few with method params besides the kernel
    def judge(d: Descriptor, params: Any) -> tuple[bool, bool]:
        return (dram_resident(SimpleNamespace(family=d.family, params=params)),
                d.case.startswith("triad") or params.get("kernel") == "triad")
    per_desc = [judge(d, figs.result_params(-1, d)) for d in figs.descs]
    resident = np.array([r for r, _ in per_desc], dtype=bool)[figs.desc[cand]]
    triad = np.array([t for _, t in per_desc], dtype=bool)[figs.desc[cand]]
    if figs.params:
        rids = figs.result[cand]
        for j in np.nonzero(np.isin(rids, np.fromiter(figs.params, np.int64)))[0].tolist():
            d = figs.descs[int(figs.desc[cand[j]])]
            resident[j], triad[j] = judge(d, figs.result_params(int(rids[j]), d))
    cand, triad = cand[resident], triad[resident]
    best = {}
    for t in (True, False):
        pick = cand[triad == t]
        b = np.full(n, -np.inf)
        np.maximum.at(b, figs.run[pick], figs.value[pick])
        b = np.where(np.isneginf(b), np.nan, np.maximum(b, 0.0))
        best[t] = b
    return np.where(np.isnan(best[True]), best[False], best[True])
