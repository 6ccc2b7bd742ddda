"""Terminal and JSON output shared by every command."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def to_plain(obj: Any) -> Any:
    """Dataclasses, enums, paths, tuples, sets → JSON-ready builtins (NaN/inf → None)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if hasattr(obj, "to_dict"):
            return to_plain(obj.to_dict())
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted(to_plain(v) for v in obj)
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(to_plain(obj), indent=2, sort_keys=False) + "\n")


def warn(msg: str) -> None:
    err.print(f"[yellow]warning:[/yellow] {msg}", markup=True, highlight=False)
