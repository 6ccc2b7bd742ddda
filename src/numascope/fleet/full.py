"""A node's full record stays on the node; the shared store holds its brief.

A quick run's full record (every repetition of every result, the topology, the host's facts
and readiness, the noise) is ~230 kB in a store; what `fleet report`, `check`, `prom` and
`baseline` read of it is its brief (the record without that bulk: numascope.results.store
.brief), each result's family, case, validated flag and the params the analysis reads, and
each metric's median (the store's figures). So each node writes its full record as a record
file (numascope.fleet.files: atomically, one file per run, any file system) into its node
folder (`fleet run --node-dir`, default NODE_DIR_VAR, else a folder `fleet` beside the
node's default store) or into --shared-dir when given, and sends rank 0 (or stores) only
slim(): the brief, the results' medians, and where the full record lives
(host.fleet.full_record: {"host", "path"}). The shared store keeps it with Store.save_run
(medians=True). A node whose full record could not be written sends it whole, as before.

`fleet show NODE` reads the full record from where it lives when it can (the same host, a
shared folder); `fleet gather --full NODE…` copies it into the shared store in place of the
brief. A store made before this (every record whole) reads as it always did.
"""

from __future__ import annotations

import functools
import json
import os
import socket
from pathlib import Path
from typing import Any

from numascope.errors import UserError, escape_text
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord

NODE_DIR_VAR = "NUMASCOPE_NODE_DIR"
KEY = "full_record"
# what the analysis reads of a result's params besides its family's method params
# (analysis.method.params_read): the kernel (bandwidth's triad, copy …), and whether a
# bandwidth figure is DRAM's (families.bandwidth.resident)
PARAMS = ("kernel", "sweep", "ratio")


def node_dir(env: dict[str, str] | None = None) -> Path:
    """Where a node keeps its full records: $NUMASCOPE_NODE_DIR, else the folder `fleet`
    beside the node's default store (numascope.results.store.default_path)."""
    from numascope.results.store import default_path
    e = os.environ if env is None else env
    given = e.get(NODE_DIR_VAR, "").strip()
    return Path(given).expanduser() if given else default_path().parent / "fleet"


def where(rec: RunRecord) -> dict[str, Any] | None:
    """Where the full record of a brief lives ({"host", "path"}); None for a full record."""
    fl = rec.host.get("fleet") if isinstance(rec.host, dict) else None
    got = fl.get(KEY) if isinstance(fl, dict) else None
    return got if isinstance(got, dict) and got.get("path") else None


def is_brief(rec: RunRecord) -> bool:
    return where(rec) is not None


def slim(rec: RunRecord, path: Path, host: str | None = None) -> RunRecord:
    """The brief of `rec`, whose full record is the file `path` on `host` (default this
    one): the record without its topology, noise, host facts and readiness, of its peaks
    the DRAM one, of its stages' plans the cases left out; each result with the params the
    analysis reads and each metric's median as its one value."""
    from numascope.results.run import StageInfo
    from numascope.results.store import BRIEF_HOST_DROPS
    host_d = {k: v for k, v in rec.host.items() if k not in BRIEF_HOST_DROPS}
    if isinstance(host_d.get("peaks"), dict):      # the fleet reads the DRAM peak alone
        host_d["peaks"] = {k: v for k, v in host_d["peaks"].items() if k == "dram"}
    # each stage's verdict, and the cases a budget left out (the plan's figures stay)
    stages = [StageInfo(s.name, s.status, s.reason, s.results, s.seconds,
                        {"left_out": s.plan["left_out"]} if s.plan.get("left_out") else {})
              for s in rec.stages]
    host_d["fleet"] = {**(rec.host.get("fleet") or {}),
                       KEY: {"host": host or socket.gethostname(), "path": str(path)}}
    results = []
    for res in rec.results:
        keys = _params(res.family)
        params = {k: res.params[k] for k in keys
                  if isinstance(res.params, dict) and k in res.params}
        metrics = {k: Metric(m.name, m.unit, m.higher_is_better, _median(m.values))
                   for k, m in res.metrics.items()}
        results.append(BenchResult(res.family, res.case, params, metrics,
                                   validated=res.validated))
    return RunRecord(run_id=rec.run_id, started=rec.started, tool_version=rec.tool_version,
                     finished=rec.finished, status=rec.status, profile=rec.profile,
                     tags=dict(rec.tags), host=host_d, stages=stages,
                     results=results, schema_version=rec.schema_version)


@functools.cache
def _params(family: str) -> tuple[str, ...]:
    """The params of a family's results that a brief keeps (a lookup of the family's
    module: once per family)."""
    from numascope.analysis.method import params_read
    return (*PARAMS, *params_read(family))


def _median(values: list[Any]) -> list[float]:
    import math
    import statistics
    vals = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)
            and math.isfinite(v)]
    return [statistics.median(vals)] if vals else []


def save(store: Any, rec: RunRecord, replaces: str | None = None) -> None:
    """Store a node's record: a brief as its figures only, a full record whole."""
    store.save_run(rec, replaces=replaces, medians=is_brief(rec))


def fetch(rec: RunRecord) -> tuple[RunRecord | None, str]:
    """The full record of the brief `rec` from where it lives: (the record, "") when it
    can be read from here, else (None, why not)."""
    w = where(rec)
    if w is None:
        return rec, ""
    p = Path(str(w["path"]))
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, "no such file here"
    except OSError as e:
        return None, f"cannot read it here ({e.strerror or type(e).__name__})"
    except ValueError:
        return None, "the path holds a NUL character"
    try:
        full = RunRecord.from_dict(json.loads(text))
    except (ValueError, KeyError, TypeError, UserError) as e:
        return None, f"not a numascope record ({type(e).__name__})"
    if full.run_id != rec.run_id:
        return None, f"the file holds run {escape_text(full.run_id, 60)}, not this one"
    return full, ""


def said(rec: RunRecord) -> str:
    """Where a brief's full record lives, in words."""
    w = where(rec) or {}
    return (f"its full record is {escape_text(w.get('path'), 200)} on host "
            f"{escape_text(w.get('host') or '?', 80)}")
