"""FLOP/cycle by family/model (x86) and implementer/part (Arm), and the ISA-flag fallback."""

from __future__ import annotations

import pytest

from numascope.host import Host
from numascope.peaks.flops import flops_per_cycle


def x86(vendor: str, fam: int, model: int, flags: str, stepping: int = 1,
        name: str = "") -> dict[str, str]:
    return {"processor": "0", "vendor_id": vendor, "cpu family": str(fam), "model": str(model),
            "stepping": str(stepping), "model name": name, "flags": flags}


AVX2 = "fpu sse2 avx fma avx2"
AVX512 = AVX2 + " avx512f avx512dq avx512bw avx512vl"


@pytest.mark.parametrize("fam,model,flags,uarch,dp,sp", [
    (0x17, 0x01, AVX2, "Zen 1 / Zen+", 8, 16),          # Naples
    (0x17, 0x31, AVX2, "Zen 2", 16, 32),                # Rome
    (0x19, 0x01, AVX2, "Zen 3", 16, 32),                # Milan
    (0x19, 0x11, AVX512, "Zen 4", 16, 32),              # Genoa: 512-bit double-pumped
    (0x19, 0xA0, AVX512, "Zen 4", 16, 32),              # Bergamo
    (0x1A, 0x02, AVX512, "Zen 5", 32, 64),              # Turin
])
def test_amd(fam, model, flags, uarch, dp, sp):
    f = flops_per_cycle(info=x86("AuthenticAMD", fam, model, flags))
    assert (f.uarch, f.dp, f.sp, f.status) == (uarch, dp, sp, "known")


@pytest.mark.parametrize("model,stepping,uarch", [
    (0x55, 4, "Skylake-SP"), (0x55, 7, "Cascade Lake"), (0x55, 11, "Cooper Lake"),
    (0x6A, 6, "Ice Lake-SP"), (0x8F, 8, "Sapphire Rapids"), (0xCF, 2, "Emerald Rapids"),
    (0xAD, 1, "Granite Rapids"),
])
def test_intel_server(model, stepping, uarch):
    f = flops_per_cycle(info=x86("GenuineIntel", 6, model, AVX512, stepping))
    assert (f.uarch, f.dp, f.sp, f.status) == (uarch, 32, 64, "known")


@pytest.mark.parametrize("model,flags,dp", [(0x3F, AVX2, 16), (0x4F, AVX2, 16),
                                            (0x2D, "fpu sse2 avx", 8),
                                            (0x3F, "fpu sse2 avx", 8)])  # FMA hidden
def test_older_intel(model, flags, dp):
    f = flops_per_cycle(info=x86("GenuineIntel", 6, model, flags))
    assert f.status == "known" and f.dp == dp


def test_avx512_hidden_by_guest_limits_to_avx2_rate():
    f = flops_per_cycle(info=x86("GenuineIntel", 6, 0x8F, AVX2 + " hypervisor"))
    assert (f.uarch, f.dp, f.sp) == ("Sapphire Rapids", 16, 32)
    assert any("hidden" in n for n in f.notes) and any("guest" in n for n in f.notes)


@pytest.mark.parametrize("part,uarch,dp", [(0xD0C, "Neoverse N1", 8), (0xD40, "Neoverse V1", 16),
                                           (0xD4F, "Neoverse V2", 16)])
def test_arm(part, uarch, dp):
    info = {"processor": "0", "CPU implementer": "0x41", "CPU part": hex(part),
            "Features": "fp asimd sve"}
    f = flops_per_cycle(info=info)
    assert (f.uarch, f.dp, f.sp) == (uarch, dp, 2 * dp)


def test_unknown_cpu_falls_back_to_flags_and_states_assumption():
    f = flops_per_cycle(info=x86("GenuineIntel", 6, 0x9A, AVX2))   # Alder Lake: not in table
    assert f.status == "assumed" and f.uarch is None and (f.dp, f.sp) == (16, 32)
    assert "not in the table" in f.evidence and "256-bit FMA" in f.assumption
    f = flops_per_cycle(info=x86("CentaurHauls", 7, 1, AVX512))
    assert f.status == "assumed" and f.dp == 32 and f.alt_dp == 16
    assert "two 512-bit FMA units" in f.assumption


def test_synthetic_guest_cpuid_is_overruled_by_its_features():
    # What an Intel development VM showed: a Rocket Lake family/model with AMX flags. The
    # features name the core (Sapphire Rapids class); without its caches that is an
    # assumption, with them it is known, and the FLOP rate is Golden Cove's either way.
    flags = AVX512 + " hypervisor amx_tile amx_bf16 avx512_fp16"
    info = x86("GenuineIntel", 6, 167, flags, name="Intel(R) Xeon(R) Processor")
    f = flops_per_cycle(info=info)
    assert (f.uarch, f.status, f.decided_by, f.dp) == ("Sapphire Rapids", "assumed",
                                                       "ISA features", 32)
    assert any("synthetic" in n for n in f.notes) and "Rocket Lake" in f.evidence
    f = flops_per_cycle(info=info, caches=(48 << 10, 2 << 20))
    assert (f.uarch, f.status, f.decided_by) == ("Sapphire Rapids", "known",
                                                 "ISA features and caches")


def test_read_cpuinfo_under_root(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cpuinfo").write_text(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
        f"flags\t\t: {AVX512}\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n"
        "cpu family\t: 25\nmodel\t\t: 17\nflags\t\t: x\n\n")
    info = Host(tmp_path).cpuinfo()      # the one cpuinfo reader, jailed under the root
    assert info["processor"] == "0" and "avx512f" in info["flags"]
    assert flops_per_cycle(tmp_path).uarch == "Zen 4"
    assert flops_per_cycle(tmp_path / "missing").status == "unknown"
