"""Parsing of the kernel's CPU/node set formats: lists (`0-3,8-11`) and hex masks.

These raise ValueError with a short reason; callers add the file name or turn it into a
UserError for command-line input."""

from __future__ import annotations

_MAX_ID = 1 << 20  # far above any real CPU count; stops "0-999999999" from eating memory


def parse_list(text: str) -> list[int]:
    """`0-3,8-11,16` (also `0-15:2` strides, as the kernel accepts) → sorted unique ids."""
    text = text.strip()
    if not text:
        return []
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise ValueError("empty element")
        stride = 1
        if ":" in part:
            part, _, s = part.partition(":")
            stride = _int(s)
            if stride < 1:
                raise ValueError(f"bad stride {s!r}")
        if "-" in part:
            a, _, b = part.partition("-")
            lo, hi = _int(a), _int(b)
            if hi < lo:
                raise ValueError(f"range {part!r} runs backwards")
        else:
            lo = hi = _int(part)
        if hi >= _MAX_ID:
            raise ValueError(f"id {hi} is out of range")
        out.update(range(lo, hi + 1, stride))
    return sorted(out)


def _int(s: str) -> int:
    s = s.strip()
    if not s.isdigit():
        raise ValueError(f"{s!r} is not a number")
    return int(s)


def parse_mask(text: str) -> list[int]:
    """A cpumap such as `00000000,0000ffff` (32-bit hex words, most significant first)."""
    text = text.strip().replace(",", "")
    if not text:
        return []
    try:
        value = int(text, 16)
    except ValueError:
        raise ValueError(f"{text[:40]!r} is not a hex mask") from None
    ids = []
    i = 0
    while value:
        if value & 1:
            ids.append(i)
        value >>= 1
        i += 1
    return ids


def format_list(ids: list[int] | tuple[int, ...] | set[int]) -> str:
    """Sorted ids → the shortest `0-3,8-11` form."""
    s = sorted(set(ids))
    parts = []
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        parts.append(str(s[i]) if i == j else f"{s[i]}-{s[j]}")
        i = j + 1
    return ",".join(parts)
