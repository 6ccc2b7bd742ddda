"""Records as JSON-ready builtins: the one serialiser of dataclasses, enums and paths used by
the run record, the store and the exports (terminal rendering lives elsewhere)."""

from __future__ import annotations

import dataclasses
import enum
import math
from pathlib import Path
from typing import Any


def to_plain(obj: Any) -> Any:
    """Dataclasses, enums, paths, tuples, sets → JSON-ready builtins (NaN/inf → None)."""
    # the builtins first, by their exact type (a fleet report's 100,000 rows of plain
    # dicts, strings and numbers spent most of their time in is_dataclass)
    t = type(obj)
    if t is str or t is int or t is bool or obj is None:
        return obj
    if t is float:
        return obj if math.isfinite(obj) else None
    if t is dict:
        return {str(k): to_plain(v) for k, v in obj.items()}
    if t is list:
        return [to_plain(v) for v in obj]
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
