"""Reading single sysfs/procfs files under a root, with errors that name the file, and the
parsers of the procfs text both the topology reader and `numascope.host` read
(meminfo fields, the first /proc/cpuinfo block)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from numascope.errors import UserError
from numascope.topology.lists import parse_list, parse_mask

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
        self._jail = self.root.resolve()
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
        try:
            real = p.resolve()
        except (OSError, RuntimeError):   # a symlink loop
            return None
        return p if real == self._jail or self._jail in real.parents else None

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
        """Text of the file, stripped; None when missing or unreadable."""
        p = self._inside(rel)
        if p is None:
            return None
        try:
            # some dumps carry a trailing NUL after the newline
            return p.read_text(errors="replace").replace("\x00", "").strip()
        except (OSError, ValueError):
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
            return parse(v)
        except ValueError:
            raise UserError(f"{self.where(rel)}: not {what}") from None

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
