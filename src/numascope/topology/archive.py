"""Safe extraction of sysfs dumps (`hwloc-gather-topology` .tar.bz2 and friends).

Members are extracted one by one with tarfile's "data" filter: nothing lands outside the
temporary directory (no absolute paths, no `..`, no links pointing out), no device files,
no setuid bits. Members the filter refuses are skipped — a dump holds only plain files,
directories and relative symlinks. The directory is removed when the context ends."""

from __future__ import annotations

import copy
import os
import re
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from numascope.errors import UserError

# Parts of a dump the reader never looks at (memory blocks, cpuidle/cpufreq states …):
# skipping them makes extraction several times faster.
_SKIP = re.compile(
    r"(^|/)sys/devices/system/memory/|/node\d+/memory\d+(/|$)"
    r"|(^|/)sys/devices/system/cpu/(cpu\d+/(?!online$|topology(/|$)|cache(/|$))"
    r"|(?!cpu\d+(/|$)|online$|offline$|possible$|present$|kernel_max$))")
TAR_SUFFIXES = (".tar", ".tar.bz2", ".tbz2", ".tar.gz", ".tgz", ".tar.xz", ".txz")


def is_archive(path: str | Path) -> bool:
    p = Path(path)
    return p.is_file() and (p.name.endswith(TAR_SUFFIXES) or tarfile.is_tarfile(p))


# Sizes: a sysfs or procfs file is small (files.MAX_FILE, 1 MiB, is far above any); a file
# that grows with the machine (/proc/cpuinfo) is kept up to that size, cut (the reader needs
# its start); anything else in the dump (hwloc's own output beside sys/) up to OTHER_MAX; and
# the whole dump up to TOTAL_MAX. A larger member is refused by its header, before its
# bytes are unpacked: a compressed GiB of NULs costs nothing.
OTHER_MAX = 64 << 20
TOTAL_MAX = 1 << 30
_KERNEL = re.compile(r"(^|/)(sys|proc)/")


def extract_dump(archive: str | Path, dest: str | Path) -> Path:
    """Extract `archive` into the existing directory `dest`; return the sysfs root in it."""
    archive = Path(archive)
    dest = Path(dest)
    total = 0
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                if member.isfile():
                    total += member.size
                    member = _sized(archive, member, total)
                if _SKIP.search(member.name):
                    continue
                try:
                    tar.extract(member, dest, filter="data")
                except tarfile.FilterError:
                    continue  # absolute or escaping link, device node …: not needed, not safe
    except (tarfile.TarError, EOFError, OSError, ValueError) as e:
        raise UserError(f"{archive}: not a readable sysfs dump ({_reason(e)})") from None
    return find_root(dest, archive)


def _sized(archive: Path, member: tarfile.TarInfo, total: int) -> tarfile.TarInfo:
    """`member`, cut to MAX_FILE + 1 bytes where it is a file read only in part (the reader
    cuts it at a line); UserError naming it where it is too large to be what it says."""
    from numascope.errors import escape_text
    from numascope.topology.files import HEAD_ONLY, MAX_FILE
    name = escape_text(member.name, 200)
    if member.size <= MAX_FILE:
        if total > TOTAL_MAX:
            raise UserError(f"{archive}: unpacks to more than {TOTAL_MAX >> 30} GiB (at "
                            f"{name}): not a sysfs dump; refused")
        return member
    kernel = _KERNEL.search(member.name)
    if kernel and any(member.name.endswith(h) for h in HEAD_ONLY):
        cut = copy.copy(member)     # the header read on: tarfile goes on by the original
        cut.size = MAX_FILE + 1
        return cut
    if kernel:
        raise UserError(f"{archive}:{name}: {member.size} bytes, larger than "
                        f"{MAX_FILE >> 20} MiB: not a sysfs or procfs file (a damaged or forged "
                        "dump); refused")
    if member.size > OTHER_MAX or total > TOTAL_MAX:
        raise UserError(f"{archive}:{name}: {member.size} bytes, larger than "
                        f"{OTHER_MAX >> 20} MiB: not part of a sysfs dump; refused")
    return member


def find_root(top: Path, label: str | Path) -> Path:
    """The directory holding sys/ — `top` itself, or its single top folder."""
    if (top / "sys").is_dir():
        return top
    try:
        subdirs = [p for p in top.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError as e:
        raise UserError(f"{label}: cannot list it ({e.strerror or type(e).__name__})") from None
    if len(subdirs) == 1 and (subdirs[0] / "sys").is_dir():
        return subdirs[0]
    raise UserError(f"{label}: no sys/ directory found (not a sysfs dump?)")


# A dump is thousands of small files: unpacked in RAM (tmpfs) where there is room to spare,
# replaying one takes a fraction of the time it takes on a slow or busy disk.
RAM_DIR = "/dev/shm"
RAM_SPARE = 256 << 20


def _scratch() -> str | None:
    """RAM_DIR where it is writable with RAM_SPARE free, else the default temp dir."""
    try:
        st = os.statvfs(RAM_DIR)
    except OSError:
        return None
    if st.f_bavail * st.f_frsize < RAM_SPARE or not os.access(RAM_DIR, os.W_OK | os.X_OK):
        return None
    return RAM_DIR


@contextmanager
def extracted(archive: str | Path) -> Iterator[Path]:
    try:
        tmp = tempfile.mkdtemp(prefix="numascope-sysfs-", dir=_scratch())
    except OSError:
        tmp = tempfile.mkdtemp(prefix="numascope-sysfs-")
    try:
        yield extract_dump(archive, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _reason(e: BaseException) -> str:
    """One line, naming what is wrong with the archive, never quoting what is in it."""
    text = " ".join((str(e) or type(e).__name__).split())
    if isinstance(e, EOFError) or "end-of-stream" in text or "unexpected end" in text:
        return f"truncated or corrupt: {text}"
    if "could not be opened successfully" in text:   # tarfile tried every compression
        return "not a tar archive, or a truncated or corrupt one"
    return text
