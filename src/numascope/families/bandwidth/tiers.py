"""Bandwidth over an interleave ratio between a DRAM node and a memory tier (a CPU-less CXL
or HBM node): where does adding the tier stop helping?

    numascope bw --tier-sweep              # the CPUs' DRAM node and its nearest CPU-less node
    numascope bw --tier-sweep 0,2 --ratios 1:0,3:1,1:1,1:3,0:1,sys

Each ratio a:b is a real placement: 1:0 and 0:1 bind the arrays to one node; a mix puts a
of every a+b pages on the DRAM node and b on the tier, placed by numascope granule by granule
(per-task kernel weights would mean writing sysfs, which numascope never does); "sys" is
the kernel's MPOL_WEIGHTED_INTERLEAVE with the system weights where the kernel has it. The
share of pages each node really holds is read back with move_pages and must be within the
tolerance of the share asked, else the point is an error, not a result.

The measuring is a function with bandwidth.run's signature (topology, BandwidthParams,
label), so the sweep can be tested on a replayed topology with a fake one (and a fake page
locator)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numascope import placement
from numascope.benchmark import Case
from numascope.errors import MeasurementError, Unavailable, UserError
from numascope.families.bandwidth.bench import BandwidthParams
from numascope.families.bandwidth.options import (
    DEFAULT_RATIOS,
    SYSTEM,
    TIER_MIN_ARRAY_BYTES,
    check_ratios,
)
from numascope.families.bandwidth.sizes import default_array_bytes
from numascope.memspec import MemorySpec
from numascope.options import DEFAULT_PAGES
from numascope.pages import achieved_fractions, check_fractions
from numascope.results.record import BenchResult
from numascope.topology import tiers as tiermod
from numascope.topology.model import Topology

MIN_ARRAY_BYTES = TIER_MIN_ARRAY_BYTES   # the default size's floor (options.py says why)
Measure = Callable[..., BenchResult]


def parse_ratios(text: str | None) -> list[str]:
    """"1:0,3:1,sys" → ["1:0", "3:1", "sys"] (each a:b in lowest terms, not 0:0); None: the
    default ratios. The rule is --ratios' own (options.check_ratios)."""
    return check_ratios(text or list(DEFAULT_RATIOS))


def pick_nodes(topo: Topology, text: str | None, cpus: list[int]) -> tuple[int, int, str]:
    """(DRAM node, tier node, how they were chosen). `text` "D,T" names them; by default
    the DRAM node is the node of the first CPU used and the tier its nearest CPU-less memory
    node (else its nearest other memory node)."""
    mem_nodes = tiermod.memory_nodes(topo)
    if text and text != "auto":
        nodes = placement.parse_nodes(topo, text)
        if len(nodes) != 2 or nodes[0] == nodes[1]:
            raise UserError(f"--tier-sweep {text}: give two nodes, DRAM first (e.g. 0,2)")
        for n in nodes:
            if n not in mem_nodes:
                raise UserError(f"node {n} has no memory")
        return nodes[0], nodes[1], "as given"
    dram = topo.cpu(cpus[0]).node
    if dram is None or dram not in mem_nodes:
        raise UserError(f"CPU {cpus[0]} has no local memory node: name the nodes, "
                        "e.g. --tier-sweep 0,2")
    tier = tiermod.nearest_cpuless(topo, dram)
    if tier is not None:
        return dram, tier, f"N{dram} (local to CPU {cpus[0]}) and its nearest CPU-less node"
    others = [n for n in mem_nodes if n != dram]
    if not others:
        raise Unavailable(f"the ratio sweep needs a second memory node; this machine has "
                          f"one (N{dram})")
    other = min(others, key=lambda n: (topo.distance(dram, n) or 1 << 30, n))
    return dram, other, (f"no CPU-less memory node: N{dram} and its nearest other memory "
                         f"node N{other}")


def ratio_memory(dram: int, tier: int, ratio: str, pages: str = DEFAULT_PAGES) -> MemorySpec:
    """The memory spec that realises one ratio."""
    if ratio == SYSTEM:
        return MemorySpec("weighted-interleave", (dram, tier), pages)
    a, b = (int(x) for x in ratio.split(":"))
    if b == 0:
        return MemorySpec("bind", (dram,), pages)
    if a == 0:
        return MemorySpec("bind", (tier,), pages)
    return MemorySpec("weighted-interleave", (dram, tier), pages, weights=(a, b))


def asked_share(topo: Topology, dram: int, tier: int, ratio: str) -> float:
    """Share of the pages the ratio puts on the DRAM node."""
    if ratio == SYSTEM:
        w = topo.tiering.interleave_weights
        a, b = w.get(dram, 1), w.get(tier, 1)
    else:
        a, b = (int(x) for x in ratio.split(":"))
    return a / (a + b)


def kernel_line(topo: Topology, dram: int, tier: int) -> str:
    """One line on the kernel's weighted interleave, for the sweep's output."""
    tg = topo.tiering
    if not tg.weighted_interleave:
        return ("kernel weighted interleave: not in this kernel (Linux >= 6.9); the ratios "
                "are placed by numascope")
    w = tg.interleave_weights
    return (f"kernel weighted interleave: available, system weights N{dram}:{w.get(dram, 1)} "
            f"N{tier}:{w.get(tier, 1)}; ratios other than '{SYSTEM}' are placed by numascope "
            "(per-task weights would need writing sysfs)")


def sweep_cases(topo: Topology, dram: int, tier: int, ratios: list[str], kernels: list[str],
                cpus: list[int], base: BandwidthParams | None = None) -> list[Case]:
    """One case per (kernel, ratio), each carrying its BandwidthParams, checked before
    anything is measured. `base` gives the size (default: 4 × LLC, at least
    MIN_ARRAY_BYTES), repetitions, code and page kind."""
    base = base or BandwidthParams()
    if SYSTEM in ratios:
        placement.check_weighted(topo, {"nodes": [dram, tier]})  # Unavailable if missing
    size = base.size_bytes
    if size is None:
        size = max(default_array_bytes(topo.llc_bytes(cpus)), MIN_ARRAY_BYTES)
    cases = []
    for k in kernels:
        for r in ratios:
            share = asked_share(topo, dram, tier, r)
            p = BandwidthParams(
                kernel=k, cpus=tuple(cpus), size_bytes=size, reps=base.reps, isa=base.isa,
                nt=base.nt, warmup=base.warmup,
                memory=ratio_memory(dram, tier, r, base.memory.pages),
                sweep="tier-ratio", policy="cpus",
                extra=(("ratio", r), ("dram_node", dram), ("tier_node", tier),
                       ("dram_share", share)))
            cases.append(Case(f"{k} N{dram}:N{tier} {r}", p.checked(topo)))
    return cases


def verify_share(res: BenchResult, dram: int, tier: int, share: float) -> float:
    """The DRAM node's share of the sampled pages; MeasurementError when it is not the
    share asked (within the tolerance) or pages sit on a third node."""
    pages = res.placement.get("pages_per_node") or {}
    sampled = sum(v for k, v in pages.items() if int(k) >= 0)
    if not sampled:
        raise MeasurementError(f"{res.case}: page locations unknown, the ratio cannot be "
                               "verified")
    want = {"policy": "weighted-interleave", "nodes": [dram, tier],
            "weights": [share, 1 - share]}
    check_fractions(want, pages, sampled)
    return achieved_fractions(pages).get(dram, 0.0)


class TierSweep:
    """The ratio sweep in the Benchmark shape; results are bandwidth-family records with
    params sweep="tier-ratio", ratio, dram_node, tier_node, dram_share and
    achieved_dram_share."""

    family = "bandwidth"

    def __init__(self, measure: Measure | None = None) -> None:
        if measure is None:
            from numascope.families.bandwidth.bench import run
            measure = run
        self._measure = measure

    def measure(self, topo: Topology, case: Case) -> BenchResult:
        p: BandwidthParams = case.params  # type: ignore[assignment]
        res = self._measure(topo, p, label=case.label)
        x = dict(p.extra)
        got = verify_share(res, x["dram_node"], x["tier_node"], x["dram_share"])
        res.params["achieved_dram_share"] = got
        return res


def summary(results: list[BenchResult]) -> list[dict[str, Any]]:
    """One row per sweep point: ratio, shares asked and achieved, bandwidth best/median."""
    rows = []
    for r in results:
        p = r.params
        if p.get("sweep") != "tier-ratio":
            continue
        bw = r.metrics["bandwidth"]
        rows.append({"kernel": p["kernel"], "ratio": p["ratio"], "dram_node": p["dram_node"],
                     "tier_node": p["tier_node"], "dram_share": p["dram_share"],
                     "achieved_dram_share": p.get("achieved_dram_share"),
                     "best": bw.best, "median": bw.median, "unit": bw.unit})
    return rows
