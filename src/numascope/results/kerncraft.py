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

from typing import Any

from numascope import __version__
from numascope.errors import UserError
from numascope.peaks import flops
from numascope.results.kerncraft_bw import (
    NAME,
    STREAMS,
    Gathered,
    Topo,
    benchmarks,
    ecm_caveats,
    gather,
    usable_levels,
)
from numascope.results.kerncraft_uarch import MODELS, SUPPLIED, UarchModel
from numascope.results.kerncraft_yaml import C, Unit, render, units
from numascope.results.run import RunRecord
from numascope.topology import uarch

# the newest kerncraft format change this file follows (kerncraft's CHANGES_SINCE): it
# loads in kerncraft 0.8.11.dev0 and later
FORMAT_VERSION = "0.8.11.dev0"


# -- the machine ----------------------------------------------------------------------------
def uarch_of(topo: dict[str, Any]) -> tuple[flops.Uarch | None, str]:
    """The run's core (topology.uarch: the model number, or the ISA features and caches
    where they overrule it), with what decided it."""
    core = uarch.of_topology(topo)
    return core.uarch, (f"{core.decided_by}: {core.evidence}" if core.decided_by
                        else core.evidence)


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
    t = Topo(topo)
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
    bench = benchmarks(g, levels)
    m["benchmarks"] = C(bench, "")
    prov = _provenance(run, g, model, caches, levels, left)
    prov["kernels"] = {NAME.get(k, k): f"numascope {k}" for k in STREAMS
                       if NAME.get(k, k) in bench["kernels"]}
    warn = [f"no {lv} bandwidth ({prov['absent because'][lv]}): kerncraft's Roofline "
            "needs it, ECMData does not" for lv in prov["absent levels"]]
    warn += g.notes
    warn += ecm_caveats(m["memory hierarchy"].value, bench["measurements"],
                        len(cores) // numa_per_socket)
    prov["warnings"] = warn
    m["numascope"] = C(prov, "not read by kerncraft")
    return m


def _levels(caches: list[dict], model: UarchModel, t: Topo, cores: int, per_core: int,
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
               "replacement_policy": C(lv.replacement, src),
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
            "upstream throughput": C(units(lv.upstream), src),
            "transfers overlap": C(lv.overlap, src),
        })
    mem = model.levels.get("MEM")
    if mem is None:
        raise UserError(f"{model.source} has no MEM level")
    out.append({
        "level": "MEM",
        "cores per group": C(cores, "topology: cores per socket"),
        "threads per group": C(cores * per_core, "topology"),
        "upstream throughput": C(units(mem.upstream), src),
        "transfers overlap": C(mem.overlap, src),
        "penalty cycles per cacheline load": C(0, "default: kerncraft's generator"),
        "penalty cycles per cacheline store": C(0, "default: kerncraft's generator"),
        "size per group": C(None, ""),
    })
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
        d["absent because"] = {lv: left.get(lv, "no bw --sweep plateau in the run")
                               for lv in absent}
    if model.notes:
        d["uarch notes"] = list(model.notes)
    if g.skipped:
        d["not used"] = g.skipped
    if g.domains:
        d["NUMA domains"] = g.domains
    return d


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
    from numascope.errors import escape_text
    from numascope.paths import check_input
    from numascope.results.kerncraft_uarch import from_base
    check_input(path, "--base")          # a FIFO would block kerncraft's open for good
    shown = escape_text(path, 160)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise UserError(f"--base {shown}: {e.strerror}") from None
    if not any(ln.strip() and not ln.lstrip().startswith(("#", "---", "..."))
               for ln in lines):   # YAML of nothing: kerncraft reads None and trips on it
        raise UserError(f"--base {shown}: the file is empty (no YAML in it): give a "
                        "kerncraft machine file")
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
        raise UserError(f"--base {shown}: {e.strerror}") from None
    except KeyError as e:
        raise UserError(f"--base {shown}: no {e} key (not a kerncraft machine file?)") from None
    except Exception as e:  # noqa: BLE001 - ruamel's and kerncraft's own errors, said in a line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UserError(f"--base {shown}: kerncraft cannot read it: {first}") from None


def text(run: RunRecord, base: str | None = None) -> str:
    model = load_base(base) if base else None
    return render(build(run, model), header(run))
