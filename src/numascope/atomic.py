"""Files that readers see whole or not at all: written beside the target, then renamed."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` so that readers see the old file or the whole new one."""
    replace_atomic(path, lambda f: f.write(text.encode("utf-8")))


def replace_atomic(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """`write(f)` into a temporary file beside `path` (same folder: the rename is atomic),
    synced, then renamed over `path`; the temporary file is removed on any failure."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
