"""Which core a CPU is: its microarchitecture, from the CPU's identity (vendor, family and
model) and, where that disagrees with what the core does, from the ISA features and the
cache geometry it reports. Every answer names the evidence that decided it.

    core = identify(vendor, family, model, flags, l1d=48 << 10, l2=2 << 20)
    core = of_topology(topo)          # the same from a (replayed) machine's topology
    core.uarch          # Uarch: name, FLOP/cycle, L1 ports ... or None
    core.decided_by     # "model number", "ISA features and caches", "ISA features", ""
    core.evidence       # the words, for records and reports

Why the features can overrule the model number: a hypervisor chooses the family/model it
shows its guests (a Sapphire Rapids host has been seen presenting family 6 model 0xa7,
Rocket Lake, a client part), but it cannot give a guest instructions the host's cores do
not execute: AMX, AVX512-FP16 or AVX512-BF16 in the flags are the host's. So when the
flags show a feature the named core lacks, the core is the oldest known one of the
vendor that has every distinctive feature shown (FEATURES), and among cores with the same
features the one whose per-core L1d and L2 sizes match (CACHES). Features can only be
hidden by a hypervisor, never added: a missing feature never overrules the model.

The per-core facts (Uarch) are the vendors' published figures: FLOP per cycle (FMA units
x lanes x 2) and the L1 data cache's ports (bytes per cycle loaded and stored at the
widest vector width, L1Ports), each with its source (numascope.sources' keys)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class L1Ports:
    """What the L1 data cache moves per cycle at the widest vector width the core runs at
    full rate: bytes loaded and bytes stored (both at once); the loads per cycle at any
    width (its load ports) and the vector add's latency (the read kernel keeps vector loads
    per cycle x that latency independent sums: families/bandwidth/ports.py)."""

    load: int           # bytes per cycle
    store: int          # bytes per cycle
    loads: int          # loads per cycle at any width (the load ports)
    add_latency: int    # FP64 vector add latency in cycles (the read kernel's sums)
    source: str         # a numascope.sources publication key
    basis: str          # the figure in the source's words

    def ceiling(self, loads_per_element: int, stores_per_element: int,
                stream_bytes: int) -> float:
        """STREAM bytes per cycle a kernel of 8-byte elements can move through these
        ports: elements per cycle are bounded by the load and by the store bandwidth."""
        per_cycle = [self.load / (8 * loads_per_element)] if loads_per_element else []
        if stores_per_element:
            per_cycle.append(self.store / (8 * stores_per_element))
        return min(per_cycle) * stream_bytes if per_cycle else 0.0


@dataclass(frozen=True)
class Uarch:
    name: str
    dp: int            # FP64 FLOP/cycle/core at the widest vector ISA
    sp: int            # FP32
    isa: str           # widest vector ISA the figure needs: avx512, avx2, neon, sve
    note: str = ""
    l1: L1Ports | None = None
    # per-core L1d and L2 bytes of the parts (what a guest's cache sizes are matched with)
    caches: tuple[int, int] | None = None


KIB, MIB = 1 << 10, 1 << 20

_AMD_ZEN = "amd-55723"
_AMD_ZEN2 = "amd-56305"
_AMD_ZEN3 = "amd-56665"
_AMD_ZEN4 = "amd-57647"
_AMD_ZEN5 = "amd-58455"
_INTEL = "intel-248966"

# L1 ports. AMD: each guide's "Load-Store Unit" section; a 512-bit access is two on cores
# whose datapath is 256 bits wide (Zen 4). Intel: the optimization reference manual's
# cache-parameter table of each microarchitecture ("peak bandwidth (bytes/cycle)").
_L1_ZEN1 = L1Ports(32, 16, 2, 3, _AMD_ZEN, "two 128-bit loads and one 128-bit store per "
                   "cycle")
_L1_ZEN2 = L1Ports(64, 32, 2, 3, _AMD_ZEN2, "two 256-bit loads and one 256-bit store per "
                   "cycle")
_L1_ZEN3 = L1Ports(64, 32, 3, 3, _AMD_ZEN3, "three memory operations per cycle, up to two "
                   "of them 256-bit loads; one 256-bit store per cycle")
_L1_ZEN4 = L1Ports(64, 32, 3, 3, _AMD_ZEN4, "two 256-bit loads and one 256-bit store per "
                   "cycle (a 512-bit access takes two)")
_L1_ZEN5 = L1Ports(128, 64, 4, 2, _AMD_ZEN5, "four memory operations per cycle, up to two "
                   "of them 512-bit loads; one 512-bit store per cycle (EPYC and desktop "
                   "parts: full 512-bit datapath)")
_L1_HSW = L1Ports(64, 32, 2, 3, _INTEL, "Haswell/Broadwell: 2 x 32 B loads + 1 x 32 B store "
                  "per cycle")
_L1_SNB = L1Ports(32, 16, 2, 3, _INTEL, "Sandy Bridge: 2 x 16 B loads + 1 x 16 B store per "
                  "cycle (a 256-bit load takes a port for two cycles)")
_L1_SKX = L1Ports(128, 64, 2, 4, _INTEL, "Skylake Server: 2 x 64 B loads + 1 x 64 B store per "
                  "cycle")
_L1_ICX = L1Ports(128, 64, 2, 4, _INTEL, "Ice Lake (Sunny Cove): 2 x 64 B loads + 1 x 64 B "
                  "store per cycle (two stores a cycle of up to 32 B each)")
_L1_GLC = L1Ports(128, 64, 3, 4, _INTEL, "Golden Cove: 3 x 32 B or 2 x 64 B loads + 2 x 32 B "
                  "or 1 x 64 B store per cycle")

# FMA units x lanes x 2. Sources: the vendors' optimization guides.
ZEN1 = Uarch("Zen 1 / Zen+", 8, 16, "avx2", "2 × 128-bit FMA (256-bit AVX2 split in two)",
             _L1_ZEN1, (32 * KIB, 512 * KIB))
ZEN2 = Uarch("Zen 2", 16, 32, "avx2", "2 × 256-bit FMA", _L1_ZEN2, (32 * KIB, 512 * KIB))
ZEN3 = Uarch("Zen 3", 16, 32, "avx2", "2 × 256-bit FMA", _L1_ZEN3, (32 * KIB, 512 * KIB))
ZEN4 = Uarch("Zen 4", 16, 32, "avx512",
             "AVX-512 on 2 × 256-bit FMA (512-bit ops double-pumped): same rate as AVX2",
             _L1_ZEN4, (32 * KIB, 1 * MIB))
ZEN5 = Uarch("Zen 5", 32, 64, "avx512",
             "2 × 512-bit FMA on EPYC 9005 / desktop; mobile Zen 5 has a 256-bit datapath "
             "(half)", _L1_ZEN5, (48 * KIB, 1 * MIB))
SANDY_BRIDGE = Uarch("Sandy/Ivy Bridge", 8, 16, "avx", "256-bit add + 256-bit multiply, no FMA",
                     _L1_SNB, (32 * KIB, 256 * KIB))
HASWELL = Uarch("Haswell/Broadwell", 16, 32, "avx2", "2 × 256-bit FMA", _L1_HSW,
                (32 * KIB, 256 * KIB))
SKX2 = "2 × 512-bit FMA (Platinum, Gold 6xxx); Silver/Bronze/most Gold 5xxx have one (half)"
SKYLAKE_SP = Uarch("Skylake-SP", 32, 64, "avx512", SKX2, _L1_SKX, (32 * KIB, 1 * MIB))
CASCADE_LAKE = Uarch("Cascade Lake", 32, 64, "avx512", SKX2, _L1_SKX, (32 * KIB, 1 * MIB))
COOPER_LAKE = Uarch("Cooper Lake", 32, 64, "avx512", "2 × 512-bit FMA", _L1_SKX,
                    (32 * KIB, 1 * MIB))
ICE_LAKE_SP = Uarch("Ice Lake-SP", 32, 64, "avx512", "2 × 512-bit FMA", _L1_ICX,
                    (48 * KIB, 1280 * KIB))
SAPPHIRE_RAPIDS = Uarch("Sapphire Rapids", 32, 64, "avx512", "2 × 512-bit FMA (AMX not counted)",
                        _L1_GLC, (48 * KIB, 2 * MIB))
EMERALD_RAPIDS = Uarch("Emerald Rapids", 32, 64, "avx512", "2 × 512-bit FMA (AMX not counted)",
                       _L1_GLC, (48 * KIB, 2 * MIB))
GRANITE_RAPIDS = Uarch("Granite Rapids", 32, 64, "avx512", "2 × 512-bit FMA (AMX not counted)",
                       L1Ports(128, 64, 3, 4, _INTEL, "Redwood Cove: as Golden Cove, 2 x 64 B "
                               "loads + 1 x 64 B store per cycle"), (48 * KIB, 2 * MIB))
SIERRA_FOREST = Uarch("Sierra Forest (E-core)", 8, 16, "avx2", "2 × 128-bit FMA")
ROCKET_LAKE = Uarch("Rocket Lake (client)", 16, 32, "avx512",
                    "1 × 512-bit FMA (ports 0+1 fused)",
                    L1Ports(128, 64, 2, 4, _INTEL, "Cypress Cove (Sunny Cove): 2 x 64 B loads "
                            "+ 1 x 64 B store per cycle"), (48 * KIB, 512 * KIB))
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

# Features a hypervisor can hide but never add (it cannot make the host's cores execute
# them), those that tell these cores apart, per core (the vendors' ISA references; written
# here rather than taken from archspec's targets, whose AMD entries omit some, e.g. SHA).
_AVX2 = frozenset({"avx", "avx2", "fma"})
_SKX = _AVX2 | {"avx512f", "avx512bw", "avx512vl"}
_ICX = _SKX | {"avx512_vnni", "avx512vbmi", "avx512_vbmi2", "avx512ifma", "avx512_bitalg",
               "avx512_vpopcntdq", "gfni", "vaes", "vpclmulqdq"}
_SPR = _ICX | {"avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8",
               "serialize", "movdiri", "movdir64b"}
_ZEN3 = _AVX2 | {"vaes", "vpclmulqdq"}
_ZEN4 = _ZEN3 | {"avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16",
                 "avx512vbmi", "avx512_vbmi2", "avx512ifma", "avx512_bitalg",
                 "avx512_vpopcntdq", "gfni"}
FEATURES: dict[str, frozenset[str]] = {
    "sandybridge": frozenset({"avx"}), "ivybridge": frozenset({"avx"}),
    "haswell": _AVX2, "broadwell": _AVX2,
    "skylake_avx512": _SKX, "cascadelake": _SKX | {"avx512_vnni"},
    "cooperlake": _SKX | {"avx512_vnni", "avx512_bf16"},
    "icelake": _ICX, "rocketlake": _ICX,
    "sapphirerapids": _SPR, "emeraldrapids": _SPR, "graniterapids": _SPR | {"amx_fp16"},
    "sierraforest": _AVX2 | {"avx_vnni", "gfni", "vaes", "vpclmulqdq", "serialize",
                             "movdiri", "movdir64b"},
    "zen": _AVX2, "zen2": _AVX2, "zen3": _ZEN3, "zen4": _ZEN4,
    "zen5": _ZEN4 | {"avx512_vp2intersect", "avx_vnni", "movdiri", "movdir64b"},
}
DISTINCTIVE = frozenset().union(*FEATURES.values())


def features(key: str) -> frozenset[str]:
    """The distinctive features core `key` has (none known: an empty set)."""
    return FEATURES.get(key, frozenset())


# the cores a vendor's feature-based guess chooses among, oldest first
_BY_FEATURES = {
    "GenuineIntel": ("sandybridge", "haswell", "skylake_avx512", "cascadelake", "cooperlake",
                     "icelake", "sapphirerapids", "emeraldrapids", "graniterapids"),
    "AuthenticAMD": ("zen", "zen2", "zen3", "zen4", "zen5"),
}


@dataclass(frozen=True)
class Core:
    """What identified the core, and how."""

    key: str | None                 # archspec-style name (a UARCHS key), None: unknown
    decided_by: str                 # "model number", "ISA features and caches", ...; ""
    evidence: str
    notes: tuple[str, ...] = ()
    model_key: str | None = None    # what the model number alone said
    conflict: tuple[str, ...] = field(default=())   # flags the model's core lacks

    @property
    def uarch(self) -> Uarch | None:
        return UARCHS.get(self.key) if self.key else None

    @property
    def name(self) -> str | None:
        return self.uarch.name if self.uarch else None

    def to_dict(self) -> dict:
        return {"name": self.name, "key": self.key, "decided_by": self.decided_by,
                "evidence": self.evidence, "model_says": (UARCHS[self.model_key].name
                                                         if self.model_key else None),
                "conflicting_features": list(self.conflict), "notes": list(self.notes)}


def by_model(vendor: str, family: int | None, model: int | None,
             stepping: int | None = None) -> tuple[str | None, str]:
    """The x86 core named by its family/model (a UARCHS key, or None), with the evidence."""
    if vendor in ("AuthenticAMD", "HygonGenuine") and family is not None and model is not None:
        for f, lo, hi, name in AMD_MODELS:
            if f == family and lo <= model <= hi:
                return name, f"{vendor} family {family:#x} model {model:#x}"
        return None, f"{vendor} family {family:#x} model {model:#x} is not in the table"
    if vendor == "GenuineIntel" and family is not None and model is not None:
        ev = f"GenuineIntel family {family} model {model:#x} stepping {stepping}"
        if family == 6 and model in INTEL_MODELS:
            name = INTEL_MODELS[model]
            if model == 0x55 and stepping is not None:  # same model, told apart by stepping
                name = ("cascadelake" if 5 <= stepping <= 7 else "cooperlake" if stepping >= 10
                        else name)
            return name, ev
        return None, ev + " is not in the table"
    return None, "no family/model"


def _geometry(l1d: int | None, l2: int | None) -> str:
    fmt = [f"{v // KIB} KiB" if v and v < MIB else f"{v / MIB:g} MiB" if v else "?"
           for v in (l1d, l2)]
    return f"L1d {fmt[0]}, L2 {fmt[1]} per core"


def by_features(vendor: str, flags: set[str], l1d: int | None, l2: int | None
                ) -> tuple[str | None, str, str]:
    """(core key, decided_by, evidence) from the distinctive features shown: the oldest
    core of the vendor having them all; among cores with the very same features, the one
    whose per-core cache sizes match."""
    shown = flags & DISTINCTIVE
    fits = [k for k in _BY_FEATURES.get(vendor, ()) if shown <= features(k)]
    if not fits or not shown:
        return None, "", (f"no known {vendor} core has every feature shown "
                          f"({', '.join(sorted(shown)) or 'none distinctive'})")
    first = fits[0]
    same = [k for k in fits if features(k) == features(first)]
    match = [k for k in same if UARCHS[k].caches == (l1d, l2)]
    geometry = _geometry(l1d, l2)
    names = " or ".join(UARCHS[k].name for k in same)
    if match:
        key = match[0]
        ev = f"ISA features ({names} class) and caches ({geometry}, as {UARCHS[key].name})"
        return key, "ISA features and caches", ev
    ev = (f"ISA features ({names} class); caches ({geometry}) "
          + ("unknown" if not (l1d and l2) else
             f"match none of them ({', '.join(f'{UARCHS[k].name} {_geometry(*UARCHS[k].caches)}' for k in same if UARCHS[k].caches)})"))
    return first, "ISA features", ev


def identify(vendor: str | None, family: int | None, model: int | None,
             flags: set[str] | frozenset[str] | None = None, l1d: int | None = None,
             l2: int | None = None, stepping: int | None = None) -> Core:
    """The core of an x86 CPU: its model number's, unless the flags show distinctive
    features that core lacks (then by features and caches, by_features). A model number
    not in the tables names no core. `flags` None: not known (the model number alone
    decides)."""
    vendor = vendor or ""
    key, ev = by_model(vendor, family, model, stepping)
    if flags is None:
        return Core(key, "model number" if key else "", ev, model_key=key)
    flags = set(flags)
    if key is not None:
        conflict = tuple(sorted((flags & DISTINCTIVE) - features(key)))
        if not conflict:
            return Core(key, "model number", ev, model_key=key)
        fkey, how, fev = by_features(vendor, flags, l1d, l2)
        note = (f"{ev} names {UARCHS[key].name}, but the flags show "
                f"{', '.join(conflict)}, which {UARCHS[key].name} lacks: the model number is "
                "synthetic (a hypervisor's choice)")
        if fkey is None:
            return Core(None, "", f"{ev} (would be {UARCHS[key].name}); {fev}", (note,),
                        key, conflict)
        return Core(fkey, how, f"{fev}; {ev} says {UARCHS[key].name}", (note,), key, conflict)
    # a model number not in the tables is not named from its features: the lineage the
    # features are read against does not hold for every part (a Xeon Phi has AVX-512F
    # without BW/VL and would read as Skylake-SP)
    return Core(None, "", ev)


def of_topology(topo) -> Core:
    """identify() for a Topology, or for a stored run's topology (its plain form: the
    Topology's fields as a dict; records from before the flags were kept have none, and
    their model number alone decides): the cpuinfo identity, flags and the first CPU's
    L1d and L2."""
    if isinstance(topo, dict):
        caches = topo.get("caches") or []
        first = min((c for cs in caches for c in cs.get("cpus", [])), default=None)

        def size(level: int) -> int | None:
            return next((c["size_bytes"] for c in caches if c["level"] == level
                         and c.get("kind") != "Instruction" and first in c.get("cpus", [])),
                        None)
        flags = topo.get("cpu_flags")
        return identify(topo.get("cpu_vendor"), topo.get("cpu_family"),
                        topo.get("cpu_model_number"),
                        set(flags) if flags is not None else None, size(1), size(2),
                        topo.get("cpu_stepping"))
    first = min((c.id for c in topo.cpus), default=None)
    return identify(topo.cpu_vendor, topo.cpu_family, topo.cpu_model_number,
                    set(topo.cpu_flags) if topo.cpu_flags is not None else None,
                    topo.cache_bytes(1, first), topo.cache_bytes(2, first), topo.cpu_stepping)


def ports_table() -> list[tuple[str, L1Ports]]:
    """(core name, its L1 ports) for every core with published ports, once each."""
    seen: dict[str, L1Ports] = {}
    for u in UARCHS.values():
        if u.l1 is not None:
            seen.setdefault(u.name, u.l1)
    return list(seen.items())


# the kernels the ceilings are given for: (loads, stores) of 8-byte elements per element,
# STREAM bytes per element (numascope's bandwidth kernels, bw.c's table)
KERNELS = {"read": (1, 0, 8), "fill": (0, 1, 8), "copy": (1, 1, 16), "triad": (2, 1, 24)}


def ceilings(u: Uarch | None) -> dict[str, float] | None:
    """STREAM bytes per cycle each kernel can move through the core's L1 ports, or None
    where no ports are published for it (or the core is not known)."""
    if u is None or u.l1 is None:
        return None
    return {k: u.l1.ceiling(*v) for k, v in KERNELS.items()}


def ports_markdown() -> str:
    """The L1 ports table of docs/sources.md (tests/test_sources.py keeps the two equal)."""
    head = ("| core | L1 bytes/cycle: load, store | read, fill, copy, triad (STREAM B/cycle) "
            "| source | basis |")
    lines = [head, "| --- | --- | --- | --- | --- |"]
    for name, l1 in ports_table():
        c = [l1.ceiling(*v) for v in KERNELS.values()]
        lines.append(f"| {name} | {l1.load}, {l1.store} | {', '.join(f'{x:g}' for x in c)} "
                     f"| `{l1.source}` | {l1.basis} |")
    return "\n".join(lines)
