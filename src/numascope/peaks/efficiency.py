"""The efficiency table the labs publish: measured / theoretical, one row per resource."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class EfficiencyRow:
    what: str                    # "DRAM bandwidth", "FP64 FLOP/s", "inter-socket links"
    measured: float | None
    measured_by: str             # "STREAM triad, 2 threads: median of 10 repetitions", …
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
    "dram_by"), "gflops" (+ "gflops_by"), "link_gbs" (+ "link_by"). Any value may also be a
    list of (value, measured_by) pairs: one row each (e.g. LU and HPL). A peak that is
    unknown leaves the percentage empty, with the reason as the note."""
    rows: list[EfficiencyRow] = []
    spec = [("DRAM bandwidth", "dram", "dram_gbs", "dram_by", "GB/s"),
            ("FP64 FLOP/s", "flops", "gflops", "gflops_by", "GFLOP/s"),
            ("inter-socket links", "links", "link_gbs", "link_by", "GB/s")]
    for what, pk, mk, byk, unit in spec:
        p = peaks.get(pk) or {}
        m = measured.get(mk)
        pairs = m if isinstance(m, list) else [(m, measured.get(byk, ""))]
        for value, by in pairs or [(None, "")]:
            if value is None and p.get("value") is None:
                continue
            rows.append(_row(what, value, by, p, unit))
    return rows


def _row(what: str, value: float | None, by: str, p: dict[str, Any], unit: str
         ) -> EfficiencyRow:
    note = "" if p.get("value") is not None else f"peak unknown: {p.get('reason', '?')}"
    if value is None:
        note = "not measured"
    row = EfficiencyRow(what, value, by if value is not None else "", p.get("value"), unit,
                        note)
    pct = row.percent
    if pct is not None and pct > 100:
        row.note = ("above 100 %: the peak's clock or FLOP/cycle assumption is too low "
                    "(e.g. boost clock above the one used)")
    return row
