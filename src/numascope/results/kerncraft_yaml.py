"""The YAML of a kerncraft machine file, written by hand so that each value carries its
provenance as a comment (numascope.results.kerncraft). kerncraft reads quantities such as
"64 B" or "2.40 GHz" through an implicit resolver: they are written plain (Unit), every
other string as a JSON (YAML double-quoted) string."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

UNIT = re.compile(r"^[0-9]+(?:\.[0-9]+)? [kMGTP]?.*$")    # kerncraft's PrefixedUnit text


class Unit(str):
    """A kerncraft quantity ("64 B", "2.40 GHz"): written plain, for kerncraft's
    implicit PrefixedUnit resolver."""


@dataclass
class C:
    """A value with its provenance comment."""
    value: Any
    comment: str = ""


def units(v: Any) -> list[Any]:
    """A list with the quantities among its strings marked as such."""
    return [Unit(x) if isinstance(x, str) and UNIT.match(x) else x for x in v]


def render(machine: dict[str, Any], header: list[str]) -> str:
    out = [f"# {h}" if h else "#" for h in header]
    _map(machine, 0, out)
    return "\n".join(out) + "\n"


def _scalar(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, Unit):
        return str(v)
    return json.dumps(str(v))      # a JSON string is a YAML double-quoted scalar


def _flow(v: Any) -> str | None:
    """A list of scalars on one line, else None."""
    if isinstance(v, list) and all(not isinstance(x, (list, dict)) for x in v):
        return "[" + ", ".join(_scalar(x) for x in v) + "]"
    return None


PLAIN_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9 _+/.-]*$")
YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


def _key(k: Any) -> str:
    """kerncraft's keys as its own files write them: plain where YAML reads them back."""
    if isinstance(k, int) or (PLAIN_KEY.match(str(k)) and str(k).lower() not in YAML_WORDS):
        return str(k)
    return _scalar(k)


def _line(out: list[str], text: str, comment: str) -> None:
    out.append(f"{text}  # {comment}" if comment else text)


def _map(d: dict[Any, Any], ind: int, out: list[str]) -> None:
    pad = " " * ind
    for k, v in d.items():
        comment = ""
        if isinstance(v, C):
            v, comment = v.value, v.comment
        _value(f"{pad}{_key(k)}:", v, ind, comment, out)


def _value(head: str, v: Any, ind: int, comment: str, out: list[str]) -> None:
    if isinstance(v, tuple) and v and v[0] == "omap":     # kerncraft wants !!omap here
        _line(out, f"{head} !!omap", comment)
        for k, x in v[1].items():
            out.append(f"{' ' * ind}- {_key(k)}: {_scalar(x)}")
    elif isinstance(v, dict):
        _line(out, head, comment)
        _map(v, ind + 2, out)
    elif isinstance(v, list) and _flow(v) is not None:
        _line(out, f"{head} {_flow(v)}", comment)
    elif isinstance(v, list):
        _line(out, head, comment)
        for x in v:
            if isinstance(x, dict):
                first = True
                for k, y in x.items():
                    c = ""
                    if isinstance(y, C):
                        y, c = y.value, y.comment
                    lead = f"{' ' * ind}- " if first else " " * (ind + 2)
                    _value(f"{lead}{_key(k)}:", y, ind + 2, c, out)
                    first = False
            else:
                _value(f"{' ' * ind}-", x, ind + 2, "", out)
    else:
        _line(out, f"{head} {_scalar(v)}", comment)


def warnings(file_text: str) -> list[str]:
    """The written file's warnings (its numascope section: a flow list of JSON strings)."""
    m = re.search(r"^  warnings: (\[.*\])$", file_text, re.MULTILINE)
    return json.loads(m.group(1)) if m else []
