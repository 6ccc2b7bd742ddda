"""Storage: fio's IOPS, bandwidth and completion latency by NUMA placement and drive count.

Three studies, each a list of cases (one fio run per repetition):

    run        the job on every target at once (one fio job group per target), placed by
               --cpus/--membind, else local to each target's drive (unpinned when its node
               is unknown)
    placement  per target: CPUs + buffers on the drive's node, on each other node, unpinned
    scaling    1 … N targets at once, each placed local to its drive: where IOPS per drive
               stops growing (the knee) and the kernel time that comes with it

Targets are directories (numascope creates a file in each, removes it afterwards) or a
read-only block device; see io_targets for the rules, io_fio for the job and its output."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from numascope.benchmark import Case
from numascope.errors import MeasurementError, Unavailable, UserError
from numascope.families.storage.fio import (
    Group,
    IoParams,
    fio_path,
    fio_version,
    job_text,
    probe,
    run_fio,
)
from numascope.families.storage.options import TABLE
from numascope.families.storage.targets import (
    Files,
    Target,
    check_device,
    check_dir,
    check_space,
    locate,
)
from numascope.memspec import MemorySpec
from numascope.profile import Profile
from numascope.results.record import BenchResult, Metric
from numascope.topology.model import Topology

FAMILY = "storage"
UNKNOWN = "the drive's node is unknown"
MODES = ("run", "placement", "scaling")
KNEE = 0.9        # IOPS per drive below 90 % of one drive alone: the knee
PCT_METRICS = (("p50", "clat_p50"), ("p99", "clat_p99"), ("p99.9", "clat_p99.9"))


# -- placement --------------------------------------------------------------------------------

def node_cpus(topo: Topology, node: int) -> tuple[int, ...]:
    """The usable CPUs of a node (empty for a memory-only node)."""
    return tuple(c.id for c in topo.cpus if c.node == node and c.usable)


def _has_memory(topo: Topology, node: int) -> bool:
    n = topo.node(node)
    return not n.memoryless and n.allowed


def local(topo: Topology, t: Target) -> dict[str, Any]:
    """CPUs and buffers on the target's node; unpinned when its node is unknown."""
    if t.node is None or t.node not in topo.node_ids() or not node_cpus(topo, t.node):
        return {**unpinned(), "why": "node unknown" if t.node is None else
                f"node {t.node} has no usable CPU"}
    return on_node(topo, t.node, "local")


def on_node(topo: Topology, node: int, role: str) -> dict[str, Any]:
    return {"where": f"N{node}", "role": role, "cpu_node": node,
            "cpus": list(node_cpus(topo, node)),
            "mem_nodes": [node] if _has_memory(topo, node) else None, "mem_policy": "bind"}


def unpinned(where: str = "unpinned") -> dict[str, Any]:
    return {"where": where, "role": "unpinned", "cpu_node": None, "cpus": None,
            "mem_nodes": None, "mem_policy": "bind"}


def given(cpus: list[int] | None, memory: MemorySpec | None, where: str) -> dict[str, Any]:
    """The placement the user asked for with --cpus/--cpunodebind/--membind/--interleave."""
    mem = None if memory is None or memory.first_touch else list(memory.nodes)
    policy = "interleave" if memory is not None and memory.policy == "interleave" else "bind"
    cpu_words = f"CPUs {where}" if where[:1].isdigit() else where
    desc = ", ".join(x for x in (cpu_words if cpus else "",
                                 memory.describe() if mem and memory else "") if x)
    return {"where": desc or "unpinned", "role": "given", "cpu_node": None,
            "cpus": list(cpus) if cpus else None, "mem_nodes": mem, "mem_policy": policy}


# -- the family -------------------------------------------------------------------------------

def _label(p: IoParams, what: str) -> str:
    return f"{p.describe()} {what}"


class Storage:
    """fio on files in the directories the user names (or a read-only device)."""

    family = FAMILY
    # compared by default (numascope compare): IOPS and the p99 completion latency of each job
    primary = ("iops", "clat_p99")
    title = "storage IOPS and latency by placement (fio)"

    def __init__(self, io_dir: str | list[str] | tuple[str, ...] | None = None, *,
                 root: str = "/") -> None:
        """`io_dir`: `numascope run --io-dir`, one directory or one per drive."""
        self.io_dirs = [io_dir] if isinstance(io_dir, str) else list(io_dir or [])
        self.root = root            # where sys/ and proc/ are read (a replayed root in tests)
        self._reuse: dict[str, str] | None = None   # dir -> file, inside reusing_files()
        self._reused = Files()

    @contextmanager
    def reusing_files(self) -> Iterator[dict[str, str]]:
        """Inside this block every case on a directory uses the same file (laid out once,
        not once per case); the files are removed when the block ends, however it ends.
        Outside it, each case creates and removes its own. Yields {dir: file}."""
        self._reuse = {}
        try:
            yield self._reuse
        finally:
            self._reuse = None
            self._reused.remove()

    # -- cases ------------------------------------------------------------------------------
    def suite_cases(self, topo: Topology, profile: Profile) -> list[Case]:
        """quick: the default job local to the drive, short (smoke: shorter); full: the
        placement study. With several --io-dir (one per drive): each drive alone (full:
        its placement study), then the drive-count sweep 1..N (`numascope io --scaling`)."""
        dirs = self.io_dirs
        if not dirs:
            raise Unavailable("no --io-dir given: the storage stage needs a directory on the "
                              "drive to measure (numascope io --dir DIR measures one directly)")
        size = min(profile.max_bytes, TABLE["size"].default)
        if profile.dense:                                    # the default job
            p, mode, reps = IoParams(size=size), "placement", min(profile.reps, 5)
        else:
            p = IoParams(runtime=2.0, size=size) if profile.readable else \
                IoParams(runtime=1.0, ramp=0.0, size=size)   # smoke: fio runs, placed
            mode, reps = "run", min(profile.reps, 3)
        if len(dirs) == 1:
            return self.cases(topo, params=p, dirs=dirs, mode=mode, reps=reps)
        ts = self.targets(topo, p, dirs, None, False)        # located once, checked together
        if mode == "placement":                              # t0 …: each drive's study
            out = self.cases(topo, params=p, mode=mode, reps=reps, targets=ts)
        else:                                                # each drive alone, local
            out = [replace(c, label=_label(p, f"t{i} alone, " +
                                           c.label.removeprefix(_label(p, ""))))
                   for i, t in enumerate(ts)
                   for c in self.cases(topo, params=p, mode=mode, reps=reps, targets=[t])]
        return out + self.cases(topo, params=p, mode="scaling", reps=reps, targets=ts)

    def targets(self, topo: Topology, p: IoParams, dirs: list[str], device: str | None,
                readonly: bool) -> list[Target]:
        if device is not None and dirs:
            raise UserError("give --dir or --device, not both")
        if device is not None:
            check_device(device, readonly=readonly, rw=p.rw, root=self.root)
            return [locate(topo, device, "device", self.root)]
        if not dirs:
            raise UserError("no target: give --dir DIR (one per drive) or --device /dev/X "
                            "--readonly")
        real = [os.path.realpath(check_dir(d)) for d in dirs]
        twice = next((d for d, r in zip(dirs, real) if real.count(r) > 1), None)
        if twice is not None:
            raise UserError(f"--dir {twice} is named twice")
        if readonly:
            raise UserError("--readonly goes with --device; files in --dir are numascope's own")
        check_space(dirs, p.size)
        return [locate(topo, d, "dir", self.root) for d in dirs]

    def cases(self, topo: Topology, *, params: IoParams | None = None,
              dirs: list[str] | tuple[str, ...] = (), device: str | None = None,
              readonly: bool = False, mode: str = "run", reps: int = TABLE["reps"].default,
              cpus: list[int] | None = None, memory: MemorySpec | None = None,
              where: str = "", sweep: list[tuple[int, int]] | None = None,
              targets: list[Target] | None = None, **_: Any) -> list[Case]:
        """The cases of one study; `sweep` is a list of (iodepth, numjobs), default the
        params' own. `targets` skips locating (tests pass them ready-made)."""
        p = params or IoParams()
        if mode not in MODES:
            raise UserError(f"unknown study {mode!r} (choose from {', '.join(MODES)})")
        TABLE["reps"].convert(reps)
        ts = targets if targets is not None else self.targets(topo, p, list(dirs), device,
                                                              readonly)
        pinned = bool(cpus) or (memory is not None and not memory.first_touch)
        if pinned and mode != "run":
            raise UserError(f"--{mode} chooses the placement itself: leave out --cpus, "
                            "--cpunodebind, --membind and --interleave")
        if mode == "scaling" and len(ts) < 2:
            raise UserError("--scaling needs at least two --dir (one per drive)")
        out: list[Case] = []
        for depth, jobs in sweep or [(p.iodepth, p.numjobs)]:
            q = replace(p, iodepth=depth, numjobs=jobs)
            out += self._study(topo, q, ts, mode, reps, cpus, memory, where, pinned)
        return out

    def _study(self, topo, p, ts, mode, reps, cpus, memory, where, pinned) -> list[Case]:
        def case(label, chosen, places, extra=None):
            return Case(_label(p, label), {
                "mode": mode, "io": p.to_dict(), "reps": reps,
                "targets": [t.to_dict() for t in chosen], "placement": places,
                **(extra or {})})
        if mode == "run":
            places = [given(cpus, memory, where) if pinned else local(topo, t) for t in ts]
            why = places[0].get("why")
            what = places[0]["where"] + (f" ({why})" if why else "") if len(ts) == 1 else \
                f"{len(ts)} targets " + ("at once" if not pinned else places[0]["where"])
            return [case(what, ts, places)]
        if mode == "scaling":
            return [case(f"{k} drive{'s' if k > 1 else ''}", ts[:k],
                         [local(topo, t) for t in ts[:k]], {"drives": k})
                    for k in range(1, len(ts) + 1)]
        out = []
        for i, t in enumerate(ts):
            name = f"t{i} " if len(ts) > 1 else ""
            for place in placements(topo, t):
                d = None if t.node is None or place["cpu_node"] is None else \
                    topo.distance(t.node, place["cpu_node"])
                out.append(case(f"{name}{place['where']} ({place['role']})", [t], [place],
                                {"distance": d, "target_node": t.node}))
        return out

    # -- measuring ---------------------------------------------------------------------------
    def measure(self, topo: Topology, case: Case) -> BenchResult:
        cp = case.params
        p = IoParams.from_dict(cp["io"])
        fio = fio_path()
        version = fio_version(fio)
        engine, numa = probe(fio)
        targets = [Target(**{k: v for k, v in t.items()}) for t in cp["targets"]]
        places = cp["placement"]
        notes: list[str] = []
        device = any(t.kind == "device" for t in targets)
        files = Files()
        runs = []
        irq_before = interrupts([t.pci for t in targets if t.pci])
        try:
            names = []
            for t in targets:
                if t.kind != "dir":
                    names.append(t.path)
                elif self._reuse is not None and t.path in self._reuse:
                    names.append(self._reuse[t.path])
                else:
                    check_space([t.path], p.size)
                    if self._reuse is None:
                        names.append(files.add(t.path))
                    else:
                        names.append(self._reused.add(t.path))
                        self._reuse[t.path] = names[-1]
            groups = job_groups(case, names)
            text = job_text(p, groups, engine, numa=numa, readonly=device)
            cpus, wrap = None, None
            if not numa:
                cpus, wrap = self._fallback(groups, notes)
            cmd = ""
            for _ in range(int(cp.get("reps", TABLE["reps"].default))):
                run, cmd = run_fio(text, path=fio, cpus=cpus, wrap=wrap, readonly=device,
                                   timeout=p.runtime + p.ramp + 600,
                                   jobdir=next((t.path for t in targets if t.kind == "dir"),
                                               None))
                runs.append(run)
        finally:
            left = files.remove()
            if left:
                notes.append(f"could not remove {', '.join(left)}")
        irqs = diff_interrupts(irq_before, interrupts([t.pci for t in targets if t.pci]))
        res = self._result(case, p, targets, places, runs, notes, version, engine, numa,
                           text, cmd, irqs)
        check_measured(res)
        return res

    def _fallback(self, groups: list[Group], notes: list[str]):
        """fio without libnuma: run it under the union of the CPUs, numactl for memory."""
        cpus = sorted({c for g in groups for c in (g.cpus or ())})
        mems = sorted({n for g in groups for n in (g.mem_nodes or ())})
        wrap = None
        if cpus:
            notes.append("fio lacks NUMA support: the whole fio process was pinned to CPUs "
                         f"{','.join(map(str, cpus))} (sched_setaffinity), not each job")
        if mems:
            numactl = shutil.which("numactl")
            if numactl:
                wrap = [numactl, f"--membind={','.join(map(str, mems))}"]
                notes.append(f"fio lacks NUMA support: memory bound with numactl --membind="
                             f"{','.join(map(str, mems))}")
            else:
                notes.append("fio lacks NUMA support and numactl is missing: buffers were "
                             "not bound to a node")
        return tuple(cpus) or None, wrap

    def _result(self, case, p, targets, places, runs, notes, version, engine, numa, text,
                cmd, irqs) -> BenchResult:
        cp = case.params
        n = len(targets)

        def metric(name, unit, hib, values, note=""):
            return Metric(name, unit, hib, [float(v) for v in values], note)
        m = {
            "iops": metric("iops", "IO/s", True, [r.iops for r in runs],
                           "all targets together" if n > 1 else ""),
            "bandwidth": metric("bandwidth", "MB/s", True, [r.bw_bytes / 1e6 for r in runs],
                                "10^6 B/s"),
        }
        for key, name in PCT_METRICS:
            vals = [max(g.clat_us.get(key, float("nan")) for g in r.groups) for r in runs]
            m[name] = metric(name, "us", False, vals, "completion latency"
                             + (", the slowest target" if n > 1 else ""))
        m["cpu_usr"] = metric("cpu_usr", "%", False,
                              [_mean(g.usr_cpu for g in r.groups) for r in runs],
                              "fio's user CPU, % of one CPU per job")
        m["cpu_sys"] = metric("cpu_sys", "%", False,
                              [_mean(g.sys_cpu for g in r.groups) for r in runs],
                              "fio's system (kernel) CPU, % of one CPU per job")
        m["kernel_cpus"] = metric("kernel_cpus", "CPUs", False,
                                  [sum(g.sys_cpu for g in r.groups) * p.numjobs / 100
                                   for r in runs], "CPUs' worth of kernel time, all jobs")
        m["errors"] = metric("errors", "count", False,
                             [sum(g.total_err + g.short_ios + g.drop_ios for g in r.groups)
                              for r in runs], "fio's error, short and dropped I/O counts")
        if n > 1:
            for i in range(n):
                m[f"iops_t{i}"] = metric(f"iops_t{i}", "IO/s", True,
                                         [r.groups[i].iops for r in runs], targets[i].path)
                m[f"clat_p99_t{i}"] = metric(
                    f"clat_p99_t{i}", "us", False,
                    [r.groups[i].clat_us.get("p99", float("nan")) for r in runs],
                    targets[i].path)
        if p.rw == "randrw":
            m["write_clat_p99"] = metric(
                "write_clat_p99", "us", False,
                [max(g.write_clat_us.get("p99", float("nan")) for g in r.groups) for r in runs],
                "completion latency of the writes")
        disks = [t.disk or _fs_of(t) for t in targets]
        shared = sorted({d for d in disks if d and disks.count(d) > 1})
        if shared:
            notes.append(f"several targets are on the same drive ({', '.join(shared)}): "
                         "they share it")
        for t in targets:
            if t.node is None:
                notes.append(f"{t.path} ({t.disk or 'no block device'}): {UNKNOWN}")
        params = {k: v for k, v in cp.items() if k not in ("io",)}
        params.update({"io": p.to_dict(), "fio_version": version, "engine": engine,
                       "fio_numa": numa, "job": text, "command": cmd})
        if irqs:
            params["interrupts"] = irqs
        placement = {"cpus": sorted({c for pl in places for c in (pl["cpus"] or [])}),
                     "memory": [pl["mem_nodes"] for pl in places],
                     "where": [pl["where"] for pl in places]}
        return BenchResult(FAMILY, case.label, params, m, placement, notes)


def _fs_of(t: Target) -> str | None:
    """A directory's file system as "file system MAJ:MIN" (when its disk is not known, two
    directories on one file system still share a drive); None for a device or unreadable."""
    if t.kind != "dir":
        return None
    try:
        dev = os.stat(t.path).st_dev
    except OSError:
        return None
    return f"file system {os.major(dev)}:{os.minor(dev)}"


def job_groups(case: Case, filenames: list[str]) -> list[Group]:
    """The fio job groups of a case: one per target, its file, CPUs and memory nodes."""
    return [Group(f"t{i}", name, tuple(pl["cpus"]) if pl["cpus"] else None,
                  tuple(pl["mem_nodes"]) if pl["mem_nodes"] else None,
                  pl.get("mem_policy", "bind"))
            for i, (name, pl) in enumerate(zip(filenames, case.params["placement"]))]


def placements(topo: Topology, t: Target) -> list[dict[str, Any]]:
    """The placement study's rows for one target: local node, each remote node (nearest
    first), unpinned; every node with usable CPUs when the target's node is unknown."""
    with_cpus = [n for n in topo.node_ids() if node_cpus(topo, n)]
    rows = []
    if t.node is not None and t.node in with_cpus:
        rows.append(on_node(topo, t.node, "local"))
        others = [n for n in with_cpus if n != t.node]
        others.sort(key=lambda n: (topo.distance(t.node, n) or 1 << 30, n))
        rows += [on_node(topo, n, "remote") for n in others]
    else:
        rows += [on_node(topo, n, "node unknown") for n in with_cpus]
    rows.append(unpinned())
    return rows


def _mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


# -- /proc/interrupts ---------------------------------------------------------------------

def interrupts(pcis: list[str], path: str = "/proc/interrupts") -> dict[str, list[int]]:
    """Per CPU column, the interrupt counts of the lines naming one of these PCI functions
    (their MSI-X vectors: the drive's queues). {} when unreadable or none match."""
    if not pcis:
        return {}
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return {}
    if not lines:
        return {}
    cpus = lines[0].split()
    out: dict[str, list[int]] = {}
    for line in lines[1:]:
        if not any(a in line for a in pcis):
            continue
        head, _, rest = line.partition(":")
        cols = rest.split()
        counts = [int(x) for x in cols[:len(cpus)] if x.isdigit()]
        if len(counts) == len(cpus):
            out[head.strip()] = counts
    out["_cpus"] = [int(re.sub(r"\D", "", c) or -1) for c in cpus]
    return out


def diff_interrupts(a: dict[str, list[int]], b: dict[str, list[int]]) -> dict[str, int]:
    """Interrupts per CPU between two readings (CPUs with none left out): {"cpu3": 1200}."""
    if not a or not b or "_cpus" not in b:
        return {}
    total = [0] * len(b["_cpus"])
    for k, counts in b.items():
        if k == "_cpus" or k not in a:
            continue
        for i, (x, y) in enumerate(zip(a[k], counts)):
            total[i] += max(0, y - x)
    return {f"cpu{c}": v for c, v in zip(b["_cpus"], total) if v}


# -- reading results -------------------------------------------------------------------------

def of(results: list[BenchResult], mode: str) -> list[BenchResult]:
    return [r for r in results if r.family == FAMILY and r.params.get("mode") == mode]


def placement_rows(results: list[BenchResult]) -> list[dict[str, Any]]:
    """The placement study as rows: target, where, role, distance, IOPS, p99 and IOPS
    relative to the local row (None where there is no local row)."""
    rows = []
    for r in of(results, "placement"):
        t = r.params["targets"][0]
        pl = r.params["placement"][0]
        rows.append({"target": t["path"], "target_node": t.get("node"), "where": pl["where"],
                     "role": pl["role"], "distance": r.params.get("distance"),
                     "iops": r.metrics["iops"].median,
                     "p99_us": r.metrics["clat_p99"].median,
                     "cpu_sys": r.metrics["cpu_sys"].median, "case": r.case})
    loc = {row["target"]: row["iops"] for row in rows if row["role"] == "local"}
    for row in rows:
        base = loc.get(row["target"])
        row["vs_local"] = row["iops"] / base if base else None
    return rows


def scaling_rows(results: list[BenchResult]) -> list[dict[str, Any]]:
    """Drive scaling: drives, total IOPS, per drive, efficiency vs one drive alone, kernel
    CPUs, and which row is the knee (first below KNEE of linear)."""
    rs = sorted(of(results, "scaling"), key=lambda r: r.params.get("drives", 0))
    rows = []
    one = None
    for r in rs:
        k = r.params["drives"]
        tot = r.metrics["iops"].median
        per = tot / k
        if k == 1:
            one = per
        rows.append({"drives": k, "iops": tot, "per_drive": per,
                     "efficiency": per / one if one else None,
                     "p99_us": r.metrics["clat_p99"].median,
                     "cpu_sys": r.metrics["cpu_sys"].median,
                     "kernel_cpus": r.metrics["kernel_cpus"].median,
                     "interrupts": sum((r.params.get("interrupts") or {}).values()),
                     "knee": False})
    for row in rows:
        if row["efficiency"] is not None and row["efficiency"] < KNEE:
            row["knee"] = True
            break
    return rows


def knee_text(rows: list[dict[str, Any]]) -> str | None:
    """One sentence on the knee with its CPU evidence; None when scaling stayed linear."""
    k = next((r for r in rows if r["knee"]), None)
    if k is None:
        return None
    first = rows[0]
    return (f"knee at {k['drives']} drives: {k['per_drive']:,.0f} IO/s per drive, "
            f"{k['efficiency']:.0%} of one drive alone; kernel time {k['kernel_cpus']:.2f} "
            f"CPUs ({k['cpu_sys']:.0f}% sys per job) vs {first['kernel_cpus']:.2f} "
            f"({first['cpu_sys']:.0f}%) with one")


def check_measured(r: BenchResult) -> None:
    """A result with no I/O is not one."""
    if not r.metrics["iops"].values or r.metrics["iops"].max <= 0:
        raise MeasurementError(f"{r.case}: fio completed no I/O")
