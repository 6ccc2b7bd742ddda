"""The efficiency table the labs publish: measured / theoretical, one row per resource."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class EfficiencyRow:
    what: str                    # "DRAM bandwidth", "FP64 FLOP/s", "inter-socket links"
    measured: float | None
    measured_by: str             # "best STREAM triad, all cores", "HPL (hpcc)", "LU (numpy)"
    peak: float | None
    unit: str
    note: str = ""

    @property
    def percent(self) -> float | None:
        if self.measured is None or not self.peak:
            return None
        return 100.0 * self.measured / self.peak

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "measured": self.measured, "measured_by": self.measured_by,
                "peak": self.peak, "unit": self.unit, "percent": self.percent,
                "note": self.note}


def efficiency_table(peaks: dict[str, Any], measured: dict[str, Any]) -> list[EfficiencyRow]:
    """Rows for every resource with a measurement or a peak.

    `peaks` is `numascope.peaks.summary(...)`; `measured` may hold "dram_gbs" (+
    "dram_by"), "gflops" (+ "gflops_by"), "link_gbs" (+ "link_by"). A peak that is unknown
    leaves the percentage empty, with the reason as the note."""
    rows = []
    spec = [("DRAM bandwidth", "dram", "dram_gbs", "dram_by", "GB/s"),
            ("FP64 FLOP/s", "flops", "gflops", "gflops_by", "GFLOP/s"),
            ("inter-socket links", "links", "link_gbs", "link_by", "GB/s")]
    for what, pk, mk, byk, unit in spec:
        p = peaks.get(pk) or {}
        m = measured.get(mk)
        if m is None and p.get("value") is None:
            continue
        note = "" if p.get("value") is not None else f"peak unknown: {p.get('reason', '?')}"
        if m is None:
            note = "not measured"
        row = EfficiencyRow(what, m, measured.get(byk, "") if m is not None else "",
                            p.get("value"), unit, note)
        pct = row.percent
        if pct is not None and pct > 100:
            row.note = ("above 100 %: the peak's clock or FLOP/cycle assumption is too low "
                        "(e.g. boost clock above the one used)")
        rows.append(row)
    return rows
