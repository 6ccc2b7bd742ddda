"""A stored run as a kerncraft machine file (`numascope export RUN --format kerncraft`).

kerncraft (RRZE-HPC) models a loop kernel with the Roofline and ECM models from a YAML
machine file. This file is written the way kerncraft's own generator (`likwid_bench_auto`)
writes one: topology and caches from the machine, bandwidths measured per kernel, cache
level and core count; numascope measures with its own STREAM kernels in place of
likwid-bench's. Every value says where it comes from in its comment:

    measured  - measured by numascope in this run (bandwidths, the core clock)
    topology  - read from the run's topology (sysfs caches and CPUs, CPUID family/model)
    uarch     - kerncraft's own machine file for this microarchitecture (URL at a commit),
                or the --base file: what numascope does not measure (numascope.results.
                kerncraft_uarch)
    default   - what kerncraft's generator writes where nothing is known (penalties 0)

The bandwidths follow kerncraft's convention: bytes the kernel's loop reads and writes,
write-allocate traffic not counted (kerncraft adds it itself), so only ordinary-store
variants are used; a streaming-store figure would be counted twice over."""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from numascope import __version__
from numascope.errors import UserError
from numascope.peaks import flops
from numascope.results.kerncraft_uarch import MODELS, SUPPLIED, UarchModel
from numascope.results.record import BenchResult
from numascope.results.run import RunRecord

# the newest kerncraft format change this file follows (kerncraft's CHANGES_SINCE): it
# loads in kerncraft 0.8.11.dev0 and later
FORMAT_VERSION = "0.8.11.dev0"
CACHE_LEVELS = ("L1", "L2", "L3")
PLATEAU_LEVEL = {"L1": "L1", "L2": "L2", "L3": "L3", "DRAM": "MEM"}


class Unit(str):
    """A kerncraft quantity ("64 B", "2.40 GHz"): written plain, for kerncraft's
    implicit PrefixedUnit resolver."""


@dataclass
class C:
    """A value with its provenance comment."""
    value: Any
    comment: str = ""


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
UNIT = re.compile(r"^[0-9]+(?:\.[0-9]+)? [kMGTP]?.*$")    # kerncraft's PrefixedUnit text


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


class _Topo:
    """The run's stored topology (plain dicts), read for what kerncraft needs."""

    def __init__(self, d: dict[str, Any]):
        self.d = d
        self.cpus = {c["id"]: c for c in d.get("cpus", [])}

    def distinct_cores(self, cpus: list[int]) -> bool:
        cores = [self.cpus[c].get("core") for c in cpus if c in self.cpus]
        return len(cores) == len(cpus) and None not in cores and len(set(cores)) == len(cores)

    def one_package(self, cpus: list[int]) -> bool:
        return len({self.cpus[c].get("package") for c in cpus if c in self.cpus}) == 1


def gather(run: RunRecord, topo: _Topo) -> Gathered:
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


def _mem_refusal(res: BenchResult, topo: _Topo, cpus: list[int]) -> str:
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


def _plateau(res: BenchResult, run: RunRecord, topo: _Topo, g: Gathered, best: dict) -> None:
    p = res.params
    level = PLATEAU_LEVEL.get(str(p.get("plateau")))
    cpus = list(res.placement.get("cpus", []))
    threads = int(p.get("threads", len(cpus)))
    if level is None or p.get("kernel") not in STREAMS:
        return
    if cpus and not topo.distinct_cores(cpus):
        g.skipped.append(f"{res.case}: SMT siblings share a core (only 1 thread per core "
                         "is written)")
        return
    if _streaming_points(run, p):
        g.skipped.append(f"{res.case}: its points used streaming stores")
        return
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


# -- the machine ----------------------------------------------------------------------------
def uarch_of(topo: dict[str, Any]) -> tuple[flops.Uarch | None, str]:
    info = {k: str(v) for k, v in (("vendor_id", topo.get("cpu_vendor")),
                                   ("cpu family", topo.get("cpu_family")),
                                   ("model", topo.get("cpu_model_number"))) if v is not None}
    return flops.identify(info)


def _hierarchy(topo: dict[str, Any]) -> list[dict[str, Any]]:
    """The data caches by level: size, line, instances, CPUs per instance."""
    out = []
    for lvl in (1, 2, 3):
        cs = [c for c in topo.get("caches", [])
              if c["level"] == lvl and c["kind"] != "Instruction"]
        if cs:
            out.append({"level": f"L{lvl}", "size": cs[0]["size_bytes"],
                        "line": cs[0].get("line_bytes"), "groups": len(cs),
                        "cpus": list(cs[0]["cpus"])})
    return out


def build(run: RunRecord, model: UarchModel | None = None) -> dict[str, Any]:
    """The machine file's content (values wrapped with their provenance), or UserError
    naming what is missing."""
    topo = run.topology
    t = _Topo(topo)
    if not topo.get("cpus"):
        raise UserError(f"run {run.run_id} has no topology: kerncraft needs its caches")
    uarch, evidence = uarch_of(topo)
    if model is None:
        model = MODELS.get(uarch.name) if uarch else None
        if model is None:
            name = uarch.name if uarch else "an unidentified CPU"
            raise UserError(
                f"kerncraft has no machine file for {name} ({evidence}) to take what numascope "
                f"does not measure ({SUPPLIED}): give one with --base FILE")
    g = gather(run, t)
    levels, left = usable_levels(g)
    if "MEM" not in levels:
        why = left.get("MEM") or "; ".join(g.skipped[:2]) or "no bandwidth result"
        raise UserError(f"run {run.run_id} has no memory bandwidth kerncraft can use ({why}): "
                        "kerncraft needs the read kernel and the one the loop resembles, "
                        "e.g. `numascope run --full --stage bandwidth`")
    clock = run.host.get("clock_ghz")
    if not clock:
        raise UserError(f"run {run.run_id} has no measured core clock (host clock_ghz): "
                        "kerncraft converts cycles with it")
    caches = _hierarchy(topo)
    line = caches[0]["line"] if caches and caches[0]["line"] else None
    if not caches or not line:
        raise UserError(f"run {run.run_id}'s topology has no cache sizes or line size")
    packages = topo.get("packages", [])
    cores = [c for c in topo.get("cores", []) if c.get("package") == packages[0]["id"]]
    per_core = max((len(c["cpus"]) for c in cores), default=1)
    nodes0 = [n for n in topo.get("nodes", []) if n.get("cpus")
              and packages[0]["id"] in n.get("packages", [])]
    numa_per_socket = max(1, len(nodes0))
    src = f"uarch: {model.source}"
    topo_src = "topology"
    m: dict[str, Any] = {
        "kerncraft version": C(FORMAT_VERSION, "the file format (kerncraft >= this loads it)"),
        "model name": C(topo.get("cpu_model") or run.host.get("cpu_model"), topo_src),
        "model type": C(f"{uarch.name if uarch else 'unidentified'} ({evidence})",
                        "topology: CPUID family/model"),
        "clock": C(Unit(f"{clock:.3f} GHz"), "measured: one core alone, dependent add "
                   "chain (numascope.clock), at the run's start"),
        "sockets": C(len(packages), topo_src),
        "cores per socket": C(len(cores), topo_src),
        "threads per core": C(per_core, topo_src),
        "NUMA domains per socket": C(numa_per_socket, topo_src + ": nodes with CPUs"),
        "cores per NUMA domain": C(len(cores) // numa_per_socket, topo_src),
    }
    if run.host.get("thp"):
        m["transparent hugepage"] = C(run.host["thp"], "topology: host at the run's start")
    m["in-core model"] = C(("omap", model.in_core), src)
    m["isa"] = C("aarch64" if uarch and uarch.isa in ("neon", "sve") else "x86", topo_src)
    m["compiler"] = C(("omap", model.compiler), src)
    m["FLOPs per cycle"] = C(model.flops, src)
    m["non-overlapping model"] = C({"ports": model.non_overlapping}, src)
    m["overlapping model"] = C({"ports": model.overlapping}, src)
    m["cacheline size"] = C(Unit(f"{line} B"), topo_src)
    m["memory hierarchy"] = C(_levels(caches, model, t, len(cores), per_core, line), "")
    bench = _benchmarks(g, levels)
    m["benchmarks"] = C(bench, "")
    prov = _provenance(run, g, model, caches, levels, left)
    prov["kernels"] = {NAME.get(k, k): f"numascope {k}" for k in STREAMS
                       if NAME.get(k, k) in bench["kernels"]}
    warn = [f"{lv}: no bandwidth measured (kerncraft's Roofline needs every level; "
            f"ECMData needs MEM only): {prov['absent because'][lv]}"
            for lv in prov["absent levels"]]
    warn += ecm_caveats(m["memory hierarchy"].value, bench["measurements"],
                        len(cores) // numa_per_socket)
    prov["warnings"] = warn
    m["numascope"] = C(prov, "not read by kerncraft")
    return m


def _levels(caches: list[dict], model: UarchModel, t: _Topo, cores: int, per_core: int,
            line: int) -> list[dict[str, Any]]:
    src = f"uarch: {model.source}"
    out = []
    for i, c in enumerate(caches):
        lv = model.levels.get(c["level"])
        if lv is None or lv.ways is None:
            raise UserError(f"{model.source} has no cache level {c['level']}, which this "
                            "machine has")
        ncores = len({t.cpus[x].get("core") for x in c["cpus"] if x in t.cpus}) or 1
        per = {"sets": C(c["size"] // (lv.ways * line), "topology: size / (ways x line)"),
               "ways": C(lv.ways, src), "cl_size": C(line, "topology"),
               "replacement_policy": C("LRU", src),
               "write_allocate": C(lv.write_allocate, src),
               "write_back": C(lv.write_back, src)}
        last = i == len(caches) - 1
        if not last:
            per["load_from"] = C(lv.load_from, src)
            if lv.victims_to:
                per["victims_to"] = C(lv.victims_to, src)
            per["store_to"] = C(lv.store_to, src)
        out.append({
            "level": c["level"],
            "cache per group": per,
            "size per group": C(Unit(f"{c['size']} B"), "topology"),
            "groups": C(c["groups"], "topology"),
            "cores per group": C(ncores, "topology"),
            "threads per group": C(len(c["cpus"]), "topology"),
            "upstream throughput": C(_units(lv.upstream), src),
            "transfers overlap": C(lv.overlap, src),
        })
    mem = model.levels.get("MEM")
    if mem is None:
        raise UserError(f"{model.source} has no MEM level")
    out.append({
        "level": "MEM",
        "cores per group": C(cores, "topology: cores per socket"),
        "threads per group": C(cores * per_core, "topology"),
        "upstream throughput": C(_units(mem.upstream), src),
        "transfers overlap": C(mem.overlap, src),
        "penalty cycles per cacheline load": C(0, "default: kerncraft's generator"),
        "penalty cycles per cacheline store": C(0, "default: kerncraft's generator"),
        "size per group": C(None, ""),
    })
    return out


def _units(v: Any) -> list[Any]:
    return [Unit(x) if isinstance(x, str) and UNIT.match(x) else x for x in v]


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
            left[lv] = "no read kernel measured (kerncraft's fallback kernel \"load\")"
    return keep, left


def _benchmarks(g: Gathered, levels: list[str]) -> dict[str, Any]:
    """kernels (those measured at every level written) and per level, for 1 thread per
    core, the core counts and each kernel's bandwidth (median of its repetitions)."""
    per_level = {lv: {p.kernel for p in g.points if p.level == lv} for lv in levels}
    kernels = sorted(set.intersection(*per_level.values()))
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


def _provenance(run: RunRecord, g: Gathered, model: UarchModel, caches: list[dict],
                levels: list[str], left: dict[str, str]) -> dict[str, Any]:
    wanted = [c["level"] for c in caches] + ["MEM"]
    absent = [lv for lv in wanted if lv not in levels]
    d: dict[str, Any] = {
        "run": run.run_id, "started": run.started, "host": run.host.get("hostname"),
        "numascope version": __version__, "uarch source": model.source,
        "absent levels": absent,
    }
    if absent:
        d["absent because"] = {lv: left.get(lv, "no bandwidth plateau in the run (numascope "
                                                "bw --sweep measures them)") for lv in absent}
    if model.notes:
        d["uarch notes"] = list(model.notes)
    if g.skipped:
        d["not used"] = g.skipped
    if g.domains:
        d["NUMA domains"] = g.domains
    return d


# -- YAML -----------------------------------------------------------------------------------
def render(machine: dict[str, Any], header: list[str]) -> str:
    out = [f"# {h}" if h else "#" for h in header]
    _map(machine, 0, out)
    return "\n".join(out) + "\n"


def _scalar(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, Unit):
        return str(v)
    return json.dumps(str(v))      # a JSON string is a YAML double-quoted scalar


def _flow(v: Any) -> str | None:
    """A list of scalars on one line, else None."""
    if isinstance(v, list) and all(not isinstance(x, (list, dict)) for x in v):
        return "[" + ", ".join(_scalar(x) for x in v) + "]"
    return None


PLAIN_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9 _+/.-]*$")
YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


def _key(k: Any) -> str:
    """kerncraft's keys as its own files write them: plain where YAML reads them back."""
    if isinstance(k, int) or (PLAIN_KEY.match(str(k)) and str(k).lower() not in YAML_WORDS):
        return str(k)
    return _scalar(k)


def _line(out: list[str], text: str, comment: str) -> None:
    out.append(f"{text}  # {comment}" if comment else text)


def _map(d: dict[Any, Any], ind: int, out: list[str]) -> None:
    pad = " " * ind
    for k, v in d.items():
        comment = ""
        if isinstance(v, C):
            v, comment = v.value, v.comment
        _value(f"{pad}{_key(k)}:", v, ind, comment, out)


def _value(head: str, v: Any, ind: int, comment: str, out: list[str]) -> None:
    if isinstance(v, tuple) and v and v[0] == "omap":     # kerncraft wants !!omap here
        _line(out, f"{head} !!omap", comment)
        for k, x in v[1].items():
            out.append(f"{' ' * ind}- {_key(k)}: {_scalar(x)}")
    elif isinstance(v, dict):
        _line(out, head, comment)
        _map(v, ind + 2, out)
    elif isinstance(v, list) and _flow(v) is not None:
        _line(out, f"{head} {_flow(v)}", comment)
    elif isinstance(v, list):
        _line(out, head, comment)
        for x in v:
            if isinstance(x, dict):
                first = True
                for k, y in x.items():
                    c = ""
                    if isinstance(y, C):
                        y, c = y.value, y.comment
                    lead = f"{' ' * ind}- " if first else " " * (ind + 2)
                    _value(f"{lead}{_key(k)}:", y, ind + 2, c, out)
                    first = False
            else:
                _value(f"{' ' * ind}-", x, ind + 2, "", out)
    else:
        _line(out, f"{head} {_scalar(v)}", comment)


def header(run: RunRecord) -> list[str]:
    return [(f"kerncraft machine file written by numascope {__version__} from run "
             f"{run.run_id} ({run.host.get('hostname') or 'unknown host'}, {run.started})"),
            "Each value's comment says where it comes from:",
            "  measured - measured by numascope in this run",
            "  topology - the run's topology (sysfs, CPUID family/model)",
            "  uarch    - kerncraft's own machine file for this microarchitecture, or --base",
            "  default  - what kerncraft's generator (likwid_bench_auto) writes",
            ("Bandwidths: numascope's STREAM kernels, not likwid-bench's (the kernels "
             "section gives their streams); 'numascope' at the end lists what is absent."),
            ""]


# -- the file -------------------------------------------------------------------------------
def load_base(path: str) -> UarchModel:
    """The in-core and cache-policy keys of a kerncraft machine file (kerncraft reads it)."""
    from numascope.results.kerncraft_uarch import from_base
    try:
        from kerncraft.machinemodel import MachineModel
    except ImportError:
        raise UserError("--base needs kerncraft to read the file (pip install kerncraft)") \
            from None
    try:
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):   # kerncraft prints its changelog
            return from_base(MachineModel(path))
    except OSError as e:
        raise UserError(f"--base {path}: {e.strerror}") from None
    except KeyError as e:
        raise UserError(f"--base {path}: no {e} key (not a kerncraft machine file?)") from None
    except Exception as e:  # noqa: BLE001 - ruamel's and kerncraft's own errors, said in a line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UserError(f"--base {path}: kerncraft cannot read it: {first}") from None


def text(run: RunRecord, base: str | None = None) -> str:
    model = load_base(base) if base else None
    return render(build(run, model), header(run))


def warnings(file_text: str) -> list[str]:
    """The written file's warnings (its numascope section: a flow list of JSON strings)."""
    m = re.search(r"^  warnings: (\[.*\])$", file_text, re.MULTILINE)
    return json.loads(m.group(1)) if m else []
