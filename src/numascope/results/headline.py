"""What a headline figure is: the `Headline` line a family's headline module makes from a
run's results (families/<name>/headline.py), and the helpers those modules share. Below the
families, so that each family holds its own lines; numascope.report.headline collects them
in the studies' order and the verdicts (numascope.report.verdicts) judge them.

Every line holds the figure as the tables show it (the median of the repetitions kept),
its spread (the 95 % interval over the units when the figure was repeated until steady:
separate allocations, or for compression separate calls over one store, as its verdict
says; else the range of its repetitions: repetitions inside one allocation are not
independent samples, so no interval is claimed from them), n, the % of the theoretical
peak the efficiency table gives (numascope.analysis.efficiency's peak, so both agree),
and a verdict. Data only, so that any front end can list the same lines."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from numascope.results.record import BenchResult, Metric
from numascope.steady import units_words, verdict_of


@dataclass
class Headline:
    key: str              # the quantity (numascope.references' ids where one exists)
    what: str             # in words: "STREAM triad, all cores (2 threads)"
    value: float
    unit: str
    section: str          # the report section (element id) that holds its tables
    n: int = 0            # repetitions behind the median
    low: float = math.nan
    high: float = math.nan
    spread: str = ""      # what low..high is: an interval over the units, or a range
    source: str = ""      # the case(s) it comes from
    metric: str = ""      # the metric of that case the value is the median of ("" derived)
    scope: str = ""       # where a published figure must have been measured to match
    peak: float | None = None
    peak_pct: float | None = None
    higher_is_better: bool = True
    detail: str = ""      # a short fact beside the value (the crossover, the knee, …)
    verdict: str = "–"
    rule: str = ""
    reference: str = ""
    reference_notes: list[str] = field(default_factory=list)  # its normalisations, caveats
    # why the published figures of its quantity for this host are not set beside it
    reference_other: str = ""
    warnings: list[str] = field(default_factory=list)
    # how it was measured (numascope.references.HOW: reach, path, kernel, threads): a
    # published figure is set beside it only where what the publication states is this
    how: dict[str, Any] = field(default_factory=dict)

    @property
    def ident(self) -> str:
        """Unique within a run: the quantity, and its scope (or reach) where two lines
        share one."""
        where = self.scope or self.how.get("reach", "")
        return f"{self.key}/{where}" if where else self.key


def stat(res: BenchResult, metric: str, key: str, what: str, section: str,
         how: dict[str, Any] | None = None) -> Headline:
    """The line of one result's metric: its median, its spread (the steady interval over
    the units where it was repeated until steady, else the range of its repetitions), n,
    and `how` it was measured (numascope.references.HOW fields, as the family says)."""
    m: Metric = res.metrics[metric]
    h = Headline(key, what, m.median, m.unit, section, n=len(m.values), source=res.case,
                 metric=metric, higher_is_better=m.higher_is_better, how=dict(how or {}))
    s = verdict_of(res.params)
    iv = (s or {}).get("interval") or []
    if s and s.get("metric", metric) == metric and len(iv) == 2 and \
            all(isinstance(v, (int, float)) and math.isfinite(v) for v in iv):
        if iv[0] == iv[1]:      # the units' medians agree exactly: no interval, zero spread
            h.spread = (f"no spread: the {s.get('units', '?')} "
                        f"{units_words([s], short=True)} agree exactly")
        else:
            h.low, h.high = float(iv[0]), float(iv[1])
            h.spread = f"95 % CI, {s.get('units', '?')} {units_words([s], short=True)}"
    elif len(m.values) > 1:
        h.low, h.high = m.min, m.max
        h.spread = "range, 1 alloc."
    h.warnings += figure_warnings(res)
    return h


def known(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v not in ("", None)}


def figure_warnings(res: BenchResult) -> list[str]:
    out = []
    s = verdict_of(res.params)
    if s is not None and not s["converged"]:
        out.append(f"{res.case}: not steady, its 95 % interval stayed wider than "
                   f"±{100 * s.get('precision', 0):.0f} % ({s.get('stopped', '')})")
    if res.params.get("bimodal"):
        out.append(f"{res.case}: repetitions bimodal (two modes: memory shared with other "
                   "work)")
    return out


def ok(res: BenchResult, metric: str) -> bool:
    return res.validated and metric in res.metrics and bool(res.metrics[metric].values)


def peak_of(host: dict[str, Any], key: str) -> float | None:
    p = (host.get("peaks") or {}).get(key) or {}
    v = p.get("value") if isinstance(p, dict) else None
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def node_packages(run: Any) -> dict[Any, Any]:
    """NUMA node id -> the packages it spans, from the run's stored topology."""
    nodes = (run.topology or {}).get("nodes") or []
    return {n.get("id"): tuple(n.get("packages") or ()) for n in nodes if isinstance(n, dict)}
