"""SMBIOS type 17: recorded dmidecode outputs (DDR4 / DDR5, empty slots, mixed speeds) and a
synthetic binary /sys/firmware/dmi/entries tree."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from numascope import peaks
from numascope.errors import Unavailable
from numascope.peaks import dram, smbios

DATA = Path(__file__).parent / "data"


def slots(name: str) -> list[smbios.DimmSlot]:
    return smbios.parse_dmidecode((DATA / f"dmidecode_t17_{name}.txt").read_text())


def test_ddr5_genoa_one_dimm_per_channel():
    s = slots("ddr5_genoa_1s")
    assert len(s) == 24 and sum(x.populated for x in s) == 12
    full = [x for x in s if x.populated]
    assert {x.type for x in full} == {"DDR5"}
    assert {x.size_bytes for x in full} == {64 * 2**30}
    assert all(x.configured_mts == 4800 for x in full)
    empty = next(x for x in s if not x.populated)
    assert empty.type is None and empty.speed_mts is None and empty.locator == "DIMM 1"
    p = dram.from_slots(s, "test")
    assert (p.channels, p.mts, p.gbs, p.type) == (12, 4800, 460.8, "DDR5")
    assert p.dimms_per_channel == 1
    assert any("12 empty slots of 24" in n for n in p.notes)


def test_ddr4_two_sockets_mixed_speeds_and_two_dimms_per_channel():
    s = slots("ddr4_2s_mixed")
    assert len(s) == 24 and sum(x.populated for x in s) == 16
    p = dram.from_slots(s, "test")
    # 12 channels (6 per socket) although 16 DIMMs; slowest configured speed governs
    assert p.channels == 12 and p.mts == 2666
    assert p.gbs == pytest.approx(12 * 2666 * 8 / 1000)
    assert any("slowest, 2666 MT/s, governs" in n for n in p.notes)
    assert any("16 DIMMs on 12 channels (2 per channel on some)" in n for n in p.notes)
    assert p.dimms_per_channel is None          # 4 channels hold 2, 8 hold 1


def test_two_dimms_on_every_channel():
    """DIMM_A1/A2 and DIMM_B1/B2: 2 DIMMs per channel, recorded (a reference matches it)."""
    text = "".join(
        f"Handle 0x00{i}0, DMI type 17, 40 bytes\nMemory Device\n\tSize: 16384 MB\n"
        f"\tLocator: DIMM_{c}{k}\n\tBank Locator: NODE 1\n\tType: DDR4\n"
        "\tSpeed: 3200 MT/s\n\tConfigured Memory Speed: 2933 MT/s\n\n"
        for i, (c, k) in enumerate([("A", 1), ("A", 2), ("B", 1), ("B", 2)]))
    p = dram.from_slots(smbios.parse_dmidecode(text), "t")
    assert (p.channels, p.dimms_per_channel, p.mts) == (2, 2, 2933)
    assert any("4 DIMMs on 2 channels (2 per channel)" in n for n in p.notes)


def test_ddr4_unnamed_channels_assumes_one_per_channel_and_uses_configured_speed():
    s = slots("ddr4_unnamed_channels")
    p = dram.from_slots(s, "test")
    assert (p.channels, p.mts, p.dimms_per_channel) == (4, 2933, None)
    assert p.gbs == pytest.approx(93.856)
    assert any("assumed one DIMM per channel" in n for n in p.notes)
    assert any("rated up to 3200" in n for n in p.notes)


def test_old_dmidecode_wording():
    text = ("Handle 0x0010, DMI type 17, 40 bytes\nMemory Device\n\tSize: 16384 MB\n"
            "\tLocator: DIMM_A1\n\tBank Locator: NODE 1\n\tType: DDR3\n\tSpeed: 1600 MHz\n"
            "\tConfigured Clock Speed: 1333 MHz\n\n"
            "Handle 0x0011, DMI type 17, 40 bytes\nMemory Device\n\tSize: 16384 MB\n"
            "\tLocator: DIMM_A2\n\tBank Locator: NODE 1\n\tType: DDR3\n\tSpeed: 1600 MHz\n"
            "\tConfigured Clock Speed: 1333 MHz\n")
    s = smbios.parse_dmidecode(text)
    assert [x.configured_mts for x in s] == [1333, 1333]
    assert s[0].size_bytes == 16 * 2**30
    p = dram.from_slots(s, "t")
    assert p.channels == 1  # DIMM_A1 and DIMM_A2 share channel A


def test_no_populated_slot_is_an_error():
    s = [x for x in slots("ddr5_genoa_1s") if not x.populated]
    with pytest.raises(ValueError, match="no populated"):
        dram.from_slots(s, "t")


# -- binary SMBIOS structures -----------------------------------------------------------------
def t17(locator: str, bank: str, size_word: int, mtype: int, speed: int, conf: int,
        ext_size: int = 0, ext_speed: int = 0, ext_conf: int = 0, tech: int = 3) -> bytes:
    b = bytearray(0x5C)
    b[0], b[1] = 17, 0x5C
    struct.pack_into("<HHHHH", b, 0x08, 72, 64, size_word, 0, 0)
    b[0x0E] = 0x09                                # form factor DIMM
    b[0x10], b[0x11], b[0x12] = 1, 2, mtype       # string numbers, memory type
    struct.pack_into("<H", b, 0x15, speed)
    struct.pack_into("<I", b, 0x1C, ext_size)
    struct.pack_into("<H", b, 0x20, conf)
    b[0x28] = tech
    struct.pack_into("<II", b, 0x54, ext_speed, ext_conf)
    return bytes(b) + locator.encode() + b"\0" + bank.encode() + b"\0\0"


def make_tree(root: Path, entries: list[bytes]) -> None:
    base = root / "sys/firmware/dmi/entries"
    for i, raw in enumerate(entries):
        (base / f"17-{i}").mkdir(parents=True)
        (base / f"17-{i}" / "raw").write_bytes(raw)
    (base / "16-0").mkdir()                      # other types are ignored
    (base / "16-0" / "raw").write_bytes(b"\x10\x17" + bytes(0x15) + b"\0\0")


def test_raw_type17_fields():
    d = smbios.parse_type17_raw(t17("DIMM 0", "P0 CHANNEL A", 0x7FFF, 0x22, 4800, 4400,
                                    ext_size=65536))
    assert d.locator == "DIMM 0" and d.bank == "P0 CHANNEL A"
    assert d.size_bytes == 64 * 2**30 and d.type == "DDR5"
    assert (d.speed_mts, d.configured_mts) == (4800, 4400)
    assert smbios.parse_type17_raw(t17("A", "B", 0x8000 | 512, 0x1A, 2133, 2133)).size_bytes \
        == 512 * 2**10
    ext = smbios.parse_type17_raw(t17("A", "B", 16384, 0x22, 0xFFFF, 0xFFFF, 0, 8800, 8000))
    assert (ext.speed_mts, ext.configured_mts) == (8800, 8000)
    empty = smbios.parse_type17_raw(t17("DIMM 1", "P0 CHANNEL A", 0, 0x02, 0, 0))
    assert not empty.populated and empty.speed_mts is None
    pmem = smbios.parse_type17_raw(t17("A", "B", 16384, 0x1A, 2666, 2666, tech=7))
    assert not pmem.volatile
    with pytest.raises(ValueError):
        smbios.parse_type17_raw(b"\x10\x17" + bytes(40))


def test_sysfs_tree_gives_dram_peak(tmp_path):
    entries = []
    for ch in "ABCDEFGH":
        entries.append(t17("DIMM 0", f"P0 CHANNEL {ch}", 0x7FFF, 0x1A, 3200, 3200,
                           ext_size=32768))
        entries.append(t17("DIMM 1", f"P0 CHANNEL {ch}", 0, 0x02, 0, 0))
    entries[2] = t17("DIMM 0", "P0 CHANNEL B", 0x7FFF, 0x1A, 3200, 2933, ext_size=32768)
    make_tree(tmp_path, entries)
    got, source = smbios.read_slots(tmp_path)
    assert len(got) == 16 and source.endswith("sys/firmware/dmi/entries")
    d = peaks.dram_peak(None, None, root=tmp_path)
    assert d["value"] == pytest.approx(8 * 2933 * 8 / 1000)
    assert d["channels"] == 8 and d["mts"] == 2933 and d["type"] == "DDR4"
    assert any("slowest" in n for n in d["notes"])


def test_missing_tree_is_unavailable_with_reason(tmp_path):
    with pytest.raises(Unavailable, match="does not exist"):
        smbios.read_slots(tmp_path)
    d = peaks.dram_peak(None, None, root=tmp_path)
    assert d["value"] is None and d["status"] == "unknown" and "does not exist" in d["reason"]


def test_missing_dmidecode(monkeypatch):
    monkeypatch.setattr(smbios.shutil, "which", lambda name: None)
    with pytest.raises(Unavailable, match="dmidecode is not installed"):
        smbios.run_dmidecode()


def test_dmidecode_failure_reason(monkeypatch, tmp_path):
    fake = tmp_path / "dmidecode"
    fake.write_text("#!/bin/sh\necho '/dev/mem: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(smbios.shutil, "which", lambda name: str(fake))
    with pytest.raises(Unavailable, match="no permission"):
        smbios.run_dmidecode()


def _eight_ddr4(tmp_path, mts=3200):
    make_tree(tmp_path, [t17("DIMM 0", f"P0 CHANNEL {ch}", 0x7FFF, 0x1A, 3200, mts,
                             ext_size=32768) for ch in "ABCDEFGH"])


def test_smbios_peak_says_origin_smbios(tmp_path):
    _eight_ddr4(tmp_path)
    d = peaks.dram_peak(None, None, root=tmp_path)
    assert d["origin"] == "smbios" and d["value"] == 204.8


def test_user_memory_wins_and_a_disagreeing_smbios_is_quoted(tmp_path):
    _eight_ddr4(tmp_path, mts=2933)          # SMBIOS: 8 channels at 2933 MT/s
    d = peaks.dram_peak(None, "8x DDR4-3200", root=tmp_path)
    assert d["origin"] == "user" and d["value"] == 204.8 and d["source"] == "--memory"
    (note,) = [n for n in d["notes"] if "SMBIOS" in n]
    assert "187.712 GB/s" in note and "--memory figure is used" in note
    # SMBIOS agreeing, or saying nothing: no such note
    agree = tmp_path / "agree"
    _eight_ddr4(agree)
    assert not any("SMBIOS" in n for n in peaks.dram_peak(None, "8x3200", root=agree)["notes"])
    silent = peaks.dram_peak(None, "8x3200", root=tmp_path / "none")
    assert silent["origin"] == "user" and not any("SMBIOS" in n for n in silent["notes"])
