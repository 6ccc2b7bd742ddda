"""The measured core clock: what the cores really run at, alone and with every core busy.

A chain of dependent integer adds (one cycle each) runs on pinned threads in C; adds per
second of CLOCK_MONOTONIC is the clock. /proc/cpuinfo "cpu MHz" is never used: in guests it
is often the TSC rate or a fixed number, and on hosts it is a snapshot of an idle core."""

from __future__ import annotations

import os
import statistics
from functools import cache
from typing import Any

from numascope.errors import MeasurementError, UserError
from numascope.topology.model import Topology

ALONE_LIMIT = 32  # above this many CPUs, "alone" is measured on a sample

METHOD = ("dependent register-register integer add chain (1 cycle per add) on pinned threads, "
          "timed with CLOCK_MONOTONIC_RAW inside C per block of 262144 adds; clock = median "
          "block (preemption only hits a few blocks); TSC read over the same interval")


def _core():
    from numascope import _core as core  # imported lazily: builds the C core on first use
    return core


def _run(cpus: list[int], seconds: float, warmup: float) -> list[dict[str, Any]]:
    try:
        rows = _core().clock_chain(cpus, seconds, warmup)
    except ValueError as e:  # CPU outside the affinity mask, bad duration
        raise UserError(str(e)) from None
    for r in rows:
        if not r["valid"]:
            raise MeasurementError(f"clock chain on CPU {r['cpu']} computed a wrong sum")
        if r["seconds"] <= 0 or r["adds"] == 0:
            raise MeasurementError(f"clock chain on CPU {r['cpu']} measured no time")
        # The clock while running: median block, so preemption (shared or oversubscribed
        # hosts) does not read as a slow core. Wall-clock average and run share kept too.
        r["ghz"] = r["adds_per_block"] / r["block_median_s"] / 1e9
        r["wall_ghz"] = r["adds"] / r["seconds"] / 1e9
        r["run_share"] = min(1.0, r["cpu_seconds"] / r["seconds"])
        r["tsc_ghz"] = r["tsc_ticks"] / r["seconds"] / 1e9
    return rows


def _cpus_of(where: Topology | list[int] | None) -> list[int]:
    if where is None:
        return sorted(os.sched_getaffinity(0))
    if isinstance(where, Topology):
        return where.usable_cpus()
    return [int(c) for c in where]


def measure(where: Topology | list[int] | None = None, seconds: float = 0.05,
            reps: int = 3, all_busy: bool = True, warmup: float = 0.02) -> dict[str, Any]:
    """Clock of each CPU alone (a team of one pinned thread) and with all CPUs busy at once.

    `where` is a Topology (its usable CPUs), a CPU list, or None (this process's affinity
    mask). Every repetition is kept; the per-CPU figure is the median of the repetitions.
    Returns {"per_cpu": {cpu: {"single_ghz", "all_busy_ghz", "single_samples",
    "all_busy_samples"}}, "single_ghz" (median over CPUs), "all_busy_ghz", "tsc_ghz",
    "cpus", "method", "min_run_share" (CPU time / wall time, worst thread), "notes",
    "seconds", "reps"}."""
    cpus = _cpus_of(where)
    if not cpus:
        raise UserError("no usable CPU to measure the clock on")
    if reps < 1:
        raise UserError("--reps must be at least 1")
    alone = _alone_sample(where, cpus)
    single: dict[int, list[float]] = {c: [] for c in cpus}
    busy: dict[int, list[float]] = {c: [] for c in cpus}
    tsc: list[float] = []
    share: list[float] = []
    for _ in range(reps):
        for c in alone:
            r = _run([c], seconds, warmup)[0]
            single[c].append(r["ghz"])
            tsc.append(r["tsc_ghz"])
            share.append(r["run_share"])
        if all_busy:
            for r in _run(cpus, seconds, warmup):
                busy[r["cpu"]].append(r["ghz"])
                share.append(r["run_share"])
    per_cpu = {
        c: {"single_ghz": statistics.median(single[c]) if single[c] else None,
            "all_busy_ghz": statistics.median(busy[c]) if busy[c] else None,
            "single_samples": single[c], "all_busy_samples": busy[c]}
        for c in cpus
    }
    tsc_ghz = statistics.median(tsc) if any(tsc) else None
    notes = []
    if len(alone) < len(cpus):
        notes.append(f"alone: measured on {len(alone)} of {len(cpus)} CPUs (one per L3 "
                     "domain or every few CPUs) to keep the run short; all busy: every CPU")
    if min(share) < 0.9:
        notes.append(f"threads got as little as {min(share):.0%} of the wall time (other "
                     "processes or the hypervisor took the rest): the clock is the rate while "
                     "running, but anything timed by wall clock here is disturbed")
    return {
        "cpus": cpus,
        "per_cpu": per_cpu,
        "single_ghz": statistics.median(p["single_ghz"] for p in per_cpu.values()
                                        if p["single_ghz"] is not None),
        "all_busy_ghz": (statistics.median(p["all_busy_ghz"] for p in per_cpu.values())
                         if all_busy else None),
        "tsc_ghz": tsc_ghz,  # None where there is no TSC (non-x86)
        "method": METHOD,
        "min_run_share": min(share),
        "notes": notes,
        "seconds": seconds,
        "reps": reps,
    }


def _alone_sample(where: Topology | list[int] | None, cpus: list[int],
                  limit: int = ALONE_LIMIT) -> list[int]:
    """Every CPU when few; on big machines one CPU per L3 domain (else an even spread), so
    that the one-at-a-time pass stays short."""
    if len(cpus) <= limit:
        return cpus
    picked: list[int] = []
    if isinstance(where, Topology) and where.l3s:
        wanted = set(cpus)
        for d in where.l3s:
            first = next((c for c in d.cpus if c in wanted), None)
            if first is not None:
                picked.append(first)
    if not picked or len(picked) > 4 * limit:
        step = max(1, len(cpus) // limit)
        picked = cpus[::step]
    return sorted(picked)


@cache
def measured_ghz(cpu: int | None = None, seconds: float = 0.05) -> float:
    """The clock (GHz) of one CPU running alone, measured once per process and cached:
    multiply nanoseconds by it to get cycles. None = the CPU this thread may run on first."""
    if cpu is None:
        cpu = min(os.sched_getaffinity(0))
    rows = [_run([cpu], seconds, 0.02)[0]["ghz"] for _ in range(3)]
    return statistics.median(rows)


def tsc_ghz(cpu: int | None = None) -> float | None:
    """The TSC rate (GHz) measured against CLOCK_MONOTONIC; None without a TSC."""
    if cpu is None:
        cpu = min(os.sched_getaffinity(0))
    r = _run([cpu], 0.02, 0.0)[0]
    return r["tsc_ghz"] or None


def measure_ghz(cpu: int | None = None, seconds: float = 0.02) -> float:
    """One fresh (uncached) reading of a CPU's clock in GHz: for watching the clock drift
    during a run (the run's noise monitor calls it at the start and the end)."""
    if cpu is None:
        cpu = min(os.sched_getaffinity(0))
    return _run([cpu], seconds, 0.005)[0]["ghz"]
