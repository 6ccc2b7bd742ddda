"""Profiles: how much a suite measures. One object instead of the string "quick" tested in
every family: repetitions, working-set bounds and sweep density, with every family's
`suite_cases(topo, profile)` reading the fields it needs."""

from __future__ import annotations

from dataclasses import dataclass

from numascope.errors import UserError

MIB = 1 << 20


@dataclass(frozen=True)
class Profile:
    name: str
    reps: int                 # timed repetitions per case (bandwidth, compression, compute)
    samples: int              # latency-type samples (idle latency, c2c, matrix)
    dense: bool               # sweep every policy / count / kernel, not a thinned subset
    min_bytes: int            # working-set floor for "bigger than the caches" sizes
    max_bytes: int            # ceiling, so a profile stays within its time budget

    @property
    def quick(self) -> bool:
        return not self.dense

    def __str__(self) -> str:
        return self.name


QUICK = Profile("quick", reps=3, samples=9, dense=False, min_bytes=64 * MIB,
                max_bytes=256 * MIB)
FULL = Profile("full", reps=10, samples=15, dense=True, min_bytes=256 * MIB,
               max_bytes=4096 * MIB)
PROFILES: dict[str, Profile] = {p.name: p for p in (QUICK, FULL)}
DEFAULT = QUICK


def profile(name: str | Profile) -> Profile:
    """The profile called `name` (a Profile passes through); UserError otherwise."""
    if isinstance(name, Profile):
        return name
    try:
        return PROFILES[name]
    except KeyError:
        raise UserError(f"unknown profile {name!r}; choose one of "
                        f"{', '.join(PROFILES)}") from None
