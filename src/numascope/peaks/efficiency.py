"""The efficiency table the labs publish: measured / theoretical, one row per resource.

The one place that decides what counts as "measured" against a peak: `efficiency_table`
takes the peak summary and the run's results (and figures the user gave), so `numascope
peak`, the run summary and the HTML report show the same rows."""

from __future__ import annotations

from collections.abc import Iterable
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


def _by(res: Any, m: Any) -> str:
    n = len(m.values)
    excluded = len(res.params.get("excluded_reps") or [])
    out = f", {excluded} implausible excluded" if excluded else ""
    if res.params.get("bimodal"):     # bw_outliers: two modes, nothing excluded
        out += ", repetitions bimodal (a disturbed run)"
    return f"{res.case}: median of {n} repetition{'s' if n != 1 else ''}{out}"


def measured_from(results: Iterable[Any] = (), given: dict[str, Any] | None = None
                  ) -> dict[str, Any]:
    """The measured figures to set against the peaks: the highest median DRAM bandwidth of
    any validated bandwidth result (a working-set sweep's records aside), every validated FLOP/s result (DGEMM, LU, HPL: one row
    each), each saying it is a median and of how many repetitions; then what the user gave
    (`given`: "dram_gbs", "link_gbs", "gflops" with their "…_by"), which wins."""
    bw, fl = [], []
    for res in results:
        if not getattr(res, "validated", False):
            continue
        if res.family == "bandwidth" and res.params.get("sweep") is True:
            continue    # bw --sweep (run --bw-sweep): its points and plateaus are caches too
        for m in res.metrics.values():
            if res.family == "bandwidth" and m.name == "bandwidth" and m.unit == "GB/s":
                bw.append((m.median, _by(res, m)))
            elif res.family == "compute" and m.name == "gflops":
                fl.append((m.median, _by(res, m)))
    out: dict[str, Any] = {}
    if bw:
        out["dram_gbs"], out["dram_by"] = max(bw)
    if fl:
        out["gflops"] = fl
    out.update({k: v for k, v in (given or {}).items() if v is not None})
    return out


def efficiency_table(peaks: dict[str, Any] | None, measured: dict[str, Any] | None = None,
                     results: Iterable[Any] | None = None) -> list[EfficiencyRow]:
    """Rows for every resource with a measurement or a peak — the one efficiency table.

    `peaks` is `numascope.peaks.summary(...)` (a run's host["peaks"]); `results` the run's
    BenchResults, read by `measured_from`; `measured` figures given directly, winning over
    the results': "dram_gbs" (+ "dram_by"), "gflops" (+ "gflops_by"), "link_gbs" (+
    "link_by"). Any value may also be a list of (value, measured_by) pairs: one row each
    (e.g. LU and HPL). A peak that is unknown leaves the percentage empty, with the reason
    as the note. No peaks (an old record, a failed summary): no rows."""
    if not isinstance(peaks, dict) or "error" in peaks:
        return []
    measured = measured_from(results or (), measured)
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
    note = "" if p.get("value") is not None else \
        f"peak unknown: {p.get('reason') or 'no reason given'}"
    if value is None:
        note = "not measured"
    row = EfficiencyRow(what, value, by if value is not None else "", p.get("value"), unit,
                        note)
    pct = row.percent
    if pct is not None and pct > 100:
        row.note = ("above 100 %: the peak's clock or FLOP/cycle assumption is too low "
                    "(e.g. boost clock above the one used)")
    return row
