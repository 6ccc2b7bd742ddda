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
They are LightRuns, each a row of one numascope.fleet.figures (the figures rows read into
a few numpy arrays): their results are made from those arrays only when read, and what the
analysis reads of them (node_values, the STREAM figure, and a group's nodes x metrics array
from the matrix of the figures) comes from the arrays without a result object at all.
A record of an older schema (whose layout migrate() changes), or
one whose results are not all in the figures table (an older numascope wrote it and the
store was only read since), is read whole, as before.
"""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Iterator
from typing import Any

from numascope.results.record import BenchResult
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
            stages=[_stage(s) for s in stages or []])
    whole += _results(store, light)
    for run_id in whole:
        light[run_id] = store.get_run(run_id)
    return [light[i] for i in run_ids]


def _stage(d: dict[str, Any]) -> StageInfo:
    """StageInfo.from_dict of a stage just parsed (its plan and case seconds are its own:
    not copied again; 800,000 stages of 100,000 nodes)."""
    n, t = d.get("results", 0), d.get("seconds", 0.0)
    return StageInfo(d["name"], d.get("status", "pending"), d.get("reason", ""),
                     n if type(n) is int else int(n), t if type(t) is float else float(t),
                     d.get("plan") or {}, d.get("case_seconds") or [])


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


class LightRun(RunRecord):
    """A light run over the fleet's figures (numascope.fleet.figures, row `_row`): what the
    analysis reads of it, its primary values (`cached_figures`: node_values' dict and the
    STREAM figure), comes from those columns without a BenchResult or Metric per result
    (building them was most of reading 100,000 nodes), and numascope.fleet.outliers groups
    and screens the runs of one Figures from its matrix at once; a report that names the
    node, or anything else that reads .results, gets the same results as before, made
    when first read."""

    _figs: Any = None
    _row: int = -1
    _built: list[BenchResult] | None = None

    @property  # type: ignore[override]
    def results(self) -> list[BenchResult]:
        if self._built is None:
            self._built = self._figs.results(self._row) if self._figs is not None else []
        return self._built

    @results.setter
    def results(self, value: list[BenchResult]) -> None:
        self._built, self._figs = value, None

    @property
    def figures(self) -> tuple[Any, int] | None:
        """(the Figures its values are a row of, that row), or None once its results are
        replaced."""
        return (self._figs, self._row) if self._figs is not None else None


def _results(store: Any, light: dict[str, RunRecord]) -> list[str]:
    """Each light run's figures (numascope.fleet.figures: per result its family's primary
    metrics, or with none of them its first metric, each with one value, the median of its
    repetitions). Returns the runs whose results are not all in the figures table (a store
    an older numascope wrote and that was only read since): those are read whole."""
    if not store.has_table("figures"):
        return list(light)
    from numascope.fleet import figures
    ids = list(light)
    figs, short = figures.read(store, ids)
    for i, run_id in enumerate(ids):
        rec = light[run_id]
        rec._figs, rec._row, rec._built = figs, i, None
    for i in short:
        del light[ids[i]]
    return [ids[i] for i in short]
