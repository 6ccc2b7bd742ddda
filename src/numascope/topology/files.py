"""Reading single sysfs/procfs files under a root, with errors that name the file, and the
parsers of the procfs text both the topology reader and `numascope.host` read
(meminfo fields, the first /proc/cpuinfo block)."""

from __future__ import annotations

import os
import re
import stat
import string
from pathlib import Path

from numascope.errors import UserError
from numascope.topology.lists import parse_list, parse_mask

# a sysfs or procfs file is a few bytes to a few KiB: a replayed one larger than this is
# refused (naming it), never read whole; /proc/cpuinfo, which grows with the CPUs, is read
# only as far as its first block needs (Tree.read_head)
MAX_FILE = 1 << 20

# files that grow with the machine (a 1,024-CPU /proc/cpuinfo is over 1 MiB), of which a
# reader needs the start: read() gives their first MAX_FILE bytes, cut at a line
HEAD_ONLY = frozenset({"proc/cpuinfo"})

# lists that are never empty on a running kernel (CPU 0 is always online, a node is always
# online): empty in a dump (or only NUL bytes) is a damaged file, not "none"
NEVER_EMPTY = frozenset({
    "sys/devices/system/cpu/online", "sys/devices/system/cpu/present",
    "sys/devices/system/cpu/possible", "sys/devices/system/node/online",
    "sys/devices/system/node/possible"})

# the list-format twin of each hex-map file
_LIST_NAMES = {"shared_cpu_map": "shared_cpu_list", "local_cpus": "local_cpulist",
               "cpumap": "cpulist"}


class Tree:
    """A sysfs/procfs root. `label` is what error messages call it (the tarball's name).

    A replayed root (anything but the live "/") is a jail: a path whose symlinks lead out of
    it reads as missing, so a dump cannot make numascope read this machine's (or anyone's)
    files. Error messages name the file, never its contents."""

    def __init__(self, root: str | Path, label: str | None = None) -> None:
        self.root = Path(root)
        self.label = label or str(root)
        self.live = self.root.resolve() == Path("/")
        self._jail = str(self.root.resolve())
        self._jail_prefix = self._jail.rstrip(os.sep) + os.sep
        # (list file, what the list says, what its hex-map twin says) where the two differ:
        # a kernel writes both from one cpumask, so a difference means an edited dump
        self.mismatches: list[tuple[str, list[int], list[int]]] = []

    def path(self, rel: str) -> Path:
        return self.root / rel.lstrip("/")

    def _inside(self, rel: str) -> Path | None:
        """The path of `rel`, or None when its symlinks lead out of a replayed root."""
        p = self.path(rel)
        if self.live:
            return p
        # (strings, not Path objects: a replayed machine reads ~2,000 files, and Path's
        # resolve and parents were most of its reading time)
        try:
            real = os.path.realpath(p)
        except (OSError, ValueError):
            return None
        return p if real == self._jail or real.startswith(self._jail_prefix) else None

    def where(self, rel: str) -> str:
        """How an error names a file: `/` roots show the real path, dumps show dump:path."""
        rel = rel.lstrip("/")
        if self.label == "/":
            return "/" + rel
        return f"{self.label}:{rel}"

    def exists(self, rel: str) -> bool:
        p = self._inside(rel)
        return p is not None and p.exists()

    def read(self, rel: str) -> str | None:
        """Text of the file, stripped; None when missing or unreadable. A replayed file over
        MAX_FILE is refused (UserError naming it), having read no more than MAX_FILE + 1
        bytes of it. Trailing NUL bytes (some dumps carry one after the newline) are
        dropped; a NUL inside the text stays, so a parser refuses it."""
        if rel.strip("/") in HEAD_ONLY:
            return self.read_head(rel)
        data = self._bytes(rel, MAX_FILE + 1)
        if data is None:
            return None
        if len(data) > MAX_FILE and not self.live:
            raise UserError(f"{self.where(rel)}: larger than {MAX_FILE >> 20} MiB, not a "
                            "sysfs or procfs file (a damaged or forged dump); refused")
        return _text(data)

    def read_head(self, rel: str, limit: int = MAX_FILE) -> str | None:
        """The first `limit` bytes of the file as text (the whole of a smaller one), for a
        file that grows with the machine (/proc/cpuinfo) and is needed only in part."""
        data = self._bytes(rel, limit + 1)
        if data is None:
            return None
        if len(data) > limit:          # cut at the last whole line
            data = data[:limit].rpartition(b"\n")[0]
        return _text(data)

    def _bytes(self, rel: str, limit: int) -> bytes | None:
        """At most `limit` bytes of the file (a live root's whole file: the kernel's own);
        None when missing or unreadable. In a replayed root only a plain file is read (a
        pipe there would hang the reader, a device read someone else's data)."""
        p = self._inside(rel)
        if p is None:
            return None
        try:
            fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
        except (OSError, ValueError):
            return None
        with os.fdopen(fd, "rb") as f:
            try:
                if self.live:
                    return f.read()
                mode = os.fstat(fd).st_mode
                if stat.S_ISDIR(mode):
                    return None
                if not stat.S_ISREG(mode):
                    raise UserError(f"{self.where(rel)}: not a plain file (a damaged or "
                                    "forged dump)")
                return f.read(limit)
            except OSError:
                return None

    def read_int(self, rel: str) -> int | None:
        v = self.read(rel)
        if v is None:
            return None
        try:
            return int(v.split()[0])
        except (ValueError, IndexError):
            raise UserError(f"{self.where(rel)}: expected a number") from None

    def read_list(self, rel: str) -> list[int] | None:
        """A cpulist/nodelist file; None when missing; UserError naming it when garbled."""
        return self._parsed(rel, parse_list, "a valid CPU/node list")

    def read_mask(self, rel: str) -> list[int] | None:
        return self._parsed(rel, parse_mask, "a valid hex CPU mask")

    def _parsed(self, rel: str, parse, what: str) -> list[int] | None:
        v = self.read(rel)
        if v is None:
            return None
        try:
            out = parse(v)
        except ValueError:
            raise UserError(f"{self.where(rel)}: not {what}") from None
        if not out and rel.strip("/") in NEVER_EMPTY:
            raise UserError(f"{self.where(rel)}: empty, but never so on a running kernel "
                            "(a damaged dump)")
        return out

    def read_cpus(self, base: str, name: str) -> list[int] | None:
        """`<base>/<name>_list` when present, else the `<base>/<name>` hex map."""
        list_name = _LIST_NAMES.get(name, f"{name}_list")
        lst = self.read_list(f"{base}/{list_name}")
        mask = self.read_mask(f"{base}/{name}")
        if lst is not None:
            if mask is not None and mask != lst:
                self.mismatches.append((f"{base}/{list_name}", lst, mask))
            return lst
        return mask

    def listdir(self, rel: str) -> list[str]:
        p = self._inside(rel)
        try:
            return sorted(os.listdir(p)) if p is not None else []
        except OSError:
            return []

    def numbered(self, rel: str, prefix: str) -> list[int]:
        """Ids of entries named `<prefix><N>` in a directory (cpu0, node3 …), sorted."""
        ids = []
        for name in self.listdir(rel):
            tail = name[len(prefix):]
            if name.startswith(prefix) and tail.isdigit():
                ids.append(int(tail))
        return sorted(ids)


def _text(data: bytes) -> str:
    """A file's bytes as text: stripped, trailing NULs with the whitespace."""
    return data.decode(errors="replace").rstrip(string.whitespace + "\x00").strip()


def meminfo_field(text: str | None, key: str) -> int | None:
    """`key` from meminfo text ("MemFree:  123 kB" or "Node 0 MemFree:  123 kB")."""
    if not text:
        return None
    m = re.search(rf"^(?:Node \d+ )?{re.escape(key)}:\s+(\d+)\s*(kB)?", text, re.MULTILINE)
    if not m:
        return None
    return int(m.group(1)) * (1024 if m.group(2) else 1)


def cpuinfo_first(text: str) -> dict[str, str]:
    """The first processor block that carries flags (x86) or Features (Arm)."""
    info: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if info.get("processor") is not None and ("flags" in info or "Features" in info):
                break
            continue
        if ":" in line:
            k, _, v = line.partition(":")
            info.setdefault(k.strip(), v.strip())
    return info
