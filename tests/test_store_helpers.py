"""Builders shared by the store/run/compare/report tests (no tests here)."""

from __future__ import annotations

import random

from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord, StageInfo
from numascope.topology.model import (
    Cache,
    Core,
    Cpu,
    Fact,
    L3Domain,
    Node,
    Package,
    PciDevice,
    Topology,
)


def make_topo(device_name: str = "mlx5_0") -> Topology:
    """2 packages × 1 node × 1 L3 × 2 cores × 2 threads, one NIC on node 1."""
    cpus, cores, l3s, nodes, pkgs = [], [], [], [], []
    for p in range(2):
        ids = [p * 4 + i for i in range(4)]
        for k in range(2):
            cid = len(cores)
            cores.append(Core(cid, p, k, (ids[2 * k], ids[2 * k + 1])))
            for s in range(2):
                cpus.append(Cpu(ids[2 * k + s], p, p, p, cid, s))
        l3s.append(L3Domain(p, 32 << 20, tuple(ids), p, (p,)))
        nodes.append(Node(p, tuple(ids), 64 << 30, 60 << 30, {0: 10 if p == 0 else 32,
                                                             1: 32 if p == 0 else 10}, (p,)))
        pkgs.append(Package(p, tuple(ids), (p,), (p,)))
    return Topology(source="test", cpus=cpus, cores=cores, l3s=l3s, nodes=nodes,
                    packages=pkgs,
                    caches=[Cache(3, "Unified", 32 << 20, tuple(range(4)))],
                    devices=[PciDevice("0000:3b:00.0", "infiniband", device_name, "0x15b3",
                                       "0x1017", 1, tuple(range(4, 8)))],
                    facts={"memory_mode": Fact("NPS1", "known", "test")},
                    cpu_model="Test CPU 9000")


def make_result(family: str = "bandwidth", case: str = "triad 2T",
                values: list[float] | None = None, unit: str = "GB/s",
                higher: bool = True, params: dict | None = None) -> BenchResult:
    return BenchResult(family, case, dict(params or {"threads": 2}),
                       {"bandwidth": Metric("bandwidth", unit, higher,
                                            list(values or [10.0, 11.0, 12.0]))},
                       placement={"cpus": [0, 1]}, notes=["note"])


def noisy(center: float, n: int, rel: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [center * (1 + rng.gauss(0, rel)) for _ in range(n)]


def make_run(tags: dict[str, str] | None = None, results: list[BenchResult] | None = None,
             **host: object) -> RunRecord:
    rec = RunRecord.new(tags=tags or {})
    rec.host = {"hostname": "node01", "kernel": "6.1.0", "bios_version": "1.0",
                "memory_mode": "NPS1", "topology_digest": "abc", **host}
    rec.stages = [StageInfo("bandwidth", "done", "", len(results or []), 1.5)]
    rec.results = list(results if results is not None else [make_result()])
    rec.status = "complete"
    rec.finished = rec.started
    return rec
