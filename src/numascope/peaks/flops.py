"""FLOP per cycle per core, by microarchitecture, and the FLOP/s peak.

peak = cores × FLOP/cycle × clock. FLOP/cycle = FMA units × vector lanes × 2 (an FMA is two
FLOPs). The microarchitecture is inferred from /proc/cpuinfo (x86 family/model, Arm
implementer/part) read under a root, then checked against the ISA flags the OS shows: a
guest that hides AVX-512 can only reach the AVX2 rate. Unknown CPUs fall back to the flags,
with the assumption spelled out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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

# AMD: (family, first model, last model) → uarch
AMD_MODELS: list[tuple[int, int, int, Uarch]] = [
    (0x17, 0x00, 0x2F, ZEN1),
    (0x17, 0x30, 0xFF, ZEN2),        # Rome 0x31, Renoir 0x60, Matisse 0x71 …
    (0x18, 0x00, 0xFF, ZEN1),        # Hygon Dhyana
    (0x19, 0x00, 0x0F, ZEN3),        # Milan 0x01
    (0x19, 0x10, 0x1F, ZEN4),        # Genoa 0x11
    (0x19, 0x20, 0x5F, ZEN3),        # Vermeer, Rembrandt, Cezanne
    (0x19, 0x60, 0xAF, ZEN4),        # Raphael, Phoenix, Bergamo/Siena 0xA0
    (0x1A, 0x00, 0xFF, ZEN5),        # Turin 0x02 / 0x11, Granite Ridge 0x44 …
]
# Intel family 6: model → uarch (Skylake-SP and Cascade/Cooper Lake share model 0x55)
INTEL_MODELS: dict[int, Uarch] = {
    0x55: SKYLAKE_SP, 0x6A: ICE_LAKE_SP, 0x6C: ICE_LAKE_SP, 0x8F: SAPPHIRE_RAPIDS,
    0xCF: EMERALD_RAPIDS, 0xAD: GRANITE_RAPIDS, 0xAE: GRANITE_RAPIDS, 0xAF: SIERRA_FOREST,
    0xA7: ROCKET_LAKE,
    0x2A: SANDY_BRIDGE, 0x2D: SANDY_BRIDGE, 0x3A: SANDY_BRIDGE, 0x3E: SANDY_BRIDGE,
    0x3C: HASWELL, 0x3F: HASWELL, 0x45: HASWELL, 0x46: HASWELL, 0x3D: HASWELL, 0x47: HASWELL,
    0x4F: HASWELL, 0x56: HASWELL,
}
# Arm: (implementer, part) → uarch
ARM_PARTS: dict[tuple[int, int], Uarch] = {
    (0x41, 0xD0C): NEOVERSE_N1, (0x41, 0xD49): NEOVERSE_N2,
    (0x41, 0xD40): NEOVERSE_V1, (0x41, 0xD4F): NEOVERSE_V2,
}
# Flags no core of the inferred kind has: seeing them means the CPUID is synthetic.
_NEWER_THAN: dict[str, set[str]] = {
    "Rocket Lake (client)": {"amx_tile", "avx512_fp16"},
    "Skylake-SP": {"amx_tile", "avx512_fp16", "avx512_bf16", "avx512vbmi"},
    "Cascade Lake": {"amx_tile", "avx512_fp16", "avx512_bf16", "avx512vbmi"},
    "Ice Lake-SP": {"amx_tile", "avx512_fp16"},
}


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


def _int(v: str | None) -> int | None:
    if v is None:
        return None
    try:
        return int(v, 0)
    except ValueError:
        return None


def identify(info: dict[str, str]) -> tuple[Uarch | None, str]:
    """The microarchitecture from family/model (x86) or implementer/part (Arm)."""
    vendor = info.get("vendor_id", "")
    fam, model = _int(info.get("cpu family")), _int(info.get("model"))
    step = _int(info.get("stepping"))
    if vendor in ("AuthenticAMD", "HygonGenuine") and fam is not None and model is not None:
        for f, lo, hi, u in AMD_MODELS:
            if f == fam and lo <= model <= hi:
                return u, f"{vendor} family {fam:#x} model {model:#x}"
        return None, f"{vendor} family {fam:#x} model {model:#x} is not in the table"
    if vendor == "GenuineIntel" and fam is not None and model is not None:
        ev = f"GenuineIntel family {fam} model {model:#x} stepping {step}"
        if fam == 6 and model in INTEL_MODELS:
            u = INTEL_MODELS[model]
            if model == 0x55 and step is not None:  # same model, told apart by stepping
                u = CASCADE_LAKE if 5 <= step <= 7 else COOPER_LAKE if step >= 10 else u
            return u, ev
        return None, ev + " is not in the table"
    impl, part = _int(info.get("CPU implementer")), _int(info.get("CPU part"))
    if impl is not None and part is not None:
        ev = f"Arm implementer {impl:#x} part {part:#x}"
        if (impl, part) in ARM_PARTS:
            return ARM_PARTS[(impl, part)], ev
        return None, ev + " is not in the table"
    return None, "no family/model or implementer/part in /proc/cpuinfo"


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
    u, ev = identify(info)
    notes: list[str] = []
    if "hypervisor" in flags:
        notes.append("running in a guest: family/model and flags are what the hypervisor "
                     "presents, not necessarily the host CPU")
    if u is not None:
        newer = _NEWER_THAN.get(u.name, set()) & flags
        if newer:
            dp, sp, assumption, alt = _from_flags(flags)
            notes.append(f"family/model says {u.name} but the flags show "
                         f"{', '.join(sorted(newer))}, which {u.name} lacks: the CPUID is "
                         "synthetic, so the microarchitecture is not determined")
            _hint_from_flags(flags, notes)
            return FlopsPerCycle(dp, sp, None, "assumed", ev + f" (would be {u.name})",
                                 assumption, alt, notes)
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
        return FlopsPerCycle(dp, sp, u.name, "known", ev, "", None, notes)
    dp, sp, assumption, alt = _from_flags(flags)
    _hint_from_flags(flags, notes)
    return FlopsPerCycle(dp, sp, None, "assumed", ev + "; figure from ISA flags", assumption,
                         alt, notes)


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
