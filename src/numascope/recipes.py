"""Placement recipes: a job shape turned into exact launcher lines, each with the CPU sets
it yields.

    r = for_job(topo, ranks=16, threads=8, near="mlx5_0")
    r.lines()          # for the terminal
    r.to_dict()        # for --json

Forms generated (Open MPI 4.1 and Slurm 22.05 syntax):
  Open MPI  mpirun -np R --map-by ppr:N:l3cache|numa|package|core:pe=T --bind-to core
            (--use-hwthread-cpus --bind-to hwthread when SMT siblings carry threads), or
            --rankfile FILE --mca rmaps_rank_file_physical 1 when the layout is irregular
  Slurm     srun -n R -c T [--hint=nomultithread] --cpu-bind=cores --distribution=block:block
            when ranks take consecutive cores; else --cpu-bind=map_cpu:… / mask_cpu:…
  OpenMP    OMP_NUM_THREADS, OMP_PLACES (cores / threads, or an explicit place list for one
            process), OMP_PROC_BIND
  numactl   --cpunodebind=N (the rank holds whole nodes) or --physcpubind=…, --membind=…
  taskset   -c …

`expand_openmpi`, `expand_srun`, `expand_numactl`, `expand_taskset` and `expand_omp`
compute, from a line alone and the topology, which CPUs each rank (thread) gets: the
mapping semantics of the forms above reimplemented, so every generated line is checked by
expanding it back. `parse_report_bindings` reads Open MPI's --report-bindings output."""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from numascope.errors import UserError
from numascope.layouts import Layout, Slot, layout, logical_cores
from numascope.topology.lists import format_list, parse_list
from numascope.topology.model import Topology

PROGRAM = "./app"
RANKFILE = "numascope.rankfile"
OMPI_RESOURCE = {"core": "core", "l3": "l3cache", "node": "numa", "socket": "socket"}
RESOURCE_UNIT = {"core": "core", "l3cache": "l3", "l3": "l3", "numa": "node", "node": "node",
                 "package": "socket", "socket": "socket"}


# -- the recipe ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Launch:
    """One tool's line(s) and what they yield: per rank, the CPUs (as expanded back)."""

    tool: str
    argv: tuple[str, ...]                      # the command (ranks' lines: rank 0's)
    yields: tuple[tuple[int, ...], ...]        # CPUs per rank, from expanding `argv`
    per_rank: tuple[tuple[str, ...], ...] = ()  # numactl/taskset: one argv per rank
    files: dict[str, str] = field(default_factory=dict)   # e.g. the rankfile
    env: dict[str, str] = field(default_factory=dict)
    note: str = ""

    @property
    def line(self) -> str:
        return shlex.join(self.argv)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"line": self.line, "argv": list(self.argv),
                             "yields": [format_list(list(c)) for c in self.yields]}
        if self.per_rank:
            d["per_rank"] = [shlex.join(a) for a in self.per_rank]
        if self.files:
            d["files"] = dict(self.files)
        if self.env:
            d["env"] = dict(self.env)
        if self.note:
            d["note"] = self.note
        return d


@dataclass(frozen=True)
class Recipe:
    layout: Layout
    openmpi: Launch
    slurm: Launch
    omp: Launch
    numactl: Launch
    taskset: Launch
    source: str = "/"

    @property
    def launches(self) -> tuple[Launch, ...]:
        return (self.openmpi, self.slurm, self.omp, self.numactl, self.taskset)

    def agrees(self) -> list[str]:
        """Where an expanded line differs from the layout (empty: every line agrees)."""
        want = [s.cpus for s in self.layout.slots]
        out = []
        for la in (self.openmpi, self.slurm, self.numactl, self.taskset):
            if list(la.yields) != want:
                out.append(f"{la.tool}: yields {[format_list(list(c)) for c in la.yields]}")
        threads = [tuple(sorted(c)) for c in self.omp.yields]
        if self.layout.ranks == 1 and [t[0] for t in threads] != list(self.layout.slots[0].threads):
            out.append(f"OpenMP places put threads on {threads}")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "layout": self.layout.to_dict(),
                "openmpi": self.openmpi.to_dict(), "slurm": self.slurm.to_dict(),
                "omp": self.omp.to_dict(), "numactl": self.numactl.to_dict(),
                "taskset": self.taskset.to_dict()}

    def lines(self, brief: bool = False, width: int = 80) -> list[str]:
        """The recipe for a terminal. brief: three lines (the layout, Open MPI, Slurm)."""
        lay = self.layout
        head = f"layout: {lay.describe()}"
        if brief:
            return [head, self.openmpi.line, self.slurm.line]
        out = [head]
        out += [f"  note: {n}" for n in lay.notes]
        out.append("Open MPI:")
        out += _wrap(self.openmpi.argv, width)
        for name, text in self.openmpi.files.items():
            out.append(f"  with {name}:")
            out += [f"    {x}" for x in text.splitlines()[:4]]
            if len(text.splitlines()) > 4:
                out.append(f"    ({len(text.splitlines()) - 4} more lines in --json)")
        out.append("Slurm:")
        out += _wrap(self.slurm.argv, width)
        out.append("OpenMP:")
        out += _wrap(self.omp.argv, width)
        for la in (self.numactl, self.taskset):
            out.append(f"{la.tool} (per rank):" if lay.ranks > 1 else f"{la.tool}:")
            for r, argv in enumerate(la.per_rank[:2]):
                out += _wrap(argv, width, prefix=f"rank {r}: " if lay.ranks > 1 else "")
            if len(la.per_rank) > 2:
                out.append(f"  ({len(la.per_rank) - 2} more ranks in --json)")
        out.append("CPU sets (rank: node, L3, CPUs):")
        for s in lay.slots[:8]:
            head = f"  {s.rank:>4}: node {_ids(s.nodes):<5} L3 {_ids(s.l3s):<5} CPUs "
            out += _wrap_list(format_list(list(s.cpus)), width, head)
        if len(lay.slots) > 8:
            out.append(f"  ({len(lay.slots) - 8} more ranks in --json)")
        return out


def _ids(ids: tuple[int, ...]) -> str:
    return format_list(list(ids)) or "-"


def _wrap_list(text: str, width: int, head: str) -> list[str]:
    """A CPU list after `head`, broken after commas to fit `width`."""
    lines, cur = [], head
    for part in text.split(","):
        piece = part if cur.endswith((" ", ",")) else "," + part
        if len(cur) + len(piece) + 1 > width and cur.strip() and not cur.endswith(" "):
            lines.append(cur + ",")
            cur, piece = " " * len(head), part
        cur += piece
    return lines + [cur]


def _wrap(argv: tuple[str, ...], width: int, prefix: str = "") -> list[str]:
    """A command over several lines with shell continuations, each within `width`."""
    quoted = [shlex.quote(a) for a in argv]
    words, i = [], 0
    while i < len(quoted):          # an option stays on the line of its value(s)
        n = {"--mca": 3, "-x": 2, "-np": 2, "-n": 2, "-c": 2, "--map-by": 2, "--bind-to": 2,
             "--rankfile": 2, "-C": 2}.get(argv[i], 1)
        words.append(" ".join(quoted[i:i + n]))
        i += n
    lines, cur = [], "  " + prefix
    for w in words:
        if len(cur) + len(w) + 3 > width and cur.strip() and cur.strip() != prefix.strip():
            lines.append(cur.rstrip() + " \\")
            cur = "      "
        cur += w + " "
    lines.append(cur.rstrip())
    return lines


# -- generating ------------------------------------------------------------------------------

def for_job(topo: Topology, ranks: int | None = None, threads: int | None = None,
            near: str | None = None, unit: str | None = None, within: str | None = None,
            smt: bool | None = None, program: str = PROGRAM) -> Recipe:
    """The recipe of a job shape on this topology (see the module doc)."""
    lay = layout(topo, ranks=ranks, threads=threads, unit=unit, within=within, near=near,
                 smt=smt)
    return from_layout(topo, lay, program)


def from_layout(topo: Topology, lay: Layout, program: str = PROGRAM) -> Recipe:
    prog = shlex.split(program) or [PROGRAM]
    argv, files = openmpi_argv(lay, prog, topo=topo)
    ompi = Launch("Open MPI", tuple(argv),
                  tuple(tuple(c) for c in expand_openmpi(argv, topo, lay.ranks, files)),
                  files=files, note="" if not files else
                  "no --map-by yields this layout: a rankfile (write it next to the job)")
    sargv = srun_argv(topo, lay, prog)
    slurm = Launch("Slurm", tuple(sargv),
                   tuple(tuple(c) for c in expand_srun(sargv, topo, lay.ranks)))
    env = omp_env(lay)
    omp = Launch("OpenMP", tuple(f"{k}={v}" for k, v in env.items()) + tuple(prog),
                 tuple(tuple(c) for c in expand_omp(env, lay.slots[0].cpus, topo)),
                 env=env)
    nargs = [numactl_argv(topo, s, prog) for s in lay.slots]
    numa = Launch("numactl", tuple(nargs[0]),
                  tuple(tuple(expand_numactl(a, topo)) for a in nargs),
                  per_rank=tuple(tuple(a) for a in nargs))
    targs = [["taskset", "-c", format_list(list(s.cpus)), *prog] for s in lay.slots]
    task = Launch("taskset", tuple(targs[0]),
                  tuple(tuple(expand_taskset(a)) for a in targs),
                  per_rank=tuple(tuple(a) for a in targs))
    return Recipe(lay, ompi, slurm, omp, numa, task, source=topo.source)


def omp_env(lay: Layout) -> dict[str, str]:
    """OpenMP inside each rank: one thread per core (per hardware thread with SMT)."""
    env = {"OMP_NUM_THREADS": str(lay.threads)}
    if lay.ranks == 1 and (lay.unit == "machine" or not lay.regular):
        env["OMP_PLACES"] = places_text(lay.slots[0].threads)
    else:
        env["OMP_PLACES"] = "threads" if lay.smt else "cores"
    env["OMP_PROC_BIND"] = "close"
    return env


def places_text(cpus: tuple[int, ...]) -> str:
    """Explicit places, one CPU each, in thread order, runs as {a}:n:stride."""
    out, i = [], 0
    while i < len(cpus):
        j = i + 1
        if j < len(cpus):
            step = cpus[j] - cpus[i]
            while j + 1 < len(cpus) and cpus[j + 1] - cpus[j] == step:
                j += 1
            if j - i >= 2:
                out.append(f"{{{cpus[i]}}}:{j - i + 1}:{step}")
                i = j + 1
                continue
        out.append(f"{{{cpus[i]}}}")
        i += 1
    return ",".join(out)


def openmpi_argv(lay: Layout, prog: list[str] | None = None, mpirun: str = "mpirun",
                 rankfile: str = RANKFILE, topo: Topology | None = None
                 ) -> tuple[list[str], dict[str, str]]:
    """Open MPI 4.1: `--map-by ppr:N:<domain>:pe=T` when that mapping yields the layout
    (checked by expanding it on `topo`; without `topo`, when the layout is regular), a
    physical rankfile otherwise."""
    argv = [mpirun, "-np", str(lay.ranks)]
    env = [x for k, v in omp_env(lay).items() for x in ("-x", f"{k}={v}")]
    prog = list(prog or [PROGRAM])
    files: dict[str, str] = {}
    unit = lay.unit
    if unit == "machine":
        unit = "l3" if lay.slots[0].l3 is not None else "node"
    if unit in OMPI_RESOURCE and lay.within == "all":
        pe = lay.threads if lay.smt else lay.cores_per_rank
        ppr = argv + ["--map-by", f"ppr:{max(lay.per_unit)}:{OMPI_RESOURCE[unit]}:pe={pe}"]
        ppr += ["--use-hwthread-cpus", "--bind-to", "hwthread"] if lay.smt \
            else ["--bind-to", "core"]
        if topo is None and lay.regular:
            return ppr + env + prog, files
        if topo is not None:
            try:
                got = expand_openmpi(ppr, topo, lay.ranks)
            except UserError:
                got = None
            if got == [sorted(s.cpus) for s in lay.slots]:
                return ppr + env + prog, files
    files[rankfile] = "".join(f"rank {s.rank}=localhost slot={format_list(list(s.cpus))}\n"
                              for s in lay.slots)
    argv += ["--rankfile", rankfile, "--mca", "rmaps_rank_file_physical", "1"]
    return argv + env + prog, files


def _consecutive(topo: Topology, lay: Layout) -> bool:
    """Ranks take consecutive cores from the first usable one, no gaps, whole cores."""
    if lay.smt or lay.within != "all":
        return False
    cores = logical_cores(topo)
    i = 0
    for s in lay.slots:
        mine = [c.ids for c in cores[i:i + s.cores]]
        if tuple(sorted(x for ids in mine for x in ids)) != s.cpus:
            return False
        i += s.cores
    return True


def srun_argv(topo: Topology, lay: Layout, prog: list[str] | None = None) -> list[str]:
    """Slurm 22.05: block distribution over consecutive cores, explicit masks otherwise."""
    argv = ["srun", "-n", str(lay.ranks)]
    if _consecutive(topo, lay):
        argv += ["-c", str(lay.cores_per_rank)]
        if lay.smt_width > 1:
            argv.append("--hint=nomultithread")
        argv += ["--cpu-bind=cores", "--distribution=block:block"]
    elif all(len(s.cpus) == 1 for s in lay.slots):
        argv += ["-c", "1", "--cpu-bind=map_cpu:" + ",".join(str(s.cpus[0]) for s in lay.slots)]
    else:
        argv += ["-c", str(len(lay.slots[0].cpus)), "--cpu-bind=mask_cpu:" + ",".join(
            hex(sum(1 << c for c in s.cpus)) for s in lay.slots)]
    return argv + list(prog or [PROGRAM])


def numactl_argv(topo: Topology, s: Slot, prog: list[str] | None = None) -> list[str]:
    whole = s.nodes and set(s.cpus) == {c.id for c in topo.cpus
                                        if c.usable and c.node in s.nodes}
    cpu = f"--cpunodebind={format_list(list(s.nodes))}" if whole \
        else f"--physcpubind={format_list(list(s.cpus))}"
    mem = [f"--membind={format_list(list(s.mem_nodes))}"] if s.mem_nodes else []
    return ["numactl", cpu, *mem, *(prog or [PROGRAM])]


# -- expanding lines back into CPU sets ------------------------------------------------------

def _opts(argv: list[str] | tuple[str, ...], with_value: set[str],
          flags: set[str]) -> tuple[dict[str, list[str]], list[str]]:
    """Options (long/short, "--a=b" or "--a b") up to the program; the rest."""
    argv = list(argv)
    if argv and not argv[0].startswith("-"):
        argv = argv[1:]               # the launcher itself
    out: dict[str, list[str]] = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if not a.startswith("-"):
            break
        name, eq, val = a.partition("=")
        if name == "--mca" or name == "-mca":
            out.setdefault("--mca", []).append(f"{argv[i + 1]}={argv[i + 2]}")
            i += 3
            continue
        if name in with_value:
            if not eq:
                if i + 1 >= len(argv):
                    raise UserError(f"{name} needs a value")
                val = argv[i + 1]
                i += 1
            out.setdefault(name, []).append(val)
        elif name in flags:
            out.setdefault(name, []).append("")
        else:
            raise UserError(f"option {a} is not one numascope expands")
        i += 1
    return out, argv[i:]


def _last(o: dict[str, list[str]], *names: str) -> str | None:
    for n in names:
        if n in o:
            return o[n][-1]
    return None


def expand_openmpi(argv: list[str] | tuple[str, ...], topo: Topology, nprocs: int | None = None,
                   files: dict[str, str] | None = None) -> list[list[int]]:
    """The CPUs each rank of an `mpirun` line is bound to, computed as Open MPI 4.1 does for
    the forms recipes generate: --map-by ppr:N:RES[:pe=T] (RES core, l3cache, numa,
    package; objects and cores in hwloc's logical order), --map-by core, --bind-to
    core|hwthread (with --use-hwthread-cpus pe counts hardware threads), and
    --rankfile with rmaps_rank_file_physical (`files` holds the rankfile's text)."""
    o, _ = _opts(argv, {"-np", "-n", "--np", "--map-by", "-map-by", "--bind-to", "-bind-to",
                        "--rankfile", "-rf", "-x", "--cpu-set"},
                 {"--use-hwthread-cpus", "--report-bindings", "--allow-run-as-root",
                  "--oversubscribe", "--display-map", "-q", "--quiet", "--tag-output"})
    n = _last(o, "-np", "-n", "--np")
    np_ = int(n) if n else nprocs
    rf = _last(o, "--rankfile", "-rf")
    mca = dict(m.split("=", 1) for m in o.get("--mca", []))
    if rf is not None:
        if mca.get("rmaps_rank_file_physical") not in ("1", "true"):
            raise UserError("only physical rankfiles are expanded "
                            "(--mca rmaps_rank_file_physical 1)")
        text = (files or {}).get(rf)
        if text is None:
            from pathlib import Path
            text = Path(rf).read_text()
        ranks: dict[int, list[int]] = {}
        for line in text.splitlines():
            m = re.match(r"\s*rank\s+(\d+)\s*=\s*\S+\s+slot\s*=\s*(\S+)", line)
            if m:
                ranks[int(m.group(1))] = parse_list(m.group(2))
        count = np_ if np_ is not None else len(ranks)
        missing = [r for r in range(count) if r not in ranks]
        if missing:
            raise UserError(f"the rankfile has no line for rank {missing[0]}")
        return [ranks[r] for r in range(count)]
    hw = "--use-hwthread-cpus" in o
    mapby = (_last(o, "--map-by", "-map-by") or "").lower()
    bind = (_last(o, "--bind-to", "-bind-to") or "core").lower()
    cores = logical_cores(topo)
    if mapby.startswith("ppr:"):
        parts = mapby.split(":")
        k, res = int(parts[1]), parts[2]
        pe = 1
        for p in parts[3:]:
            if p.startswith("pe="):
                pe = int(p[3:])
        unit = RESOURCE_UNIT.get(res)
        if unit is None:
            raise UserError(f"--map-by ppr resource {res!r} is not one numascope expands")
        groups: dict[Any, list] = {}
        for c in cores:
            groups.setdefault(c.key(unit), []).append(c)
        out = []
        for gc in groups.values():
            units = [[cpu.id] for c in gc for cpu in c.cpus] if hw else [list(c.ids) for c in gc]
            for j in range(k):
                take = units[j * pe:(j + 1) * pe]
                if len(take) < pe:
                    raise UserError(f"{res} has too few {'hwthreads' if hw else 'cores'} for "
                                    f"{k} × pe={pe}")
                out.append(sorted(x for u in take for x in u))
        count = np_ if np_ is not None else len(out)
        if count > len(out):
            raise UserError(f"-np {count} but the mapping places only {len(out)} ranks")
        res_out = out[:count]
    elif mapby in ("core", "slot", ""):
        units = [[cpu.id] for c in cores for cpu in c.cpus] if hw else [list(c.ids) for c in cores]
        count = np_ or len(units)
        res_out = [sorted(units[i % len(units)]) for i in range(count)]
    else:
        raise UserError(f"--map-by {mapby} is not one numascope expands")
    if bind == "none":
        every = sorted(topo.usable_cpus())
        return [every for _ in res_out]
    if bind == "core" and hw:
        res_out = [sorted({x for cid in r for x in _core_of(cores, cid)}) for r in res_out]
    return res_out


def _core_of(cores: list, cpu: int) -> tuple[int, ...]:
    for c in cores:
        if cpu in c.ids:
            return c.ids
    return (cpu,)


def expand_srun(argv: list[str] | tuple[str, ...], topo: Topology,
                ntasks: int | None = None) -> list[list[int]]:
    """The CPUs each task of an `srun` line is bound to on one node, as Slurm 22.05's
    task/affinity does for the forms recipes generate: --cpu-bind=map_cpu:/mask_cpu:
    (task i takes entry i mod len), and --cpu-bind=cores with -c T and
    --distribution=block:block (task i: the next T cores in socket-major order, one
    hardware thread each counted with --hint=nomultithread, bound to whole cores)."""
    o, _ = _opts(argv, {"-n", "--ntasks", "-c", "--cpus-per-task", "--cpu-bind",
                        "--cpu_bind", "-m", "--distribution", "--hint", "-N", "--nodes"},
                 {"--exclusive"})
    n = _last(o, "-n", "--ntasks")
    count = int(n) if n else ntasks
    if count is None:
        raise UserError("srun: the number of tasks is unknown (-n)")
    bind = (_last(o, "--cpu-bind", "--cpu_bind") or "").lower()
    kinds = [b for b in bind.split(",") if b not in ("verbose", "quiet")]
    kind = ",".join(kinds)
    if kind.startswith("map_cpu:"):
        cpus = [int(x, 0) for x in kind[8:].split(",")]
        return [[cpus[i % len(cpus)]] for i in range(count)]
    if kind.startswith("mask_cpu:"):
        masks = [int(x, 16) for x in kind[9:].split(",")]
        return [[b for b in range(m.bit_length()) if m >> b & 1]
                for m in (masks[i % len(masks)] for i in range(count))]
    if kind in ("cores", "threads"):
        dist = (_last(o, "-m", "--distribution") or "block:block").lower()
        if dist.split(":")[:2] not in (["block", "block"], ["block"]):
            raise UserError(f"--distribution={dist} is not one numascope expands")
        per = int(_last(o, "-c", "--cpus-per-task") or 1)
        cores = logical_cores(topo)
        nomt = (_last(o, "--hint") or "") == "nomultithread" or \
            all(len(c.cpus) == 1 for c in cores)
        units = [list(c.ids) for c in cores] if nomt else \
            [[cpu.id] for c in cores for cpu in c.cpus]
        if count * per > len(units):
            raise UserError(f"srun: {count} tasks × -c {per} need {count * per} CPUs; the "
                            f"node has {len(units)}")
        out = []
        for i in range(count):
            take = [x for u in units[i * per:(i + 1) * per] for x in u]
            if kind == "cores":
                take = [x for cid in take for x in _core_of(cores, cid)]
            out.append(sorted(set(take)))
        return out
    raise UserError(f"--cpu-bind={bind} is not one numascope expands")


def expand_numactl(argv: list[str] | tuple[str, ...], topo: Topology) -> list[int]:
    o, _ = _opts(argv, {"--cpunodebind", "-N", "--physcpubind", "-C", "--membind", "-m",
                        "--interleave", "-i", "--preferred"}, {"--localalloc", "-l"})
    phys = _last(o, "--physcpubind", "-C")
    if phys is not None:
        return parse_list(phys)
    nodes = _last(o, "--cpunodebind", "-N")
    if nodes is None:
        return sorted(topo.usable_cpus())
    want = set(parse_list(nodes))
    return sorted(c.id for c in topo.cpus if c.usable and c.node in want)


def expand_taskset(argv: list[str] | tuple[str, ...]) -> list[int]:
    o, _ = _opts(argv, {"-c", "--cpu-list"}, {"-a", "--all-tasks"})
    cl = _last(o, "-c", "--cpu-list")
    if cl is None:
        raise UserError("taskset: only -c LIST is expanded")
    return parse_list(cl)


def expand_omp(env: dict[str, str], binding: tuple[int, ...] | list[int],
               topo: Topology) -> list[list[int]]:
    """The place each OpenMP thread gets inside a process bound to `binding`: OMP_PLACES
    cores / threads (within the binding, logical order) or an explicit list ({a},{b}:n:s);
    OMP_PROC_BIND close (thread i on place i) or spread (place ⌊i·P/T⌋), T ≤ P."""
    t = int(env.get("OMP_NUM_THREADS", "1"))
    text = env.get("OMP_PLACES", "threads").strip()
    inside = set(binding)
    cores = logical_cores(topo)
    if text == "cores":
        places = [[x for x in c.ids if x in inside] for c in cores]
    elif text == "threads":
        places = [[x] for c in cores for x in c.ids if x in inside]
    else:
        places = _parse_places(text)
    places = [p for p in places if p]
    if t > len(places):
        raise UserError(f"OMP_NUM_THREADS={t} but only {len(places)} places")
    bind = env.get("OMP_PROC_BIND", "close").split(",")[0].strip().lower()
    if bind == "spread":
        return [sorted(places[i * len(places) // t]) for i in range(t)]
    if bind in ("close", "true"):
        return [sorted(places[i]) for i in range(t)]
    raise UserError(f"OMP_PROC_BIND={bind} is not one numascope expands")


def _parse_places(text: str) -> list[list[int]]:
    out = []
    for m in re.finditer(r"\{([^}]*)\}(?::(\d+)(?::(-?\d+))?)?", text):
        base = parse_list(m.group(1)) if m.group(1).strip() else []
        count = int(m.group(2) or 1)
        stride = int(m.group(3) or 1)
        out += [[x + i * stride for x in base] for i in range(count)]
    return out


# -- Open MPI's --report-bindings ------------------------------------------------------------

_BOUND = re.compile(r"MCW rank (\d+) (?:bound to (.*?): \[(.*)\]|is not bound)")


def parse_report_bindings(text: str) -> dict[int, list[tuple[int, int, int]] | None]:
    """rank → the (package, core, hwthread) logical positions of its binding, read from the
    bracket map of lines like `[h:1] MCW rank 1 bound to socket 0[core 1[hwt 0]]: [./B]`
    (sockets `][`, cores `/`, one character per hardware thread, B bound); None for a rank
    that is "not bound (or bound to all available processors)". Core numbers count across
    packages, as hwloc's logical core index does."""
    out: dict[int, list[tuple[int, int, int]] | None] = {}
    for m in _BOUND.finditer(text):
        rank = int(m.group(1))
        if m.group(3) is None:
            out[rank] = None
            continue
        pos, core = [], 0
        for s, sock in enumerate(m.group(3).split("][")):
            for hw in sock.split("/"):
                pos += [(s, core, h) for h, ch in enumerate(hw) if ch == "B"]
                core += 1
        out[rank] = pos
    return out


def report_cpus(report: dict[int, list[tuple[int, int, int]] | None],
                topo: Topology) -> dict[int, list[int]]:
    """parse_report_bindings' positions as OS CPU ids on `topo` (logical core order; an
    unbound rank: every usable CPU)."""
    cores = logical_cores(topo)
    out = {}
    for rank, pos in report.items():
        if pos is None:
            out[rank] = sorted(topo.usable_cpus())
        else:
            out[rank] = sorted(cores[c].cpus[h].id for _, c, h in pos)
    return out


# -- the flags other commands share -----------------------------------------------------------

def add_job_args(p: argparse.ArgumentParser) -> None:
    """--ranks, --threads, --near (and --unit) for a placement recipe."""
    g = p.add_argument_group("job shape (placement recipe)")
    g.add_argument("--ranks", type=int, metavar="R", help="MPI ranks per host")
    if not any("--threads" in a.option_strings for a in p._actions):
        g.add_argument("--threads", type=int, metavar="T", help="threads per rank")
    g.add_argument("--near", metavar="DEVICE",
                   help="a device (mlx5_0, nvme0, gpu0, a PCI address): ranks and memory on "
                        "its node first")
    g.add_argument("--unit", choices=("core", "l3", "node", "socket", "machine"),
                   help="the domain each rank stays inside (default: what the shape implies)")


def section(recipe: Recipe) -> dict[str, Any]:
    """The recipe as a `numascope advise --json` section ({"section": "recipe", …,
    "items": [...]}, one item per launcher)."""
    lay = recipe.layout
    return {"section": "recipe", "source": recipe.source, "layout": lay.describe(),
            "shape": {"ranks": lay.ranks, "threads": lay.threads, "unit": lay.unit,
                      "near": lay.near, "near_node": lay.near_node},
            "notes": list(lay.notes),
            "items": [{"tool": la.tool, **la.to_dict()} for la in recipe.launches],
            "slots": [s.to_dict() for s in lay.slots]}


def job_recipe(args: argparse.Namespace, topo: Topology) -> Recipe | None:
    """The recipe the job flags ask for; None when none of --ranks/--threads/--near/--unit
    was given."""
    ranks, threads = getattr(args, "ranks", None), getattr(args, "threads", None)
    near, unit = getattr(args, "near", None), getattr(args, "unit", None)
    if isinstance(threads, (list, tuple)):
        threads = threads[0] if len(threads) == 1 else None
    if isinstance(threads, str):
        threads = int(threads) if threads.isdigit() else None
    if ranks is None and threads is None and near is None and unit is None:
        return None
    return for_job(topo, ranks=ranks, threads=threads, near=near, unit=unit)
