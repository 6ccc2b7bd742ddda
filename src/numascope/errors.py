"""Errors that end a command with one clear line instead of a traceback."""


CRASH_EXIT = 70   # numascope itself failed (a bug): sysexits' EX_SOFTWARE, never a verdict


class UserError(Exception):
    """Something the user can fix (bad CPU list, unknown node, unreadable file): exit 2."""

    exit_code = 2


class MeasurementError(Exception):
    """A benchmark's own validation failed: the number is not a result. Exit 3."""

    exit_code = 3


class LaunchError(MeasurementError):
    """A parallel launcher could not start the job's ranks (a host unknown or unreachable,
    no slots, its daemons not started): nothing was measured, and nothing found wrong in a
    payload either. Exit 6, naming the hosts."""

    exit_code = 6


class Unavailable(Exception):
    """A stage cannot run here (no permission, missing tool); carries the reason."""

    exit_code = 4


# -- messages: one line, control characters visible ----------------------------------------

_BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A)) | {0x200E, 0x200F, 0x061C}


def escape_text(text: object, limit: int | None = None) -> str:
    """`text` as one printable line: control characters shown as escapes (ESC as \\x1b, a
    newline as \\n, a tab as \\t), as are the line and paragraph separators, the bidi
    overrides (which reorder what a terminal shows) and undecodable bytes of a file name
    (Python's surrogate escapes, shown as the byte: \\xff). Backslashes are left as they
    are. With `limit`, a longer result keeps its start and end around "…"."""
    import unicodedata
    out = []
    for ch in str(text):
        o = ord(ch)
        if ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif 0xDC80 <= o <= 0xDCFF:             # os.fsdecode's escape of an undecodable byte
            out.append(f"\\x{o - 0xDC00:02x}")
        elif o in _BIDI or unicodedata.category(ch) in ("Cc", "Zl", "Zp", "Cs"):
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")
        else:
            out.append(ch)
    s = "".join(out)
    if limit is not None and len(s) > limit:
        keep = max(limit - 30, 20)
        s = f"{s[:keep * 2 // 3]}…{s[-(keep // 3):]} ({len(s)} characters)"
    return s
