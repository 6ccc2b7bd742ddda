"""Malformed sysfs trees and tarballs end in one UserError line naming the file; the
`numascope topo` command on this machine."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from synth_sysfs import machine

from numascope.errors import UserError
from numascope.topology import read_topology


def small(tmp_path):
    return machine(tmp_path / "m", sockets=1, l3_per_socket=1, cores_per_l3=2, smt=1)


def test_garbage_cpulist_names_the_file(tmp_path):
    root = small(tmp_path)
    (root / "sys/devices/system/node/node0/cpulist").write_text("0-xSECRET\n")
    with pytest.raises(UserError, match=r"node0/cpulist: not a valid CPU/node list") as e:
        read_topology(root)
    assert "SECRET" not in str(e.value)  # the message names the file, never its contents


def test_garbage_cpumap_names_the_file(tmp_path):
    root = small(tmp_path)
    (root / "sys/devices/system/node/node0/cpulist").unlink()
    (root / "sys/devices/system/node/node0/cpumap").write_text("zz,11\n")
    with pytest.raises(UserError, match=r"node0/cpumap: not a valid hex CPU mask") as e:
        read_topology(root)
    assert "zz" not in str(e.value)


def test_garbage_number_does_not_echo_the_file(tmp_path):
    root = small(tmp_path)
    (root / "sys/devices/system/cpu/cpu0/topology/core_id").write_text("root:x:0:0:root\n")
    with pytest.raises(UserError, match=r"cpu0/topology/core_id: expected a number") as e:
        read_topology(root)
    assert "root:x" not in str(e.value)


@pytest.mark.parametrize("size", ["99999999999999999999999K", "65537M", "68719476737"])
def test_an_implausible_cache_size_is_refused_not_shown_as_a_cache(tmp_path, size):
    """A replayed L3 of 10^23 KiB read as "L3 #0 95367431640624992 GiB": refused, one line
    naming the file (64 GiB is the bound; 64 GiB itself passes, as the test's root does)."""
    root = small(tmp_path)
    idx = next(p for p in sorted((root / "sys/devices/system/cpu/cpu0/cache").glob("index*"))
               if (p / "level").read_text().strip() == "3")
    (idx / "size").write_text(size + "\n")
    with pytest.raises(UserError, match=rf"{idx.name}/size: a cache size of more than 64 GiB "
                                        "is not plausible"):
        read_topology(root)
    (idx / "size").write_text("64G\n")
    (l3,) = [c for c in read_topology(root).caches if c.level == 3]
    assert l3.size_bytes == 64 << 30


@pytest.mark.parametrize("target", ["absolute", "relative"])
def test_directory_root_does_not_follow_links_out(tmp_path, target):
    """A replayed directory is a jail: a symlink leading out of it (absolute, or with ..)
    reads as missing, so a dump cannot make numascope read this machine's files."""
    outside = small(tmp_path / "outside")   # a second machine the link points into
    root = small(tmp_path)
    node0 = root / "sys/devices/system/node/node0"
    for f in ("cpulist", "cpumap"):
        (node0 / f).unlink(missing_ok=True)
    dest = outside / "sys/devices/system/node/node0/cpulist"
    link = dest if target == "absolute" else \
        Path("../../../../../../outside/m") / dest.relative_to(outside)
    (node0 / "cpulist").symlink_to(link)
    assert (node0 / "cpulist").read_text()          # the link itself works
    t = read_topology(root)
    assert t.node(0).cpus == ()                      # but was not followed


def test_root_whose_sys_is_the_live_sys_is_refused(tmp_path):
    (tmp_path / "sys").symlink_to("/sys")
    with pytest.raises(UserError, match="this machine's /sys"):
        read_topology(tmp_path)


def test_dev_null_root(tmp_path):
    with pytest.raises(UserError, match="not a directory or a tar archive"):
        read_topology("/dev/null")


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
    doc = json.loads(run("--json").stdout)
    assert doc["command"] == "topo" and doc["errors"] == []
    (j,) = doc["results"]
    assert j["schema_version"] == 1
    assert j["facts"]["threads"]["value"] == len(j["cpus"])


def test_cli_bad_root(tmp_path):
    r = run("--sysfs-root", str(tmp_path / "nope"))
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "nope" in r.stderr


def test_cli_dev_null_root():
    r = run("--sysfs-root", "/dev/null")
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().count("\n") == 0 and "/dev/null" in r.stderr


def test_cli_truncated_or_garbage_tarball_is_one_line(tmp_path):
    root = small(tmp_path)
    tb = tmp_path / "dump.tar.bz2"
    with tarfile.open(tb, "w:bz2") as tar:
        tar.add(root, arcname="dump")
    for name, data in (("head.tar.bz2", tb.read_bytes()[:100]),
                       ("half.tar.bz2", tb.read_bytes()[: tb.stat().st_size // 2]),
                       ("noise.tar.gz", b"SECRET-CONTENT " * 40)):
        (tmp_path / name).write_bytes(data)
        r = run("--sysfs-root", str(tmp_path / name))
        assert r.returncode == 2, (name, r.stderr)
        line = r.stderr.strip()
        assert line.count("\n") == 0 and name in line and not line.endswith(":"), line
        assert "SECRET" not in line
