"""The FLOP/cycle table is keyed by archspec's microarchitecture names, and archspec names
replayed machines from their own /proc/cpuinfo text, never this host's."""

from __future__ import annotations

import platform
import tarfile

import archspec.cpu
import pytest
from archspec.cpu import TARGETS
from archspec.cpu import detect as archspec_detect_module
from conftest import HWLOC_FIXTURES, hwloc_fixture

from numascope.host import Host
from numascope.peaks import flops
from numascope.peaks.flops import archspec_detect, flops_per_cycle

# What every replayed machine with a readable /proc/cpuinfo gave before the table was keyed
# by archspec names: (uarch, FP64, FP32 FLOP/cycle, status). It must not move.
BEFORE = {
    "128arm-2pa2n8cluster4co": (None, 8, 16, "assumed"),
    "128ia64-17n4s2c": (None, 2, 2, "assumed"),
    "16amd64-4n4c-cgroup-distance-merge": (None, 4, 8, "assumed"),
    "16amd64-8n2c-cpusets": (None, 4, 8, "assumed"),
    "16amd64-8n2c": (None, 4, 8, "assumed"),
    "16em64t-4s2c2t-offlines": (None, 4, 8, "assumed"),
    "16em64t-4s2c2t": (None, 4, 8, "assumed"),
    "16em64t-4s2ca2c-cpusetreorder": (None, 4, 8, "assumed"),
    "16ia64-8n2s": (None, 2, 2, "assumed"),
    "20s390-2g6s4c": (None, 2, 2, "assumed"),
    "256ia64-64n2s2c": (None, 2, 2, "assumed"),
    "256ppc-8n8s4t": (None, 2, 2, "assumed"),
    "2arm-2c": (None, 2, 2, "assumed"),
    "2i386-2c-nohugepage": (None, 4, 8, "assumed"),
    "2i386-2t-hugepagesizecount": (None, 4, 8, "assumed"),
    "2pa-pcidomain32bits": (None, 16, 32, "assumed"),
    "2ps3-2t": (None, 2, 2, "assumed"),
    "2s390-2c": (None, 2, 2, "assumed"),
    "32amd64-4s2n4c-cgroup2": (None, 4, 8, "assumed"),
    "32em64t-2n8c+1mic": ("Sandy/Ivy Bridge", 8, 16, "known"),
    "32intel64-2p8co2t+8ve": ("Skylake-SP", 32, 64, "known"),
    "40intel64-2g2n4c+pci": (None, 4, 8, "assumed"),
    "40intel64-4n10c+pci-conflicts": (None, 4, 8, "assumed"),
    "48amd64-4d2n6c-sparse": (None, 4, 8, "assumed"),
    "4em64t-2c2t-ignore-reorder": (None, 4, 8, "assumed"),
    "64amd64-4s2n4ca2co": (None, 8, 16, "assumed"),
    "64intel64-fakeKNL-A2A-cache": (None, 32, 64, "assumed"),
    "64intel64-fakeKNL-SNC4-hybrid": (None, 32, 64, "assumed"),
    "8amd64-4n2c": (None, 4, 8, "assumed"),
    "8em64t-2s2ca2c-buggynuma": (None, 4, 8, "assumed"),
    "8em64t-2s2ca2c": (None, 4, 8, "assumed"),
    "8em64t-2s4c-heterogeneous": (None, 4, 8, "assumed"),
    "8em64t-4c2t": (None, 4, 8, "assumed"),
    "8ia64-2s2c2t": (None, 2, 2, "assumed"),
    "96em64t-4n4d3ca2co": (None, 4, 8, "assumed"),
    "fakecpuid1f-64intel64-2p4d2n2c2t": (None, 4, 8, "assumed"),
    "fakeheteromemtiers": (None, 4, 8, "assumed"),
    "fakememinitiators-1np2c+1npp+gi": ("Cascade Lake", 32, 64, "known"),
    "memorysidecaches": ("Cascade Lake", 32, 64, "known"),
    "nvidiagpunumanodes": (None, 2, 2, "assumed"),
    "offline-cpu0-node0": ("Haswell/Broadwell", 16, 32, "known"),
}
# The identified ones: archspec, from the flags alone, names them as their family/model does.
IDENTIFIED = {
    "32em64t-2n8c+1mic": "sandybridge",
    "32intel64-2p8co2t+8ve": "skylake_avx512",
    "memorysidecaches": "cascadelake",
    "fakememinitiators-1np2c+1npp+gi": "cascadelake",
    "offline-cpu0-node0": "haswell",
}
# Not in the tables: archspec's name from the flags is recorded, the figure is the flags'.
FROM_FLAGS = {
    "2pa-pcidomain32bits": "broadwell",              # a Skylake (model 0x5e) guest
    "64intel64-fakeKNL-A2A-cache": "mic_knl",
    "48amd64-4d2n6c-sparse": "k10",
    "2arm-2c": "aarch64",
}


@pytest.fixture
def no_host_cpuinfo(monkeypatch):
    """archspec may not look at this host's CPU while a replayed machine is judged."""
    def refuse(*_a, **_k):
        raise AssertionError("this host's /proc/cpuinfo was read for a replayed machine")
    monkeypatch.setattr(archspec_detect_module, "open", refuse, raising=False)
    monkeypatch.setattr(archspec_detect_module, "detected_info", refuse)
    monkeypatch.setattr(archspec.cpu, "host", refuse)


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    """A root holding the dump's proc/cpuinfo, all that is read here (the whole dumps take
    a minute to extract)."""
    cache = {}

    def get(name):
        if name not in cache:
            with tarfile.open(hwloc_fixture(name)) as tar:
                member = next(m for m in tar if m.name.endswith("proc/cpuinfo"))
                text = tar.extractfile(member).read()
            root = tmp_path_factory.mktemp("dump")
            (root / "proc").mkdir()
            (root / "proc/cpuinfo").write_bytes(text)
            cache[name] = root
        return cache[name]
    return get


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_replayed_machines_keep_their_figures(name, roots, no_host_cpuinfo):
    f = flops_per_cycle(roots(name))
    assert (f.uarch, f.dp, f.sp, f.status) == BEFORE[name]


@pytest.mark.parametrize("name", sorted(IDENTIFIED))
def test_replayed_identified_machines_are_keyed_by_archspec(name, roots, no_host_cpuinfo):
    f = flops_per_cycle(roots(name))
    key = IDENTIFIED[name]
    assert f.archspec == key and flops.UARCHS[key].name == f.uarch
    assert f"({key})" in f.evidence                   # beside the family/model it came from
    assert archspec_detect(Host(roots(name)).cpuinfo()).name == key


@pytest.mark.parametrize("name", sorted(FROM_FLAGS))
def test_replayed_unknown_machines_record_archspec_and_use_the_flags(name, roots,
                                                                      no_host_cpuinfo):
    f = flops_per_cycle(roots(name))
    assert f.status == "assumed" and f.uarch is None and f.archspec == FROM_FLAGS[name]
    assert f"archspec names it {FROM_FLAGS[name]}" in f.evidence
    assert f.evidence.endswith("figure from ISA flags")


def test_two_replayed_cpuinfo_texts_name_different_archspec_targets(roots, no_host_cpuinfo):
    a = flops_per_cycle(roots("memorysidecaches"))
    b = flops_per_cycle(roots("offline-cpu0-node0"))
    assert (a.archspec, a.dp) == ("cascadelake", 32) and (b.archspec, b.dp) == ("haswell", 16)


def test_every_fixture_with_cpuinfo_is_covered():
    if not HWLOC_FIXTURES.is_dir():
        pytest.skip("hwloc fixtures not found")
    names = {p.name[:-8] for p in HWLOC_FIXTURES.glob("*.tar.bz2")}
    assert set(BEFORE) <= names


def test_table_keys_are_archspec_names():
    for key in flops.UARCHS:
        assert (key in TARGETS) != (key in flops.NOT_IN_ARCHSPEC), key
    assert all(name in flops.UARCHS for *_, name in flops.AMD_MODELS)
    assert set(flops.INTEL_MODELS.values()) <= set(flops.UARCHS)


@pytest.mark.parametrize("impl,part,key", [
    (0x41, 0xD0C, "neoverse_n1"), (0x41, 0xD49, "neoverse_n2"), (0x41, 0xD40, "neoverse_v1"),
    (0x41, 0xD4F, "neoverse_v2"), (0x46, 0x001, "a64fx"), (0x43, 0x0AF, "thunderx2")])
def test_arm_parts_come_from_archspec(impl, part, key):
    assert flops.arm_parts()[(impl, part)] == key
    assert TARGETS[key].cpu_part and int(TARGETS[key].cpu_part, 16) == part


# An AWS Graviton3 (Neoverse V1), as archspec-json's issue #51 shows it.
GRAVITON3 = """processor\t: 0
BogoMIPS\t: 2100.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm \
jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs \
paca pacg dcpodp svei8mm svebf16 i8mm bf16 dgh rng
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x1
CPU part\t: 0xd40
CPU revision\t: 1

"""


def test_replayed_arm_cpuinfo_text(tmp_path, no_host_cpuinfo):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cpuinfo").write_text(GRAVITON3)
    f = flops_per_cycle(tmp_path)
    assert (f.uarch, f.dp, f.sp, f.status, f.archspec) == ("Neoverse V1", 16, 32, "known",
                                                          "neoverse_v1")
    assert archspec_detect(Host(tmp_path).cpuinfo()).name == "neoverse_v1"


def test_arm_part_archspec_knows_without_a_figure_falls_back_to_flags():
    info = {"processor": "0", "CPU implementer": "0x41", "CPU part": "0xd08",
            "Features": "fp asimd"}
    f = flops_per_cycle(info=info)
    assert f.status == "assumed" and (f.dp, f.sp) == (8, 16)
    assert "(cortex_a72) has no figure in the table" in f.evidence


def test_a64fx_by_part():
    info = {"processor": "0", "CPU implementer": "0x46", "CPU part": "0x001",
            "Features": "fp asimd sve"}
    f = flops_per_cycle(info=info)
    assert (f.uarch, f.dp, f.sp, f.archspec) == ("A64FX", 32, 64, "a64fx")


def test_names_archspec_lacks_are_ours():
    f = flops_per_cycle(info={"vendor_id": "GenuineIntel", "cpu family": "6",
                              "model": str(0xCF), "stepping": "2",
                              "flags": "fpu sse2 avx fma avx2 avx512f"})
    assert (f.uarch, f.archspec) == ("Emerald Rapids", "emeraldrapids")
    assert "emeraldrapids" not in TARGETS


@pytest.mark.skipif(platform.system() != "Linux"
                    or platform.machine() not in ("x86_64", "aarch64"),
                    reason="archspec.cpu.host() reads /proc/cpuinfo on Linux x86_64/aarch64")
def test_live_machine_is_named_as_archspec_host_names_it():
    assert archspec_detect(Host("/").cpuinfo()).name == archspec.cpu.host().name


def test_no_cpuinfo_no_archspec_name():
    assert archspec_detect({}) is None
    assert archspec_detect({"processor": "0", "cpu": "POWER9"}) is None
