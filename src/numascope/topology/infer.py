"""Inference: what the sysfs facts say about the machine, each with its evidence."""

from __future__ import annotations

from numascope.topology.model import Fact, Topology


def known(value, evidence: str) -> Fact:
    return Fact(value, "known", evidence)


def infer_facts(topo: Topology) -> dict[str, Fact]:
    f: dict[str, Fact] = {}
    f["sockets"] = known(len(topo.packages), "distinct physical_package_id of online CPUs")
    return f
