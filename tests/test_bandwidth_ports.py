"""The read kernel's independent sums (bw.c: 8 or 16, families/bandwidth/ports.py): chosen
per core from its published L1 ports and add latency, the choice and its reason recorded;
both counts compute the same exact sums, validate every pass and catch a skipped one."""

from __future__ import annotations

import os

import pytest
from synth_sysfs import machine
from test_uarch import SPR_GUEST, ZEN5_GUEST

from numascope import _core
from numascope.families.bandwidth import bench as bw
from numascope.families.bandwidth import ports
from numascope.topology import read_topology

VEC = [i for i in _core.isa() if i != "scalar"]
N = (1 << 12) + 37          # a tail shorter than either unroll, and than one vector


def _cpu() -> list[int]:
    return sorted(os.sched_getaffinity(0))[:1]


@pytest.mark.parametrize("acc", ports.CHOICES)
@pytest.mark.parametrize("isa", VEC or ["scalar"])
def test_both_counts_sum_exactly_and_validate_every_pass(acc, isa):
    base = _core.bw_run("read", _cpu(), N, 2, [(isa, False)], warmup=1, passes=[5])
    r = _core.bw_run("read", _cpu(), N, 2, [(isa, False)], warmup=1, passes=[5],
                     accumulators=acc)
    assert r["validated"] and r["accumulators"] == acc
    assert r["read_sums"] == base["read_sums"]        # sums of exact binary values
    for skip in (0, 2, 4):
        bad = _core.bw_run("read", _cpu(), N, 2, [(isa, False)], warmup=1, passes=[5],
                           skip_pass=skip, accumulators=acc)
        assert not bad["validated"] and bad["bad_elements"] > 0, skip


@pytest.mark.parametrize("acc", [0, 4, 12, 32])
def test_other_counts_are_refused(acc):
    with pytest.raises(ValueError, match="accumulators must be 8 or 16"):
        _core.bw_run("read", _cpu(), N, 1, [("scalar", False)], warmup=0, accumulators=acc)


def _replayed(tmp_path, **kw):
    return read_topology(machine(tmp_path, sockets=1, l3_per_socket=1, cores_per_l3=2, smt=1,
                                 hypervisor=True, **kw))


def test_the_count_follows_the_cores_loads_and_add_latency(tmp_path):
    # Zen 4 (Genoa): a 512-bit load is two 256-bit ones, 1 a cycle x 3 cycles: 8 sums; at
    # AVX2 2 loads a cycle x 3 = 6, with the slack over 8: 16
    zen4 = _replayed(tmp_path / "genoa", flags="fpu sse2 avx avx2 fma avx512f")
    assert ports.read_accumulators(zen4, ["avx512"])[0] == 8
    n, why = ports.read_accumulators(zen4, ["avx2", "avx512"])
    assert n == 16 and "Zen 4 at avx2 issues 2 vector loads a cycle" in why and "amd-57647" in why
    # Golden Cove, a Sapphire Rapids guest shown as Rocket Lake: 2 x 64 B loads x 4 cycles
    spr = _replayed(tmp_path / "spr", vendor="GenuineIntel", family=6, model_number=167,
                    flags=SPR_GUEST, l1d_kb=48, l2_kb=2048)
    n, why = ports.read_accumulators(spr, ["avx512"])
    assert n == 16 and "Sapphire Rapids at avx512 issues 2 vector loads" in why
    zen5 = _replayed(tmp_path / "turin", family=26, model_number=2, flags=ZEN5_GUEST,
                     l1d_kb=48, l2_kb=1024)
    assert ports.read_accumulators(zen5, ["avx512"])[0] == 8     # 2 loads x 2 cycles
    # a core without published ports gets the most the kernel has, and says so
    other = _replayed(tmp_path / "other", vendor="GenuineIntel", family=6, model_number=0x99)
    n, why = ports.read_accumulators(other, ["avx512"])
    assert n == 16 and "no published L1 ports" in why


def test_a_read_record_says_how_many_sums_and_why():
    topo = read_topology("/")
    r = bw.measure(topo, kernel="read", cpus=_cpu(), size_bytes=64 << 10, reps=2)
    want = ports.read_accumulators(topo, list(r.params["variants"]))
    assert (r.params["accumulators"], r.params["accumulators_reason"]) == want
    t = bw.measure(topo, kernel="triad", cpus=_cpu(), size_bytes=64 << 10, reps=2)
    assert "accumulators" not in t.params
