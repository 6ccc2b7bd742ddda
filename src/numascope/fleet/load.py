"""A fleet's runs read from the store for the outlier analysis, without decoding whole
records.

Store.get_run decodes every record whole (the host's facts, the topology, every result's
parameters, placement and notes: ~60 kB of JSON per quick run), which made reading 10,000
nodes take ~25 s on the 2-core dev VM. The analysis (numascope.fleet.outliers, baseline
checks) reads only the host fields that group and shape a node, its tags, status, profile
and stages, and each result's family, case, validated flag, kernel parameter and its
primary metrics' names, units, directions and medians (numascope.analysis.primary: what
node_values reads). The run's fields come from one json_extract of its brief (the record
without its bulk; the record itself where it has none); the results' from the store's
figures table (one row per metric with the median of its repetitions, written with the
result: numascope.results.store), never from their JSON. The RunRecords returned carry
only those (no topology, noise, placement, notes or secondary metrics; each metric one
value, its median), so memory grows with the metrics analysed, not with whole records.
They are LightRuns: their results are kept as compact tuples and made only when read, and
what the analysis reads of them (node_values, the STREAM figure) is made once from the
tuples (cached_figures). A record of an older schema (whose layout migrate() changes), or
one whose results are not all in the figures table (an older numascope wrote it and the
store was only read since), is read whole, as before.
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
from collections.abc import Iterator
from sys import intern
from types import MappingProxyType
from typing import Any

from numascope.analysis.primary import family_primary
from numascope.results.record import BenchResult, Metric
from numascope.results.run import SCHEMA_VERSION, RunRecord, StageInfo

# what outliers.config, shape, dimm_count, dram_peak and host_of read of rec.host (of the
# peaks, only the DRAM one: "peaks.dram" is read and put back as {"peaks": {"dram": …}})
HOST_KEYS = ("hostname", "cpu_model", "memory_mode", "nodes", "kernel", "peaks.dram", "dimms",
             "dimm_count", "fleet")

# one json_extract with every path: one parse of the record (each call parses it again)
# (from the run's brief: its record without the bulk; the record where it has none)
_PATHS = "'$.schema_version', '$.stages', " + ", ".join(f"'$.host.{k}'" for k in HOST_KEYS)
_RUNS = ("SELECT r.run_id, started, finished, status, profile, tags, json_extract("
         f"COALESCE(NULLIF(b.brief, ''), r.record), {_PATHS}) FROM runs r LEFT JOIN run_briefs b "
         "ON b.run_id = r.run_id")
_RUNS_OLD = ("SELECT run_id, started, finished, status, profile, tags, json_extract(record, "
             f"{_PATHS}) FROM runs")


# what a light result has none of (params without a kernel, placement, distributions; its
# notes), shared and read-only (a light record is not for changing): three empty
# containers per result were a fifth of its memory
_EMPTY: Any = MappingProxyType({})
_NO_NOTES: Any = ()


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def analysis_runs(store: Any, run_ids: list[str]) -> list[RunRecord]:
    """The runs `run_ids` (in that order) with what the fleet analysis reads."""
    with _no_gc():
        return _analysis_runs(store, run_ids)


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic garbage collector paused while ~10 objects per metric are made, and what
    was made frozen after (gc.freeze: no later pass scans it; refcounting still frees it):
    passes over a heap that only grows (nothing here is garbage) were half the time of
    reading 10,000 nodes, and the first pass after, a third of the analysis'."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


def _analysis_runs(store: Any, run_ids: list[str]) -> list[RunRecord]:
    want = set(run_ids)
    light: dict[str, Any] = {}
    whole: list[str] = []
    sql = _RUNS if store.has_table("run_briefs") else _RUNS_OLD
    for run_id, started, finished, status, profile, tags, got in store._q(sql):
        if run_id not in want:
            continue
        version, stages, *host = json.loads(got)
        if version != SCHEMA_VERSION:
            whole.append(run_id)
            continue
        light[run_id] = LightRun(
            run_id=run_id, started=started, finished=finished, status=status,
            profile=profile or "unknown", tags=json.loads(tags),
            host=_host(host),
            stages=[StageInfo.from_dict(s) for s in stages or []])
    whole += _results(store, light)
    for run_id in whole:
        light[run_id] = store.get_run(run_id)
    return [light[i] for i in run_ids]


def _host(values: list[Any]) -> dict[str, Any]:
    host: dict[str, Any] = {}
    for k, v in zip(HOST_KEYS, values):
        if v is None:
            continue
        if k == "peaks.dram":
            host["peaks"] = {"dram": v}
        else:
            host[k] = v
    return host


def _method_params(store: Any, fams: list[str], by_result: dict[int, list[Any]]) -> None:
    """The params a family's method reads (analysis.method: net's pages and buffers, which
    its case names did not always say), for the results of the families that have one, so
    that a baseline check never judges a figure against one measured another way."""
    from numascope.analysis.method import params_read
    for family in dict.fromkeys(fams):
        keys = params_read(family)
        ids = [rid for rid, res in by_result.items() if res[1] == family] if keys else []
        # the results by their primary key, a few thousand at a time; two paths or more:
        # json_extract gives one JSON array of their values
        paths = ", ".join(_sql_str(f"$.params.{k}") for k in keys)
        for at in range(0, len(ids), 4096):
            chunk = ", ".join(map(str, ids[at:at + 4096]))
            for rid, got in store._q(f"SELECT id, json_extract(result, '$.family', {paths}) "
                                     f"FROM results WHERE id IN ({chunk})"):
                if got:
                    kept = {k: v for k, v in zip(keys, json.loads(got)[1:]) if v is not None}
                    by_result[rid][3] = {**by_result[rid][3], **kept}


class LightRun(RunRecord):
    """A light run whose results are built only when read: the analysis reads its
    primary figures (`primary_values`, node_values' form) and its STREAM figure
    (`stream_figure`), made from the figures columns without a BenchResult or Metric per
    result (building them was most of reading 100,000 nodes); a report that names the
    node, or anything else that reads .results, gets the same results as before."""

    _lazy: list[tuple] | None = None
    _built: list[BenchResult]
    # (node_values, STREAM figure) of the results as read; None once they are replaced
    cached_figures: tuple[dict[str, tuple[float, str, bool]], float | None] | None = None

    @property  # type: ignore[override]
    def results(self) -> list[BenchResult]:
        if self._lazy is not None:
            self._built = [_result(*c) for c in self._lazy]
            self._lazy = None
        return self._built

    @results.setter
    def results(self, value: list[BenchResult]) -> None:
        self._built, self._lazy, self.cached_figures = value, None, None


def _result(family: str, case: str, params: Any, validated: bool,
            metrics: list[tuple[str, str, bool, float | None]]) -> BenchResult:
    return BenchResult(family, case, params,
                       {n: Metric(n, u, h, [] if v is None else [v]) for n, u, h, v in metrics},
                       _EMPTY, _NO_NOTES, validated, _EMPTY)


def _values(compact: list[tuple]) -> dict[str, tuple[float, str, bool]]:
    """outliers.node_values of these results, without making them."""
    from numascope.fleet.outliers import metric_key
    out: dict[str, tuple[float, str, bool]] = {}
    for family, case, _, validated, metrics in compact:
        if not validated:
            continue
        for n, u, h, v in metrics:
            if v is not None and math.isfinite(v):
                out[_key(metric_key, family, case, n)] = (v, u, h)
    return out


_KEYS: dict[tuple[str, str, str], str] = {}


def _key(metric_key: Any, family: str, case: str, name: str) -> str:
    """One key string per family, case and metric, however many nodes measured it."""
    k = (family, case, name)
    got = _KEYS.get(k)
    if got is None:
        got = _KEYS[k] = metric_key(family, case, name)
    return got


def _results(store: Any, light: dict[str, RunRecord]) -> list[str]:
    """Each light run's results from the store's figures table: per result its family's
    primary metrics (or, with none of them, its first metric: analysis.primary's rule),
    each with one value, the median of its repetitions. Returns the runs whose results
    are not all in the figures table (a store an older numascope wrote and that was only
    read since): those are read whole. The results are kept compact (LightRun) and built
    when read; the analysis reads their primary values and STREAM figure."""
    if not store.has_table("figures"):
        return list(light)
    from numascope.families import ALIASES, families
    from numascope.fleet.outliers import stream_of
    fams = [cls.family for cls in families()] + list(ALIASES)
    primary = {f: family_primary(f) for f in fams}
    names = sorted({n for ns in primary.values() for n in ns})
    rows = store.rows(
        'SELECT run_id, result_id, family, "case", ord, metric, unit, higher_is_better, '
        "median, validated, kernel FROM figures WHERE ord <= 0 OR metric IN ("
        + ", ".join(_sql_str(n) for n in names) + ")")
    counts = dict(store._q("SELECT run_id, count(*) FROM results GROUP BY run_id"))
    # per result: [run_id, family, case, params, validated, {primary name: metric}, first]
    by_result: dict[int, list[Any]] = {}
    no_primary: tuple[str, ...] = ()
    for run_id, rid, family, case, ord_, metric, unit, hib, median, validated, kernel in rows:
        res = by_result.get(rid)
        if res is None:
            if run_id not in light:
                continue
            # names interned: every node has the same few, one copy each (a third of the
            # memory was the same strings again per node)
            res = by_result[rid] = [
                run_id, intern(family), intern(case),
                _EMPTY if kernel is None else {"kernel": intern(kernel)},
                bool(validated), {}, None]
        if metric is None:
            continue
        if metric in primary.get(family, no_primary):
            res[5][metric] = (intern(metric), intern(unit or ""), bool(hib), median)
        elif ord_ == 0:
            res[6] = (intern(metric), intern(unit or ""), bool(hib), median)
    _method_params(store, fams, by_result)
    per_run: dict[str, list[tuple[int, tuple]]] = {}
    for rid, (run_id, family, case, params, validated, got, first) in by_result.items():
        if got:   # the family's order, as the record lists them
            metrics = [got[n] for n in primary.get(family, ()) if n in got]
        else:
            metrics = [first] if first is not None else []
        per_run.setdefault(run_id, []).append((rid, (family, case, params, validated, metrics)))
    short = [run_id for run_id in light if len(per_run.get(run_id, ())) != counts.get(run_id, 0)]
    for run_id in short:
        del light[run_id]
    for run_id, rec in light.items():
        got = per_run.get(run_id, [])
        # each run's results in the order they were stored (the scan's order need not
        # be; it is, but for results indexed after their run: Store._index_figures)
        got.sort(key=lambda t: t[0])
        compact = [c for _, c in got]
        rec._lazy = compact
        rec.cached_figures = (_values(compact), stream_of(
            [_result(*c) for c in compact if c[0] == "bandwidth"]))
    return short
