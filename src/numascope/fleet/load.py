"""A fleet's runs read from the store for the outlier analysis, without decoding whole
records.

Store.get_run decodes every record whole (the host's facts, the topology, every result's
parameters, placement and notes: ~60 kB of JSON per quick run), which made reading 10,000
nodes take ~25 s on the 2-core dev VM. The analysis (numascope.fleet.outliers, baseline
checks) reads only the host fields that group and shape a node, its tags, status, profile
and stages, and each result's family, case, validated flag, kernel parameter and its
primary metrics' names, units, directions and values (numascope.analysis.primary: what
node_values reads). SQLite's JSON functions pick exactly those out (in C); the RunRecords
returned carry only them (no topology, noise, placement, notes or secondary metrics), so
memory grows with the metrics analysed, not with whole records.

A record of an older schema (whose layout migrate() changes) is read whole, as before.
"""

from __future__ import annotations

import json
from typing import Any

from numascope.analysis.primary import family_primary
from numascope.results.record import BenchResult, Metric
from numascope.results.run import SCHEMA_VERSION, RunRecord, StageInfo

# what outliers.config, shape, dimm_count, dram_peak and host_of read of rec.host
HOST_KEYS = ("hostname", "cpu_model", "memory_mode", "nodes", "kernel", "peaks", "dimms",
             "dimm_count", "fleet")

_RUNS = ("SELECT run_id, started, finished, status, profile, tags, "
         "json_extract(record, '$.schema_version'), json_extract(record, '$.stages'), "
         "json_object(" + ", ".join(f"'{k}', json_extract(record, '$.host.{k}')"
                                     for k in HOST_KEYS) + ") FROM runs")


def _json_path(name: str) -> str:
    return '"' + name.replace('"', '\\"') + '"'


def _results_sql(names: list[str]) -> str:
    """Every result's family, case, validated, kernel parameter and, for each name, its
    unit, direction and values: one json_extract (one parse per result), one table scan."""
    paths = ["'$.validated'", "'$.params.kernel'"]
    for n in names:
        base = f"$.metrics.{_json_path(n)}"
        paths += [f"'{base}.unit'", f"'{base}.higher_is_better'", f"'{base}.values'"]
    return (f'SELECT run_id, id, family, "case", json_extract(result, {", ".join(paths)}) '
            "FROM results ORDER BY id")


def analysis_runs(store: Any, run_ids: list[str]) -> list[RunRecord]:
    """The runs `run_ids` (in that order) with what the fleet analysis reads."""
    want = set(run_ids)
    light: dict[str, RunRecord] = {}
    whole: list[str] = []
    for (run_id, started, finished, status, profile, tags, version, stages,
         host) in store._q(_RUNS):
        if run_id not in want:
            continue
        if version != SCHEMA_VERSION:
            whole.append(run_id)
            continue
        light[run_id] = RunRecord(
            run_id=run_id, started=started, finished=finished, status=status,
            profile=profile or "unknown", tags=json.loads(tags),
            host={k: v for k, v in json.loads(host).items() if v is not None},
            stages=[StageInfo.from_dict(s) for s in json.loads(stages or "[]")])
    primary = {f: family_primary(f)
               for (f,) in store._q("SELECT DISTINCT family FROM results")}
    names = sorted({n for ns in primary.values() for n in ns})
    for run_id, rid, family, case, got in store._q(_results_sql(names)):
        rec = light.get(run_id)
        if rec is None:
            continue
        validated, kernel, *per_metric = json.loads(got)
        found = {n: (unit, hib, values) for n, unit, hib, values in
                 zip(names, per_metric[0::3], per_metric[1::3], per_metric[2::3])}
        metrics = {n: Metric(n, found[n][0], bool(found[n][1]), found[n][2])
                   for n in primary[family] if found[n][2] is not None}
        if not metrics:
            # none of the family's primary names: the analysis falls back to the case's
            # first metric, so read its metrics whole
            (m,), = store._q("SELECT json_extract(result, '$.metrics') FROM results "
                             "WHERE id = ?", (rid,))
            metrics = {k: Metric.from_dict(v) for k, v in json.loads(m).items()}
        rec.results.append(BenchResult(family, case, {} if kernel is None else
                                       {"kernel": kernel}, metrics,
                                       validated=validated is None or bool(validated)))
    for run_id in whole:
        light[run_id] = store.get_run(run_id)
    return [light[i] for i in run_ids]
