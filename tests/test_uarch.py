"""Which core a CPU is (numascope.topology.uarch): the model number, overruled by the ISA
features and the per-core caches where a hypervisor's synthetic model number disagrees with
what the core executes; the record says what decided. Recorded facts of both vendors' cores
(an Intel Sapphire Rapids guest presenting a Rocket Lake model number, as seen on a KVM
guest; an AMD Zen 5 guest) stand in for the machines this suite may not run on."""

from __future__ import annotations

import pytest
from synth_sysfs import machine

from numascope.topology import read_topology, uarch
from numascope.topology.export import topology_to_dict

BASE = "fpu sse sse2 ssse3 sse4_1 sse4_2 popcnt aes pclmulqdq hypervisor"
AVX512 = BASE + " avx avx2 fma f16c bmi1 bmi2 avx512f avx512dq avx512cd avx512bw avx512vl"
# an Intel Sapphire Rapids guest (KVM, "Intel(R) Xeon(R) Processor", family 6 model 167)
SPR_GUEST = (AVX512 + " avx512ifma avx512vbmi avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni "
             "avx512_bitalg avx512_vpopcntdq avx512_bf16 avx512_fp16 avx_vnni amx_tile "
             "amx_bf16 amx_int8 tsxldtrk serialize movdiri movdir64b sha_ni clflushopt clwb")
# an AMD EPYC Zen 5 guest (family 0x1a model 2), what /proc/cpuinfo shows on one
ZEN5_GUEST = (AVX512 + " avx512ifma avx512vbmi avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni "
              "avx512_bitalg avx512_vpopcntdq avx512_bf16 avx_vnni avx512_vp2intersect "
              "sha_ni clzero sse4a")
KIB, MIB = 1 << 10, 1 << 20


def flags(text: str) -> set[str]:
    return set(text.split())


def test_a_synthetic_model_number_is_overruled_by_features_and_caches():
    core = uarch.identify("GenuineIntel", 6, 0xA7, flags(SPR_GUEST), 48 * KIB, 2 * MIB)
    assert core.name == "Sapphire Rapids" and core.decided_by == "ISA features and caches"
    assert core.model_key == "rocketlake" and {"amx_tile", "avx512_fp16"} <= set(core.conflict)
    assert "Rocket Lake" in core.evidence and "synthetic" in core.notes[0]
    d = core.to_dict()
    assert d["model_says"] == "Rocket Lake (client)" and d["name"] == "Sapphire Rapids"


def test_without_caches_the_features_alone_decide_and_say_so():
    core = uarch.identify("GenuineIntel", 6, 0xA7, flags(SPR_GUEST))
    assert (core.name, core.decided_by) == ("Sapphire Rapids", "ISA features")
    assert "caches (L1d ?, L2 ? per core) unknown" in core.evidence


def test_caches_that_match_no_core_of_the_class_are_said():
    core = uarch.identify("GenuineIntel", 6, 0xA7, flags(SPR_GUEST), 32 * KIB, 1 * MIB)
    assert core.decided_by == "ISA features" and "match none of them" in core.evidence


@pytest.mark.parametrize("vendor,fam,model,text,l1d,l2,name", [
    ("AuthenticAMD", 0x1A, 0x02, ZEN5_GUEST, 48 * KIB, 1 * MIB, "Zen 5"),
    ("GenuineIntel", 6, 0x8F, SPR_GUEST, 48 * KIB, 2 * MIB, "Sapphire Rapids"),
    ("AuthenticAMD", 0x19, 0x11, AVX512, 32 * KIB, 1 * MIB, "Zen 4"),
    # features hidden by the hypervisor never overrule: an SPR model number with AVX2 only
    ("GenuineIntel", 6, 0x8F, BASE + " avx avx2 fma", 48 * KIB, 2 * MIB, "Sapphire Rapids"),
])
def test_the_model_number_decides_where_the_features_agree(vendor, fam, model, text, l1d, l2,
                                                            name):
    core = uarch.identify(vendor, fam, model, flags(text), l1d, l2)
    assert (core.name, core.decided_by, core.conflict) == (name, "model number", ())


def test_a_genoa_model_number_with_zen5_features_is_zen5():
    core = uarch.identify("AuthenticAMD", 0x19, 0x11, flags(ZEN5_GUEST), 48 * KIB, 1 * MIB)
    assert (core.name, core.decided_by) == ("Zen 5", "ISA features and caches")


def test_a_model_number_not_in_the_tables_names_no_core():
    # its features are not read as a lineage it may not belong to (a Xeon Phi has AVX-512F
    # without BW/VL: "oldest core with these features" would call it Skylake-SP)
    core = uarch.identify("GenuineIntel", 6, 0x57, flags(BASE + " avx avx2 fma avx512f"))
    assert core.uarch is None and "not in the table" in core.evidence
    assert uarch.identify("CentaurHauls", 7, 1, flags(AVX512)).uarch is None


def test_flags_not_known_leave_the_model_number_alone():
    core = uarch.identify("GenuineIntel", 6, 0xA7, None)
    assert (core.name, core.decided_by) == ("Rocket Lake (client)", "model number")


def test_a_replayed_intel_guest_and_its_record_identify_alike(tmp_path):
    root = machine(tmp_path, sockets=1, l3_per_socket=1, cores_per_l3=2, smt=1,
                   vendor="GenuineIntel", family=6, model_number=167,
                   model="Intel(R) Xeon(R) Processor", hypervisor=True, flags=SPR_GUEST,
                   l1d_kb=48, l2_kb=2048, l3_kb=105 * 1024)
    topo = read_topology(root)
    assert "amx_tile" in topo.cpu_flags and topo.cpu_stepping is None
    core = uarch.of_topology(topo)
    assert (core.name, core.decided_by) == ("Sapphire Rapids", "ISA features and caches")
    fact = topo.facts["microarchitecture"]
    assert fact.value == "Sapphire Rapids" and fact.status == "known"
    assert fact.evidence.startswith("ISA features and caches:")
    from numascope.results.plain import to_plain
    assert uarch.of_topology(to_plain(topo)).name == "Sapphire Rapids"   # a stored run's
    assert topology_to_dict(topo)["cpu"]["flags"] == list(topo.cpu_flags)


def test_a_record_from_before_flags_were_kept_is_judged_by_its_model_number():
    old = {"cpu_vendor": "GenuineIntel", "cpu_family": 6, "cpu_model_number": 167,
           "caches": []}
    core = uarch.of_topology(old)
    assert (core.name, core.decided_by) == ("Rocket Lake (client)", "model number")


def test_ceilings_follow_from_the_ports():
    # Zen 4: what AMD's guide 57647 gives (2 x 32 B loads, 1 x 32 B store a cycle)
    assert uarch.ceilings(uarch.ZEN4) == {"read": 64, "fill": 32, "copy": 64, "triad": 96}
    # Golden Cove: 2 x 64 B loads, 1 x 64 B store
    assert uarch.ceilings(uarch.SAPPHIRE_RAPIDS) == {"read": 128, "fill": 64, "copy": 128,
                                                     "triad": 192}
    assert uarch.ceilings(uarch.SIERRA_FOREST) is None and uarch.ceilings(None) is None


def test_every_core_of_the_feature_tables_is_a_known_core():
    assert set(uarch.FEATURES) <= set(uarch.UARCHS)
    for vendor, cores in uarch._BY_FEATURES.items():
        for k in cores:
            # a core's own features and caches name it, or an older core indistinguishable
            # from it (Emerald Rapids: Sapphire Rapids' features and caches)
            got, how, _ = uarch.by_features(vendor, set(uarch.features(k)),
                                            *uarch.UARCHS[k].caches)
            twin = uarch.UARCHS[got]
            assert got == k or (uarch.features(got) == uarch.features(k)
                                and twin.caches == uarch.UARCHS[k].caches
                                and cores.index(got) < cores.index(k)), (k, got)
            assert how == "ISA features and caches"
