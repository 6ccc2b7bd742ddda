"""The compute family's headline lines: HPL (hpcc), DGEMM and the LU factorisation at their
largest problem, each against the FLOP/s peak at the measured clock."""

from __future__ import annotations

from typing import Any

from numascope.results.headline import Headline, ok, peak_of, stat
from numascope.results.record import BenchResult
from numascope.results.run import RunRecord

SECTION = "compute"
KINDS = {"hpl": ("hpl_gflops", "HPL (hpcc)"), "dgemm": ("dgemm_gflops", "DGEMM"),
         "lu": ("lu_gflops", "LU factorisation (not HPL)")}


def _how(res: BenchResult) -> dict[str, Any]:
    q = res.params
    if q.get("kind") == "hpl" and q.get("np"):
        return {"kernel": "HPL", "threads": int(q["np"]) * int(q.get("threads") or 1)}
    return {}


def lines(run: RunRecord) -> list[Headline]:
    out = []
    peak = peak_of(run.host, "flops")
    for kind, (key, name) in KINDS.items():
        rs = [r for r in run.results if r.family == "compute" and ok(r, "gflops")
              and r.params.get("kind") == kind]
        if not rs:
            continue
        top = max(rs, key=lambda r: (r.params.get("n") or 0))
        h = stat(top, "gflops", key, f"FP64 {name}, {top.case}", SECTION, how=_how(top))
        h.peak = peak
        if peak:
            h.peak_pct = 100 * h.value / peak
        out.append(h)
    return out
