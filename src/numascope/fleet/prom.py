"""Per-node results as Prometheus text exposition, for node_exporter's textfile collector
(`--collector.textfile.directory`): one gauge per family, metric and unit,

    # HELP numascope_bandwidth_bandwidth_gigabytes_per_second numascope bandwidth: …
    # TYPE numascope_bandwidth_bandwidth_gigabytes_per_second gauge
    numascope_bandwidth_bandwidth_gigabytes_per_second{host="n1",metric="bandwidth",case="triad compact 2T",family="bandwidth"} 41.2

(the value: the median of the case's repetitions), plus numascope_node_ok{host} (1 when the
node's run completed) and numascope_run_finished_timestamp_seconds{host}. Files are written
atomically (a temporary name in the same folder, then rename), as the collector requires.
"""

from __future__ import annotations

import math
import re
import statistics
from datetime import datetime
from pathlib import Path

from numascope.atomic import write_atomic
from numascope.results.run import RunRecord

PREFIX = "numascope"
UNITS = {"GB/s": "gigabytes_per_second", "MB/s": "megabytes_per_second",
         "GiB/s": "gibibytes_per_second", "ns": "nanoseconds", "us": "microseconds",
         "µs": "microseconds", "ms": "milliseconds", "s": "seconds", "GHz": "gigahertz",
         "MHz": "megahertz", "GFLOP/s": "gigaflops", "%": "percent", "B": "bytes",
         "IOPS": "iops", "": ""}


def _name(s: str) -> str:
    s = re.sub(r"[^a-zA-Z0-9_]+", "_", s.replace("/", "_per_")).strip("_").lower()
    return re.sub(r"_+", "_", s)


def unit_suffix(unit: str) -> str:
    return UNITS.get(unit, _name(unit))


def metric_name(family: str, metric: str, unit: str) -> str:
    return "_".join(p for p in (PREFIX, _name(family), _name(metric), unit_suffix(unit)) if p)


def _label(v: str) -> str:
    return str(v).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(d: dict[str, str]) -> str:
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in d.items()) + "}"


def _num(x: float) -> str:
    return repr(float(x))


def exposition(runs: list[RunRecord]) -> str:
    """The text exposition of `runs` (give one run per host: series must be unique)."""
    series: dict[str, tuple[str, list[str]]] = {}

    def add(name: str, help_: str, labels: dict[str, str], value: float) -> None:
        if not math.isfinite(value):
            return
        series.setdefault(name, (help_, []))[1].append(f"{name}{_labels(labels)} {_num(value)}")

    for rec in runs:
        host = str(rec.host.get("hostname") or rec.tags.get("host") or "unknown")
        add(f"{PREFIX}_node_ok", "1 when the node's numascope run completed, else 0",
            {"host": host}, 1.0 if rec.status == "complete" else 0.0)
        if rec.finished:
            try:
                ts = datetime.fromisoformat(rec.finished).timestamp()
                add(f"{PREFIX}_run_finished_timestamp_seconds",
                    "when the node's numascope run finished (Unix time)", {"host": host}, ts)
            except ValueError:
                pass
        for res in rec.results:
            if not res.validated:
                continue
            for m in res.metrics.values():
                vals = [v for v in m.values if v is not None and math.isfinite(v)]
                if not vals:
                    continue
                name = metric_name(res.family, m.name, m.unit)
                add(name, f"numascope {res.family} {m.name} ({m.unit or 'no unit'}), median "
                          f"of the repetitions; {'higher' if m.higher_is_better else 'lower'}"
                          " is better",
                    {"host": host, "metric": m.name, "case": res.case, "family": res.family},
                    statistics.median(vals))
    lines: list[str] = []
    for name, (help_, samples) in series.items():
        lines += [f"# HELP {name} {help_}", f"# TYPE {name} gauge", *samples]
    return "\n".join(lines) + "\n"


def write(path: str | Path, runs: list[RunRecord]) -> Path:
    p = Path(path)
    write_atomic(p, exposition(runs))
    return p
