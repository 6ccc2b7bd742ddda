"""Host state that disturbs measurements: NUMA balancing, THP, governor, load, steal.

Every reader takes a procfs/sysfs root so tests can replay other machines."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path


def _read(root: str | Path, rel: str) -> str | None:
    try:
        return (Path(root) / rel.lstrip("/")).read_text().strip()
    except OSError:
        return None


def numa_balancing(root: str | Path = "/") -> bool | None:
    """True when automatic NUMA balancing is on (it migrates pages mid-measurement)."""
    v = _read(root, "proc/sys/kernel/numa_balancing")
    return None if v is None else v != "0"


def thp_mode(root: str | Path = "/") -> str | None:
    """The bracketed choice of transparent_hugepage/enabled, e.g. 'madvise'."""
    v = _read(root, "sys/kernel/mm/transparent_hugepage/enabled")
    if not v or "[" not in v:
        return v
    return v[v.index("[") + 1 : v.index("]")]


def governors(root: str | Path = "/") -> dict[str, int]:
    """cpufreq governor → number of CPUs using it (empty when cpufreq is absent)."""
    counts: dict[str, int] = {}
    base = Path(root) / "sys/devices/system/cpu"
    for p in sorted(base.glob("cpu[0-9]*/cpufreq/scaling_governor")):
        g = p.read_text().strip()
        counts[g] = counts.get(g, 0) + 1
    return counts


def loadavg(root: str | Path = "/") -> float | None:
    v = _read(root, "proc/loadavg")
    return float(v.split()[0]) if v else None


@dataclass
class CpuTimes:
    busy: int
    steal: int
    total: int


def cpu_times(root: str | Path = "/") -> CpuTimes | None:
    v = _read(root, "proc/stat")
    if not v:
        return None
    f = [int(x) for x in v.splitlines()[0].split()[1:]]
    idle = f[3] + (f[4] if len(f) > 4 else 0)
    steal = f[7] if len(f) > 7 else 0
    total = sum(f[:8])
    return CpuTimes(busy=total - idle - steal, steal=steal, total=total)


def steal_fraction(seconds: float = 0.2, root: str | Path = "/") -> float | None:
    """Share of CPU time stolen by the hypervisor over a short window."""
    a = cpu_times(root)
    time.sleep(seconds)
    b = cpu_times(root)
    if not a or not b or b.total == a.total:
        return None
    return (b.steal - a.steal) / (b.total - a.total)


def allowed_cpus() -> set[int]:
    return set(os.sched_getaffinity(0))
