"""numascope's bandwidth results as kerncraft's benchmark measurements: which results
kerncraft can use (and why the others are not), per level, kernel and core count, and the
`benchmarks` section of the machine file (numascope.results.kerncraft)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from numascope.results.kerncraft_yaml import C, Unit
from numascope.results.record import BenchResult
from numascope.results.run import RunRecord

PLATEAU_LEVEL = {"L1": "L1", "L2": "L2", "L3": "L3", "DRAM": "MEM"}   # bw --sweep's names

# -- the kernels: numascope's STREAM kernels as kerncraft stream counts ---------------------
# (read, read+write, write) streams of 8-byte elements per iteration. kerncraft picks the
# measured kernel whose (reads + writes - read+writes) / writes ratio is nearest the
# loop's, and looks up a kernel named "load" first: numascope's "read" is written so.
STREAMS = {"read": (1, 0, 0), "fill": (0, 0, 1), "copy": (1, 0, 1), "scale": (1, 0, 1),
           "add": (2, 0, 1), "triad": (2, 0, 1)}
FLOPS = {"read": 1, "fill": 0, "copy": 0, "scale": 1, "add": 1, "triad": 2}
NAME = {"read": "load"}
FORMULA = {"read": "s += a[i]", "fill": "a[i] = s", "copy": "c[i] = a[i]",
           "scale": "b[i] = s * c[i]", "add": "c[i] = a[i] + b[i]",
           "triad": "a[i] = b[i] + s * c[i], STREAM's (likwid-bench's triad reads 3 arrays)"}


def _kernel(k: str) -> dict[str, Any]:
    r, rw, w = STREAMS[k]
    return {"read streams": {"streams": r, "bytes": Unit(f"{8 * r}.00 B")},
            "read+write streams": {"streams": rw, "bytes": Unit(f"{8 * rw}.00 B")},
            "write streams": {"streams": w, "bytes": Unit(f"{8 * w}.00 B")},
            "FLOPs per iteration": FLOPS[k]}


# -- the measurements -----------------------------------------------------------------------
@dataclass
class Point:
    level: str           # L1, L2, L3, MEM
    kernel: str          # numascope's name
    cores: int
    gbs: float           # median of the repetitions
    samples: list[float]
    case: str
    working_set: int | None = None


@dataclass
class Gathered:
    points: list[Point] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)       # cases not usable, and why
    notes: list[str] = field(default_factory=list)         # cases used with a caveat
    domains: list[dict[str, Any]] = field(default_factory=list)


def _ordinary(res: BenchResult) -> list[float] | None:
    """The repetitions of the fastest ordinary-store variant (None: only streaming)."""
    if res.params.get("stores") != "streaming":
        return list(res.metrics["bandwidth"].values)
    best = None
    for name, m in res.metrics.items():
        ordinary = name.startswith("bandwidth[") and not name.endswith("-nt]") and m.values
        if ordinary and (best is None or m.median > statistics.median(best)):
            best = list(m.values)
    return best


class Topo:
    """The run's stored topology (plain dicts), read for what kerncraft needs."""

    def __init__(self, d: dict[str, Any]):
        self.d = d
        self.cpus = {c["id"]: c for c in d.get("cpus", [])}

    def distinct_cores(self, cpus: list[int]) -> bool:
        cores = [self.cpus[c].get("core") for c in cpus if c in self.cpus]
        return len(cores) == len(cpus) and None not in cores and len(set(cores)) == len(cores)

    def one_package(self, cpus: list[int]) -> bool:
        return len({self.cpus[c].get("package") for c in cpus if c in self.cpus}) == 1


def gather(run: RunRecord, topo: Topo) -> Gathered:
    g = Gathered()
    best: dict[tuple[str, str, int], Point] = {}
    for res in run.results:
        if res.family != "bandwidth" or "bandwidth" not in res.metrics:
            continue
        p, cpus = res.params, list(res.placement.get("cpus", []))
        if p.get("sweep") is True:
            if "plateau" in p:
                _plateau(res, run, topo, g, best)
            continue                        # a working-set point: its plateau stands for it
        if p.get("kernel") not in STREAMS:
            continue
        if p.get("sweep") == "per-domain":
            g.domains.append(_domain(res))
            continue
        why = _mem_refusal(res, topo, cpus)
        if why:
            g.skipped.append(f"{res.case}: {why}")
            continue
        samples = _ordinary(res)
        if samples is None:
            g.skipped.append(f"{res.case}: streaming stores only (kerncraft adds "
                             "write-allocate traffic to its figures)")
            continue
        ws = int(p.get("array_bytes", 0)) * int(p.get("arrays", 0)) or None
        _keep(best, Point("MEM", p["kernel"], len(cpus), statistics.median(samples), samples,
                          res.case, ws))
    g.points = sorted(best.values(), key=lambda x: (x.level, x.kernel, x.cores))
    return g


def _keep(best: dict, pt: Point) -> None:
    """One figure per (level, kernel, cores): the fastest, as kerncraft keeps the fastest."""
    key = (pt.level, pt.kernel, pt.cores)
    if key not in best or pt.gbs > best[key].gbs:
        best[key] = pt


def _mem_refusal(res: BenchResult, topo: Topo, cpus: list[int]) -> str:
    """Why a bandwidth result is not a kerncraft memory measurement (empty: it is one):
    kerncraft's are compact on one socket, one thread per core, memory local, arrays far
    beyond the caches."""
    p = res.params
    if p.get("policy") not in ("compact", None) or not cpus:
        return f"policy {p.get('policy')} (kerncraft's memory figures are compact)"
    mem = (res.placement.get("memory") or {}).get("policy", "first-touch")
    if mem != "first-touch":
        return f"memory policy {mem} (kerncraft's memory figures are first touch)"
    if not topo.one_package(cpus):
        return "threads on more than one socket (kerncraft's figures are per socket)"
    if not topo.distinct_cores(cpus):
        return "SMT siblings share a core (only 1 thread per core is written)"
    llc = p.get("llc_bytes") or 0
    ws = int(p.get("array_bytes", 0)) * int(p.get("arrays", 0))
    if llc and ws <= llc:
        return f"working set {ws} B within the last-level cache ({llc} B)"
    return ""


def _plateau(res: BenchResult, run: RunRecord, topo: Topo, g: Gathered,
            best: dict) -> None:
    p = res.params
    level = PLATEAU_LEVEL.get(str(p.get("plateau")))
    cpus = list(res.placement.get("cpus", []))
    threads = int(p.get("threads", len(cpus)))
    if p.get("kernel") not in STREAMS:
        return
    if level is None:
        g.skipped.append(f"{res.case}: a cache level the topology does not report")
        return
    if cpus and not topo.distinct_cores(cpus):
        g.skipped.append(f"{res.case}: SMT siblings share a core (only 1 thread per core "
                         "is written)")
        return
    if _streaming_points(run, p):
        g.skipped.append(f"{res.case}: its points used streaming stores")
        return
    if p.get("lines_up") is False:
        why = p.get("verdict") or "it does not line up with the cache"
        g.notes.append(f"{res.case} used, though {why}")
    ws = p.get("working_set_range") or [None, None]
    m = res.metrics["bandwidth"]
    _keep(best, Point(level, p["kernel"], threads, m.median, list(m.values), res.case,
                      ws[-1]))


def _streaming_points(run: RunRecord, plateau: dict[str, Any]) -> bool:
    """Whether any sweep point of the plateau's curve inside its range chose streaming
    stores (the plateau record does not say; its points do)."""
    lo, hi = plateau.get("working_set_range") or (0, 0)
    return any(r.params.get("sweep") is True and "working_set" in r.params
               and r.params.get("kernel") == plateau.get("kernel")
               and r.params.get("threads") == plateau.get("threads")
               and lo <= r.params["working_set"] <= hi
               and r.params.get("stores") == "streaming" for r in run.results)


def _domain(res: BenchResult) -> dict[str, Any]:
    m = res.metrics["bandwidth"]
    return {"domain": res.params.get("domain"), "kernel": res.params.get("kernel"),
            "threads": res.params.get("threads"), "stores": res.params.get("stores"),
            "bandwidth": Unit(f"{m.median:.2f} GB/s"), "case": res.case}


def usable_levels(g: Gathered) -> tuple[list[str], dict[str, str]]:
    """The levels the file can give kerncraft, and why each other measured level is left
    out. kerncraft falls back to its "load" kernel (numascope's read) wherever a loop
    moves nothing or only reads, so a level without it would crash kerncraft."""
    present = sorted({p.level for p in g.points}, key=lambda x: (x == "MEM", x))
    left: dict[str, str] = {}
    keep = []
    for lv in present:
        if any(p.level == lv and p.kernel == "read" for p in g.points):
            keep.append(lv)
        else:
            left[lv] = "no read kernel, kerncraft's fallback \"load\""
    return keep, left


# kerncraft tells kernels apart by their streams only and, of two alike, takes the one
# whose name sorts first: one kernel per stream signature is written, the one kerncraft's
# own machine files have (copy, triad) before numascope's others (scale, add)
PREFERRED = ("read", "fill", "copy", "triad", "scale", "add")


def one_per_streams(kernels: list[str], g: Gathered) -> list[str]:
    kept: dict[tuple[int, int, int], str] = {}
    for k in sorted(kernels, key=PREFERRED.index):
        if STREAMS[k] in kept:
            g.skipped.append(f"{k}: the streams of {kept[STREAMS[k]]} (kerncraft tells kernels "
                             "apart by their streams only)")
        else:
            kept[STREAMS[k]] = k
    return sorted(kept.values())


def benchmarks(g: Gathered, levels: list[str]) -> dict[str, Any]:
    """kernels (those measured at every level written) and per level, for 1 thread per
    core, the core counts and each kernel's bandwidth (median of its repetitions)."""
    per_level = {lv: {p.kernel for p in g.points if p.level == lv} for lv in levels}
    everywhere = set.intersection(*per_level.values())
    for k in sorted(set.union(*per_level.values()) - everywhere):
        miss = [lv for lv in levels if k not in per_level[lv]]
        g.skipped.append(f"{k}: not measured at {', '.join(miss)} (kerncraft reads a "
                         "kernel's figure at every level)")
    kernels = one_per_streams(sorted(everywhere), g)
    meas: dict[str, Any] = {}
    for lv in levels:
        pts = [p for p in g.points if p.level == lv and p.kernel in kernels]
        # one core list for every kernel: the counts each kernel has
        counts = sorted(set.intersection(*({p.cores for p in pts if p.kernel == k}
                                           for k in kernels)))
        res, stats, sizes = {}, {}, []
        for k in kernels:
            by = {p.cores: p for p in pts if p.kernel == k}
            res[NAME.get(k, k)] = [Unit(f"{by[n].gbs:.2f} GB/s") for n in counts]
            stats[NAME.get(k, k)] = [[Unit(f"{v:.2f} GB/s") for v in by[n].samples]
                                     for n in counts]
            sizes = [by[n].working_set for n in counts]
        entry: dict[str, Any] = {"threads per core": 1, "cores": counts, "threads": counts}
        if all(sizes):
            entry["total size"] = [Unit(f"{s} B") for s in sizes]
        entry["results"] = C(res, "measured: median of the repetitions, ordinary stores, "
                                  "STREAM bytes (no write-allocate), GB = 10^9 B")
        entry["stats"] = C(stats, "measured: every repetition")
        meas[lv] = {1: entry}
    return {"kernels": {NAME.get(k, k): C(_kernel(k), f"numascope {k}: {FORMULA[k]}")
                        for k in kernels},
            "measurements": meas}


def ecm_caveats(hierarchy: list[dict], meas: dict[str, Any], per_domain: int) -> list[str]:
    """kerncraft's ECM takes the fastest of a level's first N figures as those of 1..N
    cores (N: the cores sharing the level, at most a NUMA domain's); where the measured
    core counts skip some, those first N include more cores than N, and it says so."""
    out = []
    for lv in hierarchy:
        name = lv["level"]
        if name not in meas:
            continue
        n = min(lv["cores per group"].value, per_domain)
        counts = meas[name][1]["cores"]
        over = [c for c in counts[:n] if c > n]
        if over:
            out.append(f"{name}: core counts {counts} skip some: kerncraft's ECM reads its "
                       f"first {n} figures as 1..{n} cores and so also takes the "
                       f"{', '.join(map(str, over))}-core figures (beyond one NUMA domain)")
    return out
