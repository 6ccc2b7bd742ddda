"""Readiness checks on replayed trees with known settings: hwloc's sysfs dumps where they
hold the file, synthetic trees (tests/synth_sysfs.py plus the files written here) for the
rest; the busy-process sample on this machine against a process we start."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from conftest import hwloc_fixture
from synth_sysfs import machine

from numascope import readiness, sysstate
from numascope.readiness import CHECKS, run_checks

CPU = "sys/devices/system/cpu"


def _w(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text + "\n")


def by_id(checks) -> dict:
    return {c.id: c for c in checks}


WANTED = ("/proc/", "/sys/devices/system/node/node", "/sys/devices/system/cpu/online",
          "/cpufreq/", "/intel_pstate/", "/amd_pstate/", "/smt/", "/sys/class/dmi/",
          "/sys/kernel/mm/", "cpuset", "cgroup")


def _wanted(name: str) -> bool:
    name = "/" + name
    if "/sys/devices/system/node/node" in name and "/cpu" in name.split("/node/node")[1]:
        return False          # the node's cpuN links: not read here
    return any(w in name for w in WANTED) and "/cache/" not in name and \
        "/topology/" not in name


@pytest.fixture(scope="module")
def dumps(tmp_path_factory) -> dict[str, Path]:
    """The hwloc dumps these tests read, extracted once."""
    out = {}
    base = tmp_path_factory.mktemp("dumps")
    for name in ("48amd64-4d2n6c-sparse", "16amd64-8n2c-cpusets", "32intel64-2p8co2t+8ve",
                 "128arm-2pa2n8cluster4co"):
        with tarfile.open(hwloc_fixture(name)) as tf:   # only what the checks read
            tf.extractall(base / name, filter="data",
                          members=[m for m in tf.getmembers() if _wanted(m.name)])
        (top,) = list((base / name).iterdir())
        out[name] = top
    return out


@pytest.fixture
def synth(tmp_path) -> Path:
    """A 2-socket, 2-node, 4-CPU synthetic machine with SMT and no settings files yet."""
    return machine(tmp_path / "m", sockets=2, l3_per_socket=1, cores_per_l3=1, smt=2)


# -- hwloc dumps ---------------------------------------------------------------------------

def test_dump_with_uneven_nodes_warns_memory_balance(dumps):
    c = by_id(run_checks(dumps["48amd64-4d2n6c-sparse"]))
    assert c["memory_balance"].status == "warn"
    assert "N0 8.0 GiB" in c["memory_balance"].value and "50%" in c["memory_balance"].value
    assert c["memory_balance"].fix.startswith("dmidecode -t memory")
    assert c["governor"].status == "ok" and "performance on 48 CPUs" in c["governor"].value
    assert c["vm"].status == "ok" and "DRACHMA" in c["vm"].value
    assert c["busy"].status == "unknown"       # never sampled on a replayed root


def test_dump_with_a_cpuset_warns_cgroup(dumps):
    c = by_id(run_checks(dumps["16amd64-8n2c-cpusets"]))["cgroup_cpus"]
    assert c.status == "warn", c
    assert "not allowed: 7-11" in c.value and "10 of 15 online CPUs" in c.value
    assert "AllowedCPUs=0-3,5-15" in c.fix


def test_dump_with_turbo_smt_and_hugepages(dumps):
    c = by_id(run_checks(dumps["32intel64-2p8co2t+8ve"]))
    assert c["boost"].status == "info" and "no_turbo = 0" in c["boost"].value
    assert c["boost"].fix == "echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo"
    assert c["smt"].status == "info" and c["smt"].value == "control on, active"
    assert c["hugepages"].status == "ok"
    assert c["hugepages"].value == "N0 2048 (2048 free), N1 2048 (2048 free) x 2 MiB"
    assert c["memory_balance"].status == "ok"
    assert c["cmdline"].status == "ok"


def test_dump_balanced_server(dumps):
    c = by_id(run_checks(dumps["128arm-2pa2n8cluster4co"]))
    assert c["memory_balance"].status == "ok"
    assert c["cgroup_cpus"].status == "ok" and "128 of 128" in c["cgroup_cpus"].value
    assert c["hugepages"].status == "info" and "none reserved on 4 nodes" in \
        c["hugepages"].value
    assert c["vm"].status == "ok" and "Huawei" in c["vm"].value


# -- synthetic trees -----------------------------------------------------------------------

def test_every_check_once_and_unknown_on_an_empty_root(tmp_path):
    checks = run_checks(tmp_path)
    assert [c.id for c in checks] == list(CHECKS)
    assert {c.status for c in checks} == {"unknown"}, [(c.id, c.status) for c in checks]
    for c in checks:
        assert set(c.to_dict()) == {"id", "title", "status", "value", "effect", "fix"}


def test_governor(synth):
    for cpu in range(4):
        _w(synth, f"{CPU}/cpu{cpu}/cpufreq/scaling_governor",
           "powersave" if cpu < 1 else "performance")
    c = by_id(run_checks(synth))["governor"]
    assert c.status == "warn"
    assert c.value == "performance on 3 CPUs, powersave on 1 CPU"
    assert c.fix == "cpupower frequency-set -g performance"
    _w(synth, f"{CPU}/cpu0/cpufreq/scaling_governor", "performance")
    assert by_id(run_checks(synth))["governor"].status == "ok"


def test_boost_knobs(synth):
    _w(synth, f"{CPU}/cpufreq/boost", "1")
    _w(synth, f"{CPU}/amd_pstate/status", "active")
    c = by_id(run_checks(synth))["boost"]
    assert c.status == "info" and c.fix == "echo 0 > /sys/devices/system/cpu/cpufreq/boost"
    _w(synth, f"{CPU}/cpufreq/boost", "0")
    assert by_id(run_checks(synth))["boost"].status == "ok"
    (synth / f"{CPU}/cpufreq/boost").unlink()
    _w(synth, f"{CPU}/cpufreq/policy0/boost", "0")
    _w(synth, f"{CPU}/cpufreq/policy2/boost", "1")
    c = by_id(run_checks(synth))["boost"]
    assert c.status == "info" and "1 with boost on" in c.value
    _w(synth, f"{CPU}/cpu0/cpufreq/scaling_governor", "schedutil")
    assert "amd_pstate active" in by_id(run_checks(synth))["governor"].value


def test_smt(synth):
    _w(synth, f"{CPU}/smt/control", "on")
    _w(synth, f"{CPU}/smt/active", "1")
    c = by_id(run_checks(synth))["smt"]
    assert c.status == "info" and c.fix == "echo off > /sys/devices/system/cpu/smt/control"
    _w(synth, f"{CPU}/smt/control", "off")
    _w(synth, f"{CPU}/smt/active", "0")
    assert by_id(run_checks(synth))["smt"].status == "ok"


@pytest.mark.parametrize("enabled,defrag,status,fix", [
    ("always [madvise] never", "always defer defer+madvise [madvise] never", "ok", ""),
    ("always madvise [never]", "[madvise] never", "warn",
     "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled"),
    ("[always] madvise never", "[always] defer madvise never", "info",
     "echo madvise > /sys/kernel/mm/transparent_hugepage/defrag"),
])
def test_thp(synth, enabled, defrag, status, fix):
    _w(synth, "sys/kernel/mm/transparent_hugepage/enabled", enabled)
    _w(synth, "sys/kernel/mm/transparent_hugepage/defrag", defrag)
    c = by_id(run_checks(synth))["thp"]
    assert (c.status, c.fix) == (status, fix), c


def test_numa_balancing(synth):
    _w(synth, "proc/sys/kernel/numa_balancing", "1")
    c = by_id(run_checks(synth))["numa_balancing"]
    assert (c.status, c.value) == ("warn", "on")
    assert c.fix == "echo 0 > /proc/sys/kernel/numa_balancing"
    _w(synth, "proc/sys/kernel/numa_balancing", "0")
    assert by_id(run_checks(synth))["numa_balancing"].status == "ok"


def test_hugepages_per_node(synth):
    hp = "hugepages/hugepages-2048kB"
    _w(synth, f"sys/devices/system/node/node0/{hp}/nr_hugepages", "256")
    _w(synth, f"sys/devices/system/node/node0/{hp}/free_hugepages", "200")
    _w(synth, f"sys/devices/system/node/node1/{hp}/nr_hugepages", "0")
    _w(synth, f"sys/devices/system/node/node1/{hp}/free_hugepages", "0")
    c = by_id(run_checks(synth))["hugepages"]
    assert c.status == "warn" and c.value == "N0 256 (200 free), N1 0 (0 free) x 2 MiB"
    assert "node1/hugepages/hugepages-2048kB/nr_hugepages" in c.fix
    _w(synth, f"sys/devices/system/node/node1/{hp}/nr_hugepages", "256")
    assert by_id(run_checks(synth))["hugepages"].status == "ok"
    pools = sysstate.hugepages_per_node(synth)
    assert [(p.node, p.page_bytes, p.total) for p in pools] == [(0, 2 << 20, 256),
                                                               (1, 2 << 20, 256)]


def test_irqbalance(synth):
    _w(synth, "proc/1/comm", "systemd")
    _w(synth, "proc/812/comm", "irqbalance")
    c = by_id(run_checks(synth))["irqbalance"]
    assert (c.status, c.fix) == ("info", "systemctl stop irqbalance")
    (synth / "proc/812/comm").unlink()
    assert by_id(run_checks(synth))["irqbalance"].status == "ok"


def test_memory_balance_ignores_cpuless_tiers(tmp_path):
    root = machine(tmp_path / "m", sockets=2, l3_per_socket=1, cores_per_l3=2, smt=1)
    _w(root, "sys/devices/system/node/node1/meminfo", "Node 1 MemTotal: 16777216 kB")
    c = by_id(run_checks(root))["memory_balance"]
    assert c.status == "warn" and "N1 has 25% of the largest" in c.value
    # a CPU-less node (CXL, HBM) is another tier, not a peer with a missing DIMM
    from numascope.topology import read_topology
    _w(root, "sys/devices/system/node/node1/meminfo", "Node 1 MemTotal: 67108864 kB")
    _w(root, "sys/devices/system/node/node2/meminfo", "Node 2 MemTotal: 1048576 kB")
    _w(root, "sys/devices/system/node/node2/cpulist", "")
    _w(root, "sys/devices/system/node/node2/distance", "32 32 10")
    topo = read_topology(root)
    assert by_id(run_checks(root, topo))["memory_balance"].status == "ok"
    assert by_id(run_checks(root))["memory_balance"].status == "warn"


def test_cgroup2_restriction(synth):
    _w(synth, "proc/self/cgroup", "0::/job_1/step_0")
    _w(synth, "proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0")
    _w(synth, "sys/fs/cgroup/job_1/step_0/cpuset.cpus.effective", "0-1")
    _w(synth, "sys/fs/cgroup/job_1/step_0/cpuset.mems.effective", "0")
    c = by_id(run_checks(synth))["cgroup_cpus"]
    assert c.status == "warn" and "2 of 4 online CPUs allowed; not allowed: 2-3" in c.value
    _w(synth, "sys/fs/cgroup/job_1/step_0/cpuset.cpus.effective", "0-3")
    assert by_id(run_checks(synth))["cgroup_cpus"].status == "ok"


def test_vm_from_cpuinfo_flag_and_from_dmi(tmp_path):
    guest = machine(tmp_path / "g", sockets=1, l3_per_socket=1, cores_per_l3=2, smt=1,
                    hypervisor=True)
    c = by_id(run_checks(guest))["vm"]
    assert c.status == "warn" and "cpuinfo flag hypervisor" in c.value
    assert c.fix.startswith("virsh vcpupin")
    host = machine(tmp_path / "h", sockets=1, l3_per_socket=1, cores_per_l3=2, smt=1)
    assert by_id(run_checks(host))["vm"].status == "ok"
    _w(host, "sys/class/dmi/id/sys_vendor", "QEMU")
    _w(host, "sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)")
    c = by_id(run_checks(host))["vm"]
    assert c.status == "warn" and "QEMU Standard PC" in c.value


@pytest.mark.parametrize("line,status,value,fix", [
    ("BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet", "ok",
     "no numa=, mem=, isolcpus= or nohz_full=", ""),
    ("root=/dev/sda1 numa=off", "warn", "numa=off",
     'grubby --update-kernel=ALL --remove-args="numa=off" && reboot'),
    ("root=/dev/sda1 numa=fake=4", "warn", "numa=fake=4",
     'grubby --update-kernel=ALL --remove-args="numa=fake=4" && reboot'),
    ("root=/dev/sda1 mem=8G isolcpus=2-3 nohz_full=2-3", "warn",
     "mem=8G isolcpus=2-3 nohz_full=2-3",
     'grubby --update-kernel=ALL --remove-args="mem=8G" && reboot'),
    ("root=/dev/sda1 isolcpus=2-3 nohz_full=2-3", "info", "isolcpus=2-3 nohz_full=2-3", ""),
])
def test_kernel_command_line(synth, line, status, value, fix):
    _w(synth, "proc/cmdline", line)
    c = by_id(run_checks(synth))["cmdline"]
    assert (c.status, c.value, c.fix) == (status, value, fix)


def test_replayed_root_is_a_jail(synth, tmp_path):
    """A dump's symlink to this machine's files reads as missing."""
    (synth / "proc/sys/kernel").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.write_text("1\n")
    (synth / "proc/sys/kernel/numa_balancing").symlink_to(outside)
    assert by_id(run_checks(synth))["numa_balancing"].status == "unknown"


# -- this machine --------------------------------------------------------------------------

def test_busy_process_is_found_on_this_machine():
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)
        c = readiness.check_busy(sysstate.tree_of("/"), live=True, seconds=0.5)
        found = sysstate.busy_processes(0.3, "/", exclude={os.getpid()})
    finally:
        spin.kill()
        spin.wait()
    assert any(p.pid == spin.pid and share > 0.05 for p, share in found), found[:5]
    assert c.status == "warn" and c.fix.startswith("kill -STOP ")
    assert os.getpid() not in [p.pid for p, _ in found]


def test_live_checks_read_this_machine():
    c = by_id(run_checks("/", busy_seconds=0.05))
    assert c["cgroup_cpus"].status in ("ok", "warn")
    assert f"{len(os.sched_getaffinity(0))} of" in c["cgroup_cpus"].value
    if Path("/proc/sys/kernel/numa_balancing").exists():
        on = Path("/proc/sys/kernel/numa_balancing").read_text().strip() != "0"
        assert c["numa_balancing"].status == ("warn" if on else "ok")
    assert c["busy"].status in ("ok", "warn")


def test_host_facts_record_readiness(synth):
    from numascope.results.run import host_facts
    from numascope.topology import read_topology
    _w(synth, "proc/sys/kernel/numa_balancing", "1")
    facts = host_facts(read_topology(synth), root=synth)
    assert [c["id"] for c in facts["readiness"]] == list(CHECKS)
    nb = next(c for c in facts["readiness"] if c["id"] == "numa_balancing")
    assert nb["status"] == "warn" and facts["numa_balancing"] is True
    assert next(c for c in facts["readiness"] if c["id"] == "busy")["status"] == "unknown"


def test_report_and_show_list_the_checks(synth):
    from io import StringIO

    from rich.console import Console
    from test_store_helpers import make_run

    from numascope.report.html import _host_section
    from numascope.report.terminal import print_run
    _w(synth, "proc/sys/kernel/numa_balancing", "1")
    _w(synth, "proc/cmdline", "root=/dev/sda numa=fake=<b>")
    rec = make_run(readiness=[c.to_dict() for c in run_checks(synth)])
    html = _host_section([rec])
    assert "Readiness" in html and "echo 0 &gt; /proc/sys/kernel/numa_balancing" in html
    assert "<b>" not in html and "numa=fake=&lt;b&gt;" in html
    buf = StringIO()
    print_run(rec, Console(file=buf, width=80))
    assert "2 of 12 checks warn: numa_balancing, cmdline" in buf.getvalue()
