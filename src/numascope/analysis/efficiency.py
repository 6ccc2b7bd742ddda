"""The efficiency table the labs publish: measured / theoretical, one row per resource.

The one place that decides what counts as "measured" against a peak: `efficiency_table`
takes the peak summary and the run's results (and figures the user gave), so `numascope
peak`, the run summary and the HTML report show the same rows."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from numascope.families.bandwidth.resident import dram_resident, why_not

FLOPS = "FP64 FLOP/s"
# what measured a FLOP/s figure, in the row's name: an LU solve's share of peak is not HPL's
FLOPS_BY = {"dgemm": "DGEMM, BLAS", "lu": "LU solve, LAPACK dgesv", "hpl": "HPL, hpcc"}
LINKS = "inter-socket links"
LINKS_ONE_WAY = "inter-socket links, one direction"
ONE_WAY_NOTE = ("memory of another socket read: the data crosses the links one way, so it "
                "is set against half the both-directions peak")


def flops_what(res: Any) -> str:
    """The FLOP/s row's name for a compute result: "FP64 FLOP/s (HPL, hpcc)" … (its kind,
    else its case's first word, as older records name it); plain "FP64 FLOP/s" when not
    known."""
    kind = res.params.get("kind") or str(res.case).split(" ", 1)[0].lower()
    return f"{FLOPS} ({FLOPS_BY[kind]})" if kind in FLOPS_BY else FLOPS


@dataclass
class EfficiencyRow:
    what: str                    # "DRAM bandwidth", "FP64 FLOP/s (HPL, hpcc)", LINKS …
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


def measured_from(results: Iterable[Any] = (), given: dict[str, Any] | None = None,
                  cross_pairs: Iterable[Iterable[int]] = ()) -> dict[str, Any]:
    """The measured figures to set against the peaks: the highest median DRAM bandwidth of
    any validated DRAM-resident bandwidth result (resident.dram_resident: a working-set
    sweep's points and a memory tier's aside; "dram_left_out" says so when they were all
    there was), every validated
    FLOP/s result (DGEMM, LU, HPL: one row each, named by what measured it), the highest
    median read bandwidth of a matrix pair in `cross_pairs` (a node reading another socket's
    memory: "link_read_gbs"), each saying it is a median and of how many repetitions; then
    what the user gave (`given`: "dram_gbs", "link_gbs", "gflops" with their "…_by"), which
    wins."""
    cross = {tuple(p) for p in cross_pairs}
    bw, fl, remote = [], [], []
    left_out: list[str] = []
    for res in results:
        if not getattr(res, "validated", False):
            continue
        if res.family == "bandwidth" and not dram_resident(res):
            left_out.append(why_not(res))
            continue
        for m in res.metrics.values():
            if res.family == "bandwidth" and m.name == "bandwidth" and m.unit == "GB/s":
                bw.append((m.median, _by(res, m)))
            elif res.family == "compute" and m.name == "gflops":
                fl.append((m.median, _by(res, m), flops_what(res)))
            elif res.family == "matrix" and m.name == "bandwidth" and m.unit == "GB/s" and \
                    (res.params.get("src"), res.params.get("dst")) in cross:
                remote.append((m.median, f"matrix read {_by(res, m)}"))
    out: dict[str, Any] = {}
    if bw:
        out["dram_gbs"], out["dram_by"] = max(bw)
    elif left_out:
        out["dram_left_out"] = ("not measured: no bandwidth result measured DRAM ("
                                + ", ".join(sorted(set(left_out))) + ")")
    if fl:
        out["gflops"] = fl
    if remote:
        out["link_read_gbs"], out["link_read_by"] = max(remote)
    out.update({k: v for k, v in (given or {}).items() if v is not None})
    return out


def efficiency_table(peaks: dict[str, Any] | None, measured: dict[str, Any] | None = None,
                     results: Iterable[Any] | None = None) -> list[EfficiencyRow]:
    """Rows for every resource with a measurement or a peak — the one efficiency table.

    `peaks` is `numascope.peaks.summary(...)` (a run's host["peaks"]); `results` the run's
    BenchResults, read by `measured_from` (a matrix pair is inter-socket when the links
    entry's "cross_socket_pairs" names it); `measured` figures given directly, winning over
    the results': "dram_gbs" (+ "dram_by"), "gflops" (+ "gflops_by"), "link_gbs" (+
    "link_by"). Any value may also be a list of (value, measured_by) pairs, or (value,
    measured_by, row name) triples: one row each (e.g. LU and HPL, each named by what
    measured it). A peak that is unknown leaves the percentage empty, with the reason as
    the note. No peaks (an old record, a failed summary): no rows."""
    if not isinstance(peaks, dict) or "error" in peaks:
        return []
    cross = (peaks.get("links") or {}).get("cross_socket_pairs") or ()
    measured = measured_from(results or (), measured, cross)
    rows: list[EfficiencyRow] = []
    spec = [("DRAM bandwidth", "dram", "dram_gbs", "dram_by", "GB/s"),
            (FLOPS, "flops", "gflops", "gflops_by", "GFLOP/s"),
            (LINKS, "links", "link_gbs", "link_by", "GB/s")]
    for what, pk, mk, byk, unit in spec:
        p = peaks.get(pk) or {}
        m = measured.get(mk)
        pairs = m if isinstance(m, list) else [(m, measured.get(byk, ""))]
        if pk == "links" and measured.get("link_read_gbs") is not None:
            if m is not None:
                rows.append(_row(what, m, measured.get(byk, ""), p, unit))
            rows.append(_one_way(measured["link_read_gbs"], measured["link_read_by"], p))
            continue
        for value, by, *name in pairs or [(None, "")]:
            if value is None and p.get("value") is None:
                continue
            rows.append(_row(name[0] if name else what, value, by, p, unit))
            if pk == "dram" and value is None and measured.get("dram_left_out"):
                rows[-1].note = measured["dram_left_out"]
    return rows


def _one_way(value: float, by: str, p: dict[str, Any]) -> EfficiencyRow:
    """The inter-socket read against one direction of the links (half their peak)."""
    half = dict(p, value=p["value"] / 2) if p.get("value") else p
    row = _row(LINKS_ONE_WAY, value, by, half, "GB/s")
    row.note = "; ".join(x for x in (ONE_WAY_NOTE if half.get("value") else "", row.note)
                         if x)
    return row


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
                    "(e.g. boost clock above the one used)") if unit == "GFLOP/s" else \
            ("above 100 %: the peak's description (--memory, --links, SMBIOS) is below the "
             "hardware's, or caches served part of the traffic")
    return row
