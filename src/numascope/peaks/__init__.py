"""Theoretical peaks — FLOP/s, DRAM, inter-socket links — each with its formula, its source
and, when it cannot be known here, the reason.

    summary(topo, memory="12x DDR5-4800", links="xgmi:4x16@32") -> dict

Each entry is {"value": float | None, "unit", "formula", "source", "status", "reason",
"notes"}; status is "known", "assumed" (rests on a stated assumption) or "unknown"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from numascope.errors import Unavailable
from numascope.peaks import dram as _dram
from numascope.peaks import links as _links
from numascope.peaks.efficiency import EfficiencyRow, efficiency_table
from numascope.peaks.flops import flops_peak_gflops, flops_per_cycle
from numascope.peaks.smbios import read_slots
from numascope.topology.model import Topology

__all__ = [
    "EfficiencyRow",
    "dram_peak",
    "efficiency_table",
    "flops_peak",
    "links_peak",
    "physical_cores",
    "summary",
]


def _unknown(unit: str, reason: str, **extra: Any) -> dict[str, Any]:
    return {"value": None, "unit": unit, "status": "unknown", "reason": reason,
            "formula": "", "source": "", "notes": [], **extra}


def physical_cores(topo: Topology, cpus: list[int] | None = None) -> int:
    """Cores with at least one usable CPU (SMT siblings share the FMA units)."""
    wanted = set(topo.usable_cpus() if cpus is None else cpus)
    cores = {(c.package, c.core) if c.core is not None else ("cpu", c.id)
             for c in topo.cpus if c.id in wanted}
    return len(cores)


def flops_peak(topo: Topology, ghz: float | None, root: str | Path = "/",
               ghz_source: str = "measured, all cores busy") -> dict[str, Any]:
    """cores × FLOP/cycle × clock for FP64 (and FP32)."""
    fpc = flops_per_cycle(root)
    cores = physical_cores(topo)
    extra = {"flop_per_cycle": {"fp64": fpc.dp, "fp32": fpc.sp, "uarch": fpc.uarch,
                                "status": fpc.status, "evidence": fpc.evidence,
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
    if ghz_source.startswith("measured"):
        notes.append("clock from an integer chain: heavy AVX-512 code may run at a lower "
                     "licence clock on Intel, so the real vector peak can be lower")
    return {"value": value, "unit": "GFLOP/s", "status": fpc.status, "reason": "",
            "formula": f"{cores} cores × {fpc.dp} FP64 FLOP/cycle × {ghz:.3f} GHz "
                       f"= {value:.1f} GFLOP/s",
            "fp32": flops_peak_gflops(cores, fpc.sp, ghz),
            "source": fpc.uarch or "ISA flags", "notes": notes, **extra}


def dram_peak(topo: Topology | None, memory: str | None = None,
              root: str | Path = "/") -> dict[str, Any]:
    """From --memory (per socket × sockets) when given, else SMBIOS type 17."""
    sockets = max(1, len(topo.packages)) if topo is not None else 1
    if memory:
        p = _dram.from_spec(memory, sockets)
    else:
        try:
            slots, source = read_slots(root)
            p = _dram.from_slots(slots, source)
        except Unavailable as e:
            return _unknown("GB/s", f"{e}; give --memory, e.g. '12x DDR5-4800' per socket")
        except ValueError as e:
            return _unknown("GB/s", f"SMBIOS memory devices: {e}")
    return {"value": p.gbs, "unit": "GB/s", "status": "known", "reason": "",
            "formula": p.formula, "source": p.source, "notes": p.notes,
            "channels": p.channels, "mts": p.mts, "type": p.type}


def links_peak(topo: Topology | None, links: str | None) -> dict[str, Any]:
    if not links:
        return _unknown("GB/s", "link layout not given (--links, e.g. 'xgmi:4x16@32')")
    p = _links.from_spec(links)
    notes = list(p.notes)
    if topo is not None and len(topo.packages) < 2:
        notes.append("this machine shows one socket: no inter-socket link is exercised")
    return {"value": p.gbs, "unit": "GB/s", "status": "known", "reason": "",
            "formula": p.formula, "source": "--links", "notes": notes,
            "groups": [vars(g) for g in p.groups]}


def summary(topo: Topology, memory: str | None = None, links: str | None = None,
            clock: dict[str, Any] | None = None, root: str | Path = "/") -> dict[str, Any]:
    """Every peak for this machine. `clock` is `numascope.clock.measure(...)` (or
    {"all_busy_ghz": GHz, "given": True} for a stated clock); when None it is measured here
    on the live machine (root "/") and left unknown for a replay."""
    if clock is None and str(root) == "/":
        from numascope import clock as _clock
        clock = _clock.measure(topo, reps=1)
    ghz = (clock or {}).get("all_busy_ghz") or (clock or {}).get("single_ghz")
    source = "given, not measured" if (clock or {}).get("given") else "measured, all cores busy"
    return {
        "flops": flops_peak(topo, ghz, root, source),
        "dram": dram_peak(topo, memory, root),
        "links": links_peak(topo, links),
        "clock": clock,
    }
