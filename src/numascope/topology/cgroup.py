"""Which CPUs and memory nodes the process may use.

For the live machine that is os.sched_getaffinity (it already reflects the cgroup). For a
replayed dump we do what hwloc does: find the process's cpuset path (proc/self/cpuset, or
the cpuset/unified line of proc/self/cgroup), find where the cpuset or cgroup2 hierarchy is
mounted (proc/mounts), and read cpus/mems there (cpuset.cpus.effective on cgroup2)."""

from __future__ import annotations

from dataclasses import dataclass

from numascope.topology.files import Tree


@dataclass(frozen=True)
class Allowed:
    cpus: list[int] | None    # None: no restriction found
    mems: list[int] | None
    evidence: str


def _cgroup_path(tree: Tree) -> str | None:
    p = tree.read("proc/self/cpuset")
    if p:
        return p
    for line in (tree.read("proc/self/cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and (parts[1] == "" or "cpuset" in parts[1].split(",")):
            return parts[2]
    return None


def _mounts(tree: Tree) -> list[tuple[str, str, list[str]]]:
    out = []
    for line in (tree.read("proc/mounts") or "").splitlines():
        f = line.split()
        if len(f) >= 4:
            out.append((f[1], f[2], f[3].split(",")))
    return out


def replayed_allowed(tree: Tree) -> Allowed:
    path = _cgroup_path(tree)
    if path is None:
        return Allowed(None, None, "no proc/self/cpuset or proc/self/cgroup in the dump")
    path = path.strip("/")
    for mnt, fstype, opts in _mounts(tree):
        if fstype == "cgroup2":
            names = ("cpuset.cpus.effective", "cpuset.mems.effective")
        elif fstype == "cpuset" or (fstype == "cgroup" and "noprefix" in opts
                                    and "cpuset" in opts):
            names = ("cpus", "mems")
        elif fstype == "cgroup" and "cpuset" in opts:
            names = ("cpuset.cpus", "cpuset.mems")
        else:
            continue
        base = f"{mnt.strip('/')}/{path}".strip("/")
        cpus = tree.read_list(f"{base}/{names[0]}")
        if cpus is None:
            continue
        mems = tree.read_list(f"{base}/{names[1]}")
        return Allowed(cpus, mems, f"{fstype} at /{mnt.strip('/')}, cgroup /{path}: "
                                   f"{tree.where(base + '/' + names[0])}")
    return Allowed(None, None, f"cgroup /{path} has no readable cpuset files in the dump")
