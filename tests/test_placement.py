"""CPU lists, domains and placement policies on synthetic machines."""

from __future__ import annotations

import pytest
from synth_sysfs import machine

from numascope.errors import UserError
from numascope.placement import (
    check_cpus,
    format_cpulist,
    parse_cpulist,
    parse_nodes,
    select_cpus,
)
from numascope.topology import read_topology


@pytest.fixture(scope="module")
def nps2(tmp_path_factory):
    # 2 sockets × 2 nodes × 2 L3 × 2 cores × SMT2 (offset): 16 cores, 32 CPUs
    return read_topology(machine(tmp_path_factory.mktemp("m"), l3_per_socket=4,
                                 cores_per_l3=2, nodes_per_socket=2))


def test_parse_and_format():
    assert parse_cpulist("0-3,8-11") == [0, 1, 2, 3, 8, 9, 10, 11]
    assert format_cpulist([3, 0, 1, 2, 9]) == "0-3,9"
    for bad in ("1-", "a", "3-1", "!2", ""):
        with pytest.raises(UserError):
            parse_cpulist(bad)


def test_compact_fills_cores_before_siblings(nps2):
    assert select_cpus(nps2, "all", "compact", 16) == list(range(16))
    assert select_cpus(nps2, "all", "compact")[16] == 16  # first SMT sibling comes last


def test_domains(nps2):
    assert select_cpus(nps2, "S1", threads=2) == [8, 9]
    assert select_cpus(nps2, "N1") == [4, 5, 6, 7, 20, 21, 22, 23]
    assert select_cpus(nps2, "L3:3") == [6, 7, 22, 23]
    assert select_cpus(nps2, "0-1,16") == [0, 1, 16]


def test_spread_per_l3_per_node(nps2):
    assert select_cpus(nps2, "all", "spread", 4) == [0, 4, 8, 12]
    assert select_cpus(nps2, "all", "per-l3") == [0, 2, 4, 6, 8, 10, 12, 14]
    assert select_cpus(nps2, "all", "per-node") == [0, 4, 8, 12]
    assert select_cpus(nps2, "S0", "per-node") == [0, 4]


@pytest.mark.parametrize("where, msg", [("99", "CPU 99 does not exist"),
                                        ("N7", "node N7 does not exist"),
                                        ("S2", "package S2 does not exist"),
                                        ("L3:8", "L3 domain 8 does not exist"),
                                        ("X1", "bad placement")])
def test_errors_are_one_line(nps2, where, msg):
    with pytest.raises(UserError, match=msg) as e:
        select_cpus(nps2, where)
    assert "\n" not in str(e.value)


def test_threads_and_policy_errors(nps2):
    with pytest.raises(UserError, match="gives only 4"):
        select_cpus(nps2, "all", "per-node", 5)
    with pytest.raises(UserError, match="unknown policy"):
        select_cpus(nps2, "all", "random")
    with pytest.raises(UserError):
        select_cpus(nps2, "all", threads=0)


def test_parse_nodes(nps2):
    assert parse_nodes(nps2, "all") == [0, 1, 2, 3]
    assert parse_nodes(nps2, "N1") == [1]
    assert parse_nodes(nps2, "0,2-3") == [0, 2, 3]
    with pytest.raises(UserError, match="node 9 does not exist"):
        parse_nodes(nps2, "9")


def test_unusable_cpus_are_refused(tmp_path):
    root = machine(tmp_path, sockets=1, l3_per_socket=1, cores_per_l3=4, smt=1)
    (root / "sys/devices/system/cpu/cpu3/online").write_text("0\n")
    t = read_topology(root)
    assert t.usable_cpus() == [0, 1, 2]
    assert select_cpus(t) == [0, 1, 2]
    with pytest.raises(UserError, match="CPU 3 is offline"):
        select_cpus(t, "3")


def test_check_cpus_names_the_first_bad_cpu(tmp_path):
    root = machine(tmp_path, sockets=1, l3_per_socket=1, cores_per_l3=4, smt=1)
    (root / "sys/devices/system/cpu/cpu3/online").write_text("0\n")
    t = read_topology(root)
    assert check_cpus(t, [2, 0]) == [2, 0]
    with pytest.raises(UserError, match=r"CPU 7 does not exist \(this machine has CPUs 0-3\)"):
        check_cpus(t, [0, 7])
    with pytest.raises(UserError, match="CPU 3 is offline"):
        check_cpus(t, [3])
    with pytest.raises(UserError, match="names CPU 1 twice"):
        check_cpus(t, [1, 2, 1])
    assert check_cpus(t, [1, 1], distinct=False) == [1, 1]
    with pytest.raises(UserError, match="no CPU given"):
        check_cpus(t, [])
