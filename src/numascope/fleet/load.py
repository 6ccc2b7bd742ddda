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

# one json_extract with every path: one parse of the record (each call parses it again)
_RUNS = ("SELECT run_id, started, finished, status, profile, tags, json_extract(record, "
         "'$.schema_version', '$.stages', "
         + ", ".join(f"'$.host.{k}'" for k in HOST_KEYS) + ") FROM runs")


def _json_path(name: str) -> str:
    return '"' + name.replace('"', '\\"') + '"'


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _results_sql(primary: dict[str, tuple[str, ...]]) -> str:
    """Every result's family, case and [validated, kernel parameter, then for each primary
    name of its family: unit, direction, values]: one json_extract per result (one parse),
    only its family's paths (a CASE on the family), one scan of the table."""
    cases = []
    for family, names in primary.items():
        paths = ["'$.validated'", "'$.params.kernel'"]
        for n in names:
            base = f"$.metrics.{_json_path(n)}"
            paths += [f"'{base}.unit'", f"'{base}.higher_is_better'", f"'{base}.values'"]
        cases.append(f"WHEN {_sql_str(family)} THEN json_extract(result, {', '.join(paths)})")
    # one JSON array per run (one json.loads per node, not per result: the call overhead
    # was most of the decoding); in a run, the results in their order (the index on
    # run_id keeps rowid order)
    return ('SELECT run_id, json_group_array(json_array(id, family, "case", json(CASE '
            f"family {' '.join(cases)} ELSE json_extract(result, '$.validated', "
            "'$.params.kernel') END))) FROM results GROUP BY run_id")


def analysis_runs(store: Any, run_ids: list[str]) -> list[RunRecord]:
    """The runs `run_ids` (in that order) with what the fleet analysis reads."""
    want = set(run_ids)
    light: dict[str, RunRecord] = {}
    whole: list[str] = []
    for run_id, started, finished, status, profile, tags, got in store._q(_RUNS):
        if run_id not in want:
            continue
        version, stages, *host = json.loads(got)
        if version != SCHEMA_VERSION:
            whole.append(run_id)
            continue
        light[run_id] = RunRecord(
            run_id=run_id, started=started, finished=finished, status=status,
            profile=profile or "unknown", tags=json.loads(tags),
            host={k: v for k, v in zip(HOST_KEYS, host) if v is not None},
            stages=[StageInfo.from_dict(s) for s in stages or []])
    # the registered families' primary names, and their old aliases; a family with none
    # (or not registered) has its cases' metrics read whole below
    from numascope.families import ALIASES, families
    fams = [cls.family for cls in families()] + list(ALIASES)
    primary = {f: family_primary(f) for f in fams}
    for run_id, rows in store._q(_results_sql(primary)):
        rec = light.get(run_id)
        if rec is not None:
            rec.results = [_result(store, primary, *row) for row in json.loads(rows)]
    for run_id in whole:
        light[run_id] = store.get_run(run_id)
    return [light[i] for i in run_ids]


def _result(store: Any, primary: dict[str, tuple[str, ...]], rid: int, family: str,
            case: str, got: list[Any]) -> BenchResult:
    validated, kernel, *per_metric = got
    names = primary.get(family, ())
    metrics = {n: Metric(n, per_metric[3 * k], bool(per_metric[3 * k + 1]),
                         per_metric[3 * k + 2])
               for k, n in enumerate(names) if per_metric[3 * k + 2] is not None}
    if not metrics:
        # none of the family's primary names: the analysis falls back to the case's first
        # metric, so read its metrics whole
        (m,), = store._q("SELECT json_extract(result, '$.metrics') FROM results "
                         "WHERE id = ?", (rid,))
        metrics = {k: Metric.from_dict(v) for k, v in json.loads(m).items()}
    return BenchResult(family, case, {} if kernel is None else {"kernel": kernel}, metrics,
                       validated=validated is None or bool(validated))
