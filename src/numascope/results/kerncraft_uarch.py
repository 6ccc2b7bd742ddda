"""What a kerncraft machine file needs and numascope does not measure: the in-core model
(port names, FLOPs per cycle by operation), the compilers' flags, and per cache level the
transfer rate between levels, whether transfers overlap, associativity and write policy.

Only microarchitectures kerncraft itself describes in a machine file of its own are listed,
each value copied from that file (RRZE-HPC/kerncraft, examples/machine-files, the commit
named in SOURCE). Any other CPU takes them from a kerncraft machine file the user gives
(`--base`), as kerncraft's own generator does (`likwid_bench_auto -m BASE`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from numascope.peaks import flops

KERNCRAFT_REPO = "https://github.com/RRZE-HPC/kerncraft"


@dataclass(frozen=True)
class Level:
    upstream: tuple[str, str] | tuple[str, list[str]]  # [B/cy or a source, duplexness]
    overlap: bool
    ways: int | None = None                             # None: main memory
    write_allocate: bool = True
    write_back: bool = True
    load_from: str | None = None
    store_to: str | None = None
    victims_to: str | None = None
    replacement: str = "LRU"


@dataclass(frozen=True)
class UarchModel:
    source: str                                # the kerncraft machine file, at a commit
    in_core: dict[str, str]                    # in-core model tool → its name for the CPU
    compiler: dict[str, str]
    flops: dict[str, dict[str, int]]           # SP/DP → total/FMA/ADD/MUL
    non_overlapping: dict[str, list[str]]      # in-core tool → ports
    overlapping: dict[str, list[str]]
    levels: dict[str, Level] = field(default_factory=dict)   # L1, L2, L3, MEM
    notes: tuple[str, ...] = ()


def _src(name: str, commit: str) -> str:
    return f"{KERNCRAFT_REPO}/blob/{commit}/examples/machine-files/{name}"


_SKX_OL = ["0", "0DV", "1", "2", "3", "4", "5", "6", "7"]
SKYLAKE_SP = UarchModel(
    source=_src("SkylakeSP_Gold-6148.yml", "0f8ccee020ae50235199770612596c39a724ef8a"),
    # OSACA first: kerncraft uses the first in-core model by default, and OSACA is
    # installed with kerncraft (IACA is a separate Intel download, discontinued)
    in_core={"OSACA": "SKX", "IACA": "SKX", "LLVM-MCA": "-mcpu=skylake-avx512"},
    compiler={"gcc": "-O3 -march=skylake-avx512 -D_POSIX_C_SOURCE=200809L -fopenmp -lm",
              "clang": "-O3 -march=skylake-avx512 -D_POSIX_C_SOURCE=200809L -fopenmp",
              "icc": "-O3 -fno-alias -xCORE-AVX512 -qopenmp -qopt-zmm-usage=high"},
    flops={"SP": {"total": 64, "FMA": 64, "ADD": 32, "MUL": 32},
           "DP": {"total": 32, "FMA": 32, "ADD": 16, "MUL": 16}},
    # the file gives one port list (IACA's and OSACA's names, which agree for SKX)
    non_overlapping={"OSACA": ["2D", "3D"], "IACA": ["2D", "3D"]},
    overlapping={"OSACA": _SKX_OL, "IACA": _SKX_OL},
    levels={
        "L1": Level(("architecture code analyzer", ["2D", "3D"]), False, 8,
                    load_from="L2", store_to="L2"),
        # L3 is a victim cache: an L2 miss goes to memory unless it hits in L3
        "L2": Level(("64 B/cy", "half-duplex"), False, 16, load_from=None, store_to="L3",
                    victims_to="L3"),
        "L3": Level(("16 B/cy", "full-duplex"), False, 11, write_allocate=False),
        "MEM": Level(("full socket memory bandwidth", "half-duplex"), False),
    },
    notes=(("the source file's own FIXME: 16 B/cy bidirectional L2-L3 transfers are not "
            "supported by kerncraft"),
           ("LLVM-MCA has no port list in the source file: ECM with -i LLVM-MCA needs one "
            "added")),
)

_ZEN2_MCA_OL = ["Zn2AGU0", "Zn2AGU1", "Zn2AGU2", "Zn2ALU0", "Zn2ALU1", "Zn2ALU2", "Zn2ALU3",
                "Zn2Divider", "Zn2FPU0", "Zn2FPU1", "Zn2FPU2", "Zn2FPU3", "Zn2Multiplier"]
ZEN2 = UarchModel(
    source=_src("Zen2_EPYC-7452.yml", "22e50afe2440c397bba0f4d932f645bb44f44142"),
    in_core={"OSACA": "ZEN2", "LLVM-MCA": "-mcpu=znver2"},
    compiler={"gcc": "-O3 -march=znver2 -fopenmp -ffreestanding",
              "clang": "-O3 -march=znver2 -D_POSIX_C_SOURCE=200112L -fopenmp -ffreestanding",
              "icc": "-O3 -xAVX2 -fno-alias -qopenmp -ffreestanding -nolib-inline"},
    flops={"SP": {"total": 32, "FMA": 16, "ADD": 16, "MUL": 16},
           "DP": {"total": 16, "FMA": 8, "ADD": 8, "MUL": 8}},
    non_overlapping={"OSACA": ["8D", "9D"], "LLVM-MCA": ["Zn2AGU0", "Zn2AGU1", "Zn2AGU2"]},
    overlapping={"OSACA": ["1", "2", "3", "3DV", "4", "5", "6", "7", "8", "9", "10", "10D"],
                 "LLVM-MCA": _ZEN2_MCA_OL},
    levels={
        "L1": Level(("architecture code analyzer", ["8", "9"]), True, 8,
                    load_from="L2", store_to="L2"),
        "L2": Level(("32 B/cy", "full-duplex"), True, 8, load_from="L3", store_to="L3",
                    victims_to="L3"),
        "L3": Level(("24 B/cy", "half-duplex"), True, 16, write_allocate=False),
        "MEM": Level(("full socket memory bandwidth", "half-duplex"), False),
    },
    notes=(("the source file's MEM penalty cycles (0.585 per line loaded, 2.57 per line "
            "stored) were fitted to its EPYC 7452's bandwidths and are not copied: this "
            "file's bandwidths are measured, its penalties 0 as kerncraft's generator "
            "writes them"),),
)

_SPR_OL = ["0", "0DV", "1", "1DV", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"]
SAPPHIRE_RAPIDS = UarchModel(
    source=_src("SapphireRapids_Platinum-8470.yml", "34de5f04246c481d1e05edade53b1c36b4087643"),
    # OSACA first as for SKX: the file's comment says OSACA lacked an SPR model when it was
    # written; the OSACA kerncraft installs now has one (osaca/data/spr.yml)
    in_core={"OSACA": "SPR", "IACA": "SKX", "LLVM-MCA": "-mcpu=sapphirerapids"},
    compiler={"icc": "-O3 -fno-alias -xCORE-AVX512 -qopenmp -qopt-zmm-usage=high",
              "clang": "-O3 -march=native -D_POSIX_C_SOURCE=200112L -fopenmp -ffreestanding",
              "gcc": "-O3 -march=native -fopenmp -ffreestanding"},
    flops={"SP": {"total": 64, "FMA": 64, "ADD": 32, "MUL": 32},
           "DP": {"total": 32, "FMA": 32, "ADD": 16, "MUL": 16}},
    non_overlapping={"IACA": ["2D", "3D"], "OSACA": ["2D", "3D"],
                     "LLVM-MCA": ["SKXPort2", "SKXPort3"]},
    overlapping={"OSACA": _SPR_OL, "IACA": _SPR_OL,
                 "LLVM-MCA": ["SKXDivider", "SKXFPDivider", "SKXPort0", "SKXPort1",
                              "SKXPort2", "SKXPort3", "SKXPort4", "SKXPort5", "SKXPort6",
                              "SKXPort7"]},
    levels={
        "L1": Level(("architecture code analyzer", ["2D", "3D"]), False, 8,
                    load_from="L2", store_to="L2"),
        # L3 is a victim cache: unless a hit in L3, an L2 miss goes to memory
        "L2": Level(("64 B/cy", "half-duplex"), False, 16, load_from=None, store_to="L3",
                    victims_to="L3"),
        "L3": Level(("16 B/cy", "full-duplex"), False, 16, write_allocate=False),
        "MEM": Level(("full socket memory bandwidth", "half-duplex"), False),
    },
    notes=(("the source file's model type reads 'Intel Icelake SP processor' and its IACA "
            "and LLVM-MCA port names are Skylake-SP's: kerncraft's own file, as it ships"),),
)

# numascope's microarchitecture (topology.uarch: the model number, or the ISA features
# and caches of a guest whose model number is synthetic) → kerncraft's file
# (Cascade and Cooper Lake, model 0x55 as Skylake-SP and the same core, take its file)
MODELS: dict[str, UarchModel] = {flops.SKYLAKE_SP.name: SKYLAKE_SP,
                                 flops.CASCADE_LAKE.name: SKYLAKE_SP,
                                 flops.COOPER_LAKE.name: SKYLAKE_SP, flops.ZEN2.name: ZEN2,
                                 flops.SAPPHIRE_RAPIDS.name: SAPPHIRE_RAPIDS}

# what the uarch model (or --base) supplies, in words, for the refusal
SUPPLIED = ("FLOPs per cycle by operation, in-core model and its ports (overlapping and "
            "non-overlapping model), compiler flags, cache associativity, write policy and "
            "upstream throughput per level, transfers overlap")


def from_base(machine: Any) -> UarchModel:
    """The same keys read from a kerncraft machine file (a loaded MachineModel)."""
    levels = {}
    for lv in machine["memory hierarchy"]:
        c = lv.get("cache per group") or {}
        up = lv.get("upstream throughput")
        levels[str(lv["level"])] = Level(
            tuple(_plain(v) for v in up) if up else None,  # type: ignore[arg-type]
            bool(lv.get("transfers overlap", False)), c.get("ways"),
            bool(c.get("write_allocate", True)), bool(c.get("write_back", True)),
            c.get("load_from"), c.get("store_to"), c.get("victims_to"),
            str(c.get("replacement_policy", "LRU")))
    return UarchModel(
        source=f"--base {machine._path}",
        in_core={str(k): str(v) for k, v in machine["in-core model"].items()},
        compiler={str(k): str(v) for k, v in machine["compiler"].items()},
        flops={p: {k: _plain(v) for k, v in d.items()}
               for p, d in machine["FLOPs per cycle"].items()},
        non_overlapping=_ports(machine["non-overlapping model"]),
        overlapping=_ports(machine["overlapping model"]),
        levels=levels)


def _ports(model: Any) -> dict[str, list[str]]:
    ports = model["ports"]
    if isinstance(ports, list):      # the pre-0.8.6 form: one list, no tool named
        return {"OSACA": [str(p) for p in ports], "IACA": [str(p) for p in ports]}
    return {str(k): [str(p) for p in v] for k, v in ports.items()}


def _plain(v: Any) -> Any:
    """kerncraft's PrefixedUnit ("64 B/cy") back to its text; lists element-wise."""
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    return str(v)
