"""`lat --chains`: N independent pointer chases walked in lockstep by one pinned thread
(`_core.lat_chains`, families/latency/chains.c), one case per count, placed as `lat` places
its buffer. Laid out as multichase lays out its parallel chases by default (one arena,
every chain through every element at a slot of its own: the misses in flight are the
core's); `layout="regions"` (each chain over its own 1/N of the buffer) is the labelled
variant. The knee and Little's law: mlp.py."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from numascope import steady
from numascope.benchmark import Case, core_errors
from numascope.errors import UserError
from numascope.families.latency import distribution, mlp
from numascope.families.latency.bench import (
    FAMILY,
    LatencyParams,
    _core,
    _huge_text,
    format_bytes,
)
from numascope.families.latency.options import CHAIN_LAYOUTS, TABLE
from numascope.results.record import BenchResult, Metric
from numascope.steady import Steady
from numascope.topology.model import Topology

MAX_CHAINS = 64       # chains.c's CHAINS_MAX: one unrolled walk per count
CHAIN_LAYOUT = TABLE["chain_layout"]


@dataclass(frozen=True)
class ChainsParams:
    """`chains` chases in lockstep over the checked idle chase `base` (its CPU, buffer,
    placement, mode, stride, samples; base.loads are per sample over all chains)."""

    base: LatencyParams
    chains: int
    role: str = ""          # run's cases: which core, by role ("L3 kind 2"), not by number
    layout: str = CHAIN_LAYOUT.default     # "arena" (multichase's) or "regions"

    kind = "chains"

    @property
    def need_bytes(self) -> int:
        return self.base.need_bytes

    @property
    def cpu(self) -> int | None:
        return self.base.cpu

    @property
    def bytes(self) -> int | None:
        """The buffer every chain shares (arena: all of it; regions: each its own part)."""
        return self.base.bytes

    def label(self) -> str:
        # the regions layout keeps the name its records had before the arena layout came;
        # the arena's figures are another method, so another name (never compared as one)
        return f"chains={self.chains}{layout_tag(self.layout)} {self.base.label()}" + \
            (f" {self.role}" if self.role else "")


def layout_tag(layout: str) -> str:
    """What a case name carries of its layout: " arena", or nothing for regions (the
    layout every record had before the arena came)."""
    return "" if layout == "regions" else f" {layout}"


def check_layout(n: int, stride: int, nbytes: int, layout: str) -> None:
    """UserError where `n` chains do not fit the layout: the arena holds stride/8 chains
    (a slot each per element); every chain needs two lines."""
    if layout not in CHAIN_LAYOUTS:
        raise UserError(f"--chain-layout {layout}: one of {', '.join(CHAIN_LAYOUTS)}")
    if layout == "arena" and n > stride // 8:
        raise UserError(f"--chains {n}: the arena layout holds at most {stride // 8} chains "
                        f"at --stride {stride} (one 8 B slot each per element); give "
                        f"--stride {_pow2_at_least(8 * n)} or more, or --chain-layout regions")
    lines = nbytes // stride // (1 if layout == "arena" else n)
    if lines < 2:
        raise UserError(f"--chains {n}: a buffer of {format_bytes(nbytes)} gives each chain "
                        f"fewer than two {stride} B lines")


def _pow2_at_least(v: int) -> int:
    return 1 << (v - 1).bit_length()


def cases(topo: Topology, base: LatencyParams, counts: list[int],
          modes: list[str] | None = None, layout: str = CHAIN_LAYOUT.default) -> list[Case]:
    """One checked case per mode and chain count, over base's buffer."""
    out = []
    for m in modes or [base.mode]:
        p = replace(base, kind="idle", mode=m).checked(topo)
        for n in counts:
            if not 1 <= n <= MAX_CHAINS:
                raise UserError(f"--chains {n}: from 1 to {MAX_CHAINS} chains")
            check_layout(n, p.stride, p.bytes or 0, layout)
            out.append(Case(f"{m} {format_bytes(p.bytes or 0)} chains={n}{layout_tag(layout)}",
                            ChainsParams(p, n, layout=layout)))
    return out


SUITE_COUNTS = (1, 2, 4, 8, 16, 32)
STEP_METHOD = ("groups of lockstep steps (a load on every chain) timed by rdtscp;lfence "
               "(one step per group where a step lasts >= 4x the timer's overhead), the "
               "mean overhead of empty intervals subtracted; log-linear buckets of TSC "
               "ticks (32 per power of two); a step's time is the latency each chain saw "
               "with all chains' misses in flight")


def l3_kind_cpus(topo: Topology) -> list[int]:
    """The first usable CPU of the first L3 domain of each kind (size and CPU count: the
    big and small L3s of a chiplet part with stacked cache, the domains of a hybrid one);
    without L3 domains, the first usable CPU."""
    usable = set(topo.usable_cpus())
    seen: dict[tuple[int, int], int] = {}
    for d in topo.l3s:
        first = next((c for c in d.cpus if c in usable), None)
        if first is not None:
            seen.setdefault((d.size_bytes, len(d.cpus)), first)
    return sorted(seen.values()) or topo.usable_cpus()[:1]


def suite_cases(topo: Topology, samples: int, nbytes: int | None = None,
                loads: int | None = None) -> list[Case]:
    """`run`'s cases: SUITE_COUNTS chains over a DRAM working set (lat's default, or the
    quick profile's `nbytes` and `loads`), on the first core of each L3 kind."""
    out = []
    # the case names the role (the first core of the first L3 of a kind), never the CPU
    # number: a fleet's nodes bound to other CPUs measure the same case (the CPU is in
    # params and placement)
    for k, cpu in enumerate(l3_kind_cpus(topo)):
        base = LatencyParams(cpu=cpu, samples=samples, bytes=nbytes, loads=loads,
                             default_cpu=True)
        role = "" if k == 0 else f"L3 kind {k + 1}"
        out += [Case(f"mlp {role or 'first core'} {c.label}",
                     replace(c.params, role=role))
                for c in cases(topo, base, list(SUITE_COUNTS))]
    return out


def run(topo: Topology, cp: ChainsParams) -> BenchResult:
    """One chain count's measurement; with --samples auto, chases of a few samples each,
    every one over its own fresh buffer, until the ns per load is steady over them."""
    p, n = cp.base, cp.chains
    if isinstance(p.samples, Steady):
        res, units = steady.gather(
            lambda k: run(topo, replace(cp, base=replace(p, samples=k))), p.samples,
            "latency", count="samples")
        # every unit's lockstep steps, one histogram, and the tail read from it
        distribution.merge_units(res, units, unit="lockstep step")
        return res
    cpu, pages = p.cpu or 0, p.memory.pages
    # every parameter from here (the option table's defaults, resolved by LatencyParams):
    # chains.c has none of its own, and echoes what it used, which the record keeps
    with core_errors("the buffer"):
        r = _core().lat_chains(bytes=p.bytes, cpu=cpu, chains=n, memory=p.memory.to_core(),
                               mode=p.mode, window=p.window, samples=p.samples,
                               loads=p.loads, stride=p.stride, seed=p.seed,
                               hist_groups=distribution.DIST_GROUPS, hist_group=p.dist_group,
                               layout=cp.layout)
    used = r["params"]
    ns, steps = r["ns"], r["steps"]
    lpn = [n / v for v in ns]
    # the steps' tail: a step is the latency each chain saw with n misses in flight (with
    # one chain, single loads as lat's)
    tail, dist = distribution.from_core(r.get("hist"), unit="lockstep step",
                                        method=STEP_METHOD)
    if cp.layout == "arena":
        where = (f"each through all {r['lines']} elements of the buffer in its own order, at "
                 f"its own 8 B slot of each {p.stride} B element (multichase's layout)")
    else:
        where = (f"of {r['lines']} lines, each in its own "
                 f"{format_bytes(r['lines'] * p.stride)} of the buffer, its pointer at the "
                 "start of each element (the regions layout)")
    notes = [(f"{n} chain{'s' if n != 1 else ''} {where}, walked in lockstep; "
              f"{steps} steps per sample")]
    if r["cycle_walked"]:
        notes.append(f"every chain walked in full: {r['lines']} lines each, every line once")
    if pages != "none" and 0 <= r["huge_fraction"] < 0.5:
        notes.append(f"asked for {pages} but the kernel gave huge pages for only "
                     f"{r['huge_fraction']:.0%} of the buffer")
    metrics = {
        "latency": Metric("latency", "ns", False, list(ns),
                          f"ns per load of each chain (one lockstep step of {n} loads), "
                          f"one pointer per {p.stride} B, one value per timed sample"),
        "loads_per_ns": Metric("loads_per_ns", "loads/ns", True, lpn,
                               f"{n} chains / ns per step: the loads the core completes"),
        "bandwidth": Metric("bandwidth", "GB/s", True, [v * mlp.LINE for v in lpn],
                            f"loads per ns x {mlp.LINE} B (one line per load), 10^9 B/s"),
        "tsc_cycles": Metric("tsc_cycles", "TSC cycles", False, list(r["tsc"]),
                             "time-stamp-counter ticks per step (not core cycles)"),
        **tail,
    }
    return BenchResult(
        family=FAMILY, case=cp.label(),
        params={"kind": "chains", "chains": used["chains"], "bytes": used["bytes"],
                "mode": used["mode"], "pages": pages, "cpu": used["cpu"],
                "cpu_default": p.default_cpu, "node": p.node, "samples": used["samples"],
                "steps_per_sample": steps, "loads_per_sample": steps * n,
                "lines_per_chain": r["lines"], "layout": used["layout"],
                "window": used["window"] if used["mode"] == "tlb" else None,
                "stride": used["stride"], "seed": used["seed"]},
        metrics=metrics,
        placement={"cpus": [cpu], "memory": p.memory.to_dict(), "pages_per_node": r["where"],
                   "huge_fraction": r["huge_fraction"],
                   "pages": _huge_text(pages, r["huge_fraction"])},
        notes=notes, distributions={"latency": dist} if dist else {})


# -- the knee per group of counts -----------------------------------------------------------

def group_key(r: BenchResult) -> tuple:
    """The results of one chain-count series share these parameters (all but the count)."""
    q = r.params
    return tuple(str(q.get(k, "regions" if k == "layout" else None))
                 for k in ("cpu", "node", "bytes", "mode", "pages", "stride", "layout"))


def series(results: list[BenchResult]) -> list[list[BenchResult]]:
    """The chain-count series among `results`, each sorted by count, in first-seen order."""
    groups: dict[tuple, list[BenchResult]] = {}
    for r in results:
        if r.family == FAMILY and r.params.get("kind") == "chains":
            groups.setdefault(group_key(r), []).append(r)
    return [sorted(g, key=lambda r: r.params["chains"]) for g in groups.values()]


def knee_of(rs: list[BenchResult]) -> mlp.Knee | None:
    """The knee from the best (lowest) sample of each count, as multichase reports its
    best sample: a neighbour on the host only ever adds time, and a disturbed 1-chain
    median would inflate Little's product (the medians stay in the table)."""
    return mlp.knee([mlp.Point(r.params["chains"], r.metrics["latency"].min) for r in rs])


def describe(rs: list[BenchResult]) -> str:
    """One series in words: where it ran ("cpu 0, node 1 memory, 1 GiB tlb")."""
    q = rs[0].params
    where = "first-touch memory" if q.get("node") is None else f"node {q['node']} memory"
    return f"cpu {q['cpu']}, {where}, {format_bytes(q['bytes'])} {q['mode']}, " \
           f"stride {q['stride']} B, {q.get('layout', 'regions')} layout"


def summaries(results: list[BenchResult]) -> list[dict[str, Any]]:
    """Per series: its parameters, per count the figures, and the knee (JSON: `mlp`)."""
    out = []
    for rs in series(results):
        k = knee_of(rs)
        out.append({"series": describe(rs), "cpu": rs[0].params["cpu"],
                    "node": rs[0].params.get("node"), "bytes": rs[0].params["bytes"],
                    "mode": rs[0].params["mode"],
                    "counts": [{"chains": r.params["chains"],
                                "ns_per_load": r.metrics["latency"].median,
                                "best_ns_per_load": r.metrics["latency"].min,
                                "loads_per_ns": r.metrics["loads_per_ns"].median,
                                "gbs": r.metrics["bandwidth"].median} for r in rs],
                    "knee": k.to_dict() if k else None, "knee_from": "best sample"})
    return out


def print_table(results: list[BenchResult], console) -> None:
    """Per series a table (chains, ns per load, loads per ns, GB/s, gain), then the knee
    and Little's law's arithmetic."""
    from rich import box
    from rich.table import Table
    for rs in series(results):
        k = knee_of(rs)
        gains = dict(k.gains) if k else {}
        t = Table(title=f"Memory-level parallelism: chains in lockstep ({describe(rs)})",
                  box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0))
        for c in ("chains", "ns per load", "best ns", "loads per ns", "best", "GB/s",
                  "best GB/s", "gain", "TSC cyc/step"):
            t.add_column(c, justify="right")
        for r in rs:
            n = r.params["chains"]
            g = gains.get(n)
            t.add_row(str(n), f"{r.metrics['latency'].median:.1f}",
                      f"{r.metrics['latency'].min:.1f}",
                      f"{r.metrics['loads_per_ns'].median:.4f}",
                      f"{r.metrics['loads_per_ns'].max:.4f}",
                      f"{r.metrics['bandwidth'].median:.2f}",
                      f"{r.metrics['bandwidth'].max:.2f}",
                      "" if g is None else f"{g:+.0%}",
                      f"{r.metrics['tsc_cycles'].median:.0f}")
        console.print(t)
        console.print("ns per load: one lockstep step (a load on every chain), median and "
                      "best of the samples; loads per ns = chains / ns; GB/s at "
                      f"{mlp.LINE} B per load; gain: best throughput over the count before; "
                      "the knee from the best samples (as multichase reports); the tail of "
                      "single steps (latency_p50 to latency_p999) in --json and --plot",
                      markup=False)
        if k is None:
            console.print("one chain count: give several (e.g. --chains 1,2,4,8,16) for "
                          "the knee", markup=False)
            continue
        console.print(f"[bold]{k.headline()}[/]")
        console.print(f"  {k.rule()}", markup=False)
        console.print(f"  {k.arithmetic()}", markup=False)
