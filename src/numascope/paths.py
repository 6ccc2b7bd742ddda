"""Output files and working folders, checked before anything is measured: one check for
every command and every family (the command kit re-exports it; a family's own folder rules,
such as storage's direct I/O, add to it)."""

from __future__ import annotations

import os
import re
import secrets
import stat
from pathlib import Path

# -- output paths, checked before anything is measured --------------------------------------
#
# Every file a command writes (report, plot, export, prom, hwloc XML) goes through
# check_output, every folder it creates files in (io --dir, fleet --shared-dir, run --io-dir)
# through check_workdir, every file it reads that is not a store or a data set (--base,
# --table) through check_input: before anything is measured, and every OS error on the way (a name
# too long, permission denied, a path on /proc or /sys or through a symlink into them) is one
# line, exit 2, naming the flag, the path (escaped: control characters visible) and why.

# file systems that hold no files of ours: the kernel's views and the like
PSEUDO_FS = frozenset({
    "proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "debugfs", "tracefs",
    "securityfs", "pstore", "bpf", "configfs", "efivarfs", "fusectl", "mqueue", "binfmt_misc",
    "autofs", "rpc_pipefs", "nsfs", "selinuxfs", "hugetlbfs"})
_PSEUDO_TOPS = ("/proc", "/sys", "/dev")   # when the mount table cannot be read
PATH_SHOWN = 160                          # a longer path is shown by its start and end


def _fail(flag: str, path: str, why: str):
    from numascope.errors import UserError, escape_text
    return UserError(f"{flag} {escape_text(path, PATH_SHOWN)}: {why}")


def os_reason(e: OSError) -> str:
    """An OSError's reason in the messages' words ("file name too long")."""
    import errno
    if e.errno == errno.ENAMETOOLONG:
        return "the name is too long (at most 255 bytes a name, 4096 a path)"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if e.errno == errno.EROFS:
        return "the file system is read-only"
    if e.errno == errno.ELOOP:
        return "too many levels of symbolic links"
    if e.errno == errno.ENOTDIR:
        return "a part of the path is not a folder"
    text = e.strerror or type(e).__name__
    return text[:1].lower() + text[1:]


def _stat(p: str, flag: str, path: str) -> os.stat_result | None:
    """os.stat(p); None when nothing is there; every other OSError is the user's error."""
    try:
        return os.stat(p)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:    # ValueError: a NUL in the name
        raise _fail(flag, path, os_reason(e) if isinstance(e, OSError)
                    else "the name holds a NUL character") from None


def _mounts() -> list[tuple[str, str]]:
    """(mount point, file system type) of this process's mounts, from /proc/self/mountinfo."""
    out = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                left, sep, right = line.partition(" - ")
                fields = left.split()
                if sep and len(fields) >= 5 and right.split():
                    mnt = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
                    out.append((mnt, right.split()[0]))
    except OSError:
        pass
    return out


def file_system(path: str | Path) -> str | None:
    """The type of the file system `path` (resolved, existing or not) lies on; None when the
    mount table cannot be read."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError, RuntimeError):
        return None
    best, kind = "", None
    for mnt, fstype in _mounts():
        if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
            best, kind = mnt, fstype
    return kind


def _pseudo(path: str | Path) -> str | None:
    """The name of the pseudo file system `path` resolves onto, or None for a real one."""
    kind = file_system(path)
    if kind in PSEUDO_FS:
        return kind
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError, RuntimeError):
        return None
    # /proc and /sys are the kernel's whatever is mounted below them (a tmpfs holding the
    # cgroup mounts); /dev only where the mount table could not say (/dev/shm is a tmpfs)
    tops = _PSEUDO_TOPS if kind is None else _PSEUDO_TOPS[:2]
    return next((("proc" if t == "/proc" else "sysfs" if t == "/sys" else "devtmpfs")
                 for t in tops if real == t or real.startswith(t + "/")), None)


def _probe(folder: str, flag: str, path: str, what: str) -> None:
    """Create and remove a file in `folder` (O_EXCL, a fresh name): the one proof that a file
    can be written there; any OSError is the user's error."""
    name = os.path.join(folder, f".numascope-probe-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError as e:
        raise _fail(flag, path, f"cannot create a file in {what} ({os_reason(e)})") from None
    os.close(fd)
    try:
        os.unlink(name)
    except OSError:
        pass


def check_output(path: str | None, flag: str, suffixes: tuple[str, ...] = ()) -> Path | None:
    """`path` if a file can be written there: the suffix is one of `suffixes`, the folder
    exists, is a real file system's and a file can be created in it, the path is not a
    folder and, if something is there, it is a writable plain file. UserError (exit 2)
    otherwise, one line naming `flag` and the path, so a bad --plot/--report/-o never costs
    a measurement. None stays None (not given); "-" (standard output) passes; "" is an error.
    """
    if path is None:
        return None
    if path == "-":
        return Path("-")
    from numascope.errors import UserError
    if not str(path).strip():
        raise UserError(f"{flag} is empty: give a file name")
    path = str(path)
    st = _stat(path, flag, path)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise _fail(flag, path, "is a folder: give a file name")
    p = Path(path)
    if suffixes and p.suffix.lower() not in suffixes:
        raise _fail(flag, path, f"the file must end in {' or '.join(suffixes)}")
    parent = os.path.dirname(path) or "."
    pst = _stat(parent, flag, path)
    if pst is None:
        raise _fail(flag, path, f"folder {_shown(parent)} does not exist")
    if not stat.S_ISDIR(pst.st_mode):
        raise _fail(flag, path, f"{_shown(parent)} is not a folder")
    fs = _pseudo(path)
    if fs is not None:
        raise _fail(flag, path, f"is on {fs}, the kernel's pseudo file system, which holds no "
                                "files of ours: give a path on a disk")
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            raise _fail(flag, path, "is not a plain file (a device, pipe or socket): give a "
                                    "file name")
        if not os.access(path, os.W_OK):
            raise _fail(flag, path, "cannot write there (permission denied)")
    _probe(parent, flag, path, "its folder")
    return p


def check_input(path: str, flag: str) -> Path:
    """`path` if it is a plain file that can be opened for reading: it exists and is not a
    folder, a pipe (a FIFO would block the open for good), a socket or a device. UserError
    (exit 2) otherwise, one line naming `flag`, the path (escaped) and why: every file a
    command reads (--base, --table …) is refused the same way."""
    from numascope.errors import UserError
    if path is None or not str(path).strip():
        raise UserError(f"{flag} is empty: give a file name")
    path = str(path)
    st = _stat(path, flag, path)
    if st is None:
        raise _fail(flag, path, "no such file")
    if stat.S_ISDIR(st.st_mode):
        raise _fail(flag, path, "is a folder: give a file name")
    if not stat.S_ISREG(st.st_mode):
        raise _fail(flag, path, "is not a plain file (a device, pipe or socket): give a "
                                "file name")
    if not os.access(path, os.R_OK):
        raise _fail(flag, path, "cannot read it (permission denied)")
    return Path(path)


def check_workdir(path: str, flag: str) -> Path:
    """`path` if it is a folder a command can create its files in: it exists, is a folder,
    lies on a real file system (not /proc, /sys or another of the kernel's pseudo ones, also
    not through a symlink into them) and a file can be created and removed there. UserError
    (exit 2) otherwise, one line naming `flag`, the path (escaped) and why."""
    from numascope.errors import UserError
    if path is None or not str(path).strip():
        raise UserError(f"{flag} is empty: give a folder")
    path = str(path)
    st = _stat(path, flag, path)
    if st is None:
        raise _fail(flag, path, "no such folder")
    if not stat.S_ISDIR(st.st_mode):
        raise _fail(flag, path, "is not a folder")
    fs = _pseudo(path)
    if fs is not None:
        raise _fail(flag, path, f"is on {fs}, the kernel's pseudo file system, which holds no "
                                "files of ours: give a folder on a disk")
    _probe(path, flag, path, "it")
    return Path(path)


def _shown(path: str) -> str:
    from numascope.errors import escape_text
    return escape_text(path, PATH_SHOWN)
