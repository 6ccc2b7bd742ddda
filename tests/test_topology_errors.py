"""Malformed sysfs trees and tarballs end in one UserError line naming the file; the
`numascope topo` command on this machine."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile

import pytest
from synth_sysfs import machine

from numascope.errors import UserError
from numascope.topology import read_topology


def small(tmp_path):
    return machine(tmp_path / "m", sockets=1, l3_per_socket=1, cores_per_l3=2, smt=1)


def test_garbage_cpulist_names_the_file(tmp_path):
    root = small(tmp_path)
    (root / "sys/devices/system/node/node0/cpulist").write_text("0-x\n")
    with pytest.raises(UserError, match=r"node0/cpulist: malformed list"):
        read_topology(root)


def test_garbage_cpumap_names_the_file(tmp_path):
    root = small(tmp_path)
    (root / "sys/devices/system/node/node0/cpulist").unlink()
    (root / "sys/devices/system/node/node0/cpumap").write_text("zz,11\n")
    with pytest.raises(UserError, match=r"node0/cpumap: malformed mask"):
        read_topology(root)


def test_missing_cpu_dir(tmp_path):
    (tmp_path / "sys/devices/system").mkdir(parents=True)
    with pytest.raises(UserError, match="no cpuN directories"):
        read_topology(tmp_path)


def test_missing_optional_files_are_tolerated(tmp_path):
    root = small(tmp_path)
    (root / "sys/devices/system/node/node0/meminfo").unlink()
    (root / "proc/cpuinfo").unlink()
    t = read_topology(root)
    assert t.node(0).memory_bytes is None and t.facts["cpu_model"].status == "unknown"


def test_truncated_tarball(tmp_path):
    root = small(tmp_path)
    tb = tmp_path / "dump.tar.bz2"
    with tarfile.open(tb, "w:bz2") as tar:
        tar.add(root, arcname="dump")
    data = tb.read_bytes()
    cut = tmp_path / "cut.tar.bz2"
    cut.write_bytes(data[: len(data) // 2])
    assert read_topology(tb).facts["cores"].value == 2  # the whole one reads
    with pytest.raises(UserError, match="cut.tar.bz2"):
        read_topology(cut)


def test_escaping_link_is_not_followed(tmp_path):
    root = small(tmp_path)
    tb = tmp_path / "evil.tar"
    with tarfile.open(tb, "w") as tar:
        tar.add(root, arcname="d")
        info = tarfile.TarInfo("d/sys/class/net/evil")
        info.type = tarfile.SYMTYPE
        info.linkname = "../../../../../../etc"
        tar.addfile(info)
    t = read_topology(tb)
    assert t.devices == []


def run(*args):
    return subprocess.run([sys.executable, "-m", "numascope", "topo", *args],
                          capture_output=True, text=True, check=False, timeout=120)


def test_cli_this_machine():
    r = run()
    assert r.returncode == 0, r.stderr
    assert "Machine" in r.stdout and "memory_mode" in r.stdout
    j = json.loads(run("--json").stdout)
    assert j["schema_version"] == 1
    assert j["facts"]["threads"]["value"] == len(j["cpus"])


def test_cli_bad_root(tmp_path):
    r = run("--sysfs-root", str(tmp_path / "nope"))
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "nope" in r.stderr
