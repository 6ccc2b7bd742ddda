"""Outliers in a fleet: which nodes are slower than their peers, under their hardware's
floor, or built differently.

Nodes are grouped by configuration: CPU model, memory mode, DIMM population and the run's
own tags (the fleet's bookkeeping tags — fleet, host, slurm_* — left out). Per group and
metric (each case's primary metrics, as compare uses; one value per node: the median of its
repetitions):
- the group median, each node's % from it, and its robust z-score
  z = 0.6745 · (x − median) / MAD (Iglewicz and Hoaglin's modified z; MAD = the median of
  |x − median|), which a few bad nodes cannot drag the way they drag a mean and sd;
- a node is flagged only when |z| > Z_LIMIT (3.5) **and** it is worse than the median by
  more than the practical gap (GAP_PCT, 5 %), one-sided by the metric's direction
  (higher_is_better): a node faster than its peers is never "bad", and a statistically odd
  but practically equal node (a group with almost no spread) is not either;
- groups with fewer than MIN_GROUP (3) measured nodes get no z-score.
Floor: a node's STREAM figure (its best triad bandwidth) under FLOOR (72 %) of its own
theoretical DRAM peak (host.peaks.dram) fails, whatever its peers do — a fleet where every
node lost a DIMM has no outlier but every node under the floor. `floors` sets the fraction
per CPU model.
Smoke runs (`fleet run --smoke`, a dry run: their small working sets measure caches) are
not read: a fleet of smoke runs lists its nodes, failures and shape but flags no node on its
numbers (Analysis.smoke); smoke runs among measured ones are refused (smoke_among_measured),
as compare refuses them.
Shape: within each CPU model, NUMA node count, memory mode, DIMM count, kernel and the
CPUs the task could use (a launcher binding) are
compared with the most common value; a node that differs is listed apart (a wrong BIOS
mode or a missing DIMM shows here even before its numbers do).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from numascope.analysis.primary import primary_metrics
from numascope.results.run import RunRecord

Z_LIMIT = 3.5
Z_SCALE = 0.6745
GAP_PCT = 5.0
FLOOR = 0.72
MIN_GROUP = 3
BOOKKEEPING_TAGS = ("fleet", "host")
SHAPE_KEYS = ("numa_nodes", "memory_mode", "dimm_count", "kernel", "cpus_allowed")


def metric_key(family: str, case: str, metric: str) -> str:
    return f"{family}/{case}/{metric}"


def node_values(rec: RunRecord) -> dict[str, tuple[float, str, bool]]:
    """"family/case/metric" → (the median of its repetitions, unit, higher_is_better), for
    each validated case's primary metrics."""
    out: dict[str, tuple[float, str, bool]] = {}
    for res in rec.results:
        if not res.validated:
            continue
        prim = primary_metrics(res.family, list(res.metrics))
        for m in res.metrics.values():
            if m.name not in prim:
                continue
            vals = [v for v in m.values if v is not None and math.isfinite(v)]
            if vals:
                out[metric_key(res.family, res.case, m.name)] = (
                    statistics.median(vals), m.unit, m.higher_is_better)
    return out


def dimm_count(host: dict[str, Any]) -> int | None:
    """Populated DIMMs: host["dimms"] (a list or a count) when the record has it, else the
    populated channels of the DRAM peak (SMBIOS)."""
    d = host.get("dimms", host.get("dimm_count"))
    if isinstance(d, list):
        return len(d)
    if isinstance(d, int):
        return d
    ch = ((host.get("peaks") or {}).get("dram") or {}).get("channels")
    return int(ch) if isinstance(ch, int) else None


def dimm_population(host: dict[str, Any]) -> str | None:
    dram = (host.get("peaks") or {}).get("dram") or {}
    n = dimm_count(host)
    if n is None:
        return None
    kind = "-".join(str(x) for x in (dram.get("type"), dram.get("mts")) if x)
    return f"{n}x {kind}".strip() if kind else f"{n}x"


def config(rec: RunRecord) -> dict[str, Any]:
    """What groups a node: CPU model, memory mode, DIMM population, its own tags."""
    tags = {k: v for k, v in sorted(rec.tags.items())
            if k not in BOOKKEEPING_TAGS and not k.startswith("slurm_")}
    return {"cpu_model": rec.host.get("cpu_model"), "memory_mode": rec.host.get("memory_mode"),
            "dimms": dimm_population(rec.host), "tags": tags}


def group_label(cfg: dict[str, Any]) -> str:
    parts = [str(cfg.get("cpu_model") or "unknown CPU")]
    if cfg.get("memory_mode"):
        parts.append(f"mode {cfg['memory_mode']}")
    if cfg.get("dimms"):
        parts.append(f"DIMMs {cfg['dimms']}")
    parts += [f"{k}={v}" for k, v in cfg.get("tags", {}).items()]
    return ", ".join(parts)


def shape(rec: RunRecord) -> dict[str, Any]:
    return {"numa_nodes": rec.host.get("nodes"), "memory_mode": rec.host.get("memory_mode"),
            "dimm_count": dimm_count(rec.host), "kernel": rec.host.get("kernel"),
            # CPUs the task could use (a launcher that bound it measured less of the node)
            "cpus_allowed": (rec.host.get("fleet") or {}).get("cpus_allowed")}


def stream(rec: RunRecord) -> float | None:
    """The node's STREAM figure: its best triad bandwidth (GB/s), else its best bandwidth."""
    best: dict[bool, float] = {}
    for res in rec.results:
        if res.family != "bandwidth" or not res.validated or "bandwidth" not in res.metrics:
            continue
        vals = [v for v in res.metrics["bandwidth"].values if v is not None and math.isfinite(v)]
        if not vals:
            continue
        triad = res.case.startswith("triad") or res.params.get("kernel") == "triad"
        best[triad] = max(best.get(triad, 0.0), statistics.median(vals))
    return best.get(True, best.get(False))


def dram_peak(rec: RunRecord) -> float | None:
    v = ((rec.host.get("peaks") or {}).get("dram") or {}).get("value")
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def robust_z(x: float, med: float, mad: float) -> float:
    if mad > 0:
        return Z_SCALE * (x - med) / mad
    return 0.0 if x == med else math.copysign(math.inf, x - med)


@dataclass
class MetricStats:
    key: str
    unit: str
    higher_is_better: bool
    n: int
    median: float
    mad: float

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.key, "unit": self.unit,
                "higher_is_better": self.higher_is_better, "nodes": self.n,
                "median": self.median, "mad": self.mad,
                "mad_pct": self.mad / abs(self.median) * 100 if self.median else math.nan}


@dataclass
class Group:
    label: str
    config: dict[str, Any]
    hosts: list[str]
    metrics: dict[str, MetricStats] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.label, "config": self.config, "nodes": len(self.hosts),
                "metrics": [m.to_dict() for m in self.metrics.values()]}


@dataclass
class Flag:
    kind: str            # "outlier" | "floor"
    host: str
    run_id: str
    group: str
    metric: str
    unit: str
    value: float
    reference: float     # outlier: the group median; floor: the floor (GB/s)
    pct: float           # outlier: % from the median; floor: % of the DRAM peak
    z: float             # robust z (NaN for the floor)
    severity: float      # how much worse, % (sort key)
    why: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ShapeOutlier:
    host: str
    run_id: str
    cpu_model: str | None
    field: str
    value: Any
    expected: Any
    agree: str           # "97 of 100 nodes"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Analysis:
    fleet: str | None
    nodes: int
    groups: list[Group]
    flags: list[Flag]
    shape: list[ShapeOutlier]
    failed: list[dict[str, Any]]
    per_node: list[dict[str, Any]]
    z_limit: float = Z_LIMIT
    gap_pct: float = GAP_PCT
    floor: float = FLOOR
    smoke: bool = False      # every measured node ran the smoke profile: nothing flagged

    def method(self) -> str:
        return (f"per configuration group and metric: median, robust z = {Z_SCALE}·(x − "
                f"median)/MAD; flagged when |z| > {self.z_limit:g} and worse than the "
                f"median by > {self.gap_pct:g} % (one-sided); groups under {MIN_GROUP} "
                f"nodes get no z; STREAM (best triad) under {self.floor:.0%} of the node's "
                "DRAM peak fails; shape (NUMA nodes, memory mode, DIMMs, kernel, CPUs the "
                "task could use) compared "
                "with the most common value per CPU model")

    def to_dict(self) -> dict[str, Any]:
        return {"fleet": self.fleet, "nodes": self.nodes, "method": self.method(),
                "smoke": self.smoke,
                "z_limit": self.z_limit, "gap_pct": self.gap_pct, "floor": self.floor,
                "flags": [f.to_dict() for f in self.flags],
                "shape_outliers": [s.to_dict() for s in self.shape],
                "failed_nodes": self.failed, "groups": [g.to_dict() for g in self.groups],
                "per_node": self.per_node}


def host_of(rec: RunRecord) -> str:
    return str(rec.host.get("hostname") or rec.tags.get("host") or rec.run_id)


def smoke_among_measured(runs: list[RunRecord]) -> str | None:
    """The first smoke run when the measured (not failed) runs mix smoke and other
    profiles, else None: every difference between them would be the profile's."""
    from numascope.profile import readable
    ok = [r for r in runs if r.status != "failed"]
    smoke = [r.run_id for r in ok if not readable(r.profile)]
    return smoke[0] if smoke and len(smoke) < len(ok) else None


def all_smoke(runs: list[RunRecord]) -> bool:
    from numascope.profile import readable
    ok = [r for r in runs if r.status != "failed"]
    return bool(ok) and not any(readable(r.profile) for r in ok)


def analyze(runs: list[RunRecord], z_limit: float = Z_LIMIT, gap_pct: float = GAP_PCT,
            floor: float = FLOOR, floors: dict[str, float] | None = None,
            fleet: str | None = None) -> Analysis:
    """The outlier analysis of `runs` (one per node; failed runs are listed apart)."""
    floors = floors or {}
    ok = [r for r in runs if r.status != "failed"]
    failed = [{"host": host_of(r), "run_id": r.run_id, "status": r.status,
               "reason": next((s.reason for s in r.stages if s.status == "failed"), "")}
              for r in runs if r.status == "failed"]
    values = {r.run_id: node_values(r) for r in ok}
    by_cfg: dict[str, tuple[dict[str, Any], list[RunRecord]]] = {}
    for r in ok:
        cfg = config(r)
        by_cfg.setdefault(group_label(cfg), (cfg, []))[1].append(r)

    flags: list[Flag] = []
    groups: list[Group] = []
    per_node: dict[str, dict[str, Any]] = {
        r.run_id: {"host": host_of(r), "run_id": r.run_id, "status": r.status,
                   "group": "", "metrics": {}} for r in ok}
    for label, (cfg, members) in sorted(by_cfg.items()):
        g = Group(label, cfg, [host_of(r) for r in members])
        groups.append(g)
        keys = sorted({k for r in members for k in values[r.run_id]})
        for key in keys:
            pts = [(r, values[r.run_id][key]) for r in members if key in values[r.run_id]]
            xs = [v for _, (v, _, _) in pts]
            unit, hib = pts[0][1][1], pts[0][1][2]
            med = statistics.median(xs)
            mad = statistics.median(abs(x - med) for x in xs)
            g.metrics[key] = MetricStats(key, unit, hib, len(xs), med, mad)
            for r, (x, _, _) in pts:
                pct = (x - med) / abs(med) * 100 if med else math.nan
                z = robust_z(x, med, mad) if len(xs) >= MIN_GROUP else math.nan
                node = per_node[r.run_id]
                node["group"] = label
                node["metrics"][key] = {"value": x, "unit": unit, "pct": pct, "z": z}
                worse = -pct if hib else pct
                if math.isfinite(z) and abs(z) > z_limit and worse > gap_pct \
                        and (z < 0) == hib:
                    flags.append(Flag("outlier", host_of(r), r.run_id, label, key, unit, x, med,
                                      pct, z, worse,
                                      f"{abs(pct):.1f} % {'below' if hib else 'above'} the "
                                      f"group median (z {z:+.1f})"))
    for r in ok:
        peak, st = dram_peak(r), stream(r)
        frac = floors.get(str(r.host.get("cpu_model")), floor)
        if peak and st is not None and st < frac * peak:
            flags.append(Flag("floor", host_of(r), r.run_id, per_node[r.run_id]["group"] or
                              group_label(config(r)), "STREAM (best triad)", "GB/s", st,
                              frac * peak, st / peak * 100, math.nan,
                              (frac * peak - st) / (frac * peak) * 100,
                              f"{st / peak:.0%} of its DRAM peak {peak:g} GB/s, under the "
                              f"floor {frac:.0%}"))
    smoke = all_smoke(runs)
    if smoke:
        flags = []          # numbers that measure caches: no node is slow on them
    flags.sort(key=lambda f: (-f.severity, f.host, f.metric))
    return Analysis(fleet, len(runs), groups, flags, shape_outliers(ok), failed,
                    list(per_node.values()), z_limit, gap_pct, floor, smoke)


def shape_outliers(runs: list[RunRecord]) -> list[ShapeOutlier]:
    out: list[ShapeOutlier] = []
    by_model: dict[str, list[RunRecord]] = {}
    for r in runs:
        by_model.setdefault(str(r.host.get("cpu_model")), []).append(r)
    for model, members in sorted(by_model.items()):
        if len(members) < 2:
            continue
        shapes = {r.run_id: shape(r) for r in members}
        for k in SHAPE_KEYS:
            counts = Counter(repr(s[k]) for s in shapes.values())
            common, n = counts.most_common(1)[0]
            if n == len(members):
                continue
            expected = next(s[k] for s in shapes.values() if repr(s[k]) == common)
            for r in members:
                v = shapes[r.run_id][k]
                if repr(v) != common:
                    out.append(ShapeOutlier(host_of(r), r.run_id, r.host.get("cpu_model"), k,
                                            v, expected, f"{n} of {len(members)} nodes"))
    return sorted(out, key=lambda s: (s.host, s.field))
