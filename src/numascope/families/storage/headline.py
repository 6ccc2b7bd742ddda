"""The storage family's headline lines: IOPS per drive (the best single-drive case) and,
from a drive-scaling series, IOPS per drive at the most drives with the knee."""

from __future__ import annotations

from numascope.results.headline import Headline, ok, stat
from numascope.results.run import RunRecord

SECTION = "storage"


def lines(run: RunRecord) -> list[Headline]:
    from numascope.families.storage import bench as io
    rs = [r for r in run.results if r.family == "storage" and ok(r, "iops")]
    out = []
    single = [r for r in rs if r.params.get("mode") in ("run", "placement")]
    if single:
        best = max(single, key=lambda r: r.metrics["iops"].median)
        out.append(stat(best, "iops", "iops_per_drive", f"IOPS per drive, {best.case}",
                        SECTION))
    rows = io.scaling_rows(rs) if any(r.params.get("mode") == "scaling" for r in rs) else []
    if rows:
        last = rows[-1]
        top = next(r for r in rs if r.params.get("mode") == "scaling"
                   and r.params.get("drives") == last["drives"])
        h = Headline("iops_scaling", f"IOPS per drive with {last['drives']} drives",
                     last["per_drive"], "IO/s", SECTION, n=len(top.metrics["iops"].values),
                     source=top.case, spread="median total IOPS / drives")
        h.detail = io.knee_text(rows) or "no knee: per-drive IOPS stay within " \
            f"{io.KNEE:.0%} of one drive alone"
        out.append(h)
    return out
