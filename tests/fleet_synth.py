"""Synthetic fleets for the fleet tests: run records as `numascope fleet run` stores them,
with the numbers drawn from a seeded generator."""

from __future__ import annotations

import random

from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord, StageInfo

MODEL = "AMD EPYC 9654 96-Core Processor"
# (family, case, metric, unit, higher_is_better, centre)
METRICS = [("bandwidth", "triad compact 96T", "bandwidth", "GB/s", True, 380.0),
           ("bandwidth", "triad S0 48T", "bandwidth", "GB/s", True, 190.0),
           ("latency", "dram N0", "latency", "ns", False, 110.0),
           ("matrix", "N0->N1", "bandwidth", "GB/s", True, 60.0)]
PEAK = 400.0     # the synthetic nodes' DRAM peak: the triad centre is 95 % of it


def node(host: str, fleet: str, factors: dict[str, float], *, rng: random.Random,
         model: str = MODEL, nodes: int = 2, mode: str = "NPS1", kernel: str = "6.1.0",
         dimms: int = 24, peak: float = PEAK) -> RunRecord:
    """One node; `factors` maps "family/case/metric" to this node's multiplier of the centre
    (its natural spread and any planted slowness), 2 repetitions around it."""
    rec = RunRecord.new(tags={"fleet": fleet, "host": host, "slurm_job": "42"})
    rec.host = {"hostname": host, "cpu_model": model, "memory_mode": mode, "nodes": nodes,
                "kernel": kernel,
                "peaks": {"dram": {"value": peak, "unit": "GB/s", "status": "known",
                                   "channels": dimms, "type": "DDR5", "mts": 4800}}}
    rec.results = []
    for fam, case, name, unit, hib, centre in METRICS:
        f = factors.get(f"{fam}/{case}/{name}", 1.0)
        vals = [centre * f * (1 + rng.gauss(0, 0.003)) for _ in range(2)]
        rec.results.append(BenchResult(fam, case, {}, {name: Metric(name, unit, hib, vals)}))
    rec.stages = [StageInfo("topology", "done"), StageInfo("bandwidth", "done", "", 2)]
    rec.status, rec.finished = "complete", rec.started
    return rec


def fleet(n: int, planted: dict[int, dict[str, float]], seed: int, fleet_id: str = "f1",
          spread: tuple[float, float] = (0.05, 0.10)) -> list[RunRecord]:
    """n nodes; each metric has its own natural spread (relative sd) drawn from `spread`;
    planted[i] multiplies node i's metrics on top of it."""
    rng = random.Random(seed)
    sds = {f"{m[0]}/{m[1]}/{m[2]}": rng.uniform(*spread) for m in METRICS}
    out = []
    for i in range(n):
        factors = {k: max(0.05, 1 + rng.gauss(0, sd)) for k, sd in sds.items()}
        for k, f in planted.get(i, {}).items():
            factors[k] *= f
        out.append(node(f"n{i:04d}", fleet_id, factors, rng=rng))
    return out
