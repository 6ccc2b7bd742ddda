"""Host state that disturbs measurements: NUMA balancing, THP, governor, boost, SMT, huge
pages per node, the kernel command line, processes, load, steal.

Every reader takes a procfs/sysfs root — a path ("/" is this machine) or a topology Tree —
so tests and `--sysfs-root` can replay other machines. A replayed root is read through the
Tree's jail (symlinks leading out of the dump read as missing). Readers return None (or an
empty collection) for what the root does not hold: the caller says "unknown"."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from numascope.topology.files import Tree

CPU = "sys/devices/system/cpu"
NODE = "sys/devices/system/node"
THP = "sys/kernel/mm/transparent_hugepage"


def tree_of(root: str | Path | Tree = "/") -> Tree:
    """The Tree for a root given as a path or already as a Tree."""
    return root if isinstance(root, Tree) else Tree(root)


def _read(root: str | Path | Tree, rel: str) -> str | None:
    return tree_of(root).read(rel.lstrip("/"))


def _bracketed(v: str | None) -> str | None:
    """The [chosen] word of a sysfs choice file ("always [madvise] never" → "madvise")."""
    if not v or "[" not in v or "]" not in v:
        return v
    return v[v.index("[") + 1 : v.index("]")]


def numa_balancing(root: str | Path | Tree = "/") -> bool | None:
    """True when automatic NUMA balancing is on (it migrates pages mid-measurement)."""
    v = _read(root, "proc/sys/kernel/numa_balancing")
    return None if v is None else v != "0"


def thp_mode(root: str | Path | Tree = "/") -> str | None:
    """The bracketed choice of transparent_hugepage/enabled, e.g. 'madvise'."""
    return _bracketed(_read(root, f"{THP}/enabled"))


def thp_defrag(root: str | Path | Tree = "/") -> str | None:
    """The bracketed choice of transparent_hugepage/defrag, e.g. 'madvise'."""
    return _bracketed(_read(root, f"{THP}/defrag"))


def governors(root: str | Path | Tree = "/") -> dict[str, int]:
    """cpufreq governor → number of CPUs using it (empty when cpufreq is absent)."""
    t = tree_of(root)
    counts: dict[str, int] = {}
    for cpu in t.numbered(CPU, "cpu"):
        g = t.read(f"{CPU}/cpu{cpu}/cpufreq/scaling_governor")
        if g:
            counts[g] = counts.get(g, 0) + 1
    return counts


def cpufreq_driver(root: str | Path | Tree = "/") -> str | None:
    """The scaling driver of the first CPU that has one (acpi-cpufreq, intel_pstate …)."""
    t = tree_of(root)
    for cpu in t.numbered(CPU, "cpu"):
        d = t.read(f"{CPU}/cpu{cpu}/cpufreq/scaling_driver")
        if d:
            return d
    return None


@dataclass(frozen=True)
class Boost:
    on: bool | None        # None: no knob found
    source: str            # the file that said so
    control: str           # the command that turns boost off ("" when none)


def boost(root: str | Path | Tree = "/") -> Boost:
    """Whether the CPUs may clock above base: cpufreq/boost (acpi-cpufreq, amd-pstate on
    newer kernels), intel_pstate/no_turbo, or per-policy cpufreq/policyN/boost."""
    t = tree_of(root)
    v = t.read(f"{CPU}/intel_pstate/no_turbo")
    if v is not None and v.isdigit():
        return Boost(v == "0", f"/{CPU}/intel_pstate/no_turbo = {v}",
                     f"echo 1 > /{CPU}/intel_pstate/no_turbo")
    v = t.read(f"{CPU}/cpufreq/boost")
    if v is not None and v.isdigit():
        return Boost(v != "0", f"/{CPU}/cpufreq/boost = {v}",
                     f"echo 0 > /{CPU}/cpufreq/boost")
    policies = [p for p in t.listdir(f"{CPU}/cpufreq") if p.startswith("policy")]
    vals = {p: t.read(f"{CPU}/cpufreq/{p}/boost") for p in policies}
    vals = {p: v for p, v in vals.items() if v is not None and v.isdigit()}
    if vals:
        on = any(v != "0" for v in vals.values())
        return Boost(on, f"/{CPU}/cpufreq/policy*/boost: {len(vals)} policies, "
                         f"{sum(v != '0' for v in vals.values())} with boost on",
                     f"for f in /{CPU}/cpufreq/policy*/boost; do echo 0 > $f; done")
    return Boost(None, "no cpufreq/boost, intel_pstate/no_turbo or policy*/boost", "")


def amd_pstate(root: str | Path | Tree = "/") -> str | None:
    """amd_pstate's mode (active, passive, guided), None when the driver is absent."""
    return _read(root, f"{CPU}/amd_pstate/status")


def smt_control(root: str | Path | Tree = "/") -> str | None:
    """on, off, forceoff, notsupported or notimplemented (sys/…/cpu/smt/control)."""
    return _read(root, f"{CPU}/smt/control")


def smt_active(root: str | Path | Tree = "/") -> bool | None:
    v = _read(root, f"{CPU}/smt/active")
    return None if v is None else v != "0"


def online_cpus(root: str | Path | Tree = "/") -> list[int] | None:
    return tree_of(root).read_list(f"{CPU}/online")


def node_ids(root: str | Path | Tree = "/") -> list[int]:
    return tree_of(root).numbered(NODE, "node")


def node_memtotal(root: str | Path | Tree = "/") -> dict[int, int]:
    """node → MemTotal in bytes, for every node whose meminfo says."""
    from numascope.host import meminfo_field
    t = tree_of(root)
    out = {}
    for n in node_ids(t):
        v = meminfo_field(t.read(f"{NODE}/node{n}/meminfo"), "MemTotal")
        if v is not None:
            out[n] = v
    return out


@dataclass(frozen=True)
class HugePool:
    node: int
    page_bytes: int
    total: int        # pages reserved
    free: int | None  # pages free


def hugepages_per_node(root: str | Path | Tree = "/") -> list[HugePool]:
    """Every node's hugetlb pools (node*/hugepages/hugepages-<size>kB/nr_hugepages)."""
    t = tree_of(root)
    out = []
    for n in node_ids(t):
        base = f"{NODE}/node{n}/hugepages"
        for d in t.listdir(base):
            if not (d.startswith("hugepages-") and d.endswith("kB")):
                continue
            try:
                kb = int(d[len("hugepages-"):-2])
            except ValueError:
                continue
            total = _int(t.read(f"{base}/{d}/nr_hugepages"))
            if total is None:
                continue
            out.append(HugePool(n, kb * 1024, total, _int(t.read(f"{base}/{d}/free_hugepages"))))
    return out


def _int(v: str | None) -> int | None:
    try:
        return int(v.split()[0]) if v else None
    except (ValueError, IndexError):
        return None


def cmdline(root: str | Path | Tree = "/") -> str | None:
    return _read(root, "proc/cmdline")


def cmdline_params(text: str) -> dict[str, str | None]:
    """"a=1 b c=x=y" → {"a": "1", "b": None, "c": "x=y"} (the last of a repeated key wins)."""
    out: dict[str, str | None] = {}
    for word in text.split():
        k, sep, v = word.partition("=")
        out[k] = v if sep else None
    return out


@dataclass(frozen=True)
class Proc:
    pid: int
    comm: str
    ticks: int        # utime + stime, in clock ticks


def processes(root: str | Path | Tree = "/") -> list[Proc] | None:
    """Every process under root/proc with its name and CPU time; None when the root holds
    no process directories at all (a replayed dump usually does not)."""
    t = tree_of(root)
    pids = [int(p) for p in t.listdir("proc") if p.isdigit()]
    if not pids:
        return None
    out = []
    for pid in pids:
        stat = t.read(f"proc/{pid}/stat")
        if not stat or ")" not in stat:
            continue      # gone meanwhile, or unreadable
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        f = stat[stat.rindex(")") + 2 :].split()
        try:
            ticks = int(f[11]) + int(f[12])   # fields 14 and 15: utime, stime
        except (IndexError, ValueError):
            continue
        out.append(Proc(pid, comm, ticks))
    return out


def process_names(root: str | Path | Tree = "/") -> set[str] | None:
    """The comm of every process under root/proc (None when there are no process dirs)."""
    t = tree_of(root)
    pids = [p for p in t.listdir("proc") if p.isdigit()]
    if not pids:
        return None
    return {c for c in (t.read(f"proc/{p}/comm") for p in pids) if c}


def busy_processes(seconds: float = 0.3, root: str | Path | Tree = "/",
                   exclude: set[int] | None = None) -> list[tuple[Proc, float]] | None:
    """(process, share of one CPU) for every process that used CPU time over a window of
    `seconds`, busiest first; None when the root holds no processes."""
    a = processes(root)
    if a is None:
        return None
    t0 = time.monotonic()
    time.sleep(seconds)
    b = processes(root) or []
    dt = time.monotonic() - t0
    hz = os.sysconf("SC_CLK_TCK")
    before = {(p.pid, p.comm): p.ticks for p in a}
    out = []
    for p in b:
        if exclude and p.pid in exclude:
            continue
        d = p.ticks - before.get((p.pid, p.comm), p.ticks)
        if d > 0:
            out.append((p, d / hz / dt))
    return sorted(out, key=lambda x: -x[1])


def loadavg(root: str | Path | Tree = "/") -> float | None:
    v = _read(root, "proc/loadavg")
    return float(v.split()[0]) if v else None


@dataclass
class CpuTimes:
    busy: int
    steal: int
    total: int


def cpu_times(root: str | Path | Tree = "/") -> CpuTimes | None:
    v = _read(root, "proc/stat")
    if not v:
        return None
    f = [int(x) for x in v.splitlines()[0].split()[1:]]
    idle = f[3] + (f[4] if len(f) > 4 else 0)
    steal = f[7] if len(f) > 7 else 0
    total = sum(f[:8])
    return CpuTimes(busy=total - idle - steal, steal=steal, total=total)


def steal_fraction(seconds: float = 0.2, root: str | Path | Tree = "/") -> float | None:
    """Share of CPU time stolen by the hypervisor over a short window."""
    a = cpu_times(root)
    time.sleep(seconds)
    b = cpu_times(root)
    if not a or not b or b.total == a.total:
        return None
    return (b.steal - a.steal) / (b.total - a.total)


def allowed_cpus() -> set[int]:
    return set(os.sched_getaffinity(0))
