"""json.dumps(obj, indent=2)'s text, written faster: the standard library indents in pure
Python, a generator per container level (its C encoder is used only without indent), which
made a fleet report's 100,000 per-node rows seconds of the report. Here each container is
one call and each string goes through the C escaper json itself uses; the text is the same
to the byte (tests/test_jsontext.py), and anything not plain JSON (a type json would
refuse or convert) goes to json.dumps as before."""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any

INDENT = "  "
_INF = float("inf")


class _NotPlain(Exception):
    pass


def dumps(obj: Any) -> str:
    """json.dumps(obj, indent=2) (ensure_ascii, NaN and infinities as json writes them)."""
    try:
        return _value(obj, "\n")
    except (_NotPlain, RecursionError):
        return json.dumps(obj, indent=2)


def _float(o: float) -> str:
    if o != o:  # noqa: PLR0124 (NaN, as json.encoder's floatstr)
        return "NaN"
    if o == _INF:
        return "Infinity"
    if o == -_INF:
        return "-Infinity"
    return float.__repr__(o)


def _value(o: Any, nl: str) -> str:
    t = type(o)
    if t is str:
        return encode_basestring_ascii(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if t is int:
        return int.__repr__(o)
    if t is float:
        return _float(o)
    if t is dict:
        if not o:
            return "{}"
        inner = nl + INDENT
        items = []
        for k, v in o.items():
            if type(k) is not str:
                raise _NotPlain
            items.append(encode_basestring_ascii(k) + ": " + _value(v, inner))
        return "{" + inner + ("," + inner).join(items) + nl + "}"
    if t is list:
        if not o:
            return "[]"
        inner = nl + INDENT
        return "[" + inner + ("," + inner).join([_value(v, inner) for v in o]) + nl + "]"
    raise _NotPlain
