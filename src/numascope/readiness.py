"""Benchmark readiness: the host settings that change what numascope measures, each with
what was seen, its effect on measurements, and the exact command that changes it.

numascope never changes any of them itself. Every check reads through one root (a path or
a topology Tree), so a replayed machine (`--sysfs-root`) is checked exactly like this one;
what a replayed dump does not hold is "unknown", and the busy-process sample (a window of
this machine's /proc) is not taken on a replayed root.

Statuses: ok (nothing to do), warn (distorts measurements: change it or know why),
info (a setting or fact that shapes the numbers; a choice, not a fault), unknown (the root
does not say)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from numascope import sysstate
from numascope.topology.files import Tree

STATUSES = ("ok", "warn", "info", "unknown")
# thresholds' sources: numascope.sources (Dell HPC lab studies, 2018 and 2019)
IMBALANCE = 0.75          # a node with less than 75 % of the largest node's memory: warn
BUSY_CPU_SHARE = 0.10     # another process using 10 % of one CPU or more: warn
BUSY_WINDOW_S = 0.3       # the busy-process sample
VM_VENDORS = ("qemu", "kvm", "vmware", "xen", "innotek", "virtualbox", "parallels",
              "bochs", "amazon ec2", "google compute engine", "openstack", "bhyve",
              "cloud hypervisor", "firecracker")


@dataclass
class Check:
    id: str            # stable name: "governor", "numa_balancing" …
    title: str         # what it is, in words
    status: str        # ok | warn | info | unknown
    value: str         # what was seen
    effect: str        # what it does to measurements (one sentence)
    fix: str = ""      # the exact command that changes it ("" when there is nothing to do)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "status": self.status,
                "value": self.value, "effect": self.effect, "fix": self.fix}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Check:
        return cls(str(d.get("id", "?")), str(d.get("title", d.get("id", "?"))),
                   str(d.get("status", "unknown")), str(d.get("value", "")),
                   str(d.get("effect", "")), str(d.get("fix", "")))


def _gib(b: int) -> str:
    return f"{b / 2**30:.1f} GiB"


# -- the checks ----------------------------------------------------------------------------

def check_governor(t: Tree) -> Check:
    govs = sysstate.governors(t)
    title = "CPU frequency governor"
    effect = ("a governor other than performance lets the clock follow the load, so short "
              "or lightly threaded cases run slower and vary more")
    fix = "cpupower frequency-set -g performance"
    if not govs:
        return Check("governor", title, "unknown",
                     "no cpufreq/scaling_governor (the firmware or hypervisor sets the clock)",
                     effect, "")
    seen = ", ".join(f"{g} on {n} CPU{'s' if n != 1 else ''}" for g, n in sorted(govs.items()))
    drv = sysstate.cpufreq_driver(t)
    pstate = sysstate.amd_pstate(t)
    extra = "".join([f"; driver {drv}" if drv else "",
                     f"; amd_pstate {pstate}" if pstate else ""])
    if set(govs) == {"performance"}:
        return Check("governor", title, "ok", seen + extra, effect, "")
    return Check("governor", title, "warn", seen + extra, effect, fix)


def check_boost(t: Tree) -> Check:
    b = sysstate.boost(t)
    title = "CPU boost (turbo)"
    effect = ("with boost on, the clock depends on how many cores are busy and on "
              "temperature: one-thread figures run faster than the all-core ones and "
              "repeated runs drift")
    if b.on is None:
        return Check("boost", title, "unknown", b.source, effect, "")
    if b.on:
        return Check("boost", title, "info", f"on ({b.source})", effect, b.control)
    return Check("boost", title, "ok", f"off ({b.source})", effect, "")


def check_smt(t: Tree, topo: Any = None) -> Check:
    ctl = sysstate.smt_control(t)
    active = sysstate.smt_active(t)
    if active is None and topo is not None:
        active = any(c.smt > 0 for c in topo.cpus)
    title = "simultaneous multithreading (SMT)"
    effect = ("with SMT on, two hardware threads share a core's caches and ports: "
              "per-thread bandwidth and latency depend on whether the sibling is busy, and "
              "'all CPUs' means two threads per core")
    value = f"control {ctl or 'unknown'}, " + \
        ("active" if active else "inactive" if active is not None else "activity unknown")
    if ctl is None and active is None:
        return Check("smt", title, "unknown", value, effect, "")
    if active:
        return Check("smt", title, "info", value, effect,
                     "echo off > /sys/devices/system/cpu/smt/control")
    return Check("smt", title, "ok", value, effect, "")


def check_thp(t: Tree) -> Check:
    mode, defrag = sysstate.thp_mode(t), sysstate.thp_defrag(t)
    title = "transparent huge pages (THP)"
    value = f"enabled {mode or 'unknown'}, defrag {defrag or 'unknown'}"
    if mode is None:
        return Check("thp", title, "unknown", value,
                     "without THP every 4 KiB page costs a TLB entry", "")
    if mode == "never":
        return Check("thp", title, "warn", value,
                     "THP is off: --pages thp (the default) gets 4 KiB pages, so TLB misses "
                     "lower bandwidth and raise latency over large arrays",
                     "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled")
    if defrag == "always":
        return Check("thp", title, "info", value,
                     "defrag always: a page fault may stall to compact memory, so the first "
                     "touch of large arrays takes longer and varies",
                     "echo madvise > /sys/kernel/mm/transparent_hugepage/defrag")
    return Check("thp", title, "ok", value,
                 "numascope asks for huge pages with madvise, which this mode grants", "")


def check_numa_balancing(t: Tree) -> Check:
    on = sysstate.numa_balancing(t)
    title = "automatic NUMA balancing"
    effect = ("the kernel unmaps and migrates pages towards the CPUs touching them, during "
              "the measurement: remote-memory cases drift towards local and timings jitter")
    if on is None:
        return Check("numa_balancing", title, "unknown",
                     "no /proc/sys/kernel/numa_balancing", effect, "")
    if on:
        return Check("numa_balancing", title, "warn", "on", effect,
                     "echo 0 > /proc/sys/kernel/numa_balancing")
    return Check("numa_balancing", title, "ok", "off", effect, "")


def check_hugepages(t: Tree) -> Check:
    pools = sysstate.hugepages_per_node(t)
    title = "huge pages reserved per node (hugetlb)"
    effect = ("--pages hugetlb takes pages from the node's own pool: a node without a "
              "reservation cannot run hugetlb cases bound to it")
    if not pools:
        return Check("hugepages", title, "unknown", "no node*/hugepages in this root",
                     effect, "")
    nodes = sysstate.node_ids(t)
    two_m = [p for p in pools if p.page_bytes == 2 << 20]
    shown = pools if not two_m else two_m
    per_node = {n: sum(p.total for p in shown if p.node == n) for n in nodes}
    page = shown[0].page_bytes
    size = f"{page >> 20} MiB" if page < 1 << 30 else f"{page >> 30} GiB"
    value = ", ".join(f"N{n} {per_node[n]}" + _free(shown, n) for n in nodes) + \
        f" x {size}"
    fix = (f"cd /sys/devices/system/node && echo 512 > node{{N}}/hugepages/"
           f"hugepages-{page >> 10}kB/nr_hugepages")
    total = sum(per_node.values())
    if total == 0:
        return Check("hugepages", title, "info",
                     f"none reserved on {len(nodes)} node{'s' if len(nodes) != 1 else ''} "
                     f"({size} pages)", effect,
                     f"cd /sys/devices/system/node && for n in node*; do echo 512 > "
                     f"$n/hugepages/hugepages-{page >> 10}kB/nr_hugepages; done")
    empty = [n for n, v in per_node.items() if v == 0]
    mems = sysstate.node_memtotal(t)
    empty = [n for n in empty if mems.get(n, 1) > 0]   # a memoryless node cannot hold any
    if empty:
        return Check("hugepages", title, "warn", value, effect,
                     fix.replace("{N}", str(empty[0])))
    return Check("hugepages", title, "ok", value, effect, "")


def _free(pools: list[sysstate.HugePool], n: int) -> str:
    free = [p.free for p in pools if p.node == n]
    if not free or any(f is None for f in free):
        return ""
    return f" ({sum(f for f in free if f is not None)} free)"


def check_irqbalance(t: Tree) -> Check:
    names = sysstate.process_names(t)
    title = "irqbalance"
    effect = ("irqbalance moves device interrupts between CPUs every few seconds: a "
              "measured CPU may start serving a NIC's or drive's interrupts mid-run")
    if names is None:
        return Check("irqbalance", title, "unknown", "no process list in this root",
                     effect, "")
    if "irqbalance" in names:
        return Check("irqbalance", title, "info", "running", effect,
                     "systemctl stop irqbalance")
    return Check("irqbalance", title, "ok", "not running", effect, "")


def check_memory_balance(t: Tree, topo: Any = None) -> Check:
    mem = sysstate.node_memtotal(t)
    title = "memory per node"
    effect = ("a node with much less memory than its peers (a missing or failed DIMM) "
              "has fewer channels: its bandwidth is lower and big arrays spill to other "
              "nodes")
    if topo is not None:      # peers: nodes with CPUs (CPU-less nodes are other tiers)
        with_cpus = {n.id for n in topo.nodes if n.cpus}
        mem = {n: v for n, v in mem.items() if n in with_cpus} or mem
    if not mem:
        return Check("memory_balance", title, "unknown", "no node*/meminfo in this root",
                     effect, "")
    value = ", ".join(f"N{n} {_gib(v)}" for n, v in sorted(mem.items()))
    if len(mem) < 2:
        return Check("memory_balance", title, "ok", value + " (one node)", effect, "")
    top = max(mem.values())
    low = {n: v for n, v in mem.items() if v < IMBALANCE * top}
    if low:
        worst = min(low, key=lambda n: low[n])
        return Check("memory_balance", title, "warn",
                     f"{value}; N{worst} has {low[worst] / top:.0%} of the largest",
                     effect, "dmidecode -t memory | grep -E 'Locator|Size'")
    return Check("memory_balance", title, "ok", value, effect, "")


def check_cgroup(t: Tree, live: bool) -> Check:
    title = "CPUs allowed to numascope"
    effect = ("a cpuset or affinity mask narrower than the online CPUs hides cores and "
              "nodes: all-core and per-node figures cover only the allowed part")
    online = sysstate.online_cpus(t)
    if live:
        allowed = sorted(os.sched_getaffinity(0))
        how = "affinity (cgroup cpuset and taskset)"
    else:
        from numascope.topology.cgroup import replayed_allowed
        a = replayed_allowed(t)
        allowed, how = a.cpus, a.evidence
    if online is None or allowed is None:
        return Check("cgroup_cpus", title, "unknown",
                     f"online {_lst(online)}, allowed {_lst(allowed)} ({how})", effect, "")
    missing = sorted(set(online) - set(allowed))
    value = f"{len(set(allowed) & set(online))} of {len(online)} online CPUs allowed"
    if missing:
        return Check("cgroup_cpus", title, "warn",
                     f"{value}; not allowed: {_lst(missing)} ({how})", effect,
                     f"systemd-run --scope -p AllowedCPUs={_lst(online)} numascope run "
                     "(in Slurm: srun --exclusive numascope run)")
    return Check("cgroup_cpus", title, "ok", value, effect, "")


def _lst(cpus: list[int] | None) -> str:
    if cpus is None:
        return "unknown"
    from numascope.topology.lists import format_list
    return format_list(cpus) or "none"


def check_vm(t: Tree) -> Check:
    from numascope.host import Host
    flags = Host(t).cpu_flags()
    vendor = t.read("sys/class/dmi/id/sys_vendor") or ""
    product = t.read("sys/class/dmi/id/product_name") or ""
    title = "virtual machine"
    effect = ("in a guest, vCPUs and guest nodes need not map to host cores and nodes, "
              "and the hypervisor may steal time: topology-based figures describe the "
              "guest, not the hardware; pin vCPUs and guest memory on the host (or measure on "
              "bare metal)")
    dmi = " ".join(x for x in (vendor, product) if x)
    hit = [v for v in VM_VENDORS if v in dmi.lower()]
    seen = []
    if "hypervisor" in flags:
        seen.append("cpuinfo flag hypervisor")
    if hit:
        seen.append(f"DMI {dmi!r}")
    if seen:
        return Check("vm", title, "warn", "yes: " + ", ".join(seen), effect,
                     "virsh vcpupin DOMAIN VCPU HOSTCPU; "
                     "virsh numatune DOMAIN --nodeset NODES")
    if not flags and not dmi:
        return Check("vm", title, "unknown", "no cpuinfo flags and no DMI in this root",
                     effect, "")
    return Check("vm", title, "ok", "no" + (f" (DMI {dmi!r})" if dmi else ""), effect, "")


def check_busy(t: Tree, live: bool, seconds: float = BUSY_WINDOW_S) -> Check:
    title = "other busy processes"
    effect = ("another process on the measured CPUs takes cycles, cache and memory "
              "bandwidth: figures read low and vary (kill -CONT PID resumes a stopped one)")
    if not live:
        return Check("busy", title, "unknown", "not sampled on a replayed root", effect, "")
    busy = sysstate.busy_processes(seconds, t, exclude={os.getpid()})
    if busy is None:
        return Check("busy", title, "unknown", "no /proc process list", effect, "")
    heavy = [(p, s) for p, s in busy if s >= BUSY_CPU_SHARE]
    top = ", ".join(f"{p.comm} (pid {p.pid}) {s:.0%}" for p, s in (heavy or busy)[:3])
    if heavy:
        p = heavy[0][0]
        return Check("busy", title, "warn",
                     f"{len(heavy)} using >= {BUSY_CPU_SHARE:.0%} of a CPU over "
                     f"{seconds:g} s: {top}", effect,
                     f"kill -STOP {p.pid}")
    return Check("busy", title, "ok",
                 f"none above {BUSY_CPU_SHARE:.0%} of a CPU over {seconds:g} s"
                 + (f" (top: {top})" if top else ""), effect, "")


_CMDLINE = {   # parameter → (status, effect)
    "numa": ("warn", "numa=off hides every node but one: there is no NUMA to measure"),
    "numa=fake": ("warn", ("numa=fake= splits memory into emulated nodes with no real "
                          "locality: local and remote figures are the same hardware")),
    "mem": ("warn", ("mem= limits the memory the kernel uses: nodes above the limit look "
                    "empty or small")),
    "isolcpus": ("info", ("isolated CPUs take no ordinary tasks: numascope's pinned "
                         "threads still run there, nothing else disturbs them")),
    "nohz_full": ("info", ("nohz_full CPUs skip the timer tick while running one task: "
                          "fewer interruptions on them")),
}


def check_cmdline(t: Tree) -> Check:
    text = sysstate.cmdline(t)
    title = "kernel command line"
    if text is None:
        return Check("cmdline", title, "unknown", "no /proc/cmdline in this root",
                     "numa=off, numa=fake= or mem= change the nodes numascope sees", "")
    params = sysstate.cmdline_params(text)
    found: list[tuple[str, str, str]] = []     # (status, word, effect)
    numa = params.get("numa")
    if numa == "off":
        found.append(("warn", "numa=off", _CMDLINE["numa"][1]))
    elif numa and numa.startswith("fake="):
        found.append(("warn", f"numa={numa}", _CMDLINE["numa=fake"][1]))
    for k in ("mem", "isolcpus", "nohz_full"):
        if k in params:
            status, eff = _CMDLINE[k]
            found.append((status, f"{k}={params[k]}" if params[k] is not None else k, eff))
    if not found:
        return Check("cmdline", title, "ok",
                     "no numa=, mem=, isolcpus= or nohz_full=",
                     "numa=off, numa=fake= or mem= change the nodes numascope sees", "")
    status = "warn" if any(s == "warn" for s, _, _ in found) else "info"
    words = [w for _, w, _ in found]
    warn_words = [w for s, w, _ in found if s == "warn"]
    fix = (f"grubby --update-kernel=ALL --remove-args=\"{' '.join(warn_words)}\" && reboot"
           if warn_words else "")
    effect = " ".join(e.rstrip(".") + "." for _, _, e in found)
    return Check("cmdline", title, status, " ".join(words), effect, fix)


# -- all of them ---------------------------------------------------------------------------

CHECKS: tuple[str, ...] = ("governor", "boost", "smt", "thp", "numa_balancing", "hugepages",
                           "irqbalance", "memory_balance", "cgroup_cpus", "vm", "busy",
                           "cmdline")


def run_checks(root: str | Path | Tree = "/", topo: Any = None, live: bool | None = None,
               busy_seconds: float = BUSY_WINDOW_S) -> list[Check]:
    """Every readiness check on `root` (a path or a Tree). `live`: whether root is this
    running machine (default: root resolves to "/"); only then are processes sampled and
    the affinity mask read. A check that fails to read is reported unknown, never raised."""
    t = sysstate.tree_of(root)
    if live is None:
        live = t.live
    steps: list[tuple[str, Callable[[], Check]]] = [
        ("governor", lambda: check_governor(t)), ("boost", lambda: check_boost(t)),
        ("smt", lambda: check_smt(t, topo)), ("thp", lambda: check_thp(t)),
        ("numa_balancing", lambda: check_numa_balancing(t)),
        ("hugepages", lambda: check_hugepages(t)), ("irqbalance", lambda: check_irqbalance(t)),
        ("memory_balance", lambda: check_memory_balance(t, topo)),
        ("cgroup_cpus", lambda: check_cgroup(t, live)), ("vm", lambda: check_vm(t)),
        ("busy", lambda: check_busy(t, live, busy_seconds)),
        ("cmdline", lambda: check_cmdline(t)),
    ]
    out = []
    for cid, fn in steps:
        try:
            out.append(fn())
        except Exception as e:  # noqa: BLE001 — one unreadable file must not sink the rest
            out.append(Check(cid, cid, "unknown", f"could not read: {type(e).__name__}: "
                             f"{str(e)[:120]}", "", ""))
    return out


def problems(checks: list[dict[str, Any]] | list[Check]) -> list[Check]:
    """The checks that warn, from Check objects or stored dicts."""
    cs = [c if isinstance(c, Check) else Check.from_dict(c) for c in checks]
    return [c for c in cs if c.status == "warn"]
