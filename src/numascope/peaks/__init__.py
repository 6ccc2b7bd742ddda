"""Theoretical peaks — FLOP/s, DRAM, inter-socket links — each with its formula, its source
and, when it cannot be known here, the reason.

    summary(topo, memory="12x DDR5-4800", links="xgmi:4x16@32", clock=...) -> dict
    run_summary(topo, results, clock_ghz=None, memory=None, links=None)   # a run's

The summary is computed once per run, from a clock it is given (it never measures one);
everything else (the peak command, the run, the report) reads that one dict.
Each entry is {"value": float | None, "unit", "formula", "source", "origin", "status",
"reason", "notes"}; status is "known", "assumed" (rests on a stated assumption) or
"unknown"; origin says who gave the figures the peak rests on: "user" (--memory, --links,
--clock), "smbios" (the firmware's DIMM table), "measured" (the clock numascope measured),
None when the peak is unknown. "source" says more precisely where (the flag, the SMBIOS
path or tool, the microarchitecture)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from numascope.errors import Unavailable
from numascope.peaks import dram as _dram
from numascope.peaks import links as _links
from numascope.peaks.flops import flops_peak_gflops, flops_per_cycle
from numascope.peaks.smbios import read_slots
from numascope.topology.files import Tree
from numascope.topology.model import Topology

__all__ = [
    "CLOCK_ALL_BUSY",
    "CLOCK_GIVEN",
    "CLOCK_SINGLE",
    "cross_socket_pairs",
    "disagreements",
    "dram_peak",
    "flops_peak",
    "links_peak",
    "peak_clock",
    "physical_cores",
    "run_summary",
    "summary",
]


CLOCK_ALL_BUSY = "measured, all cores busy"
CLOCK_SINGLE = "measured, one CPU alone"
CLOCK_GIVEN = "given, not measured"
SINGLE_CLOCK_NOTE = ("the all-cores clock was not measured, so the peak uses a single CPU's "
                     "clock: with every core busy the clock is usually lower, so this peak "
                     "may be too high")


def peak_clock(clock: dict[str, Any] | None) -> tuple[float | None, str]:
    """(GHz, what that clock is) for the FLOP/s peak: a stated clock, else the all-cores
    clock, else a single CPU's clock, labelled by clock["labels"][key] when the caller says
    where it came from (e.g. "measured, one CPU alone at run start")."""
    c = clock or {}
    labels = c.get("labels") or {}
    if c.get("given"):
        return c.get("all_busy_ghz"), CLOCK_GIVEN
    if c.get("all_busy_ghz"):
        return c["all_busy_ghz"], labels.get("all_busy_ghz", CLOCK_ALL_BUSY)
    if c.get("single_ghz"):
        return c["single_ghz"], labels.get("single_ghz", CLOCK_SINGLE)
    return None, "not measured"


def _unknown(unit: str, reason: str, **extra: Any) -> dict[str, Any]:
    return {"value": None, "unit": unit, "status": "unknown", "reason": reason,
            "formula": "", "source": "", "origin": None, "notes": [], **extra}


def physical_cores(topo: Topology, cpus: list[int] | None = None) -> int:
    """Cores with at least one usable CPU (SMT siblings share the FMA units)."""
    wanted = set(topo.usable_cpus() if cpus is None else cpus)
    cores = {(c.package, c.core) if c.core is not None else ("cpu", c.id)
             for c in topo.cpus if c.id in wanted}
    return len(cores)


def flops_peak(topo: Topology, ghz: float | None, root: str | Path | Tree = "/",
               ghz_source: str = CLOCK_ALL_BUSY) -> dict[str, Any]:
    """cores × FLOP/cycle × clock for FP64 (and FP32); `ghz_source` says what the clock is
    (CLOCK_ALL_BUSY, CLOCK_SINGLE…, CLOCK_GIVEN) and is shown in the formula."""
    first = min(topo.usable_cpus(), default=None)
    fpc = flops_per_cycle(root, caches=(topo.cache_bytes(1, first), topo.cache_bytes(2, first)))
    cores = physical_cores(topo)
    extra = {"flop_per_cycle": {"fp64": fpc.dp, "fp32": fpc.sp, "uarch": fpc.uarch,
                                "status": fpc.status, "evidence": fpc.evidence,
                                "decided_by": fpc.decided_by,
                                "assumption": fpc.assumption, "alt_fp64": fpc.alt_dp},
             "cores": cores, "ghz": ghz, "ghz_source": ghz_source}
    if fpc.status == "unknown":
        return _unknown("GFLOP/s", fpc.evidence, **extra)
    if not ghz:
        return _unknown("GFLOP/s", "core clock not measured (replayed machine?)", **extra)
    value = flops_peak_gflops(cores, fpc.dp, ghz)
    notes = list(fpc.notes)
    if fpc.assumption:
        notes.append(f"assumed: {fpc.assumption}")
        if fpc.alt_dp:
            alt = flops_peak_gflops(cores, fpc.alt_dp, ghz)
            notes.append(f"with {fpc.alt_dp} FLOP/cycle instead: {alt:.1f} GFLOP/s")
    if ghz_source.startswith(CLOCK_SINGLE):
        notes.append(SINGLE_CLOCK_NOTE)
    if ghz_source.startswith("measured"):
        notes.append("clock from an integer chain: heavy AVX-512 code may run at a lower "
                     "licence clock on Intel, so the real vector peak can be lower")
    return {"value": value, "unit": "GFLOP/s", "status": fpc.status, "reason": "",
            "formula": f"{cores} cores × {fpc.dp} FP64 FLOP/cycle × {ghz:.3f} GHz "
                       f"({ghz_source}) = {value:.1f} GFLOP/s",
            "fp32": flops_peak_gflops(cores, fpc.sp, ghz),
            "source": fpc.uarch or "ISA flags",
            "origin": "user" if ghz_source == CLOCK_GIVEN else "measured",
            "notes": notes, **extra}


def dram_peak(topo: Topology | None, memory: str | None = None,
              root: str | Path | Tree = "/") -> dict[str, Any]:
    """From --memory (per socket × sockets) when given, else SMBIOS type 17. The user's
    description wins; when SMBIOS also describes the DIMMs and gives another peak, a note
    says both (the firmware's table can be wrong, or the user's: the reader judges)."""
    sockets = max(1, len(topo.packages)) if topo is not None else 1
    if memory:
        p = _dram.from_spec(memory, sockets)
        p.notes.append(f"given by the user (--memory {memory.strip()!r} per socket)")
        disagree = _smbios_disagrees(p, root)
        if disagree:
            p.notes.append(disagree)
        origin = "user"
    else:
        try:
            slots, source = read_slots(root)
            p = _dram.from_slots(slots, source)
        except Unavailable as e:
            return _unknown("GB/s", f"{e}; give --memory, e.g. '12x DDR5-4800' per socket")
        except ValueError as e:
            return _unknown("GB/s", f"SMBIOS memory devices: {e}")
        origin = "smbios"
    return {"value": p.gbs, "unit": "GB/s", "status": "known", "reason": "",
            "formula": p.formula, "source": p.source, "origin": origin, "notes": p.notes,
            "channels": p.channels, "mts": p.mts, "type": p.type,
            "dimms_per_channel": p.dimms_per_channel}


SMBIOS_DISAGREES = "SMBIOS"     # the start of the note _smbios_disagrees writes


def _smbios_disagrees(given: _dram.DramPeak, root: str | Path | Tree) -> str | None:
    """A note when SMBIOS describes the DIMMs and its peak is not the user's; None when it
    agrees or says nothing (hidden, unreadable, no populated slot)."""
    try:
        slots, source = read_slots(root)
        fw = _dram.from_slots(slots, source)
    except (Unavailable, ValueError):
        return None
    if abs(fw.gbs - given.gbs) <= 1e-9 * max(fw.gbs, given.gbs):
        return None
    return (f"{SMBIOS_DISAGREES} ({fw.source}) says otherwise: {fw.formula}; the --memory "
            "figure is used (check the DIMM population: one of the two is wrong)")


def disagreements(summary: dict[str, Any] | None) -> list[str]:
    """The notes of a peak summary where SMBIOS contradicts the user's --memory."""
    dram = (summary or {}).get("dram") or {}
    return [n for n in dram.get("notes") or [] if dram.get("origin") == "user"
            and n.startswith(f"{SMBIOS_DISAGREES} (")]


def cross_socket_pairs(topo: Topology | None) -> list[list[int]]:
    """[source node, target node] pairs whose memory traffic crosses the inter-socket links:
    a source node with CPUs and a target node on another package (nodes whose package is
    not known, e.g. CXL memory, are left out). Empty on one socket."""
    if topo is None or len(topo.packages) < 2:
        return []
    pkg: dict[int, int] = {}
    for p in topo.packages:
        for n in p.nodes:
            pkg.setdefault(n, p.id)
    for c in topo.cpus:
        if c.node is not None:
            pkg.setdefault(c.node, c.package)
    with_cpus = {c.node for c in topo.cpus if c.node is not None}
    return [[a, b] for a in sorted(pkg) for b in sorted(pkg)
            if a in with_cpus and pkg[a] != pkg[b]]


def links_peak(topo: Topology | None, links: str | None) -> dict[str, Any]:
    """From --links; unknown without it (nothing on the machine tells the link layout).
    "cross_socket_pairs" names the node pairs whose traffic crosses these links, so a
    measured remote bandwidth can be set against the peak (analysis.efficiency.efficiency_table)."""
    pairs = cross_socket_pairs(topo)
    if not links:
        return _unknown("GB/s", "link layout not given (--links, e.g. 'xgmi:4x16@32')",
                        cross_socket_pairs=pairs)
    p = _links.from_spec(links)
    notes = list(p.notes)
    notes.append(f"given by the user (--links {links.strip()!r})")
    if topo is not None and len(topo.packages) < 2:
        notes.append("this machine shows one socket: no inter-socket link is exercised")
    return {"value": p.gbs, "unit": "GB/s", "status": "known", "reason": "",
            "formula": p.formula, "source": "--links", "origin": "user", "notes": notes,
            "groups": [vars(g) for g in p.groups], "cross_socket_pairs": pairs}


def summary(topo: Topology, memory: str | None = None, links: str | None = None, *,
            clock: dict[str, Any] | None = None, root: str | Path | Tree = "/"
            ) -> dict[str, Any]:
    """Every peak for this machine, from the clock given: `numascope.clock.measure(...)`,
    {"all_busy_ghz": GHz, "given": True} for a stated clock, or {"single_ghz": GHz,
    "labels": {"single_ghz": "measured, one CPU alone …"}} when only that is known. Without
    a clock the FLOP/s peak is unknown, with that reason: nothing is measured here. `root`
    is "/" or the topology's Tree of a replayed machine (cpuinfo and SMBIOS are read from
    it). The FLOP/s entry's "ghz_source" says which clock its peak used (see peak_clock)."""
    ghz, source = peak_clock(clock)
    return {
        "flops": flops_peak(topo, ghz, root, source),
        "dram": dram_peak(topo, memory, root),
        "links": links_peak(topo, links),
        "clock": clock,
    }


def clock_of(res: Any) -> dict[str, Any]:
    """The clock a compute "clock" result measured, as `summary` takes it (medians over
    every CPU and repetition, each labelled by what it is)."""
    c: dict[str, Any] = {k: m.median for k, m in res.metrics.items()}
    c["labels"] = {"single_ghz": f"{CLOCK_SINGLE}, median over CPUs",
                   "all_busy_ghz": f"{CLOCK_ALL_BUSY}, median over CPUs"}
    return c


def run_summary(topo: Topology, results: list[Any], clock_ghz: float | None = None, *,
                memory: str | None = None, links: str | None = None,
                root: str | Path | Tree = "/") -> dict[str, Any]:
    """The peak summary of a run: the one its peaks stage computed with the clock it
    measured (kept on the clock result), else one from that result's clock (older
    records), else from the run monitor's single-CPU clock `clock_ghz` at run start; FLOP/s
    unknown when there is no clock at all. Computed at most once per run. `memory` and
    `links` are the run's --memory / --links: the DRAM and link peaks come from them
    whether or not the compute stage ran (the same figures it computed when it did)."""
    out = None
    for res in results:
        if res.family == "compute" and res.params.get("kind", res.case) == "clock":
            stored = res.params.get("peaks")
            if isinstance(stored, dict) and "flops" in stored:
                out = {**stored, "clock": stored.get("clock") or clock_of(res)}
            else:
                out = summary(topo, clock=clock_of(res), root=root)
            break
    if out is None:
        clock = {"single_ghz": clock_ghz, "labels": {
            "single_ghz": f"{CLOCK_SINGLE} at run start (run monitor)"}} if clock_ghz else None
        out = summary(topo, clock=clock, root=root)
    if memory:
        out["dram"] = dram_peak(topo, memory, root)
    if links:
        out["links"] = links_peak(topo, links)
    return out
