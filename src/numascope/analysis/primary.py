"""The primary metrics of a case: the numbers compare tests by default. Each family class
names its own (`primary`, in numascope.families); variants (bandwidth[avx2-nt]), derived
figures (dram_bandwidth, seconds, speedup, pct_of_peak) and side measurements are compared
only on request: each extra metric tested widens the multiplicity correction and so costs
power on the ones that matter.

A case gets every name of its family's tuple that it has, in that order; most cases have
exactly one. A family that names none (or a case with none of the names, or a family no
longer registered) falls back to its first metric, which is how every family lists its
metrics.
"""

from __future__ import annotations


def family_primary(family: str) -> tuple[str, ...]:
    """The primary metric names the family class declares (empty when unknown)."""
    from numascope.families import by_name
    cls = by_name(family)
    return tuple(getattr(cls, "primary", ()) or ()) if cls is not None else ()


def primary_metrics(family: str, names: list[str]) -> list[str]:
    """The primary metrics among one case's metric names (given in the record's order)."""
    chosen = [n for n in family_primary(family) if n in names]
    return chosen or names[:1]
