"""Simulated `numascope run --quick` records for the compare tests (no tests here).

A run has the shape of a quick run: 79 metrics in 7 families, 29 of them primary. Each run
draws its own offset per metric (the boot, the page placement, the clock state: what the
repetitions of one run share) and then small noise per repetition around it, so that
repetitions are correlated within a run, as on a real machine. Derived metrics follow their
primary one (dram_bandwidth, seconds, tsc_cycles, …), as they do in the real records."""

from __future__ import annotations

import random

from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord


def _draw(rng: random.Random, center: float, run_sd: float, rep_sd: float, reps: int,
          scale: float = 1.0) -> list[float]:
    offset = rng.gauss(0, run_sd)
    return [center * scale * (1 + offset + rng.gauss(0, rep_sd)) for _ in range(reps)]


def _m(name: str, unit: str, higher: bool, values: list[float]) -> Metric:
    return Metric(name, unit, higher, values)


def quick_run_results(rng: random.Random, scale: dict[str, float] | None = None,
                      noise: float = 1.0) -> list[BenchResult]:
    """One run's results. scale: (family/case/metric) → factor on the true value (a planted
    change); noise multiplies every run-to-run spread."""
    scale = scale or {}
    out: list[BenchResult] = []

    def f(family: str, case: str, metric: str) -> float:
        return scale.get(f"{family}/{case}/{metric}", 1.0)

    for i, kernel in enumerate(("copy", "scale", "add", "triad", "read")):
        case = f"{kernel} avx2 {16 * (i + 1)}T"
        bw = _draw(rng, 100.0 + 10 * i, 0.015 * noise, 0.005, 10, f("bandwidth", case,
                                                                     "bandwidth"))
        out.append(BenchResult("bandwidth", case, {"threads": 16}, {
            "bandwidth": _m("bandwidth", "GB/s", True, bw),
            "dram_bandwidth": _m("dram_bandwidth", "GB/s", True, [v * 1.5 for v in bw]),
            "seconds": _m("seconds", "s", False, [3.2 / v for v in bw]),
            "bandwidth[avx2]": _m("bandwidth[avx2]", "GB/s", True,
                                  _draw(rng, 95.0, 0.015 * noise, 0.005, 10)),
            "bandwidth[avx2-nt]": _m("bandwidth[avx2-nt]", "GB/s", True, bw)}))
    for node in range(4):
        case = f"tlb 1 GiB cpu0 node{node}"
        ns = _draw(rng, 110.0 + 20 * node, 0.01 * noise, 0.02, 15,
                   f("latency", case, "latency"))
        out.append(BenchResult("latency", case, {"kind": "idle"}, {
            "latency": _m("latency", "ns", False, ns),
            "tsc_cycles": _m("tsc_cycles", "TSC cycles", False, [v * 2.4 for v in ns]),
            "core_cycles": _m("core_cycles", "cycles", False, [v * 3.1 for v in ns])}))
    for delay in (0, 100):
        ns = _draw(rng, 200.0 - delay / 2, 0.02 * noise, 0.03, 15)
        out.append(BenchResult("latency", f"loaded delay={delay} 15 loaders", {}, {
            "latency": _m("latency", "ns", False, ns),
            "tsc_cycles": _m("tsc_cycles", "TSC cycles", False, [v * 2.4 for v in ns]),
            "bandwidth": _m("bandwidth", "GB/s", True, _draw(rng, 80.0, 0.03 * noise, 0, 1))}))
    for src in range(2):
        for dst in range(2):
            case = f"N{src}->N{dst}"
            out.append(BenchResult("matrix", case, {}, {
                "latency": _m("latency", "ns", False,
                              _draw(rng, 110.0 + 40 * (src != dst), 0.01 * noise, 0.02, 9)),
                "bandwidth": _m("bandwidth", "GB/s", True,
                                _draw(rng, 60.0 - 20 * (src != dst), 0.02 * noise, 0.01, 5,
                                      f("matrix", case, "bandwidth")))}))
    for k in range(6):
        ns = _draw(rng, 40.0 + 30 * (k % 3), 0.05 * noise, 0.08, 15)
        out.append(BenchResult("c2c", f"cpu0<->cpu{k + 1}", {}, {
            "latency": _m("latency", "ns", False, ns),
            "tsc_cycles": _m("tsc_cycles", "TSC cycles", False, [v * 2.4 for v in ns])}))
    for threads in (1, 16):
        comp = _draw(rng, 5.0 * threads, 0.03 * noise, 0.02, 5)
        plain = _draw(rng, 4.0 * threads, 0.03 * noise, 0.02, 5)
        out.append(BenchResult("compress", f"lz4 {threads}T", {}, {
            "decompress_sum": _m("decompress_sum", "GB/s", True, comp),
            "plain_sum": _m("plain_sum", "GB/s", True, plain),
            "speedup": _m("speedup", "x", True, [c / p for c, p in zip(comp, plain)]),
            "ratio": _m("ratio", "x", True, [3.0]),   # deterministic
            "compress_speed": _m("compress_speed", "GB/s", True,
                                 _draw(rng, 2.0, 0.03 * noise, 0, 1))}))
    out.append(BenchResult("compute", "clock", {"kind": "clock"}, {
        "single_ghz": _m("single_ghz", "GHz", True, _draw(rng, 3.7, 0.005 * noise, 0.005, 32)),
        "all_busy_ghz": _m("all_busy_ghz", "GHz", True,
                           _draw(rng, 3.1, 0.01 * noise, 0.005, 32)),
        "tsc_ghz": _m("tsc_ghz", "GHz", True, [2.4])}))
    gf = _draw(rng, 1500.0, 0.01 * noise, 0.01, 3)
    out.append(BenchResult("compute", "dgemm n=4096", {"kind": "dgemm"}, {
        "gflops": _m("gflops", "GFLOP/s", True, gf),
        "seconds": _m("seconds", "s", False, [137.4 / g for g in gf]),
        "pct_of_peak": _m("pct_of_peak", "%", True, [g / 30 for g in gf])}))
    return out


def quick_run(rng: random.Random, run_id: str, tags: dict[str, str] | None = None,
              scale: dict[str, float] | None = None, noise: float = 1.0) -> RunRecord:
    rec = RunRecord.new(tags=tags or {})
    rec.run_id = run_id
    rec.host = {"hostname": "node01", "kernel": "6.1.0", "memory_mode": "NPS1"}
    rec.results = quick_run_results(rng, scale, noise)
    rec.status = "complete"
    return rec


def sides(seed: int, n_a: int, n_b: int, scale_b: dict[str, float] | None = None,
          noise: float = 1.0) -> tuple[list[RunRecord], list[RunRecord]]:
    """n_a runs of configuration A and n_b of B (B = A unless scale_b plants a change)."""
    rng = random.Random(seed)
    a = [quick_run(rng, f"a{i}", {"cfg": "A"}, noise=noise) for i in range(n_a)]
    b = [quick_run(rng, f"b{i}", {"cfg": "B"}, scale_b, noise) for i in range(n_b)]
    return a, b
