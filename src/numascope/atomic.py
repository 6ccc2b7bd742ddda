"""Files that readers see whole or not at all: written beside the target, then renamed."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` so that readers see the old file or the whole new one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
