"""Weighted interleave: spec parsing, the explicit granule layout, the share check, and a
real mbind on this host (MPOL_WEIGHTED_INTERLEAVE where the kernel has it)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from tiers_sysfs import tiered

from numascope import _core
from numascope.errors import MeasurementError, Unavailable, UserError
from numascope.families.bandwidth import bench as bw
from numascope.pages import check_fractions, check_placement
from numascope.placement import (
    check_weighted,
    format_weighted,
    parse_weighted,
    weighted_fractions,
)
from numascope.topology import read_topology

MPOL_BIND, MPOL_WEIGHTED_INTERLEAVE = 2, 6
HAS_WI = Path("/sys/kernel/mm/mempolicy/weighted_interleave").is_dir()


@pytest.fixture
def cxl(tmp_path):
    return read_topology(tiered(tmp_path))


@pytest.fixture(scope="module")
def host():
    return read_topology("/")


def test_parse_explicit_ratio(cxl):
    m = parse_weighted(cxl, "N0:3,N2:1")
    assert m == {"policy": "weighted-interleave", "nodes": [0, 2], "weights": [3, 1]}
    assert parse_weighted(cxl, "0:6, 2:2")["weights"] == [3, 1]        # lowest terms
    assert parse_weighted(cxl, "0:1,2:0")["weights"] == [1, 0]
    assert weighted_fractions(m) == {0: 0.75, 2: 0.25}
    assert format_weighted(m) == "N0:3,N2:1"


def test_parse_kernel_weights(cxl):
    m = parse_weighted(cxl, "0,2")
    assert "weights" not in m
    m = check_weighted(cxl, m)
    assert m["system_weights"] == [3, 1]                 # from the replayed sysfs
    assert weighted_fractions(m) == {0: 0.75, 2: 0.25}
    assert format_weighted(m) == "N0,N2 sys 3:1"


def test_kernel_weights_unavailable_without_sysfs(tmp_path):
    t = read_topology(tiered(tmp_path, weights=False))
    with pytest.raises(Unavailable, match="no weighted interleave"):
        check_weighted(t, parse_weighted(t, "0,2"))
    # the explicit ratio does not need the kernel's policy
    assert check_weighted(t, parse_weighted(t, "0:1,2:1"))["weights"] == [1, 1]


@pytest.mark.parametrize("text", ["N0:x", "0:3,9:1", "0:0,2:0", "0:3,0:1", "0-1:3",
                                  "0:700,2:699", ":3"])
def test_bad_specs(cxl, text):
    with pytest.raises(UserError):
        parse_weighted(cxl, text)


@pytest.mark.parametrize("weights", [[3, 1], [1, 1], [1, 3], [5, 2, 1], [1, 0]])
def test_layout_puts_exact_counts_in_every_block(weights):
    w = sum(weights)
    layout = _core.weighted_layout(weights, 64 * w)
    for b in range(64):
        block = Counter(layout[b * w:(b + 1) * w])
        assert block == Counter({i: x for i, x in enumerate(weights) if x})


def test_layout_is_shuffled_per_block_so_strided_samples_see_the_ratio():
    layout = _core.weighted_layout([1, 1], 4096)
    assert len({tuple(layout[i:i + 2]) for i in range(0, 4096, 2)}) == 2   # both orders
    # a stride equal to the block length must not see one node only
    strided = layout[::2]
    assert 0.4 < strided.count(0) / len(strided) < 0.6
    assert _core.weighted_layout([3, 1], 64) == _core.weighted_layout([3, 1], 64)


def test_granule_keeps_huge_pages_whole_and_vmas_few():
    assert _core.weighted_granule(64 << 20, True) == 2 << 20
    assert _core.weighted_granule(64 << 20, False) == 8192        # 64 MiB / 8192, >= 4 KiB
    g = _core.weighted_granule(100 << 30, True)
    assert g % (2 << 20) == 0 and (100 << 30) / g <= 8192


def test_share_check_with_fake_page_counts():
    mem = {"policy": "weighted-interleave", "nodes": [0, 2], "weights": [3, 1]}
    assert check_fractions(mem, {0: 750, 2: 250}, 1000)
    assert check_fractions(mem, {0: 770, 2: 230, -1: 5}, 1000)        # within tolerance
    with pytest.raises(MeasurementError, match="N0 should hold 75.0%"):
        check_fractions(mem, {0: 500, 2: 500}, 1000)
    with pytest.raises(MeasurementError, match="other nodes"):
        check_fractions(mem, {0: 700, 2: 200, 1: 100}, 1000)
    ok, _ = check_placement(mem, [0], {0: 75, 2: 25}, [{0: 75, 2: 25}], 100)
    assert ok
    with pytest.raises(MeasurementError):
        check_placement(mem, [0], {0: 100}, [{0: 100}], 100)


def test_real_explicit_placement_binds_granules(host):
    """numascope's own placement on this host's first node: every granule MPOL_BIND."""
    n0 = host.node_ids()[0]
    r = _core.mem_probe({"policy": "weighted-interleave", "nodes": [n0], "weights": [1]},
                        16 << 20)
    assert r["mode"] == MPOL_BIND
    assert set(r["pages"]) == {n0}


@pytest.mark.skipif(not HAS_WI, reason="the kernel has no weighted interleave (< 6.9)")
def test_real_kernel_weighted_interleave(host):
    """A real mbind(MPOL_WEIGHTED_INTERLEAVE): the kernel reports mode 6 for the mapping."""
    n0 = host.node_ids()[0]
    r = _core.mem_probe({"policy": "weighted-interleave", "nodes": [n0]}, 16 << 20)
    assert r["mode"] == MPOL_WEIGHTED_INTERLEAVE
    assert set(r["pages"]) == {n0}
    res = bw.measure(host, kernel="read", cpus=host.usable_cpus()[:1],
                     memory={"policy": "weighted-interleave", "nodes": [n0]},
                     size_bytes=16 << 20, reps=2)
    assert res.placement["memory"]["system_weights"] == [host.tiering.interleave_weights[n0]]
    assert res.placement["ok"] and set(res.placement["pages_per_node"]) == {n0}


@pytest.mark.skipif(HAS_WI, reason="this kernel has weighted interleave")
def test_kernel_without_weighted_interleave_says_so(host):
    with pytest.raises(Unavailable, match="no weighted interleave"):
        bw.measure(host, kernel="read", memory={"policy": "weighted-interleave",
                                                "nodes": host.node_ids()[:1]})


def _bw(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "numascope", "bw", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def test_cli_weighted_interleave(host):
    n0 = host.node_ids()[0]
    p = _bw("--weighted-interleave", f"N{n0}:1", "--threads", "1", "--size", "16M",
            "--reps", "2", "--kernel", "read")
    assert p.returncode == 0, p.stderr
    assert f"weighted N{n0}:1" in p.stdout
    p = _bw("--weighted-interleave", f"N{n0}:x")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    p = _bw("--weighted-interleave", "0:1", "--membind", "0")
    assert p.returncode == 2
