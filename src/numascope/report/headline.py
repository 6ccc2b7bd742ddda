"""The headline figures of a run: one line per figure the labs' studies lead with, each only
when the run measured it, found in the results by family, case parameters and metric.

Every line holds the figure as the tables show it (the median of the repetitions kept),
its spread (the 95 % interval over the units when the figure was repeated until steady:
separate allocations, or for compression separate calls over one store, as its verdict
says; else the range of its repetitions: repetitions inside one allocation are not
independent samples, so no interval is claimed from them), n, the % of the theoretical
peak the efficiency table gives (numascope.peaks.efficiency_table's peak, so both agree),
and a verdict (numascope.report.verdicts). Rendering is elsewhere (report.summary for the
HTML report); this module holds data only, so that any front end can list the same lines.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from numascope.families.bandwidth.resident import dram_resident
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord
from numascope.steady import units_words, verdict_of


@dataclass
class Headline:
    key: str              # the quantity (numascope.references' ids where one exists)
    what: str             # in words: "STREAM triad, all cores (2 threads)"
    value: float
    unit: str
    section: str          # the report section (element id) that holds its tables
    n: int = 0            # repetitions behind the median
    low: float = math.nan
    high: float = math.nan
    spread: str = ""      # what low..high is: an interval over the units, or a range
    source: str = ""      # the case(s) it comes from
    metric: str = ""      # the metric of that case the value is the median of ("" derived)
    scope: str = ""       # where a published figure must have been measured to match
    peak: float | None = None
    peak_pct: float | None = None
    higher_is_better: bool = True
    detail: str = ""      # a short fact beside the value (the crossover, the knee, …)
    verdict: str = "–"
    rule: str = ""
    reference: str = ""
    reference_notes: list[str] = field(default_factory=list)  # its normalisations, caveats
    # why the published figures of its quantity for this host are not set beside it
    reference_other: str = ""
    warnings: list[str] = field(default_factory=list)
    # how it was measured (numascope.references.HOW: reach, path, kernel, threads): a
    # published figure is set beside it only where what the publication states is this
    how: dict[str, Any] = field(default_factory=dict)

    @property
    def ident(self) -> str:
        """Unique within a run: the quantity, and its scope (or reach) where two lines
        share one."""
        where = self.scope or self.how.get("reach", "")
        return f"{self.key}/{where}" if where else self.key


def _stat(res: BenchResult, metric: str, key: str, what: str, section: str) -> Headline:
    m: Metric = res.metrics[metric]
    h = Headline(key, what, m.median, m.unit, section, n=len(m.values), source=res.case,
                 metric=metric, higher_is_better=m.higher_is_better, how=_how(res))
    s = verdict_of(res.params)
    iv = (s or {}).get("interval") or []
    if s and s.get("metric", metric) == metric and len(iv) == 2 and \
            all(isinstance(v, (int, float)) and math.isfinite(v) for v in iv):
        if iv[0] == iv[1]:      # the units' medians agree exactly: no interval, zero spread
            h.spread = (f"no spread: the {s.get('units', '?')} "
                        f"{units_words([s], short=True)} agree exactly")
        else:
            h.low, h.high = float(iv[0]), float(iv[1])
            h.spread = f"95 % CI, {s.get('units', '?')} {units_words([s], short=True)}"
    elif len(m.values) > 1:
        h.low, h.high = m.min, m.max
        h.spread = "range, 1 alloc."
    h.warnings += _figure_warnings(res)
    return h


def _how(res: BenchResult) -> dict[str, Any]:
    """How a result's figure was measured, in numascope.references' HOW fields, as far as
    the family says it: the kernel (a bandwidth kernel, the chase, HPL) and the threads."""
    q = res.params
    if res.family == "bandwidth":
        return _known({"kernel": q.get("kernel"), "threads": q.get("threads")})
    if res.family == "latency" and q.get("kind") == "idle":
        return {"kernel": _CHASE.get(str(q.get("mode")), f"pointer chase, {q.get('mode')}"),
                "threads": 1}
    if res.family == "compute" and q.get("kind") == "hpl" and q.get("np"):
        return {"kernel": "HPL", "threads": int(q["np"]) * int(q.get("threads") or 1)}
    if res.family == "compress":
        return _known({"threads": q.get("threads")})
    return {}


# the latency modes as the publications name their chases
_CHASE = {"random": "pointer chase, full random",
          "tlb": "pointer chase, random in 256 KiB windows"}


def _known(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v not in ("", None)}


def _figure_warnings(res: BenchResult) -> list[str]:
    out = []
    s = verdict_of(res.params)
    if s is not None and not s["converged"]:
        out.append(f"{res.case}: not steady, its 95 % interval stayed wider than "
                   f"±{100 * s.get('precision', 0):.0f} % ({s.get('stopped', '')})")
    if res.params.get("bimodal"):
        out.append(f"{res.case}: repetitions bimodal (two modes: memory shared with other "
                   "work)")
    return out


def _ok(res: BenchResult, metric: str) -> bool:
    return res.validated and metric in res.metrics and bool(res.metrics[metric].values)


def _peak(host: dict[str, Any], key: str) -> float | None:
    p = (host.get("peaks") or {}).get(key) or {}
    v = p.get("value") if isinstance(p, dict) else None
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


# -- bandwidth -------------------------------------------------------------------------------

def _triads(run: RunRecord) -> list[BenchResult]:
    """The run's STREAM triads: validated and DRAM-resident (a working-set sweep's 24 KiB
    point is an L1 figure, not "STREAM triad, one core")."""
    return [r for r in run.results if r.family == "bandwidth" and _ok(r, "bandwidth")
            and r.params.get("kernel") == "triad" and dram_resident(r)]


def bandwidth_lines(run: RunRecord) -> list[Headline]:
    triads = _triads(run)
    scaling = [r for r in triads if "domain" not in r.params]
    out = []
    compact = [r for r in scaling if r.params.get("policy") == "compact"]
    if compact:
        top = max(compact, key=lambda r: r.params.get("threads", 0))
        t = top.params.get("threads")
        h = _stat(top, "bandwidth", "triad_all_cores",
                  f"STREAM triad, all cores ({t} thread{'s' if t != 1 else ''})",
                  "bandwidth")
        h.peak = _peak(run.host, "dram")
        if h.peak:
            h.peak_pct = 100 * h.value / h.peak
        out.append(h)
        one = next((r for r in compact if r.params.get("threads") == 1), None)
        if one is not None and one is not top:
            out.append(_stat(one, "bandwidth", "triad_one_core", "STREAM triad, one core",
                             "bandwidth"))
    per_l3 = [r for r in scaling if r.params.get("policy") == "per-l3"]
    l3s = run.host.get("l3s")
    full = [r for r in per_l3 if r.params.get("threads") == l3s] or per_l3
    if full:
        top = max(full, key=lambda r: r.params.get("threads", 0))
        t = top.params.get("threads")
        out.append(_stat(top, "bandwidth", "triad_one_per_l3",
                         f"STREAM triad, one core per L3 ({t} thread{'s' if t != 1 else ''})",
                         "bandwidth"))
    out += _domain_lines([r for r in triads if "domain" in r.params])
    return out


_KINDS = (("N", "triad_node", "NUMA node"), ("L3:", "triad_l3", "L3"),
          ("S", "triad_socket", "socket"))


def _domain_lines(doms: list[BenchResult]) -> list[Headline]:
    """Per kind of domain (NUMA node, L3, socket: each alone, all its CPUs), the slowest
    one; a measurement that stood for several kinds (a one-node socket) gives one line."""
    out: list[Headline] = []
    also: dict[str, list[str]] = {}
    for prefix, key, name in _KINDS:
        rs = [r for r in doms if any(str(d).startswith(prefix)
                                     for d in r.params.get("domains") or
                                     [r.params.get("domain")])]
        if not rs:
            continue
        low = min(rs, key=lambda r: r.metrics["bandwidth"].median)
        if low.case in also:      # the same CPUs: one line, every kind named
            also[low.case].append(name)
            continue
        also[low.case] = []
        h = _stat(low, "bandwidth", key, f"STREAM triad, one {name}", "bandwidth")
        if len(rs) > 1:
            hi = max(rs, key=lambda r: r.metrics["bandwidth"].median)
            h.what += f" (the slowest of {len(rs)}: {low.params.get('domain')})"
            h.detail = (f"fastest {hi.params.get('domain')}: "
                        f"{hi.metrics['bandwidth'].median:.4g} GB/s")
        out.append(h)
    for h in out:
        if also[h.source]:
            h.what += " (here also one " + " and one ".join(also[h.source]) + ")"
    return out


# -- latency ---------------------------------------------------------------------------------

def _matrix(run: RunRecord) -> list[BenchResult]:
    return [r for r in run.results if r.family == "matrix" and _ok(r, "latency")]


def latency_lines(run: RunRecord) -> list[Headline]:
    out = []
    idle = [r for r in run.results if r.family == "latency" and _ok(r, "latency")
            and r.params.get("kind") == "idle" and not r.case.startswith("sweep")]
    if idle:
        default = [r for r in idle if r.params.get("mode") == "tlb"] or idle
        big = max(default, key=lambda r: (r.params.get("bytes") or 0))
        out.append(_stat(big, "latency", "idle_latency",
                         f"idle memory latency, local ({big.case})", "latency"))
    mat = _matrix(run)
    local = {r.params.get("src"): r for r in mat if r.params.get("src") == r.params.get("dst")}
    remote = [r for r in mat if r.params.get("src") != r.params.get("dst")
              and not r.params.get("dst_cpuless") and r.params.get("src") in local]
    if remote:
        far = max(remote, key=lambda r: (r.params.get("distance") or 0,
                                         r.metrics["latency"].median))
        loc = local[far.params["src"]]
        h = _stat(far, "latency", "remote_latency",
                  f"remote memory latency, farthest node ({far.case}, distance "
                  f"{far.params.get('distance')})", "latency")
        h.how = _matrix_how("latency", far)
        out.append(h)
        out.append(_ratio("remote_local_latency", "remote/local latency", far, loc, "latency",
                          False))
        out += _bandwidth_ratios(run, remote, local)
    out += _mlp_lines(run)
    return out


def _ratio(key: str, what: str, far: BenchResult, loc: BenchResult, metric: str,
           higher: bool) -> Headline:
    a, b = far.metrics[metric], loc.metrics[metric]
    return Headline(key, f"{what} ({far.case} over {loc.case})", a.median / b.median, "x",
                    "latency", n=min(len(a.values), len(b.values)),
                    source=f"{far.case}, {loc.case}", higher_is_better=higher,
                    spread="ratio of medians", how=_matrix_how(metric, far))


def _matrix_how(metric: str, r: BenchResult) -> dict[str, Any]:
    """The matrix's kernels: one chaser for latency (its mode is not in the pair's record:
    the chase alone, which no published mode equals), the read kernel on every CPU of the
    source node for bandwidth (matrix.bench)."""
    if metric == "latency":
        return {"kernel": "pointer chase", "threads": 1}
    return _known({"kernel": "read", "threads": len(r.placement.get("cpus") or []) or None})


def _node_package(run: RunRecord) -> dict[Any, Any]:
    nodes = (run.topology or {}).get("nodes") or []
    return {n.get("id"): tuple(n.get("packages") or ()) for n in nodes if isinstance(n, dict)}


def _bandwidth_ratios(run: RunRecord, remote: list[BenchResult],
                      local: dict[Any, BenchResult]) -> list[Headline]:
    """Remote over local bandwidth for the nearest remote node of the same socket and the
    farthest of another (the labs' "remote triad N % slower"), where measured."""
    pkg = _node_package(run)
    out = []
    for same, scope in ((True, "remote node, same socket"),
                        (False, "remote node, other socket")):
        rs = [r for r in remote if _ok(r, "bandwidth") and pkg.get(r.params["src"])
              and (pkg.get(r.params["src"]) == pkg.get(r.params["dst"])) == same]
        if not rs:
            continue
        pick = (min if same else max)(rs, key=lambda r: r.params.get("distance") or 0)
        h = _ratio("remote_local_ratio", f"remote/local bandwidth, {scope.split(', ')[1]}",
                   pick, local[pick.params["src"]], "bandwidth", True)
        h.scope = scope
        out.append(h)
    return out


def _mlp_lines(run: RunRecord) -> list[Headline]:
    from numascope.families.latency import chains
    out = []
    for rs in chains.series(run.results):
        rs = [r for r in rs if _ok(r, "latency")]
        knee = chains.knee_of(rs) if len(rs) > 1 else None
        if knee is None:
            continue
        where = rs[0].params.get("cpu")
        top = next((r for r in rs if r.params.get("chains") == knee.plateau.chains), rs[-1])
        h = Headline("mlp", f"misses in flight (memory-level parallelism), CPU {where}",
                     knee.outstanding, "lines", "latency",
                     n=len(top.metrics["latency"].values),
                     source=f"{rs[0].case} … {rs[-1].case}",
                     spread="Little's law, best samples")
        h.detail = (f"throughput {'stops rising' if knee.reached else 'still rising'} at "
                    f"{knee.knee} chain{'s' if knee.knee != 1 else ''}")
        out.append(h)
    return out


# -- core to core ----------------------------------------------------------------------------

RELATIONS = {"smt": "SMT siblings", "l3": "same L3", "die": "same die",
             "package": "same package", "remote": "other package"}


def c2c_lines(run: RunRecord) -> list[Headline]:
    by: dict[str, list[BenchResult]] = {}
    for r in run.results:
        if r.family == "c2c" and _ok(r, "latency"):
            by.setdefault(str(r.params.get("relation")), []).append(r)
    out = []
    for rel in [k for k in RELATIONS if k in by] + [k for k in by if k not in RELATIONS]:
        rs = by[rel]
        if len(rs) == 1:
            h = _stat(rs[0], "latency", f"c2c_{rel}",
                      f"core-to-core latency, {RELATIONS.get(rel, rel)}", "c2c")
        else:   # the median over the pairs of this relation
            meds = [r.metrics["latency"].median for r in rs]
            h = Headline(f"c2c_{rel}", f"core-to-core latency, {RELATIONS.get(rel, rel)} "
                         f"({len(rs)} pairs)", statistics.median(meds),
                         rs[0].metrics["latency"].unit, "c2c", n=len(rs), low=min(meds),
                         high=max(meds), spread="range of pair medians",
                         source=", ".join(r.case for r in rs[:3]) + (" …" if len(rs) > 3
                                                                      else ""),
                         higher_is_better=False)
            for r in rs:
                h.warnings += _figure_warnings(r)
        out.append(h)
    return out


# -- compute, compression, storage, interconnect ----------------------------------------------

_COMPUTE = {"hpl": ("hpl_gflops", "HPL (hpcc)"), "dgemm": ("dgemm_gflops", "DGEMM"),
            "lu": ("lu_gflops", "LU factorisation (not HPL)")}


def compute_lines(run: RunRecord) -> list[Headline]:
    out = []
    peak = _peak(run.host, "flops")
    for kind, (key, name) in _COMPUTE.items():
        rs = [r for r in run.results if r.family == "compute" and _ok(r, "gflops")
              and r.params.get("kind") == kind]
        if not rs:
            continue
        top = max(rs, key=lambda r: (r.params.get("n") or 0))
        h = _stat(top, "gflops", key, f"FP64 {name}, {top.case}", "compute")
        h.peak = peak
        if peak:
            h.peak_pct = 100 * h.value / peak
        out.append(h)
    return out


def compress_lines(run: RunRecord) -> list[Headline]:
    from numascope.families.compress.bench import summarize
    cz = [r for r in run.results if r.family == "compress" and r.validated]
    sums = summarize(cz)
    best = max((x for x in sums if x.best), default=None,
               key=lambda x: x.best[max(x.best)][2])
    if best is None:
        return []
    t = max(best.best)
    label, gbs, speedup = best.best[t]
    res = next(r for r in cz if r.params.get("dataset") == best.dataset
               and r.params.get("threads") == t and label.startswith(str(r.params.get("codec")))
               and r.metrics["decompress_sum"].median == gbs)
    h = _stat(res, "decompress_sum", "compress_sum_peak",
              f"decompress+sum, best codec at {t} threads ({best.dataset}: {label})",
              "compress")
    cross = (f"beats plain from {best.crossover} thread{'s' if best.crossover != 1 else ''}"
             if best.crossover else "no crossover")
    others = f"; the best of {len(sums)} data sets" if len(sums) > 1 else ""
    h.detail = f"{speedup:.2f}x the plain sum ({best.plain.get(t):.4g} GB/s); {cross}{others}"
    return [h]


def storage_lines(run: RunRecord) -> list[Headline]:
    from numascope.families.storage import bench as io
    rs = [r for r in run.results if r.family == "storage" and _ok(r, "iops")]
    out = []
    single = [r for r in rs if r.params.get("mode") in ("run", "placement")]
    if single:
        best = max(single, key=lambda r: r.metrics["iops"].median)
        out.append(_stat(best, "iops", "iops_per_drive", f"IOPS per drive, {best.case}",
                         "storage"))
    rows = io.scaling_rows(rs) if any(r.params.get("mode") == "scaling" for r in rs) else []
    if rows:
        last = rows[-1]
        top = next(r for r in rs if r.params.get("mode") == "scaling"
                   and r.params.get("drives") == last["drives"])
        h = Headline("iops_scaling", f"IOPS per drive with {last['drives']} drives",
                     last["per_drive"], "IO/s", "storage", n=len(top.metrics["iops"].values),
                     source=top.case, spread="median total IOPS / drives")
        h.detail = io.knee_text(rows) or "no knee: per-drive IOPS stay within " \
            f"{io.KNEE:.0%} of one drive alone"
        out.append(h)
    return out


def interconnect_lines(run: RunRecord) -> list[Headline]:
    """MPI latency and bandwidth, the best of each reach measured (between two hosts, and
    within this one: a pair through shared memory is not a pair over the network), each
    with how it was measured (reach, path, the OSU test and its method, 2 ranks)."""
    rs = [r for r in run.results if r.family == "interconnect" and r.validated]
    out = []
    for reach, peer in (("between hosts", True), ("within a host", False)):
        mine = [r for r in rs if (r.params.get("mode") == "peer") == peer]
        for metric, key, pick, test in (("latency", "mpi_latency", min, "lat"),
                                        ("bandwidth", "mpi_bandwidth", max, "bw")):
            got = [r for r in mine if _ok(r, metric)]
            if not got:
                continue
            best = pick(got, key=lambda r, m=metric: r.metrics[m].median)
            h = _stat(best, metric, key, f"MPI {metric} {reach}, {best.case}", "interconnect")
            h.how = _known({"reach": reach, "path": _mpi_path(run, best),
                            "kernel": _osu_kernel(best, test), "threads": 2})
            out.append(h)
    return out


def _osu_kernel(r: BenchResult, test: str) -> str:
    from numascope.families.interconnect import bench as net
    return net.kernel_of(r.params, test)


def _mpi_path(run: RunRecord, r: BenchResult) -> str:
    """Where a pair's ranks sat: within a host, the path (same L3, other socket …); between
    hosts, rank 0's node against this host's HCA (the HCA's node, its socket, the other
    socket); "" where not known."""
    q = r.params
    if q.get("mode") != "peer":
        return str(q.get("path") or "")
    hca = q.get("hca") or {}
    at, node = hca.get("hca_node"), q.get("node_a")
    if at is None or node is None:
        return ""
    if at == node:
        return "HCA's node"
    pkg = _node_package(run)
    if not pkg.get(at) or not pkg.get(node):
        return ""
    return "HCA's socket" if pkg[at] == pkg[node] else "other socket than the HCA"


LINES = (bandwidth_lines, latency_lines, c2c_lines, compute_lines, compress_lines,
         storage_lines, interconnect_lines)


def headlines(run: RunRecord, errors: list[str] | None = None) -> list[Headline]:
    """The run's headline figures in the studies' order, each with its verdict. A family
    whose results lack what its lines need (an older or foreign record) gives no line;
    why is appended to `errors` when given."""
    from numascope.report.verdicts import judge
    out: list[Headline] = []
    for fn in LINES:
        try:
            out += fn(run)
        except (KeyError, TypeError, ValueError, ZeroDivisionError, StopIteration) as ex:
            if errors is not None:
                errors.append(f"{fn.__name__.removesuffix('_lines')}: {type(ex).__name__}: "
                              f"{ex}")
    judge(run, out)
    return out
