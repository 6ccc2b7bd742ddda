"""DRAM traffic of the bandwidth kernels: does a store read its target line first
(write-allocate)? Stated per CPU and store kind, with the reason, or "unknown".

    wa = write_allocate(cpu_uarch(topo), stores="ordinary", isa="avx512")
    wa.allocates        # True / False / None (unknown: the DRAM column is dropped)
    wa.reason           # why, with its source

The rules, from the vendors' documents and published measurements:
  - streaming (non-temporal) stores never allocate: they fill write-combining buffers and
    write whole lines (Intel SDM vol. 1, "Caching of Temporal vs. Non-Temporal Data"; AMD's
    optimization guides, MOVNT*);
  - a kernel without stores (read) has nothing to allocate;
  - ordinary stores allocate on AMD Zen 1-5 and on Intel server cores up to Cooper Lake:
    a store miss is a read-for-ownership (RFO) of the whole line;
  - Intel Ice Lake-SP and later server cores may turn the RFO of a fully written line into
    an ownership request without data ("SpecI2M"), depending on load: the share that skips
    the read is not known beforehand, so the traffic is unknown;
  - Arm Neoverse cores switch to write streaming mode on sustained full-line stores (TRM,
    "Write streaming mode"): no linefill, so no write-allocate;
  - any other CPU, or one not identified: unknown, never a guess."""

from __future__ import annotations

from dataclasses import dataclass

from numascope.peaks import flops
from numascope.topology import uarch
from numascope.topology.model import Topology

YES, NO, UNKNOWN, NONE = "yes", "no", "unknown", "n/a"

NT_REASON = ("streaming (non-temporal) stores write whole lines through write-combining "
             "buffers without reading them (Intel SDM vol. 1, 'Caching of Temporal vs. "
             "Non-Temporal Data'; AMD's optimization guides)")
RFO = "an ordinary store that misses reads the line first (read-for-ownership)"
ALLOCATING = {
    flops.ZEN1.name: f"AMD Zen 1: {RFO}",
    flops.ZEN2.name: f"AMD Zen 2: {RFO}",
    flops.ZEN3.name: f"AMD Zen 3: {RFO}",
    flops.ZEN4.name: f"AMD Zen 4: {RFO}; no automatic write-allocate evasion is documented",
    flops.ZEN5.name: f"AMD Zen 5: {RFO}; no automatic write-allocate evasion is documented",
    flops.SANDY_BRIDGE.name: f"Intel Sandy/Ivy Bridge: {RFO}",
    flops.HASWELL.name: f"Intel Haswell/Broadwell: {RFO}",
    flops.SKYLAKE_SP.name: f"Intel Skylake-SP: {RFO}",
    flops.CASCADE_LAKE.name: f"Intel Cascade Lake: {RFO}",
    flops.COOPER_LAKE.name: f"Intel Cooper Lake: {RFO}",
}
SPECI2M = ("may skip the read of a fully written line (SpecI2M: ownership without data), "
           "depending on load, so the traffic lies between STREAM bytes and STREAM bytes plus "
           "write-allocate and is not known beforehand")
PARTIAL = {
    flops.ICE_LAKE_SP.name: f"Intel Ice Lake-SP {SPECI2M}",
    flops.SAPPHIRE_RAPIDS.name: f"Intel Sapphire Rapids {SPECI2M}",
    flops.EMERALD_RAPIDS.name: f"Intel Emerald Rapids {SPECI2M}",
    flops.GRANITE_RAPIDS.name: f"Intel Granite Rapids {SPECI2M}",
}
STREAMING_MODE = ("switches to write streaming mode on sustained full-line stores: no "
                  "linefill, so no write-allocate (Arm TRM, 'Write streaming mode')")
NON_ALLOCATING = {u.name: f"Arm {u.name} {STREAMING_MODE}"
                  for u in (flops.NEOVERSE_N1, flops.NEOVERSE_N2, flops.NEOVERSE_V1,
                            flops.NEOVERSE_V2)}


@dataclass(frozen=True)
class WriteAllocate:
    allocates: bool | None      # None: unknown
    reason: str

    @property
    def label(self) -> str:
        return UNKNOWN if self.allocates is None else YES if self.allocates else NO


def cpu_uarch(topo: Topology) -> tuple[flops.Uarch | None, str]:
    """The topology's CPU microarchitecture (topology.uarch: its model number, or the ISA
    features and caches where they overrule it) and the evidence."""
    core = uarch.of_topology(topo)
    return core.uarch, (f"{core.decided_by}: {core.evidence}" if core.decided_by
                        else core.evidence)


def write_allocate(cpu: tuple[flops.Uarch | None, str], stores: str) -> WriteAllocate:
    """Whether `stores` ("ordinary", "streaming" or "n/a": no stores) write-allocate on
    this CPU (cpu_uarch's answer)."""
    if stores == NONE:
        return WriteAllocate(False, "the kernel does not store")
    if stores == "streaming":
        return WriteAllocate(False, NT_REASON)
    uarch, evidence = cpu
    if uarch is None:
        return WriteAllocate(None, f"CPU not identified ({evidence}): whether ordinary "
                                   "stores write-allocate is not known")
    for table, allocates in ((ALLOCATING, True), (NON_ALLOCATING, False), (PARTIAL, None)):
        if uarch.name in table:
            return WriteAllocate(allocates, f"{table[uarch.name]} ({evidence})")
    return WriteAllocate(None, f"{uarch.name} ({evidence}): whether ordinary stores "
                               "write-allocate is not known")


def dram_bytes(stream_bytes: int, stores_per_element: int, wa: WriteAllocate) -> int | None:
    """Bytes per element on the memory bus: STREAM's, plus one read of every stored element
    when stores write-allocate; None when that is unknown."""
    if wa.allocates is None:
        return None
    return stream_bytes + (8 * stores_per_element if wa.allocates else 0)
