"""Where `numascope io` may go: directories and their free space, the refusals for block
devices (writes, no --readonly, mounted or held), and which node a target's drive hangs off,
on a replayed machine with NVMe drives on known nodes. Nothing here writes to a device."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest
from synth_sysfs import add_pci, machine

from numascope.errors import UserError
from numascope.families.storage import targets as io_targets
from numascope.families.storage.targets import check_device, check_dir, check_space, locate
from numascope.topology import read_topology

GIB = 1 << 30


def _link(root: Path, rel: str, target: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.symlink_to(target)


def nvme_machine(root: Path, *, drives: dict[str, str], fs_majmin: str | None = None,
                 mounts: str = "") -> Path:
    """A 2-socket, 4-node machine with NVMe drives {"nvme0": "1", ...} (name → numa_node),
    each with namespace nvme<N>n1 (block 259:<2N>) and partition p1 (259:<2N+1>), and
    `fs_majmin` (the st_dev of a real folder) pointing at nvme0n1p1."""
    machine(root, sockets=2, l3_per_socket=2, cores_per_l3=2, smt=1, nodes_per_socket=2)
    for i, (name, node) in enumerate(drives.items()):
        addr = f"0000:{0x41 + i:02x}:00.0"
        add_pci(root, addr, pci_class="0x010802", numa_node=node, cls="nvme", name=name)
        disk = f"sys/devices/pci0000:00/{addr}/nvme/{name}/{name}n1"
        (root / disk / f"{name}n1p1").mkdir(parents=True)
        (root / disk / f"{name}n1p1" / "partition").write_text("1\n")
        (root / disk / "holders").mkdir()
        (root / disk / f"{name}n1p1" / "holders").mkdir()
        _link(root, f"sys/class/block/{name}n1", f"../../../{disk}")
        _link(root, f"sys/class/block/{name}n1p1", f"../../../{disk}/{name}n1p1")
        _link(root, f"sys/dev/block/259:{2 * i}", f"../../../{disk}")
        _link(root, f"sys/dev/block/259:{2 * i + 1}", f"../../../{disk}/{name}n1p1")
    if fs_majmin:
        _link(root, f"sys/dev/block/{fs_majmin}", "../../../sys/class/block/nvme0n1p1")
    (root / "proc").mkdir(exist_ok=True)
    (root / "proc" / "mounts").write_text(mounts)
    return root


def majmin_of(path: Path) -> str:
    st = os.stat(path)
    return f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"


class FakeBlock:
    """A stat result that says "block device 259:N" (no device is opened)."""

    def __init__(self, minor: int):
        self.st_mode = stat.S_IFBLK | 0o600
        self.st_rdev = os.makedev(259, minor)
        self.st_dev = os.makedev(0, 5)


def fake_devices(monkeypatch, minor: int):
    real = io_targets._stat
    monkeypatch.setattr(io_targets, "_readable", lambda p: True)
    monkeypatch.setattr(io_targets, "_stat",
                        lambda p: FakeBlock(minor) if str(p).startswith("/dev/fake") else real(p))


# -- directories -----------------------------------------------------------------------------

def test_a_directory_is_checked(tmp_path):
    assert check_dir(str(tmp_path)) == tmp_path
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(UserError, match="is not a directory"):
        check_dir(str(f))
    with pytest.raises(UserError, match="no such directory"):
        check_dir(str(tmp_path / "nope"))
    with pytest.raises(UserError, match="--dir is empty"):
        check_dir(" ")
    assert list(tmp_path.iterdir()) == [f]          # the direct-I/O probe file is gone


def test_a_file_system_without_direct_io_is_refused(tmp_path, monkeypatch):
    """tmpfs before Linux 6.6 and 9p answer O_DIRECT with EINVAL: fio's direct jobs would
    fail there (as they did in the 6.1 guests), so the directory is refused up front."""
    real_open = io_targets.os.open

    def no_direct(path, flags, *a):
        if flags & io_targets.os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_open(path, flags, *a)

    monkeypatch.setattr(io_targets.os, "open", no_direct)
    with pytest.raises(UserError, match=r"--io-dir .*does not take direct I/O"):
        check_dir(str(tmp_path), "--io-dir")
    assert list(tmp_path.iterdir()) == []


def test_not_enough_space_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    class Vfs:
        f_bavail, f_frsize = 100, 1 << 20          # 100 MiB free
    monkeypatch.setattr(io_targets.os, "statvfs", lambda p: Vfs())
    check_space([str(tmp_path)], 64 << 20)
    with pytest.raises(UserError, match=r"only 100 MiB is free there: use a smaller --size"):
        check_space([str(tmp_path)], 95 << 20)      # above 90 % of what is free
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    with pytest.raises(UserError, match="128 MiB of test files"):   # two files, one fs
        check_space([str(a), str(b)], 64 << 20)
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]


def test_files_are_numascopes_own_and_removed(tmp_path):
    keep = tmp_path / "numascope-io-keep.dat"
    keep.write_text("the user's")
    files = io_targets.Files()
    p = files.add(str(tmp_path))
    assert Path(p).name.startswith("numascope-io-") and Path(p) != keep
    assert files.remove() == [] and not Path(p).exists() and keep.read_text() == "the user's"


def _dead_pid() -> int:
    """The PID of a process that has ended (and been reaped)."""
    import subprocess
    import sys
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_files_carry_this_process_s_pid_so_a_later_run_can_tell_leftovers(tmp_path):
    files = io_targets.Files()
    p = Path(files.add(str(tmp_path)))
    assert p.name.startswith(f"numascope-io-{os.getpid()}-") and p.suffix == ".dat"
    assert io_targets.leftovers(tmp_path) == []         # ours, and we are running
    files.remove()


def test_leftovers_are_files_of_a_process_that_no_longer_runs(tmp_path):
    dead = _dead_pid()
    data = tmp_path / f"numascope-io-{dead}-ab12_cd.dat"
    job = tmp_path / f"numascope-io-{dead}-x9y8.fio"
    old = tmp_path / "numascope-io-5ar1yj03.dat"              # an older numascope's name
    running = tmp_path / f"numascope-io-{os.getppid()}-live.dat"   # a running process's
    for f in (data, job, old, running):
        f.write_bytes(b"\0" * 4096)
    (tmp_path / "numascope-io-notes.txt").write_text("the user's")   # not our suffix
    (tmp_path / "report.dat").write_text("the user's")               # not our prefix
    (tmp_path / f"numascope-io-{dead}-dir.dat").mkdir()               # not a file
    found = io_targets.leftovers(tmp_path)
    assert found == sorted([data, job, old])
    text = io_targets.leftovers_text(found)
    assert data.name in text and "4 KiB" in text
    assert io_targets.leftovers_text(found * 2).endswith("and 3 more")
    assert io_targets.leftovers(tmp_path / "nope") == []
    assert running.exists() and data.exists()                  # finding removes nothing


# -- devices -------------------------------------------------------------------------------------

def test_device_needs_readonly_and_a_read_workload():
    with pytest.raises(UserError, match="add --readonly"):
        check_device("/dev/nvme0n1", readonly=False, rw="randread")
    for rw in ("randwrite", "randrw"):
        with pytest.raises(UserError, match="never writes to a block device"):
            check_device("/dev/nvme0n1", readonly=True, rw=rw)


def test_device_must_be_a_block_device(tmp_path):
    with pytest.raises(UserError, match="not a block device"):
        check_device("/dev/null", readonly=True, rw="randread")
    with pytest.raises(UserError, match="no such device"):
        check_device(str(tmp_path / "nvme9n9"), readonly=True, rw="read")


def test_a_free_device_passes_and_a_mounted_one_is_refused(tmp_path, monkeypatch):
    fake_devices(monkeypatch, 0)                     # /dev/fake… is 259:0 = nvme0n1
    free = nvme_machine(tmp_path / "free", drives={"nvme0": "1"})
    assert check_device("/dev/fake0", readonly=True, rw="randread", root=free) == "nvme0n1"
    busy = nvme_machine(tmp_path / "busy", drives={"nvme0": "1"},
                        mounts="/dev/nvme0n1p1 /data ext4 rw 0 0\n")
    with pytest.raises(UserError, match="refused, nvme0n1p1 is mounted on /data"):
        check_device("/dev/fake0", readonly=True, rw="randread", root=busy)


def test_a_partition_of_a_mounted_disk_and_a_held_disk_are_refused(tmp_path, monkeypatch):
    root = nvme_machine(tmp_path / "m", drives={"nvme0": "1"},
                        mounts="/dev/nvme0n1 /data xfs rw 0 0\n")
    fake_devices(monkeypatch, 1)                     # the partition nvme0n1p1
    with pytest.raises(UserError, match="nvme0n1 is mounted"):
        check_device("/dev/fake1", readonly=True, rw="read", root=root)
    held = nvme_machine(tmp_path / "h", drives={"nvme0": "1"})
    d = held / "sys/devices/pci0000:00/0000:41:00.0/nvme/nvme0/nvme0n1/nvme0n1p1/holders/dm-0"
    d.mkdir()
    with pytest.raises(UserError, match="nvme0n1p1 is held by dm-0"):
        check_device("/dev/fake1", readonly=True, rw="read", root=held)


def test_swap_is_refused(tmp_path, monkeypatch):
    root = nvme_machine(tmp_path / "m", drives={"nvme0": "1"})
    (root / "proc/swaps").write_text("Filename Type Size Used Priority\n"
                                     "/dev/nvme0n1p1 partition 1024 0 -2\n")
    fake_devices(monkeypatch, 0)
    with pytest.raises(UserError, match="used as swap"):
        check_device("/dev/fake0", readonly=True, rw="read", root=root)


def test_this_machines_root_device_is_refused_as_mounted():
    """The live check on the disk under "/" (read from /proc/mounts): refused, nothing read."""
    dev = next((ln.split()[0] for ln in Path("/proc/mounts").read_text().splitlines()
                if ln.split()[1:2] == ["/"] and ln.startswith("/dev/")), None)
    if dev is None or not Path(dev).exists() or not stat.S_ISBLK(os.stat(dev).st_mode):
        pytest.skip("the root filesystem is not on a visible block device here")
    with pytest.raises(UserError, match="is mounted"):
        check_device(dev, readonly=True, rw="randread")


# -- which node ------------------------------------------------------------------------------

def test_a_folders_node_is_its_nvme_drives_node(tmp_path):
    root = nvme_machine(tmp_path / "m", drives={"nvme0": "3", "nvme1": "0"},
                        fs_majmin=majmin_of(tmp_path))
    topo = read_topology(root)
    t = locate(topo, str(tmp_path), "dir", root)
    assert (t.disk, t.pci, t.node) == ("nvme0n1", "0000:41:00.0", 3), t
    assert "nvme0n1p1 on nvme0n1 at PCI 0000:41:00.0" in t.evidence
    t1 = locate(topo, str(tmp_path), "dir", root, majmin="259:2")
    assert (t1.disk, t1.node) == ("nvme1n1", 0)


def test_unknown_nodes_are_said(tmp_path):
    root = nvme_machine(tmp_path / "m", drives={"nvme0": "-1"})
    topo = read_topology(root)
    t = locate(topo, str(tmp_path), "dir", root, majmin="259:1")
    assert t.node is None and t.disk == "nvme0n1" and "node unknown" in t.evidence
    gone = locate(topo, str(tmp_path), "dir", root, majmin="0:99")
    assert gone.node is None and gone.disk is None and "not in sys/dev/block" in gone.evidence


def test_a_device_mapper_volume_over_two_nodes_is_ambiguous(tmp_path):
    root = nvme_machine(tmp_path / "m", drives={"nvme0": "1", "nvme1": "2"})
    dm = root / "sys/devices/virtual/block/dm-0"
    (dm / "slaves").mkdir(parents=True)
    (dm / "slaves/nvme0n1p1").symlink_to(
        "../../../../pci0000:00/0000:41:00.0/nvme/nvme0/nvme0n1/nvme0n1p1")
    (dm / "slaves/nvme1n1p1").symlink_to(
        "../../../../pci0000:00/0000:42:00.0/nvme/nvme1/nvme1n1/nvme1n1p1")
    _link(root, "sys/class/block/dm-0", "../../devices/virtual/block/dm-0")
    _link(root, "sys/dev/block/253:0", "../../devices/virtual/block/dm-0")
    topo = read_topology(root)
    t = locate(topo, str(tmp_path), "dir", root, majmin="253:0")
    assert t.node is None and "spans disks on nodes [1, 2]" in t.evidence
    (dm / "slaves/nvme1n1p1").unlink()
    one = locate(topo, str(tmp_path), "dir", root, majmin="253:0")
    assert one.node == 1 and one.disk == "nvme0n1"


def test_os_errors_on_the_way_to_a_folder_are_one_line_user_errors(tmp_path):
    """check_dir (also `numascope run --io-dir`'s rule) turns every OS error into UserError."""
    for bad in ("/proc", "/sys", str(tmp_path / ("n" * 300))):
        with pytest.raises(UserError) as e:
            check_dir(bad)
        msg = str(e.value)
        assert "\n" not in msg and msg.startswith("--dir ") and bad[:12] in msg, msg


def test_a_symlink_into_proc_is_refused_by_the_command(tmp_path, capsys):
    from numascope.cli import main
    link = tmp_path / "data"
    link.symlink_to("/proc")
    assert main(["io", "--dir", str(link)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is on proc" in err[0] and str(link) in err[0]
    assert "internal error" not in err[0]
