"""The latency family in the Benchmark shape: `Latency` (its cases, its measurement, the
curves of loaded latency) and the cases `numascope run` measures. Kept apart from bench.py
because it stands on chains.py (misses in flight), which stands on bench.py."""

from __future__ import annotations

from dataclasses import replace

from numascope import placement, steady
from numascope.benchmark import Case
from numascope.errors import UserError
from numascope.families.latency.bench import (
    DEFAULT_MIX,
    FAMILY,
    LOADED_DELAYS,
    MODES,
    SUITE_LOADED_SAMPLES,
    LatencyParams,
    check_stride,
    curve_key,
    inversions,
    quick_dram_size,
    run,
    run_loaded,
    sweep_sizes,
)
from numascope.profile import Profile
from numascope.results.record import BenchResult
from numascope.topology.model import Topology
from numascope.units import format_bytes


class Latency:
    """Idle latency (one size, or a sweep) and loaded latency as uniform cases. Loaded cases
    measure one delay each; the points measured so far are kept per curve, so that a point
    that breaks the curve's monotonicity gets its note when it is measured."""

    family = FAMILY
    # compared by default (numascope compare): ns per dependent load; a run's median of its samples is the p50
    primary = ("latency",)
    title = "idle and loaded memory latency"

    def suite_cases(self, topo: Topology, profile: Profile) -> list[Case]:
        """The cases `numascope run` measures under this profile."""
        return suite_cases(topo, profile)

    def __init__(self) -> None:
        self._curves: dict[tuple, list[BenchResult]] = {}

    def cases(self, topo: Topology, base: LatencyParams | None = None, *,
              sizes: list[int] | None = None, sweep: bool = False,
              modes: list[str] | None = None, delays: list[int] | None = None,
              mixes: list[str] | None = None) -> list[Case]:
        """Checked cases from `base`: idle, one per working set (`sizes`; the sweep's with
        `sweep`; else base.bytes or the DRAM size) and mode (`modes`, default base.mode);
        loaded, one per mix (`mixes`, default base.mix: a curve each) and delay (`delays`,
        default base.delay)."""
        base = base or LatencyParams()
        if base.kind == "loaded":
            ds = [base.delay] if delays is None else list(delays)
            if not ds:
                raise UserError("no delay given: at least one is needed")
            out = []
            for m in mixes or [base.mix]:
                tag = "" if m == DEFAULT_MIX else f"mix={m} "
                out += [Case(f"loaded {tag}delay={d}",
                             replace(base, delay=d, mix=m).checked(topo)) for d in ds]
            return out
        cpu = topo.usable_cpus()[0] if base.cpu is None else base.cpu
        placement.check_cpus(topo, [cpu])
        check_stride(base.stride)
        if sizes is None:
            sizes = sweep_sizes(topo, cpu, stride=base.stride) if sweep else [base.bytes]
        out = []
        for m in modes or [base.mode]:
            for s in sizes:
                p = replace(base, cpu=cpu, bytes=s, mode=m,
                            default_cpu=base.default_cpu or base.cpu is None).checked(topo)
                out.append(Case(f"{m} {format_bytes(p.bytes or 0)}", p))
        return out

    def measure(self, topo: Topology, case: Case) -> BenchResult:
        p = case.params
        if p.kind == "chains":        # lat --chains: families/latency/chains.py
            from numascope.families.latency import chains
            return chains.run(topo, p)
        if p.kind == "loaded":
            (res,) = run_loaded(topo, p)
            return self._on_curve(res)
        return run(topo, p)

    def _on_curve(self, r: BenchResult) -> BenchResult:
        curve = self._curves.setdefault(curve_key(r), [])
        curve.append(r)
        for inv in inversions(curve):
            if (r is inv.low or r is inv.high) and inv.note() not in r.notes:
                r.notes.append(inv.note())
        return r


def suite_cases(topo: Topology, profile: Profile) -> list[Case]:
    """Thinned (quick, the default): one DRAM working set (TLB-friendly); dense (full):
    both modes at DRAM size, the whole sweep, loaded latency when there is a second CPU;
    both: memory-level parallelism (lat --chains) on the first core of each L3 kind. Idle
    chases take samples until steady (the profile's rule, one pool for the stage); loaded
    ones and the chains a fixed count."""
    b = Latency()
    cpu = topo.usable_cpus()[0]
    samples = profile.repetitions(profile.samples)    # quick, full: until steady
    if not profile.dense:
        size = profile.working_set or quick_dram_size(topo, cpu)
        cases = b.cases(topo, LatencyParams(bytes=size, samples=samples, loads=1 << 17))
        steady.pool_cases(samples, len(cases))
        from numascope.families.latency import chains  # misses in flight, per L3 kind
        return cases + chains.suite_cases(topo, profile.samples, size, 1 << 17)
    base = LatencyParams(samples=samples)
    cases = b.cases(topo, base, modes=list(MODES))
    cases += [Case(f"sweep {c.label}", c.params) for c in b.cases(topo, base, sweep=True)]
    steady.pool_cases(samples, len(cases))
    if len(topo.usable_cpus()) > 1:
        cases += b.cases(topo, LatencyParams(kind="loaded", samples=SUITE_LOADED_SAMPLES),
                         delays=list(LOADED_DELAYS))
    from numascope.families.latency import chains  # memory-level parallelism, per L3 kind
    return cases + chains.suite_cases(topo, profile.samples)
