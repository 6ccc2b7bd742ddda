"""How many independent vector sums the read kernel keeps (bw.c: 8 or 16): at least the
core's vector loads per cycle times its add latency, so that a load can issue every cycle
on every load port instead of waiting for an add, with half as many again to spare (the
scheduler does not issue perfectly). From the core's published L1 ports and add latency
(topology.uarch); a core without them gets the most the kernel has.

    n, why = read_accumulators(topo, ["avx512", "avx2"])

Per ISA: vector loads per cycle = min(load ports, L1 load bytes per cycle / vector bytes),
e.g. Zen 4 at AVX-512: min(3, 64 / 64) = 1 (a 512-bit load is two 256-bit ones) x 3 cycles
= 3 sums, 8 kept; Golden Cove at AVX-512: min(3, 128 / 64) = 2 x 4 = 8, 16 kept. One count
per call (the variants of a call are timed in one kernel call each): the largest any
variant's ISA needs."""

from __future__ import annotations

from numascope.topology import uarch
from numascope.topology.model import Topology

CHOICES = (8, 16)            # bw.c's read kernel: one unrolled loop each
SLACK = 1.5
VECTOR_BYTES = {"avx512": 64, "avx2": 32}


def needed(l1: uarch.L1Ports, isa: str) -> float | None:
    """Independent sums that keep the loads of `isa` issuing every cycle (None: scalar)."""
    width = VECTOR_BYTES.get(isa)
    if width is None:
        return None
    return min(l1.loads, l1.load / width) * l1.add_latency


def read_accumulators(topo: Topology, isas: list[str]) -> tuple[int, str]:
    """The read kernel's sums for a call timing `isas` on this core, and why."""
    core = uarch.of_topology(topo)
    u = core.uarch
    if u is None or u.l1 is None:
        who = core.name or "the core is not identified"
        return CHOICES[-1], (f"{CHOICES[-1]}: the most the kernel has ({who}: no published "
                             "L1 ports to size them by)")
    needs = {i: n for i in isas if (n := needed(u.l1, i)) is not None}
    if not needs:
        return CHOICES[0], f"{CHOICES[0]}: scalar only (its own 4 sums; the count is unused)"
    isa, need = max(needs.items(), key=lambda kv: kv[1])
    n = next((c for c in CHOICES if c >= SLACK * need), CHOICES[-1])
    per = min(u.l1.loads, u.l1.load / VECTOR_BYTES[isa])
    return n, (f"{n}: {u.name} at {isa} issues {per:g} vector loads a cycle and adds in "
               f"{u.l1.add_latency} cycles: {need:g} sums in flight, x{SLACK:g} to spare "
               f"({u.l1.basis}; {u.l1.source})")
