"""The "memory tiers" section of `numascope topo`: one row per memory node, then one line on
weighted interleave."""

from __future__ import annotations

from rich.table import Table

from numascope.topology.model import NodeAccess, Topology
from numascope.topology.tiers import cpu_nodes, kernel_tier_of, tiers


def _bytes(n: int | None) -> str:
    if n is None:
        return "unknown"
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n >> 20} MiB"


def _or_dash(v: int | None) -> str:
    return "-" if v is None else str(v)


def _hmat(acc: tuple[NodeAccess, ...]) -> str:
    parts = []
    same = len(acc) == 2 and acc[0].initiators == acc[1].initiators and \
        acc[0].read_latency_ns == acc[1].read_latency_ns and \
        acc[0].read_bandwidth_mbs == acc[1].read_bandwidth_mbs
    for a in acc[:1] if same else acc:
        who = ",".join(f"N{i}" for i in a.initiators) or "unknown initiators"
        lat = f"{a.read_latency_ns}ns" if a.read_latency_ns is not None else "latency unknown"
        bw = f"{a.read_bandwidth_mbs / 1000:.3g}GB/s" if a.read_bandwidth_mbs is not None \
            else "bandwidth unknown"
        parts.append(f"{'a0/1' if same else f'a{a.access}'} {who} {lat} {bw}")
    return "; ".join(parts)


def weighted_interleave_line(topo: Topology) -> str:
    tg = topo.tiering
    if not tg.weighted_interleave:
        return "weighted interleave: not in this kernel (Linux >= 6.9 has it)"
    w = " ".join(f"N{n}:{v}" for n, v in sorted(tg.interleave_weights.items())) or "none"
    auto = "" if tg.interleave_auto is None else \
        f", {'auto (set by the kernel)' if tg.interleave_auto else 'set by hand'}"
    return f"weighted interleave: available, system weights {w}{auto}"


def tiers_table(topo: Topology) -> Table:
    cpun = cpu_nodes(topo)
    kt = kernel_tier_of(topo)
    hmat = topo.tiering.access
    t = Table(title="Memory tiers" + (" (HMAT: read latency and bandwidth from the best "
                                      "initiators, a0 any, a1 CPUs)" if hmat else ""),
              show_edge=False)
    t.add_column("tier")
    t.add_column("node")
    t.add_column("memory", justify="right")
    t.add_column("kernel", justify="right")
    t.add_column("distance from CPU nodes", overflow="fold")
    if hmat:
        t.add_column("HMAT", overflow="fold")
    for tier in tiers(topo):
        for i, n in enumerate(tier.nodes):
            dist = " ".join(f"N{c}:{_or_dash(topo.distance(c, n))}" for c in cpun)
            row = [tier.name if i == 0 else "", f"N{n}", _bytes(topo.node(n).memory_bytes),
                   f"tier{kt[n]}" if n in kt else "-", dist or "-"]
            if hmat:
                row.append(_hmat(hmat.get(n, ())) or "-")
            t.add_row(*row)
    return t


def tiers_section(topo: Topology) -> list:
    parts: list = [tiers_table(topo)]
    if not any(t.kind == "cpuless" for t in tiers(topo)):
        parts.append("no CPU-less memory node: one DRAM tier")
    parts.append(weighted_interleave_line(topo))
    return parts
