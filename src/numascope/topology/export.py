"""The stable JSON form of a Topology (documented in docs/topology-schema.md)."""

from __future__ import annotations

import dataclasses
from typing import Any

from numascope.topology.model import Topology
from numascope.topology.tiers import tiers_to_dict

SCHEMA_VERSION = 1


def _d(obj: Any) -> dict:
    return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}


def _plain(v: Any) -> Any:
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return _d(v)
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [_plain(x) for x in (sorted(v) if isinstance(v, (set, frozenset)) else v)]
    return v


def topology_to_dict(topo: Topology) -> dict:
    ids = topo.node_ids()
    rows = [[topo.node(a).distances.get(b) for b in ids] for a in ids]
    return {
        "schema_version": SCHEMA_VERSION,
        "source": topo.source,
        "cpu": {"model": topo.cpu_model, "vendor": topo.cpu_vendor,
                "family": topo.cpu_family, "model_number": topo.cpu_model_number,
                "stepping": topo.cpu_stepping, "hypervisor": topo.hypervisor,
                "flags": list(topo.cpu_flags) if topo.cpu_flags is not None else None},
        "packages": [_d(p) for p in topo.packages],
        "nodes": [{**_d(n), "cpuless": n.cpuless, "memoryless": n.memoryless}
                  for n in topo.nodes],
        "l3": [_d(d) for d in topo.l3s],
        "cores": [_d(c) for c in topo.cores],
        "cpus": [{**_d(c), "usable": c.usable} for c in topo.cpus],
        "caches": [_d(c) for c in topo.caches],
        "distance_matrix": {"nodes": ids, "rows": rows},
        "devices": [_d(d) for d in topo.devices],
        "memory_tiers": tiers_to_dict(topo),
        "facts": {k: _d(f) for k, f in topo.facts.items()},
        "allowed_evidence": topo.allowed_evidence,
        "notes": list(topo.notes),
    }
