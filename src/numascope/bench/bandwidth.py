"""Memory bandwidth: STREAM-class kernels on pinned threads over placed memory.

    from numascope.bench.bandwidth import measure
    r = measure(topo, kernel="triad")                       # all usable CPUs, compact
    r = measure(topo, kernel="read", cpus=[0, 1],
                memory={"policy": "bind", "nodes": [1]})     # remote read from node 1
    r.metric("bandwidth").median                             # GB/s, STREAM bytes, GB = 10^9

The hot loop, its timing and the validation of what it computed run in C (`_core.bw_run`);
this module sizes the arrays, picks CPUs and variants, turns seconds into both byte
conventions, sets implausibly fast repetitions aside (bw_outliers) and checks where the
pages went.

Timing: a repetition runs from the earliest thread's start to the latest thread's end, each
thread stamping its own clock, so a thread held up at the start (preempted) cannot shorten
the window. The metrics hold the repetitions kept; excluded ones are listed in
params["excluded_reps"] with a note.

Byte conventions, per element of one array (8-byte doubles):
    kernel  STREAM bytes   DRAM traffic, ordinary stores (write-allocate reads the target)
    read         8              8
    fill         8             16
    copy        16             24
    scale       16             24
    add         24             32
    triad       24             32
With streaming (non-temporal) stores there is no write-allocate: traffic = STREAM bytes."""

from __future__ import annotations

import functools
import math
from typing import Any

from numascope import _core, placement, sysstate
from numascope.bench.base import Case
from numascope.bench.bw_outliers import RULE, screen
from numascope.bench.bw_placement import check_placement
from numascope.bench.bw_sizes import (
    LLC_FACTOR,
    check_fits,
    check_hugetlb,
    default_array_bytes,
    format_bytes,
    mem_available,
)
from numascope.errors import MeasurementError, UserError
from numascope.profile import Profile
from numascope.results.record import BenchResult, Metric
from numascope.topology.model import Topology

FAMILY = "bandwidth"
KERNELS = ("read", "fill", "copy", "scale", "add", "triad")
ISAS = ("scalar", "avx2", "avx512")
NT_CHOICES = ("auto", "on", "off")
HUGE_CHOICES = ("none", "thp", "hugetlb")
ARRAYS = {"read": 1, "fill": 1, "copy": 2, "scale": 2, "add": 3, "triad": 3}
STREAM_BYTES = {"read": 8, "fill": 8, "copy": 16, "scale": 16, "add": 24, "triad": 24}
STORES = {"read": 0, "fill": 1, "copy": 1, "scale": 1, "add": 1, "triad": 1}
GB = 1e9
UNITS_NOTE = "GB = 10^9 bytes"
DEFAULT_REPS = 10
NUMA_BALANCING_NOTE = ("automatic NUMA balancing is on: it may migrate pages during the "
                       "measurement (echo 0 > /proc/sys/kernel/numa_balancing)")
QUICK_REPS = 5                 # 5 vs 5 is the least that a rank test can call significant
LATE_START_SHARE = 0.10        # threads starting further apart than this share of a rep: noted


def dram_bytes(kernel: str, nt: bool) -> int:
    """Bytes per element that really cross the memory bus: ordinary stores first read the
    target line (write-allocate), streaming stores do not."""
    return STREAM_BYTES[kernel] + (0 if nt else 8 * STORES[kernel])


def auto_isas() -> list[str]:
    """The ISAs isa="auto" times against each other: the vector ones this CPU has (the
    widest is not always the fastest for streaming: AVX2 beats AVX-512 on some parts)."""
    avail = _core.isa()
    vec = [i for i in avail if i != "scalar"]
    return vec or avail


@functools.cache
def _warn_once(msg: str) -> None:
    from numascope.console import warn
    warn(msg)


# -- validation of the inputs ---------------------------------------------------------------
def _check_cpus(topo: Topology, cpus: list[int]) -> list[int]:
    if not cpus:
        raise UserError("zero threads: give at least one CPU")
    return placement.check_cpus(topo, cpus)


def normalize_memory(topo: Topology, memory: dict[str, Any] | None) -> dict[str, Any]:
    """A complete memory spec with nodes checked against the topology (UserError if not)."""
    mem = dict(memory or {})
    mem.setdefault("policy", "first-touch")
    mem.setdefault("huge", "thp")
    if mem["policy"] not in ("first-touch", "bind", "interleave", "preferred",
                             "weighted-interleave"):
        raise UserError(f"unknown memory policy {mem['policy']!r}")
    if mem["huge"] not in HUGE_CHOICES:
        raise UserError(f"unknown page kind {mem['huge']!r} (choose from "
                        f"{', '.join(HUGE_CHOICES)})")
    nodes = [int(n) for n in mem.get("nodes") or []]
    have = topo.node_ids()
    for n in nodes:
        if n not in have:
            raise UserError(f"node {n} does not exist (nodes: "
                            f"{placement.format_cpulist(have) or 'none'})")
    if mem["policy"] != "first-touch" and not nodes:
        raise UserError(f"memory policy {mem['policy']} needs at least one node")
    mem["nodes"] = nodes
    if mem["policy"] == "weighted-interleave":
        mem = placement.check_weighted(topo, mem)
    return mem


def _variants(kernel: str, isa: str, nt: str) -> list[tuple[str, bool]]:
    """(isa, streaming stores) pairs to time, interleaved; the fastest is reported."""
    avail = _core.isa()
    if isa == "auto":
        isas = auto_isas()
    elif isa not in ISAS:
        raise UserError(f"unknown ISA {isa!r} (choose from auto, {', '.join(ISAS)})")
    elif isa not in avail:
        raise UserError(f"this CPU cannot run {isa} kernels (it has {', '.join(avail)})")
    else:
        isas = [isa]
    if nt not in NT_CHOICES:
        raise UserError(f"--nt must be one of {', '.join(NT_CHOICES)} (got {nt!r})")
    kinds = [False] if not STORES[kernel] else [False, True] if nt == "auto" else [nt == "on"]
    return [(i, k) for i in isas for k in kinds]


def variant_name(isa: str, nt: bool) -> str:
    return isa + ("-nt" if nt else "")


# -- one measurement --------------------------------------------------------------------------
def measure(topo: Topology, kernel: str = "triad", cpus: list[int] | None = None,
            memory: dict[str, Any] | None = None, size_bytes: int | None = None,
            reps: int = DEFAULT_REPS, isa: str = "auto", nt: str = "auto",
            warmup: int = 1, label: str | None = None, extra: dict[str, Any] | None = None,
            corrupt_index: int = -1) -> BenchResult:
    """Measure one kernel on pinned `cpus` (default: all usable, compact order) over arrays of
    `size_bytes` each (default: 4 × the LLC of those CPUs) placed by `memory`
    ({"policy": first-touch|bind|interleave|preferred, "nodes": [...], "huge": ...}).
    nt="auto" times ordinary and streaming stores, isa="auto" the vector ISAs this CPU has,
    all interleaved; the fastest (by median) is reported and every variant is kept as a
    metric "bandwidth[<isa>[-nt]]". Raises UserError on bad input and MeasurementError
    when the kernel's result or the page placement is wrong. `corrupt_index` is a test hook
    that corrupts one element on purpose."""
    if kernel not in KERNELS:
        raise UserError(f"unknown kernel {kernel!r} (choose from {', '.join(KERNELS)})")
    if reps < 1:
        raise UserError(f"repetitions must be at least 1 (got {reps})")
    cpus = _check_cpus(topo, cpus if cpus is not None else placement.select_cpus(topo))
    mem = normalize_memory(topo, memory)
    variants = _variants(kernel, isa, nt)
    notes: list[str] = []

    llc = topo.llc_bytes(cpus)
    if size_bytes is None:
        size_bytes = default_array_bytes(llc)
    elif size_bytes < 64 * 8:
        raise UserError(f"array size {size_bytes} B is too small (at least 512 B)")
    elif llc and size_bytes < LLC_FACTOR * llc:
        notes.append(f"arrays of {format_bytes(size_bytes)} are smaller than {LLC_FACTOR} × "
                     f"the LLC of these CPUs ({format_bytes(llc)}): caches inflate the result")
    n = size_bytes // 8
    total = ARRAYS[kernel] * n * 8
    check_fits(total, mem_available(), f"{kernel} with {ARRAYS[kernel]} arrays of "
               f"{format_bytes(size_bytes)}")
    if mem["huge"] == "hugetlb":
        check_hugetlb(ARRAYS[kernel], n * 8)
    if mem["policy"] == "bind":
        free = [topo.node(x).free_bytes for x in mem["nodes"]]
        if all(f is not None for f in free):
            nodes = placement.format_cpulist(mem["nodes"])
            check_fits(total, sum(free), f"binding to node(s) {nodes}", f"on node(s) {nodes}")

    if sysstate.numa_balancing():
        notes.append(NUMA_BALANCING_NOTE)
        _warn_once(NUMA_BALANCING_NOTE)   # on stderr once per process, in every result

    try:
        raw = _core.bw_run(kernel, cpus, n, reps, variants, memory=mem, warmup=warmup,
                           corrupt_index=corrupt_index)
    except ValueError as e:
        raise UserError(str(e)) from None
    if not raw["validated"]:
        where = f", first at element {raw['first_bad']}" if raw["first_bad"] >= 0 else ""
        what = "repetitions" if kernel == "read" else "elements"
        spot = f"; {raw['spot_bad']} spot-checked elements were wrong after their " \
            "repetition" if raw.get("spot_bad") else ""
        raise MeasurementError(
            f"{kernel} failed validation: {raw['bad_elements']} {what} differ from the "
            f"expected {raw['expected']!r}{where}{spot}")
    check_times(kernel, raw)

    cpu_nodes = [topo.cpu(c).node for c in cpus]
    ok, pnotes = check_placement(mem, cpu_nodes, raw["pages"], raw["pages_by_thread"],
                                 raw["sampled_pages"])
    notes.extend(pnotes)
    return _result(topo, kernel, cpus, mem, raw, variants, n, reps, warmup, nt, notes, ok,
                   cpu_nodes, label, extra or {})


def check_times(kernel: str, raw: dict) -> None:
    """MeasurementError for a repetition without a positive, finite time: its bandwidth
    would be infinite or negative, so it is an invalid repetition, not a fast one."""
    for (visa, vnt), times in zip(raw["variants"], raw["times"]):
        for r, t in enumerate(times):
            if not (math.isfinite(t) and t > 0):
                raise MeasurementError(
                    f"{kernel} {variant_name(visa, bool(vnt))}: repetition {r + 1} took {t!r} "
                    "s, no measurable time (clock fault or no work done): invalid repetition")


def _screen_variants(kernel: str, raw: dict, n: int, notes: list[str]
                     ) -> tuple[list[tuple[str, bool, list[float], list[float]]],
                                list[dict[str, Any]]]:
    """Per variant (isa, nt, kept seconds, kept GB/s), and the implausibly fast repetitions
    set aside (bw_outliers), each with a note."""
    per_variant = []
    excluded: list[dict[str, Any]] = []
    for (visa, vnt), times in zip(raw["variants"], raw["times"]):
        gbs = [STREAM_BYTES[kernel] * n / t / GB for t in times]
        s = screen(gbs)
        name = variant_name(visa, bool(vnt))
        for i in s.excluded:
            excluded.append({"variant": name, "rep": i, "gbs": gbs[i], "seconds": times[i],
                             "median_gbs": s.median})
        if s.excluded:
            shown = ", ".join(f"{gbs[i]:.1f}" for i in s.excluded)
            notes.append(f"{name}: {len(s.excluded)} of {len(gbs)} repetitions excluded as "
                         f"implausibly fast ({shown} GB/s against a median of "
                         f"{s.median:.1f} GB/s): {RULE}")
        per_variant.append((visa, bool(vnt), [times[i] for i in s.kept],
                            [gbs[i] for i in s.kept]))
    return per_variant, excluded


def _start_spread(raw: dict, notes: list[str]) -> float:
    """Largest gap between the first and the last thread to start a repetition (seconds),
    with a note when it was a sizeable share of the repetition (a thread held up)."""
    worst, share = 0.0, 0.0
    for starts, times in zip(raw.get("thread_starts", []), raw["times"]):
        for st, t in zip(starts, times):
            gap = max(st, default=0.0)
            worst = max(worst, gap)
            if t > 0:
                share = max(share, gap / t)
    if share > LATE_START_SHARE:
        notes.append(f"threads started up to {1e3 * worst:.2f} ms apart ({share:.0%} of a "
                     "repetition): one was held up (preempted?); the timing window covers it")
    return worst


def _result(topo: Topology, kernel: str, cpus: list[int], mem: dict[str, Any], raw: dict,
            variants: list[tuple[str, bool]], n: int, reps: int, warmup: int, nt_req: str,
            notes: list[str], placement_ok: bool, cpu_nodes: list[int | None],
            label: str | None, extra: dict[str, Any]) -> BenchResult:
    per_variant, excluded = _screen_variants(kernel, raw, n, notes)
    spread = _start_spread(raw, notes)
    # nt=auto: the faster store kind by median bandwidth, both kept
    chosen = max(per_variant, key=lambda v: sorted(v[3])[len(v[3]) // 2])
    visa, vnt, times, gbs = chosen
    dram_pe = dram_bytes(kernel, vnt)
    stores = "n/a" if not STORES[kernel] else ("streaming" if vnt else "ordinary")
    metrics = {
        "bandwidth": Metric("bandwidth", "GB/s", True, gbs,
                            f"STREAM bytes: {STREAM_BYTES[kernel]} B/element; {UNITS_NOTE}"),
        "dram_bandwidth": Metric("dram_bandwidth", "GB/s", True,
                                 [dram_pe * n / t / GB for t in times],
                                 f"DRAM traffic: {dram_pe} B/element ({stores} stores"
                                 f"{', write-allocate counted' if stores == 'ordinary' else ''})"
                                 f"; {UNITS_NOTE}"),
        "seconds": Metric("seconds", "s", False, list(times),
                          "per repetition, earliest thread start to latest thread end, "
                          "inside C"),
    }
    if len(per_variant) > 1:
        for v in per_variant:
            key = f"bandwidth[{variant_name(v[0], v[1])}]"
            kind = "n/a" if not STORES[kernel] else "streaming" if v[1] else "ordinary"
            metrics[key] = Metric(key, "GB/s", True, v[3],
                                  f"STREAM bytes, {v[0]}, {kind} stores; {UNITS_NOTE}")
        tried = ", ".join(variant_name(v[0], v[1]) for v in per_variant)
        notes.append(f"auto: timed {tried} interleaved; {variant_name(visa, vnt)} was fastest "
                     "(median) and is reported")
    threads = len(cpus)
    where = extra.get("where") or placement.format_cpulist(cpus)
    case = label or (f"{kernel} {visa}{'-nt' if vnt else ''} {threads}T "
                     f"{extra.get('policy', 'cpus')} {where}")
    params: dict[str, Any] = {
        "kernel": kernel, "isa": visa, "stores": stores, "nt": nt_req, "threads": threads,
        "variants": [variant_name(v[0], v[1]) for v in per_variant],
        "array_bytes": n * 8, "arrays": ARRAYS[kernel], "elements": n, "reps": reps,
        "warmup": warmup, "stream_bytes_per_element": STREAM_BYTES[kernel],
        "dram_bytes_per_element": dram_pe, "units": UNITS_NOTE,
        "llc_bytes": topo.llc_bytes(cpus), "init_seconds": raw["init_seconds"],
        "timing": "earliest thread start to latest thread end",
        "excluded_reps": excluded, "start_spread_max_s": spread,
    }
    params.update(extra)
    place = {
        "cpus": list(cpus), "cpulist": placement.format_cpulist(cpus),
        "cpu_nodes": cpu_nodes, "memory": mem,
        "pages_per_node": {int(k): v for k, v in raw["pages"].items()},
        "pages_by_thread": [{int(k): v for k, v in d.items()} for d in raw["pages_by_thread"]],
        "sampled_pages": raw["sampled_pages"],
        # share of all arrays' mapped bytes on huge pages, and per array; -1: unknown
        "huge_fraction": raw["huge_fraction"], "huge_by_array": raw["huge_by_array"],
        "ok": placement_ok,
    }
    return BenchResult(FAMILY, case, params, metrics, place, notes, validated=True)


# -- sweeps -----------------------------------------------------------------------------------
def thread_counts(n: int, dense_up_to: int = 16) -> list[int]:
    """1..n when small; else powers of two, their midpoints, and n."""
    if n <= dense_up_to:
        return list(range(1, n + 1))
    counts = {1, n}
    p = 1
    while p < n:
        counts.update({p, p + p // 2})
        p *= 2
    return sorted(c for c in counts if c <= n)


def _merge(cases: list[Case], seen: dict[tuple, Case], key: tuple, case: Case, field: str,
           value: str) -> None:
    """Append `case` unless an identical measurement is already listed; then only note that
    the existing one also stands for `value` (e.g. another policy giving the same CPUs)."""
    if key in seen:
        seen[key].params[field].append(value)
        return
    seen[key] = case
    cases.append(case)


def scaling_cases(topo: Topology, kernels: list[str], where: str = "all",
                  policies: tuple[str, ...] = placement.POLICIES, counts: str = "all",
                  max_threads: int | None = None, **common: Any) -> list[Case]:
    """One case per (kernel, policy, thread count ≤ max_threads): the memory-wall curves."""
    cases: list[Case] = []
    seen: dict[tuple, Case] = {}
    for kernel in kernels:
        for policy in policies:
            try:
                order = placement.order(topo, where, policy)
            except UserError:
                continue  # e.g. per-l3 on a machine without L3 information
            steps = thread_counts(len(order)) if counts == "all" else \
                thread_counts(len(order), dense_up_to=4)
            for t in steps:
                if max_threads is not None and t > max_threads:
                    break
                cpus = order[:t]
                key = (kernel, tuple(sorted(cpus)), str(common.get("memory")))
                label = f"{kernel} {policy} {t}T"
                _merge(cases, seen, key, Case(label, {
                    "kernel": kernel, "cpus": cpus, "sweep": "scaling", "policy": policy,
                    "policies": [policy], "where": where, **common}), "policies", policy)
    return cases


def domain_cases(topo: Topology, kernels: list[str], **common: Any) -> list[Case]:
    """Each package, each NUMA node (memory bound to it) and each L3 alone, all its CPUs."""
    doms = [f"S{p.id}" for p in topo.packages] + [f"N{n.id}" for n in topo.nodes] + \
        [f"L3:{d.index}" for d in topo.l3s]
    cases: list[Case] = []
    seen: dict[tuple, Case] = {}
    for kernel in kernels:
        for dom in doms:
            try:
                cpus = placement.order(topo, dom, "compact")
            except UserError:
                continue  # a memory-only node or a domain with no usable CPU
            mem = common.get("memory")
            # a node alone: memory bound to it (on a one-node machine that is first touch)
            if dom.startswith("N") and not mem and len(topo.nodes) > 1:
                mem = {"policy": "bind", "nodes": [int(dom[1:])]}
            key = (kernel, tuple(sorted(cpus)), str(mem))
            params = {**common, "kernel": kernel, "cpus": cpus, "sweep": "per-domain",
                      "domain": dom, "domains": [dom], "where": dom, "policy": "compact",
                      "memory": mem}
            _merge(cases, seen, key, Case(f"{kernel} {dom} {len(cpus)}T", params),
                   "domains", dom)
    return cases


def build_cases(topo: Topology, kernels: list[str] | None = None, scaling: bool = False,
                per_domain: bool = False, where: str = "all", policy: str = "compact",
                threads: int | None = None, cpus: list[int] | None = None,
                memory: dict[str, Any] | None = None, size_bytes: int | None = None,
                reps: int = DEFAULT_REPS, isa: str = "auto", nt: str = "auto") -> list[Case]:
    """The cases `numascope bw` measures for its options. Input is checked here, before any
    measurement starts."""
    kernels = list(kernels or ["triad"])
    for k in kernels:
        if k not in KERNELS:
            raise UserError(f"unknown kernel {k!r} (choose from {', '.join(KERNELS)}, all)")
    if reps < 1:
        raise UserError(f"repetitions must be at least 1 (got {reps})")
    if memory:
        normalize_memory(topo, memory)
    _variants(kernels[0], isa, nt)  # check isa/nt once, early
    if size_bytes is not None:
        avail = mem_available()
        for k in kernels:
            check_fits(ARRAYS[k] * size_bytes, avail,
                       f"{k} with {ARRAYS[k]} arrays of {format_bytes(size_bytes)}")
    common = {"memory": memory, "size_bytes": size_bytes, "reps": reps, "isa": isa, "nt": nt}
    cases: list[Case] = []
    if scaling:
        if threads is not None and threads < 1:
            raise UserError(f"threads must be at least 1 (got {threads})")
        cases += scaling_cases(topo, kernels, where=where, max_threads=threads, **common)
    if per_domain:
        cases += domain_cases(topo, kernels, **common)
    if not scaling and not per_domain:
        chosen = _check_cpus(topo, cpus) if cpus is not None else \
            placement.select_cpus(topo, where, policy, threads)
        for k in kernels:
            cases.append(Case(f"{k} {policy} {len(chosen)}T", {
                "kernel": k, "cpus": chosen, "sweep": "single", "policy": policy,
                "where": where, **common}))
    return cases


def suite_cases(topo: Topology, profile: str = "quick") -> list[Case]:
    """Cases for `numascope run`. quick: triad scaling (compact and one-per-L3, thinned on
    big machines) + triad per domain, 3 repetitions; full: every kernel scaling under
    every policy + every kernel per domain, 10 repetitions."""
    if profile == "quick":
        common = {"memory": None, "size_bytes": None, "reps": QUICK_REPS, "isa": "auto",
                  "nt": "auto"}
        cases = scaling_cases(topo, ["triad"], policies=("compact", "per-l3"), counts="thin",
                              **common)
        return cases + domain_cases(topo, ["triad"], **common)
    if profile == "full":
        common = {"memory": None, "size_bytes": None, "reps": DEFAULT_REPS, "isa": "auto",
                  "nt": "auto"}
        return scaling_cases(topo, list(KERNELS), **common) + \
            domain_cases(topo, list(KERNELS), **common)
    raise UserError(f"unknown profile {profile!r} (quick or full)")


class Bandwidth:
    """The bandwidth family in the Benchmark shape (bench.base). A case identical to one
    already measured by this instance (same kernel, CPUs, memory, size, repetitions, code —
    e.g. a per-domain case equal to the top of a scaling curve) reuses that measurement,
    relabelled and with a note saying so."""

    family = FAMILY
    stage = "bandwidth"     # its name in `numascope run`
    title = "memory bandwidth: thread scaling and per-domain"

    def suite_cases(self, topo: Topology, profile: Profile) -> list[Case]:
        """The cases `numascope run` measures under this profile."""
        return suite_cases(topo, profile.name)

    def __init__(self) -> None:
        self._done: dict[str, BenchResult] = {}

    def cases(self, topo: Topology, **options: Any) -> list[Case]:
        return build_cases(topo, **options)

    def measure(self, topo: Topology, case: Case) -> BenchResult:
        p = case.params
        extra = {k: v for k, v in p.items()
                 if k in ("sweep", "policy", "policies", "where", "domain", "domains")}
        key = repr([p.get(k) for k in ("kernel", "memory", "size_bytes", "reps", "isa", "nt")]
                   + [sorted(p.get("cpus") or [])])
        if p.get("cpus") and key in self._done:
            prev = BenchResult.from_dict(self._done[key].to_dict())
            prev.case = case.label
            prev.params = {k: v for k, v in prev.params.items()
                           if k not in ("sweep", "policy", "policies", "where", "domain",
                                        "domains")} | extra
            prev.notes.append(f"same measurement as case '{self._done[key].case}' "
                              "(identical CPUs, memory and size)")
            return prev
        r = measure(topo, kernel=p.get("kernel", "triad"), cpus=p.get("cpus"),
                    memory=p.get("memory"), size_bytes=p.get("size_bytes"),
                    reps=p.get("reps", DEFAULT_REPS), isa=p.get("isa", "auto"),
                    nt=p.get("nt", "auto"), label=case.label, extra=extra)
        self._done[key] = r
        return r
