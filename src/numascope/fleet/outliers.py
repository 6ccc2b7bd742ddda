"""Outliers in a fleet: which nodes are slower than their peers, under their hardware's
floor, or built differently.

Nodes are grouped by configuration: CPU model, memory mode, DIMM population and the run's
own tags (the fleet's bookkeeping tags — fleet, host, slurm_* — left out). Per group and
metric (each case's primary metrics, as compare uses; one value per node: the median of its
repetitions):
- the group median, each node's % from it and its moderated t (numascope.fleet.screen:
  its distance from the median of the group's other nodes over a spread, 1.4826 MAD,
  moderated across the fleet's groups, referred to Student's t: right in groups of 3 as in
  groups of 10,000);
- what flags a node is numascope.fleet.screen: per metric and per family (the median of
  its metrics' t, screened again), one-sided by the metric's direction, only beyond the
  metric's practical floor max(GAP_PCT, 2 x its moderated relative sd), with the false
  alarms held by Benjamini-Hochberg over the fleet's nodes, so that they do not grow with
  the number of nodes, metrics or groups (a fixed z_limit per test is the old rule, kept
  for --z);
- groups with fewer than MIN_GROUP (3) measured nodes are inconclusive: not judged.
Floor: a node's STREAM figure (its best DRAM-resident triad bandwidth: a working-set
sweep's cache points are not it, families.bandwidth.resident) under FLOOR (59 %) of its own
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

import functools
import math
import statistics
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from numascope.analysis.primary import primary_metrics
from numascope.families.bandwidth.resident import dram_resident
from numascope.fleet import screen
from numascope.results.run import RunRecord

Z_LIMIT: float | None = None   # None: the limit follows from the tests made (screen.py)
Z_SCALE = 0.6745
# the practical gap: a node less than 5 % worse than its group is never flagged: identical
# servers differ by 5-10 % in STREAM and ~5 % in HPL (Dell HPC and AI Innovation Lab,
# "AMD Rome - is it for real?", 2019, 64 servers), so less is what the same hardware varies
GAP_PCT = 5.0
# STREAM floor: a node's best triad under FLOOR of its DRAM peak fails. From the figures
# of the Dell HPC and AI Innovation Lab (Kochhar, Cherlopalle, Weage): healthy 2-socket
# EPYC servers sustain a triad of 244 of 307.2 GB/s (79 %; "AMD EPYC - STREAM, HPL,
# InfiniBand and WRF performance study", 2018, 2x EPYC 7601) and 270-300 of 409.6 GB/s
# (66-73 %; "AMD Rome - is it for real?", 2019, 2x EPYC 7002), identical servers 5-10 %
# apart: the lowest healthy ratio less the widest spread, 65.9 % x 0.90 = 59.3 %, rounded
# down (the 72 % used before flags a healthy Rome node; docs/sources.md, "Fleet")
FLOOR = 0.59
MIN_GROUP = screen.MIN_GROUP
BOOKKEEPING_TAGS = ("fleet", "host", "confirm_of")
SHAPE_KEYS = ("numa_nodes", "memory_mode", "dimm_count", "kernel", "cpus_allowed")


def metric_key(family: str, case: str, metric: str) -> str:
    return f"{family}/{case}/{metric}"


def node_values(rec: RunRecord) -> dict[str, tuple[float, str, bool]]:
    """"family/case/metric" → (the median of its repetitions, unit, higher_is_better), for
    each validated case's primary metrics with a finite value."""
    figs = getattr(rec, "figures", None)     # a light run over fleet.figures' columns
    if figs is not None:
        return values_of(figs[0].value_rows(figs[1]))
    return values_of(_record_rows(rec))


def values_of(rows: Iterable[tuple[str, float, str, bool]]
              ) -> dict[str, tuple[float, str, bool]]:
    """node_values of a run's (key, value, unit, higher_is_better) rows: those of its
    validated results' primary metrics with a finite value, in its results' order (a key
    given twice: its last value, at its first place)."""
    return {k: (v, unit, hib) for k, v, unit, hib in rows}


def _record_rows(rec: RunRecord) -> Iterator[tuple[str, float, str, bool]]:
    """values_of's rows of a whole record: each metric's median of its finite values."""
    isfinite = math.isfinite
    for res in rec.results:
        if not res.validated:
            continue
        metrics = res.metrics
        keys = _keys(res.family, res.case, tuple(metrics))
        for m in metrics.values():
            key = keys.get(m.name)
            if key is None:         # not a primary metric
                continue
            vals = m.values
            if len(vals) == 1:     # a light record's one value, its median (fleet.load)
                v = vals[0]
                if v is None or not isfinite(v):
                    continue
            else:
                vals = [v for v in vals if v is not None and isfinite(v)]
                if not vals:
                    continue
                v = vals[0] if len(vals) == 1 else statistics.median(vals)
            yield key, v, m.unit, m.higher_is_better


@functools.lru_cache(maxsize=65536)
def _keys(family: str, case: str, names: tuple[str, ...]) -> dict[str, str]:
    """A result's primary metrics (_primary) → their metric_key: once per case and metric
    list, one key string however many nodes measured it (100,000 nodes x 20 metrics made
    2 million copies of 20 strings). Read-only."""
    return {n: metric_key(family, case, n) for n in _primary(family, names)}


@functools.lru_cache(maxsize=4096)
def _primary(family: str, names: tuple[str, ...]) -> frozenset[str]:
    """primary_metrics, once per family and metric list: it looks the family class up each
    call, which was most of the analysis time at 10,000 nodes."""
    return frozenset(primary_metrics(family, list(names)))


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
    """The node's STREAM figure: its best DRAM-resident triad bandwidth (GB/s), else its
    best DRAM-resident bandwidth (resident.dram_resident: a working-set sweep's cache
    points and a memory tier's are not the node's DRAM)."""
    figs = getattr(rec, "figures", None)     # a light run over fleet.figures' columns
    return figs[0].stream_of(figs[1]) if figs is not None else stream_of(rec.results)


def stream_of(results: list[Any]) -> float | None:
    """stream() of these results."""
    best: dict[bool, float] = {}
    for res in results:
        if not res.validated or "bandwidth" not in res.metrics or not dram_resident(res):
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
    floor_pct: float = GAP_PCT   # the practical floor: how much worse a flagged node must be
    spread_pct: float = math.nan  # the moderated relative sd (% of the median)
    df: float = math.nan          # the degrees of freedom of its t (group's + the prior's)

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.key, "unit": self.unit,
                "higher_is_better": self.higher_is_better, "nodes": self.n,
                "median": self.median, "mad": self.mad,
                "mad_pct": self.mad / abs(self.median) * 100 if self.median else math.nan,
                "floor_pct": self.floor_pct, "spread_pct": _num(self.spread_pct),
                "df": _num(self.df)}


def _num(v: float) -> float | None:
    """A JSON number: None for NaN, a large number for an infinite df."""
    return None if math.isnan(v) else v


@dataclass
class Group:
    label: str
    config: dict[str, Any]
    hosts: list[str]
    metrics: dict[str, MetricStats] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def inconclusive(self) -> bool:
        """Too few nodes to judge any of its metrics."""
        return max((m.n for m in self.metrics.values()), default=0) < MIN_GROUP

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.label, "config": self.config, "nodes": len(self.hosts),
                "inconclusive": self.inconclusive,
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
    z_limit: float = 3.5     # the per-test robust-z limit (set by the fleet's size unless fixed)
    gap_pct: float = GAP_PCT
    floor: float = FLOOR
    smoke: bool = False      # every measured node ran the smoke profile: nothing flagged
    fdr: float = screen.Q
    multiple_testing: bool = True   # False: a fixed z limit per test was given
    cut: float | None = None        # the Benjamini-Hochberg cut-off per test p x its node's
    fixed_z: float | None = None    # tests (None: nothing flagged), or the fixed --z
    # each group's screen (Group, members, metric keys, GroupScreen): per_node is built from
    # it when asked (every value of 10,000 nodes as dicts took a tenth of the report)
    screened: list[tuple[Any, list[RunRecord], list[str], Any]] = field(
        default_factory=list, repr=False)
    floor_nodes: int = 0     # nodes the floor was applied to (a DRAM peak, a DRAM triad)
    prior: Any = None               # the fleet's spread priors (screen.Prior), for a re-screen

    def floor_said(self) -> str:
        """The STREAM floor as applied: to every measured node, some, or none (no node
        with a known DRAM peak and a DRAM-resident triad: no floor was checked)."""
        measured = self.nodes - len(self.failed)
        if not self.floor_nodes:
            return ("the STREAM floor not applied (no node has a known DRAM peak and a "
                    "DRAM-resident triad)")
        some = (f" (applied to {self.floor_nodes} of {measured} nodes: the others have no "
                "known DRAM peak or no DRAM-resident triad)"
                if self.floor_nodes < measured else "")
        return f"STREAM (best triad) under {self.floor:.0%} of the node's DRAM peak{some}"

    @functools.cached_property
    def per_node(self) -> list[dict[str, Any]]:
        """Every measured node: host, run, status, group, p-value, and its metrics (value,
        unit, % from the median, z) and families (combined z, median % worse)."""
        return [row for scr in self.screened for row in _per_node(*scr)]

    def method(self) -> str:
        if self.multiple_testing:
            rule = (f"flagged by Benjamini-Hochberg at {self.fdr:g} over the nodes (a node's "
                    "p: its smallest one-sided t p x its number of tests; here about "
                    f"|t| > {self.z_limit:.2f} per test in a large group)")
        else:
            rule = (f"flagged when t > {self.z_limit:g} (fixed, per test, as given: no "
                    "false-discovery control)")
        return (f"per configuration group and metric: each node's moderated t = (x − the "
                "median of the other nodes) / its sd, one-sided by the metric's direction, "
                "the spread (1.4826 MAD) moderated across the groups (limma's empirical "
                "Bayes, Smyth 2004) and the t referred to Student's t with the group's and "
                "the prior's degrees of freedom; per node and family (and over all its "
                f"metrics) the median of its worse-t, screened again the same way; {rule}; "
                "only when worse than the median by more than the metric's practical floor "
                f"max({self.gap_pct:g} %, {screen.K_SPREAD:g} x its moderated relative sd); "
                f"groups under {MIN_GROUP} nodes are inconclusive (not judged); "
                f"{self.floor_said()}{' fails' if self.floor_nodes else ''}; shape (NUMA "
                "nodes, memory mode, DIMMs, kernel, CPUs the task could use) compared with "
                "the most common value per CPU model")

    @property
    def inconclusive(self) -> list[Group]:
        """Groups too small to judge (fewer than MIN_GROUP measured nodes)."""
        return [g for g in self.groups if g.inconclusive]


    def to_dict(self) -> dict[str, Any]:
        return {"fleet": self.fleet, "nodes": self.nodes, "method": self.method(),
                "smoke": self.smoke, "fdr": self.fdr,
                "multiple_testing": self.multiple_testing,
                "z_limit": self.z_limit, "gap_pct": self.gap_pct, "floor": self.floor,
                "floor_nodes": self.floor_nodes,
                "flags": [f.to_dict() for f in self.flags],
                "shape_outliers": [s.to_dict() for s in self.shape],
                "failed_nodes": self.failed, "groups": [g.to_dict() for g in self.groups],
                "inconclusive_nodes": sum(len(g.hosts) for g in self.inconclusive),
                "per_node": self.per_node_summary()}

    def per_node_summary(self) -> list[dict[str, Any]]:
        """per_node as the JSON output gives it: every node's host, run, group and p-value,
        and its metrics and families only where it was flagged. Every value of every node
        (10,000 nodes x 20 metrics: a 50 MB document that took longer to write than the
        analysis) is in per_node and in the store."""
        flagged = {f.run_id for f in self.flags}
        return [row for scr in self.screened for row in _per_node(*scr, only=flagged)]


def host_of(rec: RunRecord) -> str:
    return str(rec.host.get("hostname") or rec.tags.get("host") or rec.run_id)


def smoke_among_measured(runs: list[RunRecord]) -> str | None:
    """The first smoke run when the measured (not failed) runs mix smoke and other
    profiles, else None: every difference between them would be the profile's."""
    from numascope.profile import readable
    ok = [r for r in runs if r.status not in ("failed", "missing")]
    smoke = [r.run_id for r in ok if not readable(r.profile)]
    return smoke[0] if smoke and len(smoke) < len(ok) else None


def all_smoke(runs: list[RunRecord]) -> bool:
    from numascope.profile import readable
    ok = [r for r in runs if r.status not in ("failed", "missing")]
    return bool(ok) and not any(readable(r.profile) for r in ok)


def analyze(runs: list[RunRecord], z_limit: float | None = Z_LIMIT,
            gap_pct: float = GAP_PCT, floor: float = FLOOR,
            floors: dict[str, float] | None = None, fleet: str | None = None,
            q: float = screen.Q) -> Analysis:
    """The outlier analysis of `runs` (one per node; failed runs are listed apart).
    z_limit None: each test's limit is set by the fleet's multiple-testing rule (see
    numascope.fleet.screen); a number: that fixed robust-z limit per test instead."""
    floors = floors or {}
    from numascope.fleet.verdict import NOT_MEASURED, verdict
    ok = [r for r in runs if r.status not in NOT_MEASURED]
    # every node whose run did not do all it was asked (failed, interrupted, missing)
    failed = [{"host": host_of(r), "run_id": r.run_id, "status": v.status, "reason": v.reason}
              for r in runs for v in [verdict(r)] if not v.ok]
    columns = _Columns(ok)
    by_cfg: dict[str, tuple[dict[str, Any], list[RunRecord]]] = {}
    for r in ok:
        cfg = config(r)
        by_cfg.setdefault(group_label(cfg), (cfg, []))[1].append(r)

    groups: list[Group] = []
    members_of: list[list[RunRecord]] = []
    inputs: list[screen.GroupInput] = []
    for label, (cfg, members) in sorted(by_cfg.items()):
        g = Group(label, cfg, [host_of(r) for r in members])
        groups.append(g)
        members_of.append(members)
        inputs.append(columns.group_input(g, members))
    screens, prior = screen.screen_fleet(inputs, gap_pct, min_z=screen.least_z(z_limit))
    screened: list[tuple[Group, list[RunRecord], list[str], screen.GroupScreen]] = []
    for g, members, inp, sc in zip(groups, members_of, inputs, screens):
        _fill_metrics(g, inp, sc)
        screened.append((g, members, inp.keys, sc))

    node_p = np.concatenate([sc.node_p() for *_, sc in screened]) if screened else \
        np.zeros(0)
    k_max = max((int(sc.tests().max(initial=0)) for *_, sc in screened), default=1) or 1
    if z_limit is None:
        cut = screen.bh_cutoff(node_p, q)
        # the per-test limit: the cut-off where one was reached, else what the first
        # Benjamini-Hochberg step would have needed of a node's most telling test
        limit = max(screen.MIN_Z,
                    screen.z_for((q / max(len(node_p), 1) if cut is None else cut) / k_max))
    else:
        cut, limit = None, z_limit

    flags: list[Flag] = []
    for g, members, keys, sc in screened:
        flags += _group_flags(g, members, keys, sc, cut, z_limit)
    floor_nodes = 0
    for r in ok:
        peak, st = dram_peak(r), stream(r)
        floor_nodes += bool(peak and st is not None)
        frac = floors.get(str(r.host.get("cpu_model")), floor)
        if peak and st is not None and st < frac * peak:
            flags.append(Flag("floor", host_of(r), r.run_id, group_label(config(r)),
                              "STREAM (best triad)", "GB/s", st,
                              frac * peak, st / peak * 100, math.nan,
                              (frac * peak - st) / (frac * peak) * 100,
                              f"{st / peak:.0%} of its DRAM peak {peak:g} GB/s, under the "
                              f"floor {frac:.0%}"))
    smoke = all_smoke(runs)
    if smoke:
        flags = []          # numbers that measure caches: no node is slow on them
    flags.sort(key=lambda f: (-f.severity, f.host, f.metric))
    return Analysis(fleet, len(runs), groups, flags, shape_outliers(ok), failed,
                    limit, gap_pct, floor, smoke, q, z_limit is None, cut, z_limit, screened,
                    floor_nodes, prior)


class _Columns:
    """The measured runs' values, for grouping: the matrix of the fleet.figures its runs are
    rows of (every run a light run over one Figures: a group is its rows, the metrics any of
    them has), else each run's node_values."""

    def __init__(self, runs: list[RunRecord]) -> None:
        self.matrix: tuple[np.ndarray, list[str], list[str], np.ndarray] | None = None
        self.values: dict[str, dict[str, tuple[float, str, bool]]] = {}
        figs = [getattr(r, "figures", None) for r in runs]
        if runs and all(f is not None and f[0] is figs[0][0] for f in figs):
            self.matrix = figs[0][0].matrix()
        if self.matrix is None:
            self.values = {r.run_id: node_values(r) for r in runs}

    def group_input(self, g: Group, members: list[RunRecord]) -> screen.GroupInput:
        """The group's nodes x metrics array (NaN where a node did not measure a metric)."""
        if self.matrix is None:
            return _group_input(g, members, self.values)
        x, keys, units, hib = self.matrix
        sub = x[np.array([r.figures[1] for r in members], dtype=np.intp)]
        cols = np.nonzero(np.isfinite(sub).any(axis=0))[0]   # keys are sorted
        g.units = {keys[j]: units[j] for j in cols.tolist()}
        return screen.GroupInput(np.ascontiguousarray(sub[:, cols]), hib[cols],
                                 [keys[j] for j in cols.tolist()],
                                 [keys[j].split("/", 1)[0] for j in cols.tolist()])


def _group_input(g: Group, members: list[RunRecord],
                 values: dict[str, dict[str, tuple[float, str, bool]]]) -> screen.GroupInput:
    """The group's nodes x metrics array (NaN where a node did not measure a metric)."""
    info: dict[str, tuple[str, bool]] = {}
    for r in members:
        for k, (_, unit, hib) in values[r.run_id].items():
            info.setdefault(k, (unit, hib))
    keys = sorted(info)
    col = {k: j for j, k in enumerate(keys)}
    # where each value goes, flat (one numpy assignment: one per value was a tenth of it)
    at: list[int] = []
    got: list[float] = []
    width = len(keys)
    for i, r in enumerate(members):
        row = i * width
        for k, (v, _, _) in values[r.run_id].items():
            at.append(row + col[k])
            got.append(v)
    x = np.full(len(members) * width, np.nan)
    x[np.array(at, dtype=np.intp)] = np.array(got, dtype=float)
    x = x.reshape(len(members), width)
    g.units = {k: info[k][0] for k in keys}
    hib = np.array([info[k][1] for k in keys], dtype=bool)
    return screen.GroupInput(x, hib, keys, [k.split("/", 1)[0] for k in keys])


def _fill_metrics(g: Group, inp: screen.GroupInput, sc: screen.GroupScreen) -> None:
    measured = np.isfinite(inp.x).sum(axis=0)
    for j, k in enumerate(inp.keys):
        g.metrics[k] = MetricStats(k, g.units[k], bool(inp.higher_is_better[j]),
                                   int(measured[j]), float(sc.median[j]), float(sc.mad[j]),
                                   float(sc.floor[j]), float(sc.spread[j]), float(sc.df[j]))


def hit(p: np.ndarray, wz: np.ndarray, k: np.ndarray, cut: float | None,
         z_limit: float | None) -> np.ndarray:
    """Which tests flag: p x (the node's tests) within the fleet's cut-off, or, with a fixed
    limit, worse-z beyond it (p < 1: over the practical floor)."""
    if z_limit is None:
        if cut is None:
            return np.zeros(p.shape, bool)
        return (p < 1) & (p * k[:, None] <= cut)
    return (p < 1) & (np.nan_to_num(wz, nan=-np.inf) > z_limit)


def _group_flags(g: Group, members: list[RunRecord], keys: list[str],
                 sc: screen.GroupScreen, cut: float | None,
                 z_limit: float | None) -> list[Flag]:
    flags: list[Flag] = []
    k = np.maximum(sc.tests(), 1)
    sign = np.array([-1.0 if g.metrics[key].higher_is_better else 1.0 for key in keys])
    for i, j in zip(*np.nonzero(hit(sc.p_metric, sc.z * sign, k, cut, z_limit))):
        r, key = members[i], keys[j]
        st = g.metrics[key]
        x, pct, z = float(sc.x[i, j]), float(sc.pct[i, j]), float(sc.z[i, j])
        flags.append(Flag("outlier", host_of(r), r.run_id, g.label, key, st.unit, x,
                          st.median, pct, z, float(sc.worse[i, j]),
                          f"{abs(pct):.1f} % {'below' if st.higher_is_better else 'above'}"
                          f" the group median (t {z:+.1f}; practical floor "
                          f"{sc.floor[j]:.1f} %)"))
    for i, c in zip(*np.nonzero(hit(sc.p_family, sc.fam_z, k, cut, z_limit))):
        r, (fam, ix) = members[i], sc.families[c]
        worse, z = float(sc.fam_worse[i, c]), float(sc.fam_z[i, c])
        what = "every metric" if fam == "all" else f"the {fam} metrics"
        flags.append(Flag("outlier", host_of(r), r.run_id, g.label,
                          f"{fam}/* ({len(ix)} metrics)", "%", worse, 0.0, worse, z, worse,
                          f"{worse:.1f} % worse than the group median over {what} "
                          f"(median of {len(ix)}; combined t {z:+.1f})"))
    return flags


def _per_node(g: Group, members: list[RunRecord], keys: list[str],
              sc: screen.GroupScreen, only: set[str] | None = None) -> list[dict[str, Any]]:
    """The group's rows of per_node; with `only`, metrics and families only for those
    runs (the others: host, run, status, group, p)."""
    out = []
    node_p = sc.node_p()
    units = [g.metrics[k].unit for k in keys]
    x = sc.x
    for i, r in enumerate(members):
        row = {"host": host_of(r), "run_id": r.run_id, "status": r.status, "group": g.label,
               "inconclusive": sc.inconclusive}
        if only is None or r.run_id in only:
            row["metrics"] = {keys[j]: {"value": float(x[i, j]), "unit": units[j],
                                        "pct": float(sc.pct[i, j]), "z": float(sc.z[i, j])}
                              for j in np.nonzero(np.isfinite(x[i]))[0]}
            row["families"] = {f: {"z": float(sc.fam_z[i, c]),
                                   "worse_pct": float(sc.fam_worse[i, c])}
                               for c, (f, _) in enumerate(sc.families)
                               if np.isfinite(sc.fam_z[i, c])}
        row["p"] = float(node_p[i])
        out.append(row)
    return out


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
