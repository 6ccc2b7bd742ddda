"""`bw --sweep`: bandwidth by working set, from a few KiB to past the last-level cache, and
the plateaus of the curve (L1, L2, L3, DRAM) checked against the topology's cache sizes.

    from numascope.families.bandwidth import sweep
    cases = sweep.cases(topo, ["triad"], cpus=[0], base=BandwidthParams(reps=10))
    points = [Bandwidth().measure(topo, c) for c in cases]       # the family's own path
    found = sweep.plateau_results(topo, points)                  # one record per plateau

The working set counts every array of every thread (likwid-bench's `-w S0:SIZE:N` does the
same); a point's arrays are `working set / arrays` each, split among the threads by the C
core, so each thread holds `working set / threads`. Each point is an ordinary bandwidth
measurement (bench.run, `_core.bw_run`): what the family does to time small arrays applies
here as it does to `bw --size`.

Steps: PER_OCTAVE points per doubling (2^(1/4) = 19 % apart): a cache's edge is then
bracketed to within 19 %, well inside the factor EDGE (plateaus.py) within which an edge is
called consistent with the cache size, and a plateau of one octave has 4 points, more than
the 3 a plateau needs. The range: MIN_PER_THREAD (4 KiB, a page) per thread, an eighth of
the smallest L1d of current server cores (32 KiB), so that the L1 plateau has 3 octaves,
up to arrays of LLC_FACTOR (4, STREAM's rule, per array) times the largest cache capacity
of the CPUs used (the kernels' most arrays: 12x the LLC in all for triad). Measured on the
development VM (AMD EPYC, 32 MiB L3, Nov 2026), triad still read 37 GB/s at 3.4x the L3 in
all and 18-25 GB/s at 4x, against 11-18 GB/s with arrays of 64 MiB: a working set of 4x the
LLC in all is not yet DRAM."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from numascope import placement
from numascope.benchmark import Case
from numascope.errors import UserError
from numascope.families.bandwidth.bench import (
    ARRAYS,
    FAMILY,
    QUICK_REPS,
    UNITS_NOTE,
    BandwidthParams,
)
from numascope.families.bandwidth.plateaus import Plateau, find, levels_without_plateau
from numascope.families.bandwidth.sizes import LLC_FACTOR, NO_LLC_DEFAULT
from numascope.profile import Profile
from numascope.profile import profile as _profile
from numascope.results.record import BenchResult, Metric
from numascope.topology.model import Topology
from numascope.units import format_bytes

PER_OCTAVE = 4
MIN_PER_THREAD = 4 << 10
MIN_ELEMENTS = 64              # per array: the C core's least
MAX_POINTS = 400               # a range and step that would ask more is a typo
# likwid-bench's load, store, copy and stream: the four a cache study compares
DEFAULT_KERNELS = ("read", "fill", "copy", "triad")
DRAM = "DRAM"


# -- the caches the threads use ---------------------------------------------------------------
def capacities(topo: Topology, cpus: list[int]) -> list[tuple[str, int]]:
    """(level name, largest working set it holds) for each data cache level the CPUs have,
    smallest first: a working set split evenly among the threads fits level N when every
    level-N cache holds the share of the threads it serves (two SMT siblings share their
    L1 and L2; the threads of one L3 share it)."""
    mine = set(cpus)
    out = []
    for lvl in sorted({c.level for c in topo.caches if c.kind != "Instruction"}):
        seen = {(c.cpus, c.size_bytes) for c in topo.caches
                if c.level == lvl and c.kind != "Instruction" and mine & set(c.cpus)}
        served = [(size, len(mine & set(cs))) for cs, size in seen]
        if not served or sum(n for _, n in served) < len(mine):
            continue          # some thread's cache of this level is not reported
        out.append((f"L{lvl}", min(size * len(mine) // n for size, n in served)))
    return out


def level_of(working_set: int, caps: list[tuple[str, int]]) -> str:
    """The smallest cache level that holds the working set, or DRAM."""
    return next((name for name, cap in caps if working_set <= cap), DRAM)


# -- the points ---------------------------------------------------------------------------------
def default_range(topo: Topology, cpus: list[int], arrays: int = 1) -> tuple[int, int]:
    """MIN_PER_THREAD per thread, to `arrays` arrays each LLC_FACTOR x the largest capacity
    of a cache level for these threads (STREAM's rule is per array; private L2s can hold
    more in all than a shared L3); arrays of 1 GiB (sizes.NO_LLC_DEFAULT) when no cache is
    reported."""
    caps = capacities(topo, cpus)
    each = LLC_FACTOR * max(c for _, c in caps) if caps else NO_LLC_DEFAULT
    return MIN_PER_THREAD * len(cpus), arrays * each


def sizes(lo: int, hi: int, per_octave: int = PER_OCTAVE) -> list[int]:
    """Working sets from `lo` to `hi` (both included), `per_octave` geometric steps per
    doubling, each a whole number of bytes; UserError for a range that is empty or would
    take more than MAX_POINTS points."""
    if per_octave < 1:
        raise UserError(f"sweep points per doubling must be at least 1 (got {per_octave})")
    if lo <= 0 or hi < lo:
        raise UserError(f"the sweep's range must satisfy 0 < min <= max (got min "
                        f"{format_bytes(lo)}, max {format_bytes(hi)})")
    n = math.floor(per_octave * math.log2(hi / lo) + 1e-9) + 1
    if n > MAX_POINTS:
        raise UserError(f"{format_bytes(lo)} to {format_bytes(hi)} at {per_octave} points per "
                        f"doubling is {n} points (at most {MAX_POINTS}): narrow the range or "
                        "take fewer points per doubling")
    out = [round(lo * 2 ** (k / per_octave)) for k in range(n)]
    if out[-1] < hi:
        out.append(hi)
    return out


def elements_for(kernel: str, working_set: int) -> int:
    """Elements per array whose arrays together come nearest the working set."""
    return max(MIN_ELEMENTS, round(working_set / (ARRAYS[kernel] * 8)))


def label_bytes(n: int) -> str:
    return format_bytes(n).replace(" ", "")


def cases(topo: Topology, kernels: list[str], cpus: list[int], base: BandwidthParams,
          lo: int | None = None, hi: int | None = None, per_octave: int = PER_OCTAVE,
          where: str | None = None) -> list[Case]:
    """The sweep's checked cases, kernel by kernel, small working sets first: `base` gives
    the repetitions, ISA, stores and memory. Working sets too small for the C core's 64
    elements per array, or giving one already listed, are left out."""
    d_lo, d_hi = default_range(topo, cpus, max(ARRAYS[k] for k in kernels))
    lo, hi = lo or d_lo, hi or d_hi
    targets = sizes(lo, hi, per_octave)
    caps = capacities(topo, cpus)
    threads = len(cpus)
    out: list[Case] = []
    for kernel in kernels:
        seen: set[int] = set()
        for target in targets:
            n = elements_for(kernel, target)
            if n in seen:
                continue
            seen.add(n)
            ws = ARRAYS[kernel] * n * 8
            extra: dict[str, Any] = {
                "working_set": ws, "per_thread_bytes": ws // threads,
                "level": level_of(ws, caps), "level_bytes": dict(caps)}
            p = replace(base, kernel=kernel, cpus=tuple(cpus), size_bytes=n * 8, sweep=True,
                        policy=base.policy or "cpus",
                        where=where or placement.format_cpulist(cpus),
                        extra=tuple(extra.items())).checked(topo)
            out.append(Case(f"sweep {kernel} {label_bytes(ws)} {threads}T", p))
    if not out:
        raise UserError("the sweep's range holds no working set")
    return out


def suite_cases(topo: Topology, profile: Profile | str) -> list[Case]:
    """`numascope run --bw-sweep`'s sweep: on the first usable CPU, triad (every kernel of
    DEFAULT_KERNELS with a dense profile), the profile's repetitions (at least the outlier
    screen's 5; a fixed count: a sweep's 60-odd points would drain the stage's pool of
    --reps auto), the range capped at the profile's working set where it fixes one
    (smoke)."""
    prof = _profile(profile)
    cpus = placement.select_cpus(topo)[:1]
    kernels = list(DEFAULT_KERNELS) if prof.dense else ["triad"]
    hi = None
    if prof.working_set is not None:
        lo, d_hi = default_range(topo, cpus, max(ARRAYS[k] for k in kernels))
        hi = max(lo, min(d_hi, prof.working_set))
    base = BandwidthParams(reps=max(prof.reps, QUICK_REPS), policy="compact")
    return cases(topo, kernels, cpus, base, hi=hi, where=placement.format_cpulist(cpus))


# -- the plateaus, as records --------------------------------------------------------------
def is_point(r: BenchResult) -> bool:
    return r.family == FAMILY and r.params.get("sweep") is True and "working_set" in r.params


def is_plateau(r: BenchResult) -> bool:
    return r.family == FAMILY and r.params.get("sweep") is True and "plateau" in r.params


def curves(results: list[BenchResult]) -> dict[tuple[str, int], list[BenchResult]]:
    """The sweep points by (kernel, threads), each curve in working-set order."""
    out: dict[tuple[str, int], list[BenchResult]] = {}
    for r in results:
        if is_point(r):
            out.setdefault((r.params["kernel"], r.params["threads"]), []).append(r)
    return {k: sorted(v, key=lambda r: r.params["working_set"]) for k, v in out.items()}


def plateaus_of(curve: list[BenchResult]) -> tuple[list[Plateau], list[str]]:
    """The plateaus of one curve (its points' medians) named by the caches its points were
    measured against, and the levels that got no plateau, in words."""
    caps = [(k, int(v)) for k, v in (curve[0].params.get("level_bytes") or {}).items()]
    pts = [(r.params["working_set"], r.metrics["bandwidth"].median) for r in curve]
    found = find(pts, caps)
    return found, levels_without_plateau(found, pts, caps)


def plateau_results(results: list[BenchResult]) -> list[BenchResult]:
    """One record per plateau of every curve among `results`: case "plateau L1 triad 1T",
    metric "bandwidth" holding the medians of the points on the plateau (GB/s)."""
    out = []
    for (kernel, threads), curve in curves(results).items():
        found, missing = plateaus_of(curve)
        for pl in found:
            params: dict[str, Any] = {
                "sweep": True, "plateau": pl.name, "kernel": kernel, "threads": threads,
                "working_set_range": [pl.first, pl.last], "points": len(pl.values),
                "expected_bytes": pl.expected, "lines_up": pl.lines_up, "verdict": pl.verdict,
                "spans": pl.spans, "level_bytes": curve[0].params.get("level_bytes") or {},
                "rule": pl.rule, "units": UNITS_NOTE}
            metric = Metric("bandwidth", "GB/s", True, list(pl.values),
                            "the medians of the sweep points on this plateau (one per "
                            f"working set), STREAM bytes; {UNITS_NOTE}")
            first = next(r for r in curve if r.params["working_set"] == pl.first)
            place = {k: first.placement[k] for k in ("cpus", "cpulist", "cpu_nodes", "memory")
                     if k in first.placement}
            notes = ([] if pl.lines_up else [f"{kernel} {threads}T {pl.name}: {pl.verdict}"]) \
                + [f"{kernel} {threads}T: {m}" for m in pl.notes]
            if pl is found[-1]:
                notes += [f"{kernel} {threads}T: {m}" for m in missing]
            out.append(BenchResult(FAMILY, f"plateau {pl.name} {kernel} {threads}T", params,
                                   {"bandwidth": metric}, place, notes,
                                   validated=all(r.validated for r in curve)))
    return out
