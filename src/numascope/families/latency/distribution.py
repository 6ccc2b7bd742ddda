"""The distribution of single loads: the tail (p99, p99.9) the per-sample means hide.

After the timed samples (whose method and figure are unchanged), the C chase
(`lat.c`, `chase_hist`) goes on in groups of `group` dependent loads, each group timed
between two `rdtscp; lfence` timestamps; one group per load where a load lasts long
against the timer (DRAM here: ~150 ns against ~27 ns of timer), else the smallest power of
two whose group lasts at least 4x the timer's overhead (cache-resident working sets).
The timer's overhead, the mean of 16384 empty intervals, is subtracted from every group;
times go into log-linear buckets of TSC ticks (HDR-histogram style: exact below 64 ticks,
then 32 sub-buckets per power of two, each at most 1/32 of its value wide). One histogram
per chunk of DIST_GROUPS groups, one chunk per sample (at most 64).

Here a record carries:
  - metrics latency_p50 / _p90 / _p99 / _p999 (ns per load): each chunk's quantile, one
    value per chunk, so `compare` tests them as it tests the samples (not primary metrics);
  - distributions["latency"]: the chunks' histograms merged, bucket edges in ns per load
    (group time / loads per group), with the method, the overhead and the resolution."""

from __future__ import annotations

import math
from typing import Any

from numascope.results.record import Metric

DIST_GROUPS = 16384            # timed groups per chunk (one chunk per sample)
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


def from_core(h: dict[str, Any] | None, unit: str = "load", method: str = METHOD
              ) -> tuple[dict[str, Metric], dict[str, Any] | None]:
    """The tail metrics and the record's histogram from lat_chase's "hist" (None where the
    pass did not run: no serialising timestamp on this CPU); `unit`: what a group is made
    of (lat_chains: "lockstep step", a load on every chain)."""
    if not h or not h.get("counts") or not h.get("tsc_ghz"):
        return {}, None
    g, ghz = h["group"], h["tsc_ghz"]
    edges = [e / ghz / g for e in h["edges"]]          # group ticks -> ns per load
    what = f"single {unit}s" if g == 1 else f"groups of {g} {unit}s (ns per {unit})"
    metrics = {}
    for name, q in QUANTILES:
        vals = [quantile(edges, c, q) for c in h["counts"] if sum(c)]
        metrics[name] = Metric(
            name, "ns", False, vals,
            f"p{q:g} of {what}, one value per chunk of {h['groups']} timed groups; "
            "timer overhead subtracted (distributions['latency'])")
    total = merged(h["counts"])
    step_ns = h["step"] / ghz
    dist = {
        "unit": "ns", "edges": [round(e, 4) for e in edges], "counts": total,
        "loads_per_group": g, "groups": sum(total), "chunks": len(h["counts"]),
        "quantiles": {name: round(quantile(edges, total, q), 3) for name, q in QUANTILES},
        "overhead_ns": h["overhead"] / ghz,
        "overhead_p5_ns": h["empty_p5"] / ghz, "overhead_p95_ns": h["empty_p95"] / ghz,
        "tsc_step_ns": step_ns,
        # a group reads as a whole number of TSC steps: +-1 step, shared among its loads
        "resolution_ns": step_ns / g,
        "tsc_ghz": ghz, "method": method,
    }
    return metrics, dist


def combine(dists: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """One histogram of several chases' (the batches of --samples auto): their buckets lie
    on the same log-linear grid when their group size and TSC rate agree, so the counts add
    bucket by bucket (a gap between two ranges is a bucket of none); quantiles, groups and
    chunks recomputed, the overhead a mean weighted by groups. None when there is nothing to
    combine or the grids differ (then no histogram rather than a wrong one)."""
    ds = [d for d in dists if d]
    if not ds:
        return None
    if len(ds) == 1:
        return ds[0]
    if len({(d["loads_per_group"], d["tsc_ghz"]) for d in ds}) != 1:
        return None
    edges = sorted({e for d in ds for e in d["edges"]})
    at = {e: i for i, e in enumerate(edges)}
    counts = [0] * (len(edges) - 1)
    for d in ds:
        for lo, hi, c in zip(d["edges"], d["edges"][1:], d["counts"]):
            if at[hi] != at[lo] + 1:       # a bucket the others split: not the same grid
                return None
            counts[at[lo]] += c
    groups = sum(d["groups"] for d in ds)
    out = {**ds[0], "edges": edges, "counts": counts, "groups": sum(counts),
           "chunks": sum(d["chunks"] for d in ds),
           "quantiles": {name: round(quantile(edges, counts, q), 3) for name, q in QUANTILES}}
    for k in ("overhead_ns", "overhead_p5_ns", "overhead_p95_ns"):
        out[k] = sum(d[k] * d["groups"] for d in ds) / groups
    return out
