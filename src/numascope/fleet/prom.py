"""Per-node results as Prometheus text exposition, for node_exporter's textfile collector
(`--collector.textfile.directory`), written by prometheus_client (its registry, gauges,
HELP escaping and `write_to_textfile`: a temporary file in the same folder, then rename,
as the collector requires).

Names follow Prometheus' naming conventions (prometheus.io/docs/practices/naming): the
value in a base unit (bytes, seconds, hertz, a ratio in 0-1 rather than a percent), the unit
named once, as the suffix; no label repeats the name. One gauge per family and metric:

    # HELP numascope_bandwidth_bytes_per_second numascope bandwidth bandwidth: …
    # TYPE numascope_bandwidth_bytes_per_second gauge
    numascope_bandwidth_bytes_per_second{host="n1",case="triad compact 2T"} 4.12e+10

The value is the median of the case's repetitions, each converted to the base unit; HELP
names numascope's metric, the unit it was measured in and the direction. A word of the
metric's name that restates its unit goes (all_busy_ghz: all_busy_clock_hertz; gflops:
flop_per_second; pct_of_peak: peak_ratio; loads_per_ns: loads_per_second); a metric named
as its family is not repeated (latency/latency: numascope_latency_seconds). A unit with no
base form (cycles, misses) keeps its value and becomes the suffix; a dimensionless multiple
("x": a speedup) has no suffix; a compression ratio (original/compressed, "x") is exported
as its inverse, compressed_size_ratio in 0-1. No word of the family's name is repeated
(bandwidth/dram_bandwidth: numascope_bandwidth_dram_bytes_per_second).

A case parameter a metric's name carries becomes a label, so one name holds every value of
it (params): the message size of the interconnect sweep (lat_8, bw_1048576:
numascope_interconnect_sweep_latency_seconds{message_size_bytes="8"}, …
sweep_bandwidth_bytes_per_second{message_size_bytes="1048576"}), a percentile (clat_p99.9:
numascope_storage_clat_seconds{percentile="99.9"}; "quantile" is a summary's label, which
promtool refuses on a gauge), a storage target (iops_t0:
numascope_storage_target_operations_per_second{target="0"}) and a bandwidth variant
(bandwidth[avx2-nt]: numascope_bandwidth_variant_bytes_per_second{variant="avx2-nt"}). A
word before the unit keeps such a name apart from the headline metric without the label
(sweep, target, variant; load for the single-load latency tail: latency_p99 of the latency
family is numascope_latency_load_seconds{percentile="99"}, not latency_latency_p99).

The run's identity is one info gauge, numascope_run_info{host, fleet, run_id} 1, not labels
of every value: a label that changes with every run would start new series at each run and
cut a node's trend (join with `* on(host) group_left(fleet, run_id) numascope_run_info`).
Verdicts: numascope_node_ok{host} (record_ok), numascope_stage_ok{host, stage},
numascope_run_finished_timestamp_seconds{host}; with a fleet analysis
numascope_node_outlier{host} (1 flagged, 0 screened and not flagged or, after --confirm,
not reproduced; absent where the node could not be screened); with a baseline check
numascope_baseline_out{host, baseline} and numascope_baseline_inconclusive{host, baseline}.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from numascope.results.run import RunRecord

PREFIX = "numascope"
LABELS = ("host", "case")
SIGNIFICANT = 6     # digits of an exported value
# numascope's unit -> (the base unit's name suffix, the factor to it)
UNITS: dict[str, tuple[str, float]] = {
    "GB/s": ("bytes_per_second", 1e9), "MB/s": ("bytes_per_second", 1e6),
    "GiB/s": ("bytes_per_second", 2.0 ** 30), "B": ("bytes", 1.0),
    "ns": ("seconds", 1e-9), "us": ("seconds", 1e-6), "µs": ("seconds", 1e-6),
    "ms": ("seconds", 1e-3), "s": ("seconds", 1.0),
    "GHz": ("hertz", 1e9), "MHz": ("hertz", 1e6),
    "GFLOP/s": ("flop_per_second", 1e9), "%": ("ratio", 0.01),
    "IO/s": ("operations_per_second", 1.0), "IOPS": ("operations_per_second", 1.0),
    "msg/s": ("messages_per_second", 1.0), "loads/ns": ("loads_per_second", 1e9),
    "x": ("", 1.0), "count": ("", 1.0), "": ("", 1.0),
}
# words of a metric's name that restate its unit: the word that stays (or none)
UNIT_WORDS = {"ghz": "clock", "mhz": "clock", "gflops": "", "mflops": "", "flops": "",
              "pct": "", "percent": "", "iops": "", "ns": "", "us": "", "ms": "",
              "gbs": "", "mbs": "", "msg": "", "rate": ""}
# (metric, unit) -> (the name's words, the suffix, the conversion, direction flipped)
SPECIAL: dict[tuple[str, str], tuple[str, str, Callable[[float], float], bool]] = {
    ("ratio", "x"): ("compressed_size", "ratio", lambda v: 1.0 / v, True),
    ("seconds", "s"): ("duration", "seconds", lambda v: v, False),
}


# interconnect: each test's sweep over message sizes (lat_8, bw_1048576) and the headline
# metric of the same test (latency at the smallest size, bandwidth at the largest)
SWEEP_TESTS = {"lat": "latency", "bw": "bandwidth", "bibw": "bibw", "mbw": "mbw"}
_SWEEP = re.compile(r"^(?P<test>lat|bw|bibw|mbw)_(?P<size>[0-9]+)$")
_TARGET = re.compile(r"^(?P<base>.+)_t(?P<target>[0-9]+)$")
_PERCENTILE = re.compile(r"^(?P<base>.+)_p(?P<q>[0-9]+(?:\.[0-9]+)?)$")
_VARIANT = re.compile(r"^(?P<base>[^\[]+)\[(?P<variant>[^\]]+)\]$")


def _percentile(q: str) -> str:
    """A percentile as its name writes it: p99 99, p99.9 99.9, p999 99.9 (latency's
    latency_p999), p5 5."""
    if "." in q or len(q) <= 2:
        return q
    return f"{q[:2]}.{q[2:]}"


def params(family: str, metric: str) -> tuple[str, list[str], dict[str, str]]:
    """(the metric's name less its case parameters, the words that keep the name apart
    from the headline metric without them, the parameters as labels)."""
    labels: dict[str, str] = {}
    words: list[str] = []
    m = _SWEEP.match(metric)
    if m and family in ("interconnect", "net"):
        return SWEEP_TESTS[m["test"]], ["sweep"], {"message_size_bytes": m["size"]}
    m = _VARIANT.match(metric)
    if m:
        return m["base"], ["variant"], {"variant": m["variant"]}
    m = _TARGET.match(metric)
    if m:
        metric, labels["target"] = m["base"], m["target"]
        words.append("target")
    m = _PERCENTILE.match(metric)
    if m:
        metric, labels["percentile"] = m["base"], _percentile(m["q"])
        if metric == "latency":         # the single-load tail, beside the chase's latency
            words.append("load")
    return metric, words, labels


def record_ok(rec: RunRecord) -> bool:
    """The node's run is ok: the fleet's one verdict (numascope.fleet.verdict: complete,
    every stage it asked for done or not applicable here), as report and check read it."""
    from numascope.fleet.verdict import verdict
    return verdict(rec).ok


def stage_ok(status: str) -> bool:
    """Done, or skipped as not possible here; not an incomplete stage (asked, then a tool
    missing or no permission: fleet check cannot judge it either)."""
    return status in ("done", "skipped")


def _digits(v: float) -> float:
    """`v` to SIGNIFICANT digits: far finer than any repetition-to-repetition spread
    numascope measures, and shorter in the file than the 17 of Python's repr."""
    return float(f"{v:.{SIGNIFICANT}g}")


def _name(s: str) -> str:
    s = re.sub(r"[^a-zA-Z0-9_]+", "_", s.replace("/", "_per_")).strip("_").lower()
    return re.sub(r"_+", "_", s)


def base_unit(unit: str) -> tuple[str, float]:
    """(the name suffix, the factor to the base unit) of a numascope unit."""
    return UNITS.get(unit, (_name(unit), 1.0))


def _words(metric: str, family: str) -> list[str]:
    """The metric's name as words, less those restating the unit and less the family's
    name (latency/latency, bandwidth/dram_bandwidth, compress/compress_speed)."""
    words = [w for w in _name(metric).split("_") if w]
    fam = _name(family).split("_")
    for k in range(len(words) - len(fam), -1, -1):
        if words[k:k + len(fam)] == fam:
            words[k:k + len(fam)] = []
    words = [UNIT_WORDS.get(w, w) for w in words]
    words = [w for w in words if w]
    while words and words[0] in ("of", "per"):
        words.pop(0)
    while words and words[-1] in ("of", "per"):
        words.pop()
    return words


def conversion(metric: str, unit: str) -> tuple[list[str], str, Callable[[float], float],
                                                bool]:
    """(the name's words, the unit suffix, value -> base unit, direction flipped)."""
    if (metric, unit) in SPECIAL:
        words, suffix, fn, flip = SPECIAL[(metric, unit)]
        return words.split("_"), suffix, fn, flip
    suffix, factor = base_unit(unit)
    return [w for w in _name(metric).split("_") if w], suffix, lambda v: v * factor, False


def metric_name(family: str, metric: str, unit: str, strict: bool = False) -> str:
    """numascope_FAMILY_METRIC_UNIT, the metric's case parameters left out (params: they
    are labels); `strict` keeps the metric's name whole (the fallback where two metrics of
    a family would otherwise share a name)."""
    base, extra, _ = params(family, metric)
    words, suffix, _, _ = conversion(base, unit)
    if (base, unit) not in SPECIAL and not strict:
        words = _words(base, family)
    words = [*extra, *words]
    tail = suffix.split("_") if suffix else []
    # the suffix's first words already end the metric's (loads + loads_per_second)
    for k in range(min(len(words), len(tail)), 0, -1):
        if words[-k:] == tail[:k]:
            words = words[:-k]
            break
    return "_".join([PREFIX, _name(family), *words, *tail]).replace("__", "_")


def registry(runs: list[RunRecord], analysis: Any = None,
             checks: tuple[str, list[Any]] | None = None,
             cleared: frozenset[str] = frozenset()):
    """A prometheus_client registry with the gauges of `runs` (one run per host: a series
    must be unique); `analysis` (numascope.fleet.outliers.analyze of these runs) adds the
    outlier verdict, `cleared` the flagged hosts whose second measurement (--confirm) did
    not reproduce the flag, `checks` (baseline name, numascope.fleet.baseline.check's
    verdicts) the baseline's."""
    from prometheus_client import CollectorRegistry, Gauge

    from numascope.fleet.outliers import host_of
    reg = CollectorRegistry(auto_describe=True)
    gauges: dict[str, Gauge] = {}
    # name -> the (family, metric less its parameters, their labels) it holds
    sources: dict[str, tuple[str, str, tuple[str, ...]]] = {}

    def gauge(name: str, doc: str, labels: tuple[str, ...]) -> Gauge:
        if name not in gauges:
            gauges[name] = Gauge(name, doc, labels, registry=reg)
        return gauges[name]

    def name_of(family: str, metric: str, unit: str) -> str:
        base, _, labels = params(family, metric)
        held = (family, base, tuple(labels))
        name = metric_name(family, metric, unit)
        if sources.setdefault(name, held) != held:
            name = metric_name(family, metric, unit, strict=True)
            sources.setdefault(name, held)
        return name

    for rec in runs:
        host = host_of(rec)
        gauge(f"{PREFIX}_run_info", "the run whose values this file holds for the host: "
              "fleet run id and numascope run id (value 1)",
              ("host", "fleet", "run_id")).labels(
            host=host, fleet=str(rec.tags.get("fleet") or ""), run_id=rec.run_id).set(1)
        gauge(f"{PREFIX}_node_ok", "1 when the node's numascope run completed with every "
              "stage done or skipped (not possible here), else 0", ("host",)).labels(
            host=host).set(
            1.0 if record_ok(rec) else 0.0)
        for s in rec.stages:
            gauge(f"{PREFIX}_stage_ok", "1 when the stage is done or skipped (not possible "
                  "here), 0 when it failed, was interrupted, is incomplete (a tool missing "
                  "or no permission once it began) or never ran",
                  ("host", "stage")).labels(host=host, stage=s.name).set(
                1.0 if stage_ok(s.status) else 0.0)
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
                _, suffix, fn, flip = conversion(m.name, m.unit)
                vals = [fn(v) for v in m.values if v is not None and math.isfinite(v)
                        and (v != 0 or not flip)]
                if not vals:
                    continue
                better = m.higher_is_better != flip
                base, _, labels = params(res.family, m.name)
                what = f"{base} by {', '.join(labels)}" if labels else m.name
                doc = (f"numascope {res.family} {what}, median of the repetitions, "
                       f"{'inverted, ' if flip else ''}in "
                       f"{suffix.replace('_', ' ') or 'no unit'} (measured in "
                       f"{m.unit or 'no unit'}); {'higher' if better else 'lower'} is better")
                gauge(name_of(res.family, m.name, m.unit), doc,
                      (*LABELS, *labels)).labels(
                    host=host, case=res.case, **labels).set(_digits(statistics.median(vals)))
    if analysis is not None and not analysis.smoke:
        _outliers(gauge, analysis, cleared,
                  frozenset(host_of(r) for r in runs if not r.results))
    if checks is not None:
        name, verdicts = checks
        for v in verdicts:
            gauge(f"{PREFIX}_baseline_out", "1 when the node fell out of the baseline "
                  "(numascope fleet check exit 1), else 0", ("host", "baseline")).labels(
                host=v.host, baseline=name).set(1.0 if v.status == "out" else 0.0)
            gauge(f"{PREFIX}_baseline_inconclusive", "1 when the check could not judge the "
                  "node (exit 5: a person looks, no drain), else 0",
                  ("host", "baseline")).labels(host=v.host, baseline=name).set(
                1.0 if v.status == "inconclusive" else 0.0)
    return reg


def _outliers(gauge: Callable[..., Any], a: Any, cleared: frozenset[str],
              unmeasured: frozenset[str] = frozenset()) -> None:
    """numascope_node_outlier: 1 for a flagged node, 0 for a screened one not flagged or
    whose flag a second measurement did not reproduce; a node of a group too small to
    screen (and not under the STREAM floor) gets none, nor does a node with no metric (its
    run failed, or was interrupted before any result): it was not screened, so never 0
    (numascope_node_ok 0 and numascope_baseline_out 1 say it)."""
    from numascope.fleet.outliers import MIN_GROUP
    flagged = {f.host for f in a.flags} - cleared
    doc = ("1 when numascope's fleet screen flagged the node (outlier in its configuration "
           "group or under the STREAM floor) and, after fleet run --confirm, its second "
           "measurement agreed or never came; 0 when screened and not flagged or not "
           f"reproduced; absent for a group under {MIN_GROUP} nodes")
    for grp in a.groups:
        for h in grp.hosts:
            if h in unmeasured and h not in flagged:
                continue
            if h in flagged or h in cleared or len(grp.hosts) >= MIN_GROUP:
                gauge(f"{PREFIX}_node_outlier", doc, ("host",)).labels(host=h).set(
                    1.0 if h in flagged else 0.0)


def exposition(runs: list[RunRecord], analysis: Any = None,
               checks: tuple[str, list[Any]] | None = None,
               cleared: frozenset[str] = frozenset()) -> str:
    """The text exposition of `runs` (the arguments: registry's)."""
    from prometheus_client import generate_latest
    return generate_latest(registry(runs, analysis, checks, cleared)).decode()


def write(path: str | Path, runs: list[RunRecord], analysis: Any = None,
          checks: tuple[str, list[Any]] | None = None,
          cleared: frozenset[str] = frozenset()) -> Path:
    """Write the exposition atomically (prometheus_client's write_to_textfile)."""
    from prometheus_client import write_to_textfile
    p = Path(path)
    write_to_textfile(str(p), registry(runs, analysis, checks, cleared))
    return p
