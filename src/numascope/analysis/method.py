"""How a result was measured where its case name does not say it, so that a figure measured
another way is never set against it under one name.

A family class may declare `method(params) -> str`: the settings of its method that its
case names did not always carry ("" where it has none). `net` is the one that needs it:
its case names say the pages and buffers only when they differ from stock OSU's (system
pages, one buffer per rank), and records from before those options measured with THP
madvised and a buffer per window slot under the same names that today's defaults give
(families/interconnect/bench.py method_of). compare leaves out a case whose two sides were
measured differently and says so; fleet check does not judge a node on such a case."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


@functools.lru_cache(maxsize=64)
def _declared(family: str) -> Callable[[dict[str, Any]], str] | None:
    from numascope.families import by_name
    cls = by_name(family)
    fn = getattr(cls, "method", None) if cls is not None else None
    return fn if callable(fn) else None


def params_read(family: str) -> tuple[str, ...]:
    """The params keys a family's method reads (its `method_params`): what a reader that
    keeps no params (fleet.load's light records) must keep for it."""
    from numascope.families import by_name
    cls = by_name(family)
    return tuple(getattr(cls, "method_params", ()) or ()) if _declared(family) else ()


def method(family: str, params: dict[str, Any]) -> str:
    """The method of one result (its family's `method` of its params), "" without one."""
    fn = _declared(family)
    return str(fn(params)) if fn is not None else ""


def differs(a: set[str], b: set[str]) -> bool:
    """Whether the methods seen on two sides (or a baseline and a run) are not one method:
    more than one among them, where either side has one."""
    return bool(a or b) and len(a | b) > 1


def text(methods: set[str]) -> str:
    return " and ".join(sorted(methods)) or "not recorded"
