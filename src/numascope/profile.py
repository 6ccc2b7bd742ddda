"""Profiles: how much a suite measures. One object instead of the string "quick" tested in
every family: repetitions, working-set bounds and sweep density, with every family's
`suite_cases(topo, profile)` reading the fields it needs. What only one family sizes by
profile lives with that family (compute's matrix orders: families/compute/options.py)."""

from __future__ import annotations

from dataclasses import dataclass

from numascope.errors import UserError
from numascope.steady import MIN_REPS, Steady

MIB = 1 << 20


@dataclass(frozen=True)
class Profile:
    name: str
    reps: int                 # timed repetitions per case (bandwidth, compression, compute)
    samples: int              # latency-type samples (idle latency, c2c, matrix)
    dense: bool               # sweep every policy / count / kernel, not a thinned subset
    min_bytes: int            # working-set floor for "bigger than the caches" sizes
    max_bytes: int            # ceiling, so a profile stays within its time budget
    # every memory working set this size, whatever the caches (smoke); None: each family's
    # own rule for a working set that lives in DRAM
    working_set: int | None = None
    readable: bool = True     # False: the numbers check that stages run, not how fast
    # --reps auto in the families that repeat until steady (bandwidth, latency's idle
    # chase, compression): each stage's cases share this many seconds past their first
    # batch (numascope.steady.Pool), at most `steady_max` repetitions a case; None: the
    # fixed counts above
    steady_s: float | None = None
    steady_max: int = 30
    # the run's time budget (numascope.plan; `run --budget` overrides): on a machine whose
    # plan exceeds it, the headline cases first and the rest while they fit, so the
    # profile's duration does not grow with the machine; None: every case, however long
    budget_s: float | None = None

    def repetitions(self, fixed: int) -> int | Steady:
        """What a family's cases repeat by under this profile: a stopping rule with a fresh
        pool for one stage (numascope.steady.pool_cases tells it the stage's case count),
        never fewer repetitions than the `fixed` count it replaces; or `fixed`."""
        if self.steady_s is None:
            return fixed
        least = max(MIN_REPS, fixed)
        return Steady(min_reps=least, max_reps=max(self.steady_max, least)).pooled(
            self.steady_s)

    @property
    def quick(self) -> bool:
        return not self.dense

    def __str__(self) -> str:
        return self.name


QUICK = Profile("quick", reps=3, samples=9, dense=False, min_bytes=64 * MIB,
                max_bytes=256 * MIB, steady_s=6.0, steady_max=30, budget_s=120.0)
FULL = Profile("full", reps=10, samples=15, dense=True, min_bytes=256 * MIB,
               max_bytes=4096 * MIB, steady_s=60.0, steady_max=100)
# SPEC's "test" size: every stage on working sets that fit the caches of most servers, in
# seconds, to check that a machine, a batch job or a guest runs numascope end to end
# (permissions, placement, fio, MPI, store, report) before an hour of --full
SMOKE = Profile("smoke", reps=2, samples=3, dense=False, min_bytes=4 * MIB, max_bytes=16 * MIB,
                working_set=8 * MIB, readable=False)
PROFILES: dict[str, Profile] = {p.name: p for p in (QUICK, FULL, SMOKE)}
SMOKE_NOTE = ("smoke profile: every stage on small working sets, to check that the machine "
              "runs them; the numbers measure caches, not memory, and are not for reading")
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


def readable(name: str) -> bool:
    """Whether a run of the profile called `name` measured the machine (False: smoke). A
    name this version does not know (an older record's) counts as readable."""
    known = PROFILES.get(name)
    return known is None or known.readable
