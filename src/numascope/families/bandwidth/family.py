"""The bandwidth family in the Benchmark shape: `Bandwidth`, its cases, its measurement (a
case identical to one measured already reused) and the plateaus derived from its sweeps.
Kept apart from bench.py because it stands on sweep.py (the working-set sweep), which
stands on bench.py."""

from __future__ import annotations

from typing import Any

from numascope.benchmark import Case
from numascope.families.bandwidth import bench
from numascope.families.bandwidth.bench import (
    FAMILY,
    MEASURED_KEYS,
    BandwidthParams,
    build_cases,
    suite_cases,
)
from numascope.profile import Profile
from numascope.results.record import BenchResult
from numascope.topology.model import Topology


class Bandwidth:
    """The bandwidth family in the Benchmark shape (bench.base); its cases carry
    BandwidthParams. A case identical to one already measured by this instance (same
    kernel, CPUs, memory, size, repetitions, code — e.g. a per-domain case equal to the top
    of a scaling curve) reuses that measurement, relabelled and with a note saying so."""

    family = FAMILY
    # compared by default (numascope compare): GB/s counted the STREAM way, of the store kind reported (nt=auto: the faster one)
    primary = ("bandwidth",)
    title = "memory bandwidth: thread scaling and per-domain"

    def __init__(self, bw_sweep: bool = False) -> None:
        self._done: dict[tuple, BenchResult] = {}
        self.bw_sweep = bw_sweep       # numascope run --bw-sweep: the working-set sweep too

    def suite_cases(self, topo: Topology, profile: Profile) -> list[Case]:
        """The cases `numascope run` measures under this profile."""
        if not self.bw_sweep:
            return suite_cases(topo, profile)
        from numascope.families.bandwidth import sweep
        return suite_cases(topo, profile) + sweep.suite_cases(topo, profile)

    def derived(self, results: list[BenchResult]) -> list[BenchResult]:
        """The plateaus of the working-set sweeps among `results` (sweep.py), one each."""
        from numascope.families.bandwidth import sweep
        return sweep.plateau_results(results)

    def cases(self, topo: Topology, **options: Any) -> list[Case]:
        return build_cases(topo, **options)

    def measure(self, topo: Topology, case: Case) -> BenchResult:
        p: BandwidthParams = case.params  # type: ignore[assignment]
        key = p.key()
        if key in self._done:
            done = self._done[key]
            prev = BenchResult.from_dict(done.to_dict())
            prev.case = case.label
            prev.params = {k: v for k, v in prev.params.items() if k in MEASURED_KEYS} | \
                p.context()
            prev.notes.append(f"same measurement as case '{done.case}' "
                              "(identical CPUs, memory and size)")
            return prev
        r = bench.run(topo, p, label=case.label)   # looked up here: one place to wrap
        self._done[key] = r
        return r
