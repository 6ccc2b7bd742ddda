"""The distribution of single loads: the tail (p99, p99.9) the per-sample means hide.

After the timed samples (whose method and figure are unchanged), the C chase
(`lat.c`, `chase_hist`) goes on in groups of `group` dependent loads, each group timed
between two `rdtscp; lfence` timestamps; one group per load where a load lasts long
against the timer (DRAM here: ~150 ns against ~27 ns of timer), else the smallest power of
two whose group lasts at least 4x the timer's overhead (cache-resident working sets).
The timer's overhead, the mean of 16384 empty intervals, is subtracted from every group;
times go into log-linear buckets of TSC ticks (HDR-histogram style: exact below 64 ticks,
then 32 sub-buckets per power of two, each at most 1/32 of its value wide). One histogram
per chunk of DIST_GROUPS groups, one chunk per sample (at most 64), more groups per chunk
where the chunks would hold fewer than TAIL_GROUPS in all.

A tail is read from one histogram of all of a case's timed groups: the chunks merged, and
under --samples auto the units merged too (`combine`; `merge_units`, the one way both the
idle chase and lat --chains set a steady result's tail). A chunk's own p99.9 rests on ~16
groups beyond it (16384 x 0.1 %) and moves by hundreds of ns from chunk to chunk; the
median of such values is not the case's p99.9.

Here a record carries:
  - metrics latency_p50 / _p90 / _p99 / _p999 (ns per load): one value each, the
    quantile of the merged histogram (not primary metrics: `compare --metric` tests them,
    one value per run);
  - distributions["latency"]: the merged histogram, bucket edges in ns per load
    (group time / loads per group), with the method, the overhead, the resolution, how many
    timed groups lie beyond each quantile (`beyond`) and which quantiles rest on fewer than
    MIN_BEYOND of them (`thin`: marked wherever the figure is shown)."""

from __future__ import annotations

import math
from typing import Any

from numascope.results.record import BenchResult, Metric

DIST_GROUPS = 16384            # timed groups per chunk (one chunk per sample)
# A tail figure needs MIN_BEYOND timed groups beyond it. The number of sample points beyond
# the true p99.9 is Binomial(n, 0.001): with k expected beyond, its relative sd is about
# 1/sqrt(k) (the order-statistics interval of a quantile: H. A. David, H. N. Nagaraja,
# "Order Statistics", 3rd ed., Wiley 2003, sec. 7.1), so 100 beyond pins the figure's rank
# to +-10 % of the tail (between the true p99.89 and p99.91), where one chunk's 16 give
# +-25 %. Measured here (docs/lat.md): one chunk's p99.9 over 1 GiB spread 577-883 ns
# within a single invocation. The C pass times at least TAIL_GROUPS (hist.h,
# HIST_TAIL_GROUPS) so that p99.9 has them.
MIN_BEYOND = 100
TAIL_GROUPS = 100_000          # MIN_BEYOND / (1 - 0.999): the C pass's least per case
THIN_MARK = "†"
# what `thin` counts: timed groups beyond the figure (a group is one load, or several where
# a load is short against the timer)
THIN_NOTE = (f"{THIN_MARK} = a tail figure from fewer than {MIN_BEYOND} timed groups beyond "
             "it (its rank is uncertain by more than 10 % of the tail): take more samples")
QUANTILES = (("latency_p50", 50.0), ("latency_p90", 90.0), ("latency_p99", 99.0),
             ("latency_p999", 99.9))
METHOD = ("groups of dependent loads timed by rdtscp;lfence (one load per group where a "
          "load lasts >= 4x the timer's overhead), the mean overhead of empty intervals "
          "subtracted; log-linear buckets of TSC ticks (32 per power of two)")


def quantile(edges: list[float], counts: list[int], q: float) -> float:
    """The q-th percentile (0-100) of a histogram: `counts[i]` values in
    [edges[i], edges[i+1]), spread evenly inside their bucket (linear interpolation of the
    cumulative count). NaN when the histogram is empty."""
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be from 0 to 100 (got {q})")
    if len(edges) != len(counts) + 1:
        raise ValueError("a histogram needs one edge more than it has buckets")
    n = sum(counts)
    if n <= 0:
        return math.nan
    target, acc = n * q / 100.0, 0
    for i, c in enumerate(counts):
        if c and acc + c >= target:
            return edges[i] + (edges[i + 1] - edges[i]) * max(target - acc, 0) / c
        acc += c
    return edges[-1]


def merged(counts: list[list[int]]) -> list[int]:
    """The chunks' counts added bucket by bucket."""
    return [sum(col) for col in zip(*counts)]


def beyond(n: int, q: float) -> int:
    """How many of n sorted points lie beyond the q-th percentile: those ranked above
    ceil(n q / 100) (the histogram's quantile interpolates to that rank)."""
    return n - math.ceil(round(n * q / 100.0, 6))


def tails(edges: list[float], counts: list[int]) -> dict[str, Any]:
    """The merged histogram's quantiles, the groups beyond each and the thin ones."""
    n = sum(counts)
    out = {name: beyond(n, q) for name, q in QUANTILES}
    return {"quantiles": {name: round(quantile(edges, counts, q), 3) for name, q in QUANTILES},
            "beyond": out, "min_beyond": MIN_BEYOND,
            "thin": [name for name, k in out.items() if k < MIN_BEYOND]}


def thin(res: Any) -> list[str]:
    """The tail metrics of a result resting on fewer than MIN_BEYOND timed groups beyond
    them: distributions["latency"]["thin"]; in a record from before it was kept, whose
    tail metrics held one value per chunk, those of one chunk's groups."""
    d = getattr(res, "distributions", {}).get("latency") or {}
    if "thin" in d:
        return list(d["thin"] or [])
    if not d.get("groups") or not d.get("chunks"):
        return []
    n = d["groups"] // d["chunks"]
    return [name for name, q in QUANTILES if beyond(n, q) < MIN_BEYOND]


def metrics(dist: dict[str, Any], unit: str = "load") -> dict[str, Metric]:
    """The tail metrics of a record's histogram: one value each, from the merged one."""
    g = dist["loads_per_group"]
    what = f"single {unit}s" if g == 1 else f"groups of {g} {unit}s (ns per {unit})"
    out = {}
    for name, q in QUANTILES:
        k = dist["beyond"][name]
        mark = f" ({THIN_MARK}: fewer than {MIN_BEYOND})" if name in dist["thin"] else ""
        out[name] = Metric(
            name, "ns", False, [dist["quantiles"][name]],
            f"p{q:g} of {what}: one histogram of the case's {dist['groups']} timed groups "
            f"({dist['chunks']} chunks merged), {k} beyond it{mark}; timer overhead "
            "subtracted (distributions['latency'])")
    return out


def from_core(h: dict[str, Any] | None, unit: str = "load", method: str = METHOD
              ) -> tuple[dict[str, Metric], dict[str, Any] | None]:
    """The tail metrics and the record's histogram from lat_chase's "hist" (None where the
    pass did not run: no serialising timestamp on this CPU); `unit`: what a group is made
    of (lat_chains: "lockstep step", a load on every chain)."""
    if not h or not h.get("counts") or not h.get("tsc_ghz"):
        return {}, None
    g, ghz = h["group"], h["tsc_ghz"]
    edges = [e / ghz / g for e in h["edges"]]          # group ticks -> ns per load
    total = merged(h["counts"])
    step_ns = h["step"] / ghz
    dist = {
        "unit": "ns", "edges": [round(e, 4) for e in edges], "counts": total,
        "loads_per_group": g, "groups": sum(total), "chunks": len(h["counts"]),
        **tails(edges, total),
        "overhead_ns": h["overhead"] / ghz,
        "overhead_p5_ns": h["empty_p5"] / ghz, "overhead_p95_ns": h["empty_p95"] / ghz,
        "tsc_step_ns": step_ns,
        # a group reads as a whole number of TSC steps: +-1 step, shared among its loads
        "resolution_ns": step_ns / g,
        "tsc_ghz": ghz, "method": method,
    }
    return metrics(dist, unit), dist


def merge_units(res: BenchResult, units: list[BenchResult], unit: str = "load") -> None:
    """The tail of --samples auto's result (steady.gather's join of its `units`, whose tail
    metrics hold one value per unit): one histogram of every unit's timed groups
    (`combine`), and the tail metrics, their notes and the thin marks read from it, in
    place of the per-unit values (their median is not the case's quantile). Where the
    units' histograms do not share one grid, neither a histogram nor a tail figure, and a
    note says why. The idle chase and lat --chains both end here; `unit` as in from_core."""
    dists = [u.distributions.get("latency") for u in units]
    dist = combine(dists)
    tail = metrics(dist, unit) if dist else {}
    for name, _ in QUANTILES:
        if name in tail:
            res.metrics[name] = tail[name]
        else:
            res.metrics.pop(name, None)
    res.distributions = {"latency": dist} if dist else {}
    if dist is None and any(dists):
        res.notes.append("no tail figure: the units' histograms are not on one grid of TSC "
                         "ticks (another group size), so they do not merge")


def _ticks(d: dict[str, Any]) -> list[int]:
    """A histogram's edges back in TSC ticks of a group (whole numbers: the C pass's grid;
    the ns edges are rounded to 1e-4 ns, far under half a tick)."""
    k = d["tsc_ghz"] * d["loads_per_group"]
    return [round(e * k) for e in d["edges"]]


def combine(dists: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """One histogram of several chases' (the batches of --samples auto): their buckets lie
    on the same log-linear grid of TSC ticks when their group size agrees, so the counts
    add bucket by bucket (a gap between two ranges is a bucket of none). Each pass measures
    the TSC's rate anew (it differs in the 5th digit); the grid is the same, so the counts
    add in ticks and go back to ns at the rate's mean weighted by groups, as the overhead.
    Quantiles, groups beyond them, groups and chunks are recomputed. None when there is
    nothing to combine or the grids differ (then no histogram rather than a wrong one)."""
    ds = [d for d in dists if d]
    if not ds:
        return None
    if len(ds) == 1:
        return ds[0]
    if len({d["loads_per_group"] for d in ds}) != 1:
        return None
    ticks = [_ticks(d) for d in ds]
    grid = sorted({t for ts in ticks for t in ts})
    at = {t: i for i, t in enumerate(grid)}
    counts = [0] * (len(grid) - 1)
    for ts, d in zip(ticks, ds):
        for lo, hi, c in zip(ts, ts[1:], d["counts"]):
            if at[hi] != at[lo] + 1:       # a bucket the others split: not the same grid
                return None
            counts[at[lo]] += c
    groups = sum(d["groups"] for d in ds)
    ghz = sum(d["tsc_ghz"] * d["groups"] for d in ds) / groups
    g = ds[0]["loads_per_group"]
    edges = [t / ghz / g for t in grid]
    out = {**ds[0], "edges": [round(e, 4) for e in edges], "counts": counts,
           "groups": sum(counts), "chunks": sum(d["chunks"] for d in ds),
           **tails(edges, counts), "tsc_ghz": ghz}
    for k in ("overhead_ns", "overhead_p5_ns", "overhead_p95_ns"):
        out[k] = sum(d[k] * d["groups"] for d in ds) / groups
    for k in ("tsc_step_ns", "resolution_ns"):     # the coarsest pass's
        if all(k in d for d in ds):
            out[k] = max(d[k] for d in ds)
    return out
