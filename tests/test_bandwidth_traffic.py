"""Write-allocate stated per CPU and store kind: the DRAM-traffic figure counts the read of
the target line only where the CPU's stores do it, and is dropped ("unknown") where that is
not known, with the assumption and its reason in the record."""

from __future__ import annotations

import dataclasses
import io

import pytest
from rich.console import Console

from numascope import traffic as tr
from numascope.families.bandwidth import bench as bw
from numascope.peaks import flops
from numascope.results.record import BenchResult, Metric
from numascope.topology import read_topology

ZEN3 = ("AuthenticAMD", 0x19, 0x01)
ZEN4 = ("AuthenticAMD", 0x19, 0x11)
CASCADE_LAKE = ("GenuineIntel", 6, 0x55)
ICE_LAKE_SP = ("GenuineIntel", 6, 0x6A)
SAPPHIRE_RAPIDS = ("GenuineIntel", 6, 0x8F)
UNLISTED = ("GenuineIntel", 6, 0x01)


def _cpu(vendor, family, model):
    return flops.identify({"vendor_id": vendor, "cpu family": str(family),
                           "model": str(model)})


@pytest.mark.parametrize("cpu, allocates", [
    (ZEN3, True), (ZEN4, True), (CASCADE_LAKE, True),
    (ICE_LAKE_SP, None), (SAPPHIRE_RAPIDS, None), (UNLISTED, None)])
def test_ordinary_stores_per_cpu(cpu, allocates):
    wa = tr.write_allocate(_cpu(*cpu), "ordinary")
    assert wa.allocates is allocates
    assert wa.label == {True: "yes", None: "unknown"}[allocates]
    assert f"model {cpu[2]:#x}" in wa.reason          # the evidence travels with it


def test_ice_lake_and_later_name_speci2m():
    assert "SpecI2M" in tr.write_allocate(_cpu(*ICE_LAKE_SP), "ordinary").reason


def test_neoverse_write_streaming_mode_does_not_allocate():
    u = flops.identify({"CPU implementer": "0x41", "CPU part": "0xd0c"})
    wa = tr.write_allocate(u, "ordinary")
    assert wa.allocates is False and "write streaming mode" in wa.reason


@pytest.mark.parametrize("cpu", [ZEN3, ICE_LAKE_SP, UNLISTED])
def test_streaming_stores_and_reads_never_allocate(cpu):
    assert tr.write_allocate(_cpu(*cpu), "streaming").allocates is False
    assert tr.write_allocate(_cpu(*cpu), "n/a").allocates is False


def test_unidentified_cpu_is_unknown():
    wa = tr.write_allocate(tr.cpu_uarch(dataclasses.replace(
        read_topology("/"), cpu_vendor=None, cpu_family=None, cpu_model_number=None)),
        "ordinary")
    assert wa.allocates is None and "not identified" in wa.reason


def test_dram_bytes_follow_the_verdict():
    yes, no, unknown = (tr.WriteAllocate(v, "") for v in (True, False, None))
    assert tr.dram_bytes(24, 1, yes) == 32 == bw.dram_bytes("triad", nt=False)
    assert tr.dram_bytes(24, 1, no) == 24 == bw.dram_bytes("triad", nt=True)
    assert tr.dram_bytes(8, 0, yes) == 8
    assert tr.dram_bytes(24, 1, unknown) is None


def _measured_as(cpu, nt):
    """A real measurement on this host, its record written as if the CPU were `cpu` (its
    flags unknown: this host's own would overrule the model number, topology.uarch)."""
    live = read_topology("/")
    topo = dataclasses.replace(live, cpu_vendor=cpu[0], cpu_family=cpu[1],
                               cpu_model_number=cpu[2], cpu_flags=None)
    return bw.measure(topo, kernel="copy", cpus=live.usable_cpus()[:1], size_bytes=1 << 20,
                      reps=2, nt=nt)


def test_record_drops_dram_figure_where_unknown():
    r = _measured_as(ICE_LAKE_SP, "off")
    assert r.params["stores"] == "ordinary" and r.params["write_allocate"] == "unknown"
    assert "SpecI2M" in r.params["write_allocate_reason"]
    assert r.params["dram_bytes_per_element"] is None
    assert "dram_bandwidth" not in r.metrics


def test_record_counts_write_allocate_where_known():
    r = _measured_as(ZEN3, "off")
    assert r.params["write_allocate"] == "yes" and "Zen 3" in r.params["write_allocate_reason"]
    assert r.params["dram_bytes_per_element"] == 24
    d, s = r.metrics["dram_bandwidth"], r.metrics["bandwidth"]
    assert d.median == pytest.approx(s.median * 24 / 16)
    nt = _measured_as(ICE_LAKE_SP, "on")
    assert nt.params["write_allocate"] == "no" and nt.params["dram_bytes_per_element"] == 16


def test_table_says_unknown_and_why():
    from numascope.families.bandwidth.command import _print
    r = BenchResult(
        "bandwidth", "copy compact 2T",
        {"kernel": "copy", "isa": "avx512", "stores": "ordinary", "threads": 2, "reps": 3,
         "warmup": 1, "array_bytes": 1 << 30, "policy": "compact",
         "write_allocate": "unknown", "write_allocate_reason": "Intel Ice Lake-SP may skip"},
        {"bandwidth": Metric("bandwidth", "GB/s", True, [30.0, 20.0, 10.0])},
        {"cpulist": "0-1", "memory": {"policy": "first-touch", "nodes": [], "pages": "thp"},
         "pages_per_node": {0: 10}})
    con = Console(width=100, record=True, file=io.StringIO())
    _print([r], con)
    text = con.export_text()
    row = next(line for line in text.splitlines() if line.startswith("copy"))
    assert row.split()[-3] == "unknown"
    assert "write-allocate, ordinary stores: unknown (Intel Ice Lake-SP may skip)" in text
