"""FLOP per cycle per core, by microarchitecture, and the FLOP/s peak.

peak = cores × FLOP/cycle × clock. FLOP/cycle = FMA units × vector lanes × 2 (an FMA is two
FLOPs). The table (UARCHS) is keyed by archspec's microarchitecture names: zen4, icelake,
skylake_avx512, neoverse_v1, … The microarchitecture comes from /proc/cpuinfo read under a
root (a replayed machine's, never this host's), then is checked against the ISA flags the OS
shows: a guest that hides AVX-512 can only reach the AVX2 rate.

- Arm: implementer/part, looked up in archspec's own part numbers.
- x86: family/model (and stepping for model 0x55) through AMD_MODELS / INTEL_MODELS, whose
  values are archspec names. archspec itself names an x86 CPU from its flags alone, which a
  hypervisor masks (a Genoa guest is "x86_64_v4") and which do not tell a part with one
  512-bit FMA unit from one with two (archspec's icelake is Ice Lake-SP and the client
  Ice/Tiger/Rocket Lake alike); the family/model does. Parts archspec does not name yet
  (Cooper Lake, Emerald/Granite Rapids, Sierra Forest, Rocket Lake) get names in its style.
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
from numascope.topology.files import Tree


@dataclass(frozen=True)
class Uarch:
    name: str
    dp: int            # FP64 FLOP/cycle/core at the widest vector ISA
    sp: int            # FP32
    isa: str           # widest vector ISA the figure needs: avx512, avx2, neon, sve
    note: str = ""


# FMA units × lanes × 2. Sources: vendor optimization manuals / public uarch descriptions.
ZEN1 = Uarch("Zen 1 / Zen+", 8, 16, "avx2", "2 × 128-bit FMA (256-bit AVX2 split in two)")
ZEN2 = Uarch("Zen 2", 16, 32, "avx2", "2 × 256-bit FMA")
ZEN3 = Uarch("Zen 3", 16, 32, "avx2", "2 × 256-bit FMA")
ZEN4 = Uarch("Zen 4", 16, 32, "avx512",
             "AVX-512 on 2 × 256-bit FMA (512-bit ops double-pumped): same rate as AVX2")
ZEN5 = Uarch("Zen 5", 32, 64, "avx512",
             "2 × 512-bit FMA on EPYC 9005 / desktop; mobile Zen 5 has a 256-bit datapath "
             "(half)")
SANDY_BRIDGE = Uarch("Sandy/Ivy Bridge", 8, 16, "avx", "256-bit add + 256-bit multiply, no FMA")
HASWELL = Uarch("Haswell/Broadwell", 16, 32, "avx2", "2 × 256-bit FMA")
SKX2 = "2 × 512-bit FMA (Platinum, Gold 6xxx); Silver/Bronze/most Gold 5xxx have one (half)"
SKYLAKE_SP = Uarch("Skylake-SP", 32, 64, "avx512", SKX2)
CASCADE_LAKE = Uarch("Cascade Lake", 32, 64, "avx512", SKX2)
COOPER_LAKE = Uarch("Cooper Lake", 32, 64, "avx512", "2 × 512-bit FMA")
ICE_LAKE_SP = Uarch("Ice Lake-SP", 32, 64, "avx512", "2 × 512-bit FMA")
SAPPHIRE_RAPIDS = Uarch("Sapphire Rapids", 32, 64, "avx512", "2 × 512-bit FMA (AMX not counted)")
EMERALD_RAPIDS = Uarch("Emerald Rapids", 32, 64, "avx512", "2 × 512-bit FMA (AMX not counted)")
GRANITE_RAPIDS = Uarch("Granite Rapids", 32, 64, "avx512", "2 × 512-bit FMA (AMX not counted)")
SIERRA_FOREST = Uarch("Sierra Forest (E-core)", 8, 16, "avx2", "2 × 128-bit FMA")
ROCKET_LAKE = Uarch("Rocket Lake (client)", 16, 32, "avx512",
                    "1 × 512-bit FMA (ports 0+1 fused)")
NEOVERSE_N1 = Uarch("Neoverse N1", 8, 16, "neon", "2 × 128-bit FMA")
NEOVERSE_N2 = Uarch("Neoverse N2", 8, 16, "neon", "2 × 128-bit FMA (SVE2 at 128 bits)")
NEOVERSE_V1 = Uarch("Neoverse V1", 16, 32, "neon", "4 × 128-bit FMA (= 2 × 256-bit SVE)")
NEOVERSE_V2 = Uarch("Neoverse V2", 16, 32, "neon", "4 × 128-bit FMA (SVE2 at 128 bits)")
A64FX = Uarch("A64FX", 32, 64, "sve", "2 × 512-bit SVE FMA")
THUNDERX2 = Uarch("ThunderX2", 8, 16, "neon", "2 × 128-bit FMA")

# archspec name → uarch. The names archspec (0.2.7) does not have are NOT_IN_ARCHSPEC.
UARCHS: dict[str, Uarch] = {
    "zen": ZEN1, "zen2": ZEN2, "zen3": ZEN3, "zen4": ZEN4, "zen5": ZEN5,
    "sandybridge": SANDY_BRIDGE, "ivybridge": SANDY_BRIDGE,
    "haswell": HASWELL, "broadwell": HASWELL,
    "skylake_avx512": SKYLAKE_SP, "cascadelake": CASCADE_LAKE, "cooperlake": COOPER_LAKE,
    "icelake": ICE_LAKE_SP, "sapphirerapids": SAPPHIRE_RAPIDS,
    "emeraldrapids": EMERALD_RAPIDS, "graniterapids": GRANITE_RAPIDS,
    "sierraforest": SIERRA_FOREST, "rocketlake": ROCKET_LAKE,
    "neoverse_n1": NEOVERSE_N1, "neoverse_n2": NEOVERSE_N2,
    "neoverse_v1": NEOVERSE_V1, "neoverse_v2": NEOVERSE_V2,
    "a64fx": A64FX, "thunderx2": THUNDERX2,
}
NOT_IN_ARCHSPEC = {"cooperlake", "emeraldrapids", "graniterapids", "sierraforest",
                   "rocketlake"}

# AMD: (family, first model, last model) → archspec name
AMD_MODELS: list[tuple[int, int, int, str]] = [
    (0x17, 0x00, 0x2F, "zen"),
    (0x17, 0x30, 0xFF, "zen2"),      # Rome 0x31, Renoir 0x60, Matisse 0x71 …
    (0x18, 0x00, 0xFF, "zen"),       # Hygon Dhyana
    (0x19, 0x00, 0x0F, "zen3"),      # Milan 0x01
    (0x19, 0x10, 0x1F, "zen4"),      # Genoa 0x11
    (0x19, 0x20, 0x5F, "zen3"),      # Vermeer, Rembrandt, Cezanne
    (0x19, 0x60, 0xAF, "zen4"),      # Raphael, Phoenix, Bergamo/Siena 0xA0
    (0x1A, 0x00, 0xFF, "zen5"),      # Turin 0x02 / 0x11, Granite Ridge 0x44 …
]
# Intel family 6: model → archspec name (Skylake-SP and Cascade/Cooper Lake share 0x55)
INTEL_MODELS: dict[int, str] = {
    0x55: "skylake_avx512", 0x6A: "icelake", 0x6C: "icelake", 0x8F: "sapphirerapids",
    0xCF: "emeraldrapids", 0xAD: "graniterapids", 0xAE: "graniterapids",
    0xAF: "sierraforest", 0xA7: "rocketlake",
    0x2A: "sandybridge", 0x2D: "sandybridge", 0x3A: "ivybridge", 0x3E: "ivybridge",
    0x3C: "haswell", 0x3F: "haswell", 0x45: "haswell", 0x46: "haswell",
    0x3D: "broadwell", 0x47: "broadwell", 0x4F: "broadwell", 0x56: "broadwell",
}
# Flags no core of the inferred kind has: seeing them means the CPUID is synthetic.
_NEWER_THAN: dict[str, set[str]] = {
    "rocketlake": {"amx_tile", "avx512_fp16"},
    "skylake_avx512": {"amx_tile", "avx512_fp16", "avx512_bf16", "avx512vbmi"},
    "cascadelake": {"amx_tile", "avx512_fp16", "avx512_bf16", "avx512vbmi"},
    "icelake": {"amx_tile", "avx512_fp16"},
}


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
    step = _int(info.get("stepping"))
    if vendor in ("AuthenticAMD", "HygonGenuine") and fam is not None and model is not None:
        for f, lo, hi, name in AMD_MODELS:
            if f == fam and lo <= model <= hi:
                return name, f"{vendor} family {fam:#x} model {model:#x}"
        return None, f"{vendor} family {fam:#x} model {model:#x} is not in the table"
    if vendor == "GenuineIntel" and fam is not None and model is not None:
        ev = f"GenuineIntel family {fam} model {model:#x} stepping {step}"
        if fam == 6 and model in INTEL_MODELS:
            name = INTEL_MODELS[model]
            if model == 0x55 and step is not None:  # same model, told apart by stepping
                name = ("cascadelake" if 5 <= step <= 7 else "cooperlake" if step >= 10
                        else name)
            return name, ev
        return None, ev + " is not in the table"
    impl, part = _int(info.get("CPU implementer")), _int(info.get("CPU part"))
    if impl is not None and part is not None:
        ev = f"Arm implementer {impl:#x} part {part:#x}"
        name = arm_parts().get((impl, part))
        if name in UARCHS:
            return name, ev
        return None, ev + (f" ({name}) has no figure in the table" if name
                           else " is not in the table")
    return None, "no family/model or implementer/part in /proc/cpuinfo"


def identify(info: dict[str, str]) -> tuple[Uarch | None, str]:
    """The microarchitecture from family/model (x86) or implementer/part (Arm)."""
    name, ev = archspec_name(info)
    return (UARCHS[name] if name else None), ev


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


def flops_per_cycle(root: str | Path | Tree = "/", info: dict[str, str] | None = None
                    ) -> FlopsPerCycle:
    """FLOP/cycle/core (FP64 and FP32) for the CPU described by /proc/cpuinfo under root
    (a path or the topology's Tree of a replayed machine), read through numascope.host."""
    if info is None:
        h = Host(root)
        info = h.cpuinfo()
        if not info:
            return FlopsPerCycle(0, 0, None, "unknown",
                                 f"{h.tree.where('proc/cpuinfo')} is unreadable")
    flags = _flags(info)
    name, ev = archspec_name(info)
    u = UARCHS[name] if name else None
    notes: list[str] = []
    if "hypervisor" in flags:
        notes.append("running in a guest: family/model and flags are what the hypervisor "
                     "presents, not necessarily the host CPU")
    if u is not None:
        newer = _NEWER_THAN.get(name, set()) & flags
        if newer:
            dp, sp, assumption, alt = _from_flags(flags)
            notes.append(f"family/model says {u.name} but the flags show "
                         f"{', '.join(sorted(newer))}, which {u.name} lacks: the CPUID is "
                         "synthetic, so the microarchitecture is not determined")
            _hint_from_flags(flags, notes)
            found = archspec_detect(info)
            return FlopsPerCycle(dp, sp, None, "assumed", ev + f" (would be {u.name})",
                                 assumption, alt, notes, found.name if found else None)
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
        return FlopsPerCycle(dp, sp, u.name, "known", f"{ev} ({name})", "",
                             None, notes, name)
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
