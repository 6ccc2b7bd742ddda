"""The interconnect family's headline lines: MPI latency and bandwidth, the best of each
reach measured (between two hosts, and within this one: a pair through shared memory is
not a pair over the network), each with how it was measured (reach, path, the OSU test and
its method, 2 ranks)."""

from __future__ import annotations

from numascope.results.headline import Headline, known, node_packages, ok, stat
from numascope.results.record import BenchResult
from numascope.results.run import RunRecord

SECTION = "interconnect"


def lines(run: RunRecord) -> list[Headline]:
    rs = [r for r in run.results if r.family == "interconnect" and r.validated]
    out = []
    for reach, peer in (("between hosts", True), ("within a host", False)):
        mine = [r for r in rs if (r.params.get("mode") == "peer") == peer]
        for metric, key, pick, test in (("latency", "mpi_latency", min, "lat"),
                                        ("bandwidth", "mpi_bandwidth", max, "bw")):
            got = [r for r in mine if ok(r, metric)]
            if not got:
                continue
            best = pick(got, key=lambda r, m=metric: r.metrics[m].median)
            out.append(stat(best, metric, key, f"MPI {metric} {reach}, {best.case}", SECTION,
                            how=known({"reach": reach, "path": _mpi_path(run, best),
                                       "kernel": _osu_kernel(best, test), "threads": 2})))
    return out


def _osu_kernel(r: BenchResult, test: str) -> str:
    from numascope.families.interconnect import bench as net
    return net.kernel_of(r.params, test)


def _mpi_path(run: RunRecord, r: BenchResult) -> str:
    """Where a pair's ranks sat: within a host, the path (same L3, other socket …); between
    hosts, rank 0's node against this host's HCA (the HCA's node, its socket, the other
    socket); "" where not known."""
    q = r.params
    if q.get("mode") != "peer":
        return str(q.get("path") or "")
    hca = q.get("hca") or {}
    at, node = hca.get("hca_node"), q.get("node_a")
    if at is None or node is None:
        return ""
    if at == node:
        return "HCA's node"
    pkg = node_packages(run)
    if not pkg.get(at) or not pkg.get(node):
        return ""
    return "HCA's socket" if pkg[at] == pkg[node] else "other socket than the HCA"
