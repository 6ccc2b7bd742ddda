"""What a DRAM bandwidth figure is: the one rule by which the fleet's STREAM floor, the
efficiency table, the report's headline and the placement model read a bandwidth result.

    from numascope.families.bandwidth.resident import dram_resident
    best = max(r.metrics["bandwidth"].median for r in run.results
               if r.validated and dram_resident(r))

A working-set sweep's points and plateaus (a 24 KiB point runs at L1 speed) and a tier
sweep's points with pages on a CXL or HBM node are not the node's DRAM bandwidth, whatever
their case is called. Arrays under 4 x the LLC (`bw --size`, the smoke profile) stay DRAM
figures here: their record carries bench.run's note that caches inflate them, and the smoke
profile's numbers are not for reading anyway (profile.SMOKE_NOTE). Low in the layers on
purpose: it reads a record's params and imports nothing of numascope."""

from __future__ import annotations

from typing import Any

DRAM_ONLY_RATIO = "1:0"     # a tier sweep's point with every page on the DRAM node


def dram_resident(res: Any) -> bool:
    """Whether a bandwidth result's figure is DRAM bandwidth: not a point or plateau of a
    working-set sweep (`bw --sweep`, `run`/`fleet run --bw-sweep`: params.sweep True), nor
    a tier sweep's mix or tier-only point (params.ratio other than 1:0). Whether it
    validated is the caller's to check, as for any figure."""
    if getattr(res, "family", None) != "bandwidth":
        return False
    p = res.params
    if p.get("sweep") is True:
        return False
    return not (p.get("sweep") == "tier-ratio" and p.get("ratio") != DRAM_ONLY_RATIO)


def why_not(res: Any) -> str:
    """Why dram_resident(res) is False, in words ("" when it is True)."""
    if dram_resident(res):
        return ""
    if getattr(res, "family", None) != "bandwidth":
        return "not a bandwidth result"
    if res.params.get("sweep") is True:
        return "working-set sweep points"
    return f"a tier sweep's {res.params.get('ratio')} point (pages on another memory tier)"
