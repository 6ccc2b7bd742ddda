"""FLOP per cycle per core, by microarchitecture, and the FLOP/s peak.

peak = cores × FLOP/cycle × clock. FLOP/cycle = FMA units × vector lanes × 2 (an FMA is two
FLOPs). The table (UARCHS, numascope.topology.uarch) is keyed by archspec's
microarchitecture names: zen4, icelake, skylake_avx512, neoverse_v1, … The microarchitecture
comes from /proc/cpuinfo read under a root (a replayed machine's, never this host's), then
is checked against the ISA flags the OS shows: a guest that hides AVX-512 can only reach
the AVX2 rate.

- Arm: implementer/part, looked up in archspec's own part numbers.
- x86: family/model (and stepping for model 0x55), unless the ISA features show what that
  core lacks (a hypervisor's synthetic model number): then the features and the per-core
  caches decide (topology.uarch.identify, which says what decided). archspec itself names
  an x86 CPU from its flags alone, which a hypervisor masks (a Genoa guest is "x86_64_v4")
  and which do not tell a part with one 512-bit FMA unit from one with two (archspec's
  icelake is Ice Lake-SP and the client Ice/Tiger/Rocket Lake alike).
- any other CPU: archspec's name from the flags goes into the evidence, and the figure comes
  from the vector width the flags show, with the assumption spelled out."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from archspec.cpu import TARGETS, Microarchitecture
from archspec.cpu import detect as _archspec
from archspec.cpu.schema import TARGETS_JSON

from numascope.host import Host
from numascope.topology import uarch
from numascope.topology.files import Tree

# The microarchitectures and their identification live in the machine layer
# (numascope.topology.uarch: the tables, the model numbers, the features and caches that
# overrule a VM's synthetic model number); re-exported here for the peaks' callers.
A64FX, CASCADE_LAKE, COOPER_LAKE = uarch.A64FX, uarch.CASCADE_LAKE, uarch.COOPER_LAKE
EMERALD_RAPIDS, GRANITE_RAPIDS, HASWELL = uarch.EMERALD_RAPIDS, uarch.GRANITE_RAPIDS, \
    uarch.HASWELL
ICE_LAKE_SP, NEOVERSE_N1, NEOVERSE_N2 = uarch.ICE_LAKE_SP, uarch.NEOVERSE_N1, uarch.NEOVERSE_N2
NEOVERSE_V1, NEOVERSE_V2, ROCKET_LAKE = uarch.NEOVERSE_V1, uarch.NEOVERSE_V2, uarch.ROCKET_LAKE
SANDY_BRIDGE, SAPPHIRE_RAPIDS, SIERRA_FOREST = uarch.SANDY_BRIDGE, uarch.SAPPHIRE_RAPIDS, \
    uarch.SIERRA_FOREST
SKYLAKE_SP, THUNDERX2 = uarch.SKYLAKE_SP, uarch.THUNDERX2
ZEN1, ZEN2, ZEN3, ZEN4, ZEN5 = uarch.ZEN1, uarch.ZEN2, uarch.ZEN3, uarch.ZEN4, uarch.ZEN5
Uarch, UARCHS, NOT_IN_ARCHSPEC = uarch.Uarch, uarch.UARCHS, uarch.NOT_IN_ARCHSPEC
AMD_MODELS, INTEL_MODELS = uarch.AMD_MODELS, uarch.INTEL_MODELS


@functools.cache
def arm_parts() -> dict[tuple[int, int], str]:
    """(implementer, part) → archspec name, from archspec's own targets and vendor codes."""
    codes: dict[str, list[int]] = {}
    for code, vendor in TARGETS_JSON["conversions"]["arm_vendors"].items():
        codes.setdefault(vendor, []).append(int(code, 16))
    parts: dict[tuple[int, int], str] = {}
    for t in TARGETS.values():
        part = _int(t.cpu_part)             # "" or "Unknown" where archspec has no number
        if t.family.name == "aarch64" and part is not None:
            for code in codes.get(t.vendor, []):
                parts[(code, part)] = t.name
    return parts


@dataclass
class FlopsPerCycle:
    dp: int
    sp: int
    uarch: str | None           # None when not identified
    status: str                 # "known", "assumed" (from flags), "unknown"
    evidence: str
    assumption: str = ""        # what the figure rests on when not known
    alt_dp: int | None = None   # the other plausible figure when assumed
    notes: list[str] = field(default_factory=list)
    archspec: str | None = None  # the uarch's archspec name; or archspec's from the flags
    decided_by: str = ""        # what identified the core (topology.uarch.Core.decided_by)


def _int(v: str | None) -> int | None:
    if v is None:
        return None
    try:
        return int(v, 0)
    except ValueError:
        return None


def archspec_name(info: dict[str, str]) -> tuple[str | None, str]:
    """The CPU's archspec name (a UARCHS key) from its identity: family/model (x86) or
    implementer/part (Arm); None when the tables do not hold it. With the evidence."""
    vendor = info.get("vendor_id", "")
    fam, model = _int(info.get("cpu family")), _int(info.get("model"))
    if vendor in ("AuthenticAMD", "HygonGenuine", "GenuineIntel") and fam is not None \
            and model is not None:
        return uarch.by_model(vendor, fam, model, _int(info.get("stepping")))
    impl, part = _int(info.get("CPU implementer")), _int(info.get("CPU part"))
    if impl is not None and part is not None:
        ev = f"Arm implementer {impl:#x} part {part:#x}"
        name = arm_parts().get((impl, part))
        if name in UARCHS:
            return name, ev
        return None, ev + (f" ({name}) has no figure in the table" if name
                           else " is not in the table")
    return None, "no family/model or implementer/part in /proc/cpuinfo"


def core_of(info: dict[str, str], caches: tuple[int | None, int | None] = (None, None)
            ) -> uarch.Core:
    """The core of this cpuinfo: x86 by topology.uarch (model number, overruled by the
    ISA features and per-core caches where they disagree), Arm by implementer/part."""
    vendor = info.get("vendor_id", "")
    if vendor in ("AuthenticAMD", "HygonGenuine", "GenuineIntel"):
        flags = _flags(info) if ("flags" in info or "Features" in info) else None
        return uarch.identify(vendor, _int(info.get("cpu family")), _int(info.get("model")),
                              flags, caches[0], caches[1], _int(info.get("stepping")))
    name, ev = archspec_name(info)
    return uarch.Core(name, "implementer/part" if name else "", ev, model_key=name)


def identify(info: dict[str, str]) -> tuple[Uarch | None, str]:
    """The microarchitecture from family/model (x86, overruled by the ISA features where
    they disagree) or implementer/part (Arm), with the evidence."""
    core = core_of(info)
    return core.uarch, core.evidence


def archspec_detect(info: dict[str, str]) -> Microarchitecture | None:
    """archspec's microarchitecture for this cpuinfo (its first processor block, as
    numascope.host reads it), chosen by archspec.cpu.host's rule but from the text given:
    archspec.cpu.host() reads this host's /proc/cpuinfo, which a replayed machine must never
    be judged by. x86 and Arm only; None for other CPUs."""
    if "CPU implementer" in info:
        family = "aarch64"
        code = info["CPU implementer"]
        vendor = TARGETS_JSON["conversions"]["arm_vendors"].get(code, code)
        partial = _archspec.partial_uarch(vendor=vendor, features=_flags(info),
                                          cpu_part=info.get("CPU part", ""))
    elif "vendor_id" in info and "flags" in info:
        family = "x86_64"
        partial = _archspec.partial_uarch(vendor=info["vendor_id"], features=_flags(info))
    else:
        return None
    compatible = _archspec.COMPATIBILITY_CHECKS[family]
    try:
        candidates = [t for t in TARGETS.values() if compatible(partial, t)]
    except (KeyError, ValueError):          # a check that wants more than a cpuinfo gives
        return None
    if not candidates:
        return TARGETS[family]

    def depth(t: Microarchitecture) -> tuple[int, int]:
        return len(t.ancestors), len(t.features)

    best_generic = max((t for t in candidates if t.vendor == "generic"), key=depth,
                       default=TARGETS[family])
    if partial.cpu_part and any(t.cpu_part == partial.cpu_part for t in candidates):
        candidates = [t for t in candidates if t.cpu_part == partial.cpu_part]
    candidates = [t for t in candidates if t > best_generic]
    return max(candidates, key=depth) if candidates else best_generic


def _from_flags(flags: set[str]) -> tuple[int, int, str, int | None]:
    """(dp, sp, assumption, alternative dp) from ISA flags alone."""
    if "avx512f" in flags:
        return 32, 64, ("AVX-512 with two 512-bit FMA units per core (Xeon Platinum/Gold 6, "
                        "Sapphire Rapids and later, Zen 5); one unit or a double-pumped "
                        "256-bit unit (Xeon Silver/Bronze, Zen 4, Rocket Lake) gives 16"), 16
    if "avx2" in flags and "fma" in flags:
        return 16, 32, ("AVX2 with two 256-bit FMA units per core (Haswell and later, Zen 2+); "
                        "Zen 1 and small cores have 128-bit units: 8"), 8
    if "avx" in flags:
        return 8, 16, "AVX without FMA: one 256-bit add + one 256-bit multiply per cycle", None
    if "asimd" in flags:
        return 8, 16, ("Arm NEON with two 128-bit FMA pipes (Neoverse N1/N2 class); "
                       "V1/V2 have four: 16"), 16
    if "sse2" in flags:
        return 4, 8, "SSE2: one 128-bit add + one 128-bit multiply per cycle", None
    return 2, 2, "no vector ISA flag recognised: one scalar FMA per cycle", None


def _flags(info: dict[str, str]) -> set[str]:
    return set((info.get("flags") or info.get("Features") or "").split())


def flops_per_cycle(root: str | Path | Tree = "/", info: dict[str, str] | None = None,
                    caches: tuple[int | None, int | None] = (None, None)) -> FlopsPerCycle:
    """FLOP/cycle/core (FP64 and FP32) for the CPU described by /proc/cpuinfo under root
    (a path or the topology's Tree of a replayed machine), read through numascope.host;
    `caches`: the per-core L1d and L2 bytes, which decide between cores with the same
    features when the model number is overruled (topology.uarch)."""
    if info is None:
        h = Host(root)
        info = h.cpuinfo()
        if not info:
            return FlopsPerCycle(0, 0, None, "unknown",
                                 f"{h.tree.where('proc/cpuinfo')} is unreadable")
    flags = _flags(info)
    core = core_of(info, caches)
    u, name, ev = core.uarch, core.key, core.evidence
    notes: list[str] = []
    if "hypervisor" in flags:
        notes.append("running in a guest: family/model and flags are what the hypervisor "
                     "presents, not necessarily the host CPU")
    notes += core.notes
    if u is not None:
        dp, sp = u.dp, u.sp
        if u.isa == "avx512" and "avx512f" not in flags:
            dp, sp = min(dp, 16), min(sp, 32)
            notes.append("AVX-512 is hidden from this OS (guest CPU model or BIOS): "
                         "limited to the AVX2 rate")
        elif u.isa == "avx2" and not {"avx2", "fma"} <= flags and flags:
            dp, sp = min(dp, 8), min(sp, 16)
            notes.append("AVX2/FMA hidden from this OS: limited to the AVX rate")
        if u.note:
            notes.append(f"{u.name}: {u.note}")
        if core.decided_by == "ISA features":     # no cache geometry confirmed the choice
            _, _, _, alt = _from_flags(flags)
            return FlopsPerCycle(dp, sp, u.name, "assumed", f"{ev} ({name})",
                                 f"{u.name} from its ISA features alone", alt, notes, name,
                                 core.decided_by)
        return FlopsPerCycle(dp, sp, u.name, "known", f"{ev} ({name})", "",
                             None, notes, name, core.decided_by)
    # archspec's name from the flags is a floor (a hypervisor hides flags, and one name
    # covers parts with one or two FMA units): recorded, and the figure is the flags'.
    found = archspec_detect(info)
    if found is not None:
        ev += f"; archspec names it {found.name} from the flags"
    dp, sp, assumption, alt = _from_flags(flags)
    _hint_from_flags(flags, notes)
    return FlopsPerCycle(dp, sp, None, "assumed", ev + "; figure from ISA flags", assumption,
                         alt, notes, found.name if found else None)


def _hint_from_flags(flags: set[str], notes: list[str]) -> None:
    # Hardware features a hypervisor cannot invent: they bound what the host can be.
    if "amx_tile" in flags:
        notes.append("AMX is present: only Intel Sapphire Rapids and later have it (no AMD "
                     "core does), so the host is most likely Sapphire/Emerald/Granite Rapids "
                     "with 2 × 512-bit FMA (32 FP64 FLOP/cycle) — not proven from a guest")


def flops_peak_gflops(cores: int, flop_per_cycle: float, ghz: float, sockets: int = 1) -> float:
    """sockets × cores per socket × FLOP/cycle × GHz → GFLOP/s (cores may be the total with
    sockets=1)."""
    if cores <= 0 or flop_per_cycle <= 0 or ghz <= 0 or sockets <= 0:
        raise ValueError("cores, FLOP/cycle, clock and sockets must be positive")
    # Round away binary noise: 2 × 32 × 8 × 2.2 must print 1126.4, not 1126.4000000000001.
    return round(sockets * cores * flop_per_cycle * ghz, 9)
