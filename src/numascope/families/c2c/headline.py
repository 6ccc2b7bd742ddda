"""The c2c family's headline lines: core-to-core latency per relation (SMT siblings, same
L3, die, package, other package), the median over the pairs where several were measured."""

from __future__ import annotations

import statistics

from numascope.results.headline import Headline, figure_warnings, ok, stat
from numascope.results.record import BenchResult
from numascope.results.run import RunRecord

SECTION = "c2c"
RELATIONS = {"smt": "SMT siblings", "l3": "same L3", "die": "same die",
             "package": "same package", "remote": "other package"}


def lines(run: RunRecord) -> list[Headline]:
    by: dict[str, list[BenchResult]] = {}
    for r in run.results:
        if r.family == "c2c" and ok(r, "latency"):
            by.setdefault(str(r.params.get("relation")), []).append(r)
    out = []
    for rel in [k for k in RELATIONS if k in by] + [k for k in by if k not in RELATIONS]:
        rs = by[rel]
        if len(rs) == 1:
            h = stat(rs[0], "latency", f"c2c_{rel}",
                     f"core-to-core latency, {RELATIONS.get(rel, rel)}", SECTION)
        else:   # the median over the pairs of this relation
            meds = [r.metrics["latency"].median for r in rs]
            h = Headline(f"c2c_{rel}", f"core-to-core latency, {RELATIONS.get(rel, rel)} "
                         f"({len(rs)} pairs)", statistics.median(meds),
                         rs[0].metrics["latency"].unit, SECTION, n=len(rs), low=min(meds),
                         high=max(meds), spread="range of pair medians",
                         source=", ".join(r.case for r in rs[:3]) + (" …" if len(rs) > 3
                                                                      else ""),
                         higher_is_better=False)
            for r in rs:
                h.warnings += figure_warnings(r)
        out.append(h)
    return out
