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


def quick_metrics() -> list[tuple[str, str, str, str, bool, float]]:
    """The primary metrics of a real `run --quick` record (tests/data/advise_quick_run.json:
    20 metrics in 7 families), as METRICS rows."""
    import json
    from pathlib import Path

    from numascope.fleet.outliers import node_values
    from numascope.results.run import migrate
    d = json.loads((Path(__file__).parent / "data" / "advise_quick_run.json").read_text())
    rows = []
    for key, (v, unit, hib) in node_values(RunRecord.from_dict(migrate(d))).items():
        fam, rest = key.split("/", 1)
        case, name = rest.rsplit("/", 1)
        rows.append((fam, case, name, unit, hib, v))
    return rows


def wide_fleet(n: int, planted: dict[int, float], seed: int,
               noise: tuple[float, float] = (0.03, 0.05), fleet_id: str = "f1",
               metrics: list | None = None, group_size: int | None = None,
               quantum: float | None = None) -> list[RunRecord]:
    """n nodes measuring the quick run's 20 metrics; each metric's node-to-node relative sd
    is drawn from `noise`; planted[i] = e makes node i worse by e on every metric (the
    bandwidths x (1 - e), the latencies x (1 + e)). group_size: nodes i // group_size share
    a tag rack=<k>, so the fleet splits into configuration groups of that size. quantum:
    every value rounded to that fraction of its metric's centre (a counter's resolution)."""
    import numpy as np
    rows = metrics or quick_metrics()
    rng = np.random.default_rng(seed)
    sds = rng.uniform(*noise, size=len(rows))
    factors = np.maximum(0.05, 1 + rng.normal(0, 1, (n, len(rows))) * sds)
    reps = 1 + rng.normal(0, 0.003, (n, len(rows), 2))
    hib = np.array([r[4] for r in rows])
    for i, e in planted.items():
        factors[i] *= np.where(hib, 1 - e, 1 + e)
    template = RunRecord.new(tags={"fleet": fleet_id})
    template.host = {"cpu_model": MODEL, "memory_mode": "NPS1", "nodes": 2,
                     "kernel": "6.1.0"}
    out = []
    for i in range(n):
        tags = {"fleet": fleet_id, "host": f"n{i:05d}"}
        if group_size:
            tags["rack"] = f"r{i // group_size:05d}"
        rec = RunRecord.new(tags=tags)
        rec.host = {**template.host, "hostname": f"n{i:05d}"}
        by_case: dict[tuple[str, str], dict[str, Metric]] = {}
        for j, (fam, case, name, unit, h, centre) in enumerate(rows):
            vals = centre * factors[i, j] * reps[i, j]
            if quantum:
                vals = np.round(vals / (centre * quantum)) * (centre * quantum)
            vals = vals.tolist()
            by_case.setdefault((fam, case), {})[name] = Metric(name, unit, bool(h), vals)
        rec.results = [BenchResult(f, c, {}, ms) for (f, c), ms in by_case.items()]
        rec.stages = [StageInfo("topology", "done")]
        rec.status, rec.finished = "complete", rec.started
        out.append(rec)
    return out
