"""The primary metric of each benchmark family: the one number per case that compare tests
by default. Variants (bandwidth[avx2-nt]), derived figures (dram_bandwidth, seconds,
tsc_cycles, core_cycles, speedup, pct_of_peak) and side measurements (the loaders'
bandwidth of loaded latency) are compared only on request: each extra metric tested
widens the multiplicity correction and so costs power on the ones that matter.

A case gets every name of its family's tuple that it has, in this order; most cases have
exactly one. A family not listed here (or a case with none of the names) falls back to its
first metric, which is how every family lists its metrics.
"""

from __future__ import annotations

PRIMARY: dict[str, tuple[str, ...]] = {
    # GB/s counted the STREAM way, of the store kind reported (nt=auto: the faster one)
    "bandwidth": ("bandwidth",),
    # ns per dependent load; a run's median of its samples is the p50
    "latency": ("latency",),
    # one-way ns per cache-line hand-off
    "c2c": ("latency",),
    # a node pair measures two independent things: idle latency and read bandwidth
    "matrix": ("latency", "bandwidth"),
    # uncompressed-equivalent GB/s of the compressed sum (speedup is derived from it)
    "compress": ("decompress_sum",),
    # DGEMM / LU / HPL cases: GFLOP/s; the clock case: the clock with every CPU busy
    "compute": ("gflops", "all_busy_ghz"),
}


def primary_metrics(family: str, names: list[str]) -> list[str]:
    """The primary metrics among one case's metric names (given in the record's order)."""
    chosen = [n for n in PRIMARY.get(family, ()) if n in names]
    return chosen or names[:1]
