"""Per-node results as Prometheus text exposition, for node_exporter's textfile collector
(`--collector.textfile.directory`), written by prometheus_client (its registry, gauges,
HELP escaping and `write_to_textfile`: a temporary file in the same folder, then rename,
as the collector requires).

Names follow Prometheus' conventions: base units (bytes, seconds, hertz; a ratio, not a
percent), the unit as the name's suffix. One gauge per family, metric and unit:

    # HELP numascope_bandwidth_bandwidth_bytes_per_second numascope bandwidth: …
    # TYPE numascope_bandwidth_bandwidth_bytes_per_second gauge
    numascope_bandwidth_bandwidth_bytes_per_second{host="n1",metric="bandwidth",case="triad compact 2T",family="bandwidth"} 4.12e+10

(the value: the median of the case's repetitions, converted to the base unit; HELP names
the unit numascope measured in and the direction), plus numascope_node_ok{host} (1 when
the node's run completed) and numascope_run_finished_timestamp_seconds{host}. A unit with
no base-unit form (cycles, count, "x" …) keeps its value and its own name as the suffix.
"""

from __future__ import annotations

import math
import re
import statistics
from datetime import datetime
from pathlib import Path

from numascope.results.run import RunRecord

PREFIX = "numascope"
LABELS = ("host", "metric", "case", "family")
# numascope's unit -> (the base unit's name suffix, the factor to it)
UNITS: dict[str, tuple[str, float]] = {
    "GB/s": ("bytes_per_second", 1e9), "MB/s": ("bytes_per_second", 1e6),
    "GiB/s": ("bytes_per_second", 2.0 ** 30), "B": ("bytes", 1.0),
    "ns": ("seconds", 1e-9), "us": ("seconds", 1e-6), "µs": ("seconds", 1e-6),
    "ms": ("seconds", 1e-3), "s": ("seconds", 1.0),
    "GHz": ("hertz", 1e9), "MHz": ("hertz", 1e6),
    "GFLOP/s": ("flop_per_second", 1e9), "%": ("ratio", 0.01),
    "IO/s": ("operations_per_second", 1.0), "IOPS": ("operations_per_second", 1.0),
    "msg/s": ("messages_per_second", 1.0), "": ("", 1.0),
}


def _name(s: str) -> str:
    s = re.sub(r"[^a-zA-Z0-9_]+", "_", s.replace("/", "_per_")).strip("_").lower()
    return re.sub(r"_+", "_", s)


def base_unit(unit: str) -> tuple[str, float]:
    """(the name suffix, the factor to the base unit) of a numascope unit."""
    return UNITS.get(unit, (_name(unit), 1.0))


def metric_name(family: str, metric: str, unit: str) -> str:
    suffix = base_unit(unit)[0]
    parts = [PREFIX, _name(family), _name(metric)]
    if suffix and not parts[-1].endswith(suffix):
        parts.append(suffix)
    return "_".join(p for p in parts if p)


def registry(runs: list[RunRecord]):
    """A prometheus_client registry with the gauges of `runs` (one run per host: a series
    must be unique)."""
    from prometheus_client import CollectorRegistry, Gauge
    reg = CollectorRegistry(auto_describe=True)
    gauges: dict[str, Gauge] = {}

    def gauge(name: str, doc: str, labels: tuple[str, ...]) -> Gauge:
        if name not in gauges:
            gauges[name] = Gauge(name, doc, labels, registry=reg)
        return gauges[name]

    for rec in runs:
        host = str(rec.host.get("hostname") or rec.tags.get("host") or "unknown")
        gauge(f"{PREFIX}_node_ok", "1 when the node's numascope run completed, else 0",
              ("host",)).labels(host=host).set(1.0 if rec.status == "complete" else 0.0)
        if rec.finished:
            try:
                ts = datetime.fromisoformat(rec.finished).timestamp()
            except ValueError:
                ts = None
            if ts is not None:
                gauge(f"{PREFIX}_run_finished_timestamp_seconds",
                      "when the node's numascope run finished (Unix time)",
                      ("host",)).labels(host=host).set(ts)
        for res in rec.results:
            if not res.validated:
                continue
            for m in res.metrics.values():
                vals = [v for v in m.values if v is not None and math.isfinite(v)]
                if not vals:
                    continue
                suffix, factor = base_unit(m.unit)
                doc = (f"numascope {res.family} {m.name}, median of the repetitions, in "
                       f"{suffix.replace('_', ' ') or 'no unit'} (measured in "
                       f"{m.unit or 'no unit'}); "
                       f"{'higher' if m.higher_is_better else 'lower'} is better")
                gauge(metric_name(res.family, m.name, m.unit), doc, LABELS).labels(
                    host=host, metric=m.name, case=res.case, family=res.family
                ).set(statistics.median(vals) * factor)
    return reg


def exposition(runs: list[RunRecord]) -> str:
    """The text exposition of `runs`."""
    from prometheus_client import generate_latest
    return generate_latest(registry(runs)).decode()


def write(path: str | Path, runs: list[RunRecord]) -> Path:
    """Write the exposition atomically (prometheus_client's write_to_textfile)."""
    from prometheus_client import write_to_textfile
    p = Path(path)
    write_to_textfile(str(p), registry(runs))
    return p
