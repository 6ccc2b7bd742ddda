"""Where `numascope io` may read and write, checked before fio starts — fio's own rules, made
the default:

* a directory the user names (`--dir DIR`, one per drive) gets one file that numascope
  creates (mkstemp: never an existing file), sized after checking the free space
  (os.statvfs), and removed afterwards, also after Ctrl-C/SIGTERM;
* a raw block device (`--device /dev/X`) only with `--readonly`, only for read workloads,
  and never while it or one of its partitions is mounted or held (LVM, md, dm-crypt …).

A target's NUMA node is the node of the PCI function its block device hangs off: the file's
filesystem (st_dev) → sys/dev/block/MAJ:MIN → the whole disk (a partition's parent, a dm/md
device's slaves) → the PCI function above it in sysfs → the topology's device list."""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from numascope.errors import Unavailable, UserError
from numascope.paths import check_workdir
from numascope.topology.files import Tree
from numascope.topology.model import Topology
from numascope.units import format_bytes

HEADROOM = 0.9            # a file may use at most 90 % of the free space of its filesystem
FILE_PREFIX = "numascope-io-"
PCI_ADDR = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


def _stat(path: str) -> os.stat_result:     # one place, so tests can stand in a device
    return os.stat(path)


def _readable(path: str) -> bool:
    return os.access(path, os.R_OK)


@dataclass(frozen=True)
class Target:
    """One thing fio reads or writes: a directory (numascope makes a file in it) or a
    read-only block device."""

    path: str                         # the directory, or /dev/X
    kind: str                         # "dir" | "device"
    disk: str | None = None           # the whole disk under it (nvme0n1, vda …), None unknown
    pci: str | None = None            # the PCI function of that disk
    node: int | None = None           # its NUMA node, None when unknown
    evidence: str = ""                # how the node was found (or why it is unknown)
    fs_dev: int | None = None         # st_dev of a directory (to add up files on one fs)

    def to_dict(self) -> dict:
        return {"path": self.path, "kind": self.kind, "disk": self.disk, "pci": self.pci,
                "node": self.node, "evidence": self.evidence}


# -- directories --------------------------------------------------------------------------

def check_dir(path: str, flag: str = "--dir") -> Path:
    """A directory numascope may create a file in, on a file system that takes direct I/O,
    and passing the check every working folder gets (numascope.paths: not /proc or /sys,
    every OS error one line); UserError otherwise."""
    if not str(path).strip():
        raise UserError(f"{flag} is empty: give a directory on the drive to measure")
    try:
        checked = _check_dir(path, flag)
    except OSError as e:
        raise UserError(f"{flag} {path!r}: {e.strerror or e}") from None
    check_workdir(path, flag)    # and what every working folder is checked for
    return checked


def _check_dir(path: str, flag: str) -> Path:
    p = Path(path)
    if not p.exists():
        raise UserError(f"{flag} {path}: no such directory")
    if not p.is_dir():
        raise UserError(f"{flag} {path} is not a directory (numascope creates its own file "
                        "in it; a block device goes with --device)")
    if not os.access(p, os.W_OK | os.X_OK):
        raise UserError(f"{flag} {path}: cannot create a file there (permission denied)")
    if not takes_direct_io(p, flag):
        raise UserError(f"{flag} {path}: its file system does not take direct I/O (O_DIRECT; "
                        "e.g. tmpfs before Linux 6.6, 9p), which fio's jobs use so that the "
                        "drive, not the page cache, is measured: give a directory on the drive")
    return p


def takes_direct_io(directory: Path, flag: str = "--dir") -> bool:
    """Can a file in `directory` be opened with O_DIRECT? (an empty probe file, removed)"""
    try:
        name = make_file(str(directory))
    except OSError as e:   # /proc, /sys: a directory that takes no new file
        raise UserError(f"{flag} {str(directory)!r}: cannot create a file there "
                        f"({e.strerror or e})") from None
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_DIRECT", 0))
    except OSError as e:
        if e.errno == errno.EINVAL:
            return False
        raise UserError(f"{flag} {str(directory)!r}: cannot open a file there "
                        f"({e.strerror})") from None
    finally:
        os.unlink(name)
    os.close(fd)
    return True


def same_device(dirs: list[str]) -> list[list[str]]:
    """Groups of directories (two or more each) on one file system (the same st_dev): files
    in them land on the same device. Unreadable ones are left out (check_dir speaks for
    them)."""
    by: dict[int, list[str]] = {}
    for d in dirs:
        try:
            by.setdefault(_stat(d).st_dev, []).append(d)
        except OSError:
            continue
    return [g for g in by.values() if len(g) > 1]


def free_bytes(path: str | Path) -> int:
    """Bytes an unprivileged writer may still use on `path`'s filesystem."""
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def check_space(dirs: list[str], size: int) -> None:
    """UserError unless every filesystem holds its files (one of `size` per directory on it)
    within HEADROOM of its free space."""
    need: dict[int, list[str]] = {}
    for d in dirs:
        need.setdefault(os.stat(d).st_dev, []).append(d)
    for group in need.values():
        total = size * len(group)
        free = free_bytes(group[0])
        if total > HEADROOM * free:
            names = ", ".join(group)
            raise UserError(f"--dir {names}: {format_bytes(total)} of test files needed but only "
                            f"{format_bytes(free)} is free there: use a smaller --size")


def make_file(directory: str) -> str:
    """A new, empty file of numascope's in `directory` (never an existing one); fio lays it
    out to the job's size."""
    fd, name = tempfile.mkstemp(prefix=own_prefix(), suffix=".dat", dir=directory)
    os.close(fd)
    return name


def own_prefix() -> str:
    """The start of this process's file names (numascope-io-PID-): a later run tells a
    stopped run's leftovers from a running one's files by the PID."""
    return f"{FILE_PREFIX}{os.getpid()}-"


LEFTOVER = re.compile(rf"^{re.escape(FILE_PREFIX)}(?:(?P<pid>\d+)-)?\w+\.(?:dat|fio)$")


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:      # another user's process: running
        return True
    return True


def leftovers(directory: str | Path) -> list[Path]:
    """numascope io's files in `directory` (data files, job files) whose process no longer
    runs: what a killed run left (a name without a PID is an older numascope's: a leftover
    too). Sorted by name; [] when the directory cannot be listed."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    out = []
    for e in entries:
        m = LEFTOVER.match(e.name)
        if m is None or not e.is_file(follow_symlinks=False):
            continue
        pid = m.group("pid")
        if pid is None or not _running(int(pid)):
            out.append(Path(e.path))
    return sorted(out)


def leftovers_text(files: list[Path]) -> str:
    """"a (256 MiB), b (1 KiB)" — the first three by name, then how many more."""
    def one(f: Path) -> str:
        try:
            return f"{f.name} ({format_bytes(f.stat().st_size)})"
        except OSError:
            return f.name
    names = [one(f) for f in files[:3]]
    more = len(files) - len(names)
    return ", ".join(names) + (f" and {more} more" if more else "")


def remove_files(paths: list[str]) -> list[str]:
    """Remove numascope's files; returns those that could not be removed."""
    left = []
    for p in paths:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
        except OSError:
            left.append(p)
    return left


# -- block devices --------------------------------------------------------------------------

def _majmin(rdev: int) -> str:
    return f"{os.major(rdev)}:{os.minor(rdev)}"


def check_device(path: str, *, readonly: bool, rw: str, root: str | Path = "/") -> str:
    """The block device's kernel name (nvme0n1, sda2 …) when reading it is allowed: a block
    device, --readonly given, a read workload, nothing on it mounted or held. UserError
    (exit 2) for every refusal, Unavailable (4) when it cannot be opened for reading."""
    if not readonly:
        raise UserError(f"--device {path}: a raw device is used read-only only; add --readonly "
                        "to acknowledge it (numascope never writes to a device)")
    if rw not in ("randread", "read"):
        raise UserError(f"--device {path}: --rw {rw} writes, and numascope never writes to a "
                        "block device; measure writes with --dir on a mounted filesystem")
    try:
        st = _stat(path)
    except FileNotFoundError:
        raise UserError(f"--device {path}: no such device") from None
    except OSError as e:
        raise UserError(f"--device {path}: {e.strerror}") from None
    if not stat.S_ISBLK(st.st_mode):
        raise UserError(f"--device {path} is not a block device (a file system directory "
                        "goes with --dir)")
    tree = root if isinstance(root, Tree) else Tree(root)
    name = device_name(tree, _majmin(st.st_rdev)) or Path(path).name
    busy = mounted_or_held(tree, name, path)
    if busy:
        raise UserError(f"--device {path}: refused, {busy}")
    if not _readable(path):
        raise Unavailable(f"--device {path}: cannot open it for reading (permission denied)")
    return name


def device_name(tree: Tree, majmin: str) -> str | None:
    """The kernel name of block device MAJ:MIN (sys/dev/block/MAJ:MIN → …/block/NAME)."""
    p = tree.path(f"sys/dev/block/{majmin}")
    if not os.path.lexists(p):
        return None
    return Path(os.path.realpath(p)).name


def _sys_block_dir(tree: Tree, name: str) -> Path | None:
    """sys/class/block/NAME resolved (a disk or a partition), inside the tree."""
    p = tree.path(f"sys/class/block/{name}")
    if not os.path.lexists(p):
        return None
    real = Path(os.path.realpath(p))
    top = tree.root.resolve()
    return real if top in real.parents else None


def _family(tree: Tree, name: str) -> list[str]:
    """The device, its whole disk and all of that disk's partitions (names)."""
    real = _sys_block_dir(tree, name)
    if real is None:
        return [name]
    disk = real.parent if (real / "partition").exists() else real
    parts = [c.name for c in disk.iterdir() if (c / "partition").exists()] \
        if disk.is_dir() else []
    return list(dict.fromkeys([name, disk.name, *parts]))


def mounted_or_held(tree: Tree, name: str, path: str = "") -> str:
    """Why a device must not be touched ("" when free): it or a partition of its disk is in
    proc/mounts or proc/swaps, or has holders (LVM, md, dm-crypt, a partition table in use)."""
    names = _family(tree, name)
    for table, what in (("proc/mounts", "mounted"), ("proc/swaps", "used as swap")):
        for line in (tree.read(table) or "").splitlines():
            dev = line.split()[0] if line.split() else ""
            base = os.path.basename(dev)
            if base in names or (path and dev == path):
                where = (line.split() + ["", ""])[1]
                return f"{base} is {what}" + (f" on {where}" if what == "mounted" else "")
    for n in names:
        real = _sys_block_dir(tree, n)
        holders = sorted(h.name for h in (real / "holders").iterdir()) \
            if real is not None and (real / "holders").is_dir() else []
        if holders:
            return f"{n} is held by {', '.join(holders)} (LVM, md or dm in use)"
    return ""


# -- which node a target hangs off -------------------------------------------------------------

def _disks_under(tree: Tree, name: str, depth: int = 0) -> list[Path]:
    """Whole disks under block device `name`: itself, a partition's parent, a dm/md device's
    slaves (recursively)."""
    real = _sys_block_dir(tree, name)
    if real is None:
        return []
    if (real / "partition").exists():
        real = real.parent
    slaves = sorted((real / "slaves").iterdir()) if (real / "slaves").is_dir() else []
    if slaves and depth < 8:
        out: list[Path] = []
        for s in slaves:
            out.extend(_disks_under(tree, s.name, depth + 1))
        return out
    return [real]


def _pci_of(path: Path) -> str | None:
    """The nearest PCI function above a sysfs device path."""
    for part in reversed(path.parts):
        if PCI_ADDR.match(part):
            return part
    return None


def locate(topo: Topology, path: str, kind: str, root: str | Path = "/",
           majmin: str | None = None) -> Target:
    """The Target for a directory or device, with the node its disk hangs off (or why that
    is unknown). `majmin` overrides the one found with os.stat (tests)."""
    st = _stat(path)
    if majmin is None:
        majmin = _majmin(st.st_rdev if kind == "device" else st.st_dev)
    tree = root if isinstance(root, Tree) else Tree(root)
    fs_dev = st.st_dev if kind == "dir" else None
    name = device_name(tree, majmin)
    if name is None:
        return Target(path, kind, fs_dev=fs_dev,
                      evidence=f"block device {majmin} not in sys/dev/block (a network, "
                               "overlay or memory filesystem?): node unknown")
    disks = _disks_under(tree, name)
    pcis = [(d.name, _pci_of(d)) for d in disks]
    known = [(d, a) for d, a in pcis if a]
    if not known:
        return Target(path, kind, disk=name, fs_dev=fs_dev,
                      evidence=f"{name} is not on a PCI device (virtual disk): node unknown")
    by_addr = {d.address: d for d in topo.devices}
    nodes = {}
    for d, a in known:
        dev = by_addr.get(a)
        nodes[(d, a)] = (dev.numa_node if dev else None, dev.evidence if dev else
                         f"PCI {a} not in the topology's device list")
    disk, addr = known[0]
    node, ev = nodes[(disk, addr)]
    distinct = {n for n, _ in nodes.values()}
    if len(known) > 1 and len(distinct) > 1:
        return Target(path, kind, disk=",".join(d for d, _ in known), pci=addr, node=None,
                      fs_dev=fs_dev, evidence=f"{name} spans disks on nodes "
                      f"{sorted(distinct, key=lambda n: (n is None, n or 0))}: node ambiguous")
    disk_names = ",".join(d for d, _ in known)
    via = f"{name} on {disk_names}" if disk_names != name else name
    return Target(path, kind, disk=disk_names, pci=addr, node=node, fs_dev=fs_dev,
                  evidence=f"{via} at PCI {addr}: {ev}" if node is not None else
                  f"{via} at PCI {addr}: node unknown ({ev})")


@dataclass
class Files:
    """The files numascope created for one fio run; `remove()` takes them away."""

    paths: list[str] = field(default_factory=list)

    def add(self, directory: str) -> str:
        p = make_file(directory)
        self.paths.append(p)
        return p

    def remove(self) -> list[str]:
        left = remove_files(self.paths)
        self.paths = left
        return left
