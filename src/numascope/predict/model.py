"""The placement model: the memory bandwidth each rank of a job shape gets, and its idle
and loaded latency, from the measurements of one stored run.

    shape = [RankShape(0, threads=(0, 1), mem_nodes=(0,)), RankShape(1, (8, 9), (1,))]
    p = predict(record, shape)                  # kernel "triad"
    p.total, [r.gbs for r in p.ranks], p.used, p.extrapolated, p.no_data

How (an engineer's saturation model, as in the ECM/roofline literature: Hofmann, Hager,
Wellein et al.; bandwidth saturates per memory domain):
- Each thread reads its pages from one node: its own with local/first-touch memory or when
  the binding holds its node, else the bound node nearest to it (the kernel's MPOL_BIND
  zonelist order). Threads group by (CPU node, memory node).
- A group's bandwidth comes from the run's bandwidth results of the kernel whose CPUs lie
  on that CPU node and whose pages lie on that memory node (>= 90 %): a point with the same
  thread count and the same number of L3 domains is taken as measured; else the series of
  the same L3 spread (packed, or one thread per L3) is read at the thread count: linear
  between two measured counts ("interpolated"), beyond the largest P(n) = min(n·P1, Psat)
  and below the smallest a twin node's shape scaled to this node's point (P(m) × the
  twin's P(n)/P(m)), else n·P(m)/m ("extrapolated", said). A node never measured alone takes
  a node of the same CPUs and L3s ("borrowed", said).
- A remote group without its own points: its CPU node's local curve times the matrix's
  remote/local read-bandwidth ratio of the pair; no matrix pair: "no data".
- Shared domains: a group's figure is split among its ranks by their threads (threads of
  two ranks in one L3 are one group: the L3's point at 2 threads, halved); a memory node
  whose groups together exceed its measured saturation (the largest figure measured on it)
  is capped there, shared in proportion; a package over its measured per-package figure
  likewise.
- Latency per rank: idle from the matrix (or the latency family's idle chase of that node
  pair); loaded from the loaded-latency curve of the memory node, read at the node's
  predicted bandwidth (past its last point: that point's latency, a lower bound, said).

Every figure says what kind it is (KINDS): "lookup" (a stored point's median, read back:
one rank, one group, the point's thread and L3 count; checking it measures how the machine
reproduces its own run, not the model), "interpolated" (linear between two stored points of
the same series) or "model" (anything the model adds: past the points, another L3 spread, a
twin node, the matrix's remote ratio, a group or a point shared by several ranks, several
groups summed, a cap, a demand). A figure made of several takes the weakest (LOOKUP <
INTERPOLATED < MODEL). Every figure names the results it used (run id, case, median,
repetitions); where nothing measured answers it says "no data" and gives no number."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from numascope.families.bandwidth.resident import dram_resident
from numascope.results.record import BenchResult
from numascope.results.run import RunRecord

KERNEL = "triad"
ON_NODE = 0.9              # a point's pages count as on a node when this share of them is

# what a predicted figure is (module doc), weakest last
LOOKUP, INTERPOLATED, MODEL = "lookup", "interpolated", "model"
KINDS = (LOOKUP, INTERPOLATED, MODEL)


def weakest(*kinds: str | None) -> str | None:
    """The kind of a figure made of these (None: no figure among them)."""
    have = [k for k in kinds if k is not None]
    return max(have, key=KINDS.index) if have else None


@dataclass(frozen=True)
class RankShape:
    """One rank of a job: one CPU per thread, and the nodes its memory is bound to
    (empty: local / first touch)."""
    rank: int
    threads: tuple[int, ...]
    mem_nodes: tuple[int, ...] = ()


@dataclass(frozen=True)
class Point:
    """One measured bandwidth result, as the model reads it."""
    run_id: str
    case: str
    cpus: tuple[int, ...]
    node: int | None               # the CPU node of all its CPUs (None: several)
    package: int | None
    mem: int | None                # the node holding >= ON_NODE of its pages (None: spread)
    l3s: int                       # L3 domains its threads use
    gbs: float                     # median GB/s
    reps: int
    bimodal: bool = False          # its repetitions fell in two modes (the outlier screen)

    @property
    def n(self) -> int:
        return len(self.cpus)

    def used(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "case": self.case, "metric": "bandwidth",
                "median": round(self.gbs, 4), "unit": "GB/s", "n": self.reps} | \
            ({"bimodal": True} if self.bimodal else {})


@dataclass
class RankPrediction:
    rank: int
    cpus: tuple[int, ...]
    nodes: tuple[int, ...]             # CPU nodes of its threads
    mem_nodes: tuple[int, ...]         # memory nodes its threads read
    gbs: float | None = None           # None: no data
    idle_ns: float | None = None
    loaded_ns: float | None = None
    gbs_kind: str | None = None        # KINDS (None: no figure)
    gbs_basis: str = ""                # why it is that kind, in words
    idle_kind: str | None = None
    loaded_kind: str | None = None

    @property
    def threads(self) -> int:
        return len(self.cpus)

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "cpus": list(self.cpus), "threads": self.threads,
                "nodes": list(self.nodes), "mem_nodes": list(self.mem_nodes),
                "gbs": _r(self.gbs), "gbs_kind": self.gbs_kind, "gbs_basis": self.gbs_basis,
                "idle_ns": _r(self.idle_ns), "idle_kind": self.idle_kind,
                "loaded_ns": _r(self.loaded_ns), "loaded_kind": self.loaded_kind}


@dataclass
class Prediction:
    run_id: str
    kernel: str
    ranks: list[RankPrediction]
    used: list[dict[str, Any]] = field(default_factory=list)     # results read
    extrapolated: list[str] = field(default_factory=list)        # where it reads past data
    no_data: list[str] = field(default_factory=list)             # what nothing answers
    notes: list[str] = field(default_factory=list)               # caps and splits applied

    @property
    def total(self) -> float | None:
        """The job's bandwidth; None when some rank has no figure."""
        if not self.ranks or any(r.gbs is None for r in self.ranks):
            return None
        return sum(r.gbs for r in self.ranks)  # type: ignore[misc]

    @property
    def total_kind(self) -> str | None:
        """The total's kind: its ranks' weakest (several ranks are always "model")."""
        return None if self.total is None else weakest(*(r.gbs_kind for r in self.ranks))

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "kernel": self.kernel, "total_gbs": _r(self.total),
                "total_kind": self.total_kind,
                "ranks": [r.to_dict() for r in self.ranks], "used": list(self.used),
                "extrapolated": list(self.extrapolated), "no_data": list(self.no_data),
                "notes": list(self.notes)}


def _r(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(f"{x:.4g}")


# -- reading the run -------------------------------------------------------------------------

@dataclass(frozen=True)
class _Cpu:
    node: int | None
    l3: int | None
    package: int | None


def cpu_map(rec: RunRecord) -> dict[int, _Cpu]:
    return {int(c["id"]): _Cpu(c.get("node"), c.get("l3"), c.get("package"))
            for c in rec.topology.get("cpus", []) if isinstance(c, dict) and "id" in c}


def distances(rec: RunRecord) -> dict[int, dict[int, int]]:
    return {int(n["id"]): {int(k): int(v) for k, v in (n.get("distances") or {}).items()}
            for n in rec.topology.get("nodes", []) if isinstance(n, dict)}


def _pages_node(res: BenchResult, cpus: dict[int, _Cpu]) -> int | None:
    """The node holding >= ON_NODE of a result's pages (from its page counts; without
    them, its binding, or for first touch its CPUs' node); None when spread."""
    pl = res.placement or {}
    pages = {int(k): float(v) for k, v in (pl.get("pages_per_node") or {}).items()
             if isinstance(v, (int, float)) and int(k) >= 0}
    total = sum(pages.values())
    if total > 0:
        node, most = max(pages.items(), key=lambda kv: kv[1])
        return node if most / total >= ON_NODE else None
    mem = pl.get("memory") or {}
    if mem.get("policy") in ("bind", "preferred") and len(mem.get("nodes") or []) == 1:
        return int(mem["nodes"][0])
    if mem.get("policy") in (None, "first-touch", "local"):
        nodes = {cpus[c].node for c in pl.get("cpus") or [] if c in cpus}
        return nodes.pop() if len(nodes) == 1 else None
    return None


def points(rec: RunRecord, kernel: str = KERNEL) -> list[Point]:
    cpus = cpu_map(rec)
    out = []
    for r in rec.results:
        if r.family != "bandwidth" or not r.validated or r.params.get("kernel") != kernel \
                or "bandwidth" not in r.metrics or r.params.get("sweep") == "verify" \
                or not dram_resident(r):
            continue
        cs = tuple(int(c) for c in (r.placement or {}).get("cpus") or [])
        if not cs or any(c not in cpus for c in cs):
            continue
        m = r.metrics["bandwidth"]
        if not m.values:
            continue
        nodes = {cpus[c].node for c in cs}
        pkgs = {cpus[c].package for c in cs}
        out.append(Point(rec.run_id, r.case, cs, nodes.pop() if len(nodes) == 1 else None,
                         pkgs.pop() if len(pkgs) == 1 else None, _pages_node(r, cpus),
                         len({cpus[c].l3 for c in cs}), m.median, len(m.values),
                         bool(r.params.get("bimodal"))))
    return out


def _matrix(rec: RunRecord, metric: str) -> dict[tuple[int, int], BenchResult]:
    return {(int(r.params["src"]), int(r.params["dst"])): r for r in rec.results
            if r.family == "matrix" and r.validated and metric in r.metrics
            and r.metrics[metric].values and "src" in r.params and "dst" in r.params}


# -- the curves ------------------------------------------------------------------------------

@dataclass
class _Read:
    gbs: float | None
    used: list[Point]
    said: str = ""                   # how it was read, when not measured directly
    extrapolated: bool = False
    kind: str = MODEL                # KINDS: what the figure is


def _series(pts: list[Point], n: int, k: int) -> tuple[list[Point], str]:
    """The points of the same L3 spread as n threads over k L3s (one thread per L3, or
    packed), one per thread count (most repetitions); all of them when that spread was
    never measured (said)."""
    spread = k == n and n > 1
    same = [p for p in pts if (p.l3s == p.n and p.n > 1) == spread or p.n == 1]
    why = ""
    if not [p for p in same if p.n > 1] and [p for p in pts if p.n > 1]:
        same = pts
        why = (f"; no {'one-per-L3' if spread else 'packed'} series measured, the other "
               "spread's points used")
    best: dict[int, Point] = {}
    for p in same:
        if p.n not in best or p.reps > best[p.n].reps:
            best[p.n] = p
    return [best[x] for x in sorted(best)], why


def curve(pts: list[Point], n: int, k: int) -> _Read:
    """The bandwidth of n threads over k L3 domains from points of one (CPU node, memory
    node) pair (see the module doc)."""
    if not pts:
        return _Read(None, [])
    exact = [p for p in pts if p.n == n and p.l3s == k]
    if exact:
        p = max(exact, key=lambda p: p.reps)
        return _Read(p.gbs, [p], kind=LOOKUP)
    ser, why = _series(pts, n, k)
    xs = [p.n for p in ser]
    if n in xs:
        p = ser[xs.index(n)]
        return _Read(p.gbs, [p], f"{n}T measured with {p.l3s} L3 domain"
                                 f"{'s' if p.l3s != 1 else ''}, not {k}{why}",
                     extrapolated=True)
    below = [p for p in ser if p.n < n]
    above = [p for p in ser if p.n > n]
    if below and above:
        a, b = below[-1], above[0]
        g = a.gbs + (b.gbs - a.gbs) * (n - a.n) / (b.n - a.n)
        # between two points of the same spread; over the other spread's points the
        # spread itself is assumed away (model)
        return _Read(g, [a, b], f"{n}T interpolated between {a.n}T and {b.n}T{why}",
                     kind=MODEL if why else INTERPOLATED)
    if below:
        one = ser[0]
        sat = max(p.gbs for p in ser)
        g = min(n * one.gbs / one.n, sat)
        return _Read(g, [one] + ([max(ser, key=lambda p: p.gbs)] if len(ser) > 1 else []),
                     f"{n}T never measured (largest {ser[-1].n}T): min(n·P1, Psat) = "
                     f"min({n}×{one.gbs / one.n:.3g}, {sat:.3g}){why}", extrapolated=True)
    lo = ser[0]
    return _Read(n * lo.gbs / lo.n, [lo], f"{n}T never measured (smallest {lo.n}T): "
                 f"{n}×{lo.gbs / lo.n:.3g} per thread{why}", extrapolated=True)


# -- the model -------------------------------------------------------------------------------

def _mem_node(node: int | None, bound: tuple[int, ...],
              dist: dict[int, dict[int, int]]) -> int | None:
    if node is None:
        return None
    if not bound or node in bound:
        return node
    d = dist.get(node, {})
    return min(bound, key=lambda m: (d.get(m, 1 << 20), m))


def _twins(node: int, rec: RunRecord, pts: list[Point]) -> list[int]:
    """The nodes measured alone with the same number of CPUs and L3 domains as `node`."""
    cpus = cpu_map(rec)

    def sig(n: int) -> tuple[int, int]:
        mine = [c for c, x in cpus.items() if x.node == n]
        return len(mine), len({cpus[c].l3 for c in mine})
    have = sorted({p.node for p in pts if p.node is not None and p.node == p.mem})
    want = sig(node)
    return [n for n in have if n != node and sig(n) == want]


def _twin(node: int, rec: RunRecord, pts: list[Point]) -> int | None:
    """The first of _twins, or None."""
    return next(iter(_twins(node, rec, pts)), None)


def _twin_shape(node: int, mine: list[Point], n: int, k: int, rec: RunRecord,
                pts: list[Point], fallback: _Read) -> _Read:
    """n threads on a node measured only with more: a twin node (same CPUs and L3 domains)
    measured at n and at this node's smallest count gives the curve's shape, scaled to this
    node's own point (P(n) = P_node(m) × P_twin(n) / P_twin(m)). A saturating curve is far
    above n·P(m)/m below its knee (16 threads saturating a node at 40 GB/s do not mean 2.5
    GB/s a thread), so the linear rule is only the fallback."""
    lo = min(mine, key=lambda p: (p.n, -p.reps))
    for twin in _twins(node, rec, pts):
        theirs = [p for p in pts if p.node == twin and p.mem == twin]
        at_n, at_m = curve(theirs, n, k), curve(theirs, lo.n, lo.l3s)
        if at_n.gbs is None or at_n.extrapolated or not at_m.gbs or at_m.extrapolated:
            continue
        g = lo.gbs * at_n.gbs / at_m.gbs
        return _Read(g, [lo, *at_n.used, *at_m.used],
                     f"{n}T never measured (smallest {lo.n}T): node {twin}'s curve "
                     f"(same CPUs and L3 domains) scaled to this node's {lo.n}T point: "
                     f"{lo.gbs:.3g} × {at_n.gbs:.3g} / {at_m.gbs:.3g}", extrapolated=True)
    return fallback


def predict(rec: RunRecord, shape: list[RankShape], kernel: str = KERNEL,
            demand: float | None = None) -> Prediction:
    """The bandwidth and latency of each rank of `shape` from run `rec` (module doc).
    demand: GB/s one thread asks at most (a code's traffic per core); None: all it gets."""
    cpus, dist = cpu_map(rec), distances(rec)
    pred = Prediction(rec.run_id, kernel, [])
    used: dict[tuple[str, str], dict[str, Any]] = {}

    def use(ps: list[Point]) -> None:
        for p in ps:
            used.setdefault((p.run_id, p.case), p.used())

    # each thread: (rank, cpu, CPU node, L3, package, memory node)
    table = []
    for rs in shape:
        missing = [c for c in rs.threads if c not in cpus]
        if missing:
            pred.no_data.append(f"rank {rs.rank}: CPU {missing[0]} is not in run "
                                f"{rec.run_id}'s topology (another machine?)")
        for c in rs.threads:
            x = cpus.get(c, _Cpu(None, None, None))
            table.append((rs.rank, c, x.node, x.l3, x.package,
                          _mem_node(x.node, rs.mem_nodes, dist)))
        pred.ranks.append(RankPrediction(
            rs.rank, rs.threads, tuple(sorted({cpus[c].node for c in rs.threads
                                               if c in cpus and cpus[c].node is not None})),
            tuple(sorted({t[5] for t in table if t[0] == rs.rank and t[5] is not None}))))
    pts = points(rec, kernel)
    if not pts:
        pred.no_data.append(f"run {rec.run_id} has no {kernel} bandwidth results "
                            f"(measure them: numascope bw --kernel {kernel} --scaling "
                            "--per-domain)")
    groups: dict[tuple[int, int], list[tuple]] = defaultdict(list)
    for t in table:
        if t[2] is not None and t[5] is not None:
            groups[(t[2], t[5])].append(t)
    gbs: dict[tuple[int, int], float] = {}
    kinds: dict[tuple[int, int], tuple[str, str]] = {}     # group: (kind, basis)
    bw = _matrix(rec, "bandwidth")
    for (s, m), ths in sorted(groups.items()) if pts else ():
        n, k = len(ths), len({t[3] for t in ths})
        mine = [p for p in pts if p.node == s and p.mem == m]
        where = f"N{s}->N{m}" if s != m else f"node {s}"
        borrowed = None
        if not mine and s == m:
            twin = _twin(s, rec, pts)
            if twin is not None:
                mine = [p for p in pts if p.node == twin and p.mem == twin]
                borrowed = f"node {twin}'s points stand for it"
                pred.extrapolated.append(f"node {s} never measured alone: node {twin}'s "
                                         "curve used (same CPUs and L3 domains)")
        read = curve(mine, n, k)
        if read.extrapolated and mine and n < min(p.n for p in mine) and s == m:
            read = _twin_shape(s, mine, n, k, rec, pts, read)
        if read.gbs is None and s != m:
            local = [p for p in pts if p.node == s and p.mem == s]
            if not local:
                twin = _twin(s, rec, pts)
                local = [p for p in pts if p.node == twin and p.mem == twin] if twin is not None else []
            read = curve(local, n, k)
            if read.gbs is not None:
                pair, home = bw.get((s, m)), bw.get((s, s))
                if pair is None or home is None:
                    pred.no_data.append(f"remote {where}: no data (run {rec.run_id} has no "
                                        f"matrix bandwidth of N{s}->N{m} and N{s}->N{s}: "
                                        "numascope matrix measures them)")
                    read = _Read(None, [])
                else:
                    ratio = pair.metrics["bandwidth"].median / home.metrics["bandwidth"].median
                    read.gbs = read.gbs * ratio
                    read.kind = MODEL
                    borrowed = f"node {s}'s local curve × the matrix's remote/local ratio"
                    for r in (home, pair):
                        used.setdefault((rec.run_id, r.case), {
                            "run_id": rec.run_id, "case": r.case, "family": "matrix",
                            "metric": "bandwidth", "median": _r(r.metrics["bandwidth"].median),
                            "unit": "GB/s", "n": len(r.metrics["bandwidth"].values)})
                    pred.notes.append(f"{where}: node {s}'s local curve × the matrix's "
                                      f"remote/local read ratio {ratio:.3f}")
        if read.gbs is None:
            if not any(where in x for x in pred.no_data):
                pred.no_data.append(f"{where}: no data ({kernel} never measured with "
                                    f"CPUs on node {s} and memory on node {m})")
            continue
        use(read.used)
        if read.said:
            (pred.extrapolated if read.extrapolated else pred.notes).append(f"{where}: "
                                                                           + read.said)
        gbs[(s, m)] = read.gbs
        kinds[(s, m)] = _group_kind(where, read, borrowed)
    for key in _cap_shared(gbs, pts, rec, pred, use):
        kinds[key] = (MODEL, kinds[key][1] + ", capped at a saturation it shares (notes)")
    # per rank: its share of each group, by threads
    for rp in pred.ranks:
        mine = [t for t in table if t[0] == rp.rank]
        keys = {(t[2], t[5]) for t in mine}
        if not mine or any(k not in gbs for k in keys):
            continue
        rp.gbs = sum(gbs[k] * sum(1 for t in mine if (t[2], t[5]) == k) / len(groups[k])
                     for k in keys)
        rp.gbs_kind, rp.gbs_basis = _rank_kind(rp.rank, sorted(keys), kinds, groups,
                                               len(pred.ranks))
        if demand is not None and rp.gbs > demand * len(mine):
            rp.gbs = demand * len(mine)
            rp.gbs_kind, rp.gbs_basis = MODEL, rp.gbs_basis + "; held to the demand given"
            pred.notes.append(f"rank {rp.rank}: held to its demand {demand:g} GB/s × "
                              f"{len(mine)} threads")
    _latency(rec, pred, table, gbs, used, {key: kd for key, (kd, _) in kinds.items()})
    pred.used = list(used.values())
    two = [u["case"] for u in pred.used if u.get("bimodal")]
    if two:
        # the median of a bimodal point is one of its modes: the machine moved between two
        # states while it was measured, and a check may meet the other one
        pred.notes.append(f"{', '.join(two)}: repetitions in two modes (bimodal); its median "
                          "is one of them, and a check may measure the other")
    return pred


def _group_kind(where: str, read: _Read, borrowed: str | None) -> tuple[str, str]:
    """(kind, basis) of one (CPU node, memory node) group's figure: the curve's reading,
    a model wherever another node's points or the matrix's ratio stand in."""
    if borrowed:
        return MODEL, f"{where}: {borrowed}"
    if read.kind == LOOKUP:
        return LOOKUP, f"{where}: the stored point {read.used[0].case}"
    if read.kind == INTERPOLATED:
        return INTERPOLATED, (f"{where}: between the stored points {read.used[0].case} and "
                              f"{read.used[1].case}")
    return MODEL, f"{where}: {read.said.split(': ')[0]}"


def _rank_kind(rank: int, keys: list[tuple[int, int]], kinds: dict[tuple[int, int],
               tuple[str, str]], groups: dict[tuple[int, int], list[tuple]],
               ranks: int) -> tuple[str, str]:
    """(kind, basis) of a rank's figure from its groups'. The points were measured by one
    process alone: a rank beside others, sharing a group with them (its point split by
    threads) or not, is the model's; so is a sum over several groups measured apart."""
    basis = "; ".join(kinds[k][1] for k in keys)
    sharing = sorted({t[0] for k in keys for t in groups[k]})
    if len(sharing) > 1:
        return MODEL, (f"{basis}, split among ranks {', '.join(map(str, sharing))} by "
                       "threads (one process's threads measured, separate ranks predicted)")
    if ranks > 1:
        return MODEL, (f"{basis}, measured by one process alone (here beside {ranks - 1} "
                       f"other rank{'s' if ranks > 2 else ''})")
    if len(keys) > 1:
        return MODEL, f"the sum of {len(keys)} groups measured apart: {basis}"
    return kinds[keys[0]][0], basis


def _cap(gbs: dict[tuple[int, int], float], keys: list[tuple[int, int]], sats: list[Point],
         use: Any) -> tuple[float, Point] | None:
    """Scale the groups `keys` in proportion down to the best saturation point of `sats`
    when together they ask more; (what they asked, that point), or None when they fit."""
    sat = max(sats, key=lambda p: p.gbs)
    total = sum(gbs[k] for k in keys)
    if total <= sat.gbs:
        return None
    use([sat])
    for k in keys:
        gbs[k] *= sat.gbs / total
    return total, sat


def _cap_shared(gbs: dict[tuple[int, int], float], pts: list[Point], rec: RunRecord,
                pred: Prediction, use: Any) -> set[tuple[int, int]]:
    """A memory node (then a package) whose groups exceed its measured saturation is
    capped there, its groups scaled in proportion; the groups capped."""
    out: set[tuple[int, int]] = set()
    for m in sorted({k[1] for k in gbs}):
        keys = [k for k in gbs if k[1] == m]
        home = [p for p in pts if p.node == m and p.mem == m] or \
            [p for p in pts if p.mem == m]
        if len(keys) < 2 or not home:
            continue
        capped = _cap(gbs, keys, home, use)
        if capped:
            out.update(keys)
            total, sat = capped
            pred.notes.append(f"node {m} serves {len(keys)} groups asking {total:.3g} GB/s: "
                              f"capped at its measured saturation {sat.gbs:.3g} GB/s "
                              f"({sat.case}), shared in proportion")
    cpus = cpu_map(rec)
    node_pkg = {x.node: x.package for x in cpus.values() if x.node is not None}
    for pkg in sorted({node_pkg.get(k[1]) for k in gbs} - {None}):
        nodes = {n for n, p in node_pkg.items() if p == pkg}
        whole = [p for p in pts if p.package == pkg and p.node is None and p.mem is None]
        keys = [k for k in gbs if k[1] in nodes]
        if len(nodes) < 2 or not whole or not keys:
            continue
        capped = _cap(gbs, keys, whole, use)
        if capped:
            out.update(keys)
            total, sat = capped
            pred.notes.append(f"package {pkg}: its nodes together {total:.3g} GB/s, capped "
                              f"at its measured {sat.gbs:.3g} GB/s ({sat.case})")
    return out


def _loaded_curve(rec: RunRecord, node: int, cpus: dict[int, _Cpu]
                  ) -> list[tuple[float, float, BenchResult]]:
    out = []
    for r in rec.results:
        if r.family == "latency" and r.validated and r.params.get("kind") == "loaded" \
                and "bandwidth" in r.metrics and "latency" in r.metrics \
                and _pages_node(r, cpus) == node:
            out.append((r.metrics["bandwidth"].median, r.metrics["latency"].median, r))
    return sorted(out, key=lambda x: x[0])


def _latency(rec: RunRecord, pred: Prediction, table: list[tuple],
             gbs: dict[tuple[int, int], float], used: dict,
             kinds: dict[tuple[int, int], str]) -> None:
    """Idle latency per rank from the matrix (or an idle chase of the pair), loaded from
    the memory node's loaded-latency curve at its predicted bandwidth. Kinds: idle is a
    lookup of its pair, a model as a mean over several; loaded is interpolated at best (it
    is read at a predicted bandwidth), a model past the curve, over several nodes, at a
    bandwidth the model made (`kinds`: the groups') or that several ranks make together."""
    cpus = cpu_map(rec)
    lat = _matrix(rec, "latency")
    idle_chase = {}
    for r in rec.results:
        if r.family == "latency" and r.validated and r.params.get("kind") == "idle" \
                and "latency" in r.metrics and isinstance(r.params.get("cpu"), int) \
                and r.params["cpu"] in cpus:
            key = (cpus[r.params["cpu"]].node, _pages_node(r, cpus))
            # the largest working set stands for memory (the smaller ones for caches)
            if key not in idle_chase or r.params.get("bytes", 0) > idle_chase[key].params.get("bytes", 0):
                idle_chase[key] = r

    def note(r: BenchResult) -> None:
        used.setdefault((rec.run_id, r.case), {
            "run_id": rec.run_id, "case": r.case, "family": r.family, "metric": "latency",
            "median": _r(r.metrics["latency"].median), "unit": r.metrics["latency"].unit,
            "n": len(r.metrics["latency"].values)})
    node_gbs: dict[int, float] = defaultdict(float)
    for (_s, m), g in gbs.items():
        node_gbs[m] += g
    said_idle, said_loaded = set(), set()
    for rp in pred.ranks:
        mine = [(t[2], t[5]) for t in table if t[0] == rp.rank]
        idle, loaded = [], []
        loaded_kinds = [MODEL] if len(set(mine)) > 1 or len(pred.ranks) > 1 else []
        for s, m in mine:
            r = lat.get((s, m)) or idle_chase.get((s, m))
            if r is None:
                if (s, m) not in said_idle:
                    said_idle.add((s, m))
                    pred.no_data.append(f"idle latency N{s}->N{m}: no data (no matrix or "
                                        "idle chase of that pair)")
            else:
                note(r)
                idle.append(r.metrics["latency"].median)
            curve_ = _loaded_curve(rec, m, cpus) if m is not None else []
            if not curve_ or m not in node_gbs:
                if m is not None and m not in said_loaded:
                    said_loaded.add(m)
                    pred.no_data.append(f"loaded latency on node {m}: no data (no loaded-"
                                        "latency curve of that node: numascope lat --loaded "
                                        f"--membind {m})")
                continue
            at = node_gbs[m]
            below = [x for x in curve_ if x[0] <= at]
            above = [x for x in curve_ if x[0] > at]
            loaded_kinds += [kd for (_s, m_), kd in kinds.items() if m_ == m]
            if below and above:
                a, b = below[-1], above[0]
                v = a[1] + (b[1] - a[1]) * (at - a[0]) / (b[0] - a[0]) if b[0] > a[0] else a[1]
                note(a[2])
                note(b[2])
                loaded_kinds.append(INTERPOLATED)
            elif below:
                v = below[-1][1]
                note(below[-1][2])
                if m not in said_loaded:
                    said_loaded.add(m)
                    pred.extrapolated.append(
                        f"loaded latency on node {m}: {at:.3g} GB/s is past the curve's "
                        f"last point ({below[-1][0]:.3g} GB/s): its latency, a lower bound")
            else:
                v = above[0][1]
                note(above[0][2])
            if not (below and above):
                loaded_kinds.append(MODEL)        # outside the curve: its end point
            loaded.append(v)
        rp.idle_ns = sum(idle) / len(idle) if idle and len(idle) == len(mine) else None
        rp.loaded_ns = sum(loaded) / len(loaded) if loaded and len(loaded) == len(mine) else None
        if rp.idle_ns is not None:
            rp.idle_kind = LOOKUP if len(set(mine)) == 1 else MODEL
        if rp.loaded_ns is not None:
            rp.loaded_kind = weakest(*loaded_kinds)
