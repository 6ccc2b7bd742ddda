"""The bandwidth family's headline lines: the all-core, one-core and one-core-per-L3 STREAM
triads (DRAM-resident only: bandwidth.resident) and the slowest NUMA node, L3 and socket
alone."""

from __future__ import annotations

from typing import Any

from numascope.families.bandwidth.resident import dram_resident
from numascope.results.headline import Headline, known, ok, peak_of, stat
from numascope.results.record import BenchResult
from numascope.results.run import RunRecord

SECTION = "bandwidth"


def _how(res: BenchResult) -> dict[str, Any]:
    return known({"kernel": res.params.get("kernel"), "threads": res.params.get("threads")})


def _stat(res: BenchResult, key: str, what: str) -> Headline:
    return stat(res, "bandwidth", key, what, SECTION, how=_how(res))


def _triads(run: RunRecord) -> list[BenchResult]:
    """The run's STREAM triads: validated and DRAM-resident (a working-set sweep's 24 KiB
    point is an L1 figure, not "STREAM triad, one core")."""
    return [r for r in run.results if r.family == "bandwidth" and ok(r, "bandwidth")
            and r.params.get("kernel") == "triad" and dram_resident(r)]


def lines(run: RunRecord) -> list[Headline]:
    triads = _triads(run)
    scaling = [r for r in triads if "domain" not in r.params]
    out = []
    compact = [r for r in scaling if r.params.get("policy") == "compact"]
    if compact:
        top = max(compact, key=lambda r: r.params.get("threads", 0))
        t = top.params.get("threads")
        h = _stat(top, "triad_all_cores",
                  f"STREAM triad, all cores ({t} thread{'s' if t != 1 else ''})")
        h.peak = peak_of(run.host, "dram")
        if h.peak:
            h.peak_pct = 100 * h.value / h.peak
        out.append(h)
        one = next((r for r in compact if r.params.get("threads") == 1), None)
        if one is not None and one is not top:
            out.append(_stat(one, "triad_one_core", "STREAM triad, one core"))
    per_l3 = [r for r in scaling if r.params.get("policy") == "per-l3"]
    l3s = run.host.get("l3s")
    full = [r for r in per_l3 if r.params.get("threads") == l3s] or per_l3
    if full:
        top = max(full, key=lambda r: r.params.get("threads", 0))
        t = top.params.get("threads")
        out.append(_stat(top, "triad_one_per_l3",
                         f"STREAM triad, one core per L3 ({t} thread{'s' if t != 1 else ''})"))
    out += _domain_lines([r for r in triads if "domain" in r.params])
    return out


_KINDS = (("N", "triad_node", "NUMA node"), ("L3:", "triad_l3", "L3"),
          ("S", "triad_socket", "socket"))


def _domain_lines(doms: list[BenchResult]) -> list[Headline]:
    """Per kind of domain (NUMA node, L3, socket: each alone, all its CPUs), the slowest
    one; a measurement that stood for several kinds (a one-node socket) gives one line."""
    out: list[Headline] = []
    also: dict[str, list[str]] = {}
    for prefix, key, name in _KINDS:
        rs = [r for r in doms if any(str(d).startswith(prefix)
                                     for d in r.params.get("domains") or
                                     [r.params.get("domain")])]
        if not rs:
            continue
        low = min(rs, key=lambda r: r.metrics["bandwidth"].median)
        if low.case in also:      # the same CPUs: one line, every kind named
            also[low.case].append(name)
            continue
        also[low.case] = []
        h = _stat(low, key, f"STREAM triad, one {name}")
        if len(rs) > 1:
            hi = max(rs, key=lambda r: r.metrics["bandwidth"].median)
            h.what += f" (the slowest of {len(rs)}: {low.params.get('domain')})"
            h.detail = (f"fastest {hi.params.get('domain')}: "
                        f"{hi.metrics['bandwidth'].median:.4g} GB/s")
        out.append(h)
    for h in out:
        if also[h.source]:
            h.what += " (here also one " + " and one ".join(also[h.source]) + ")"
    return out
