"""numascope.jsontext.dumps writes json.dumps(obj, indent=2)'s text, byte for byte."""

from __future__ import annotations

import json
import math
import random

from numascope.jsontext import dumps


def _doc(rng: random.Random, depth: int = 0):
    pick = rng.randrange(10 if depth < 4 else 6)
    if pick == 0:
        return rng.choice(["", "plain", "quote \" and \\ backslash", "tab\tnew\nline",
                           "ünïcödé ✓", "\x00\x1f control", "emoji 😀"])
    if pick == 1:
        return rng.choice([0, 1, -7, 2 ** 70, -(2 ** 65)])
    if pick == 2:
        return rng.choice([0.0, -0.0, 1.5, 1e-300, 123456789.123456789, 1e22, math.nan,
                           math.inf, -math.inf, 0.1 + 0.2])
    if pick == 3:
        return rng.choice([True, False, None])
    if pick in (4, 5):
        return rng.random() * 1e6
    if pick in (6, 7):
        return [_doc(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["a", "b", "ключ", "k\"ey", "p", "run_id", ""]) + str(i):
            _doc(rng, depth + 1) for i in range(rng.randrange(5))}


def test_the_text_is_json_dumps_indent_2_to_the_byte():
    rng = random.Random(7)
    for _ in range(400):
        d = _doc(rng)
        assert dumps(d) == json.dumps(d, indent=2)
    rows = [{"host": f"n{i:05d}", "p": rng.random(), "ok": i % 2 == 0, "metrics": {}}
            for i in range(50)]
    doc = {"schema_version": 1, "results": [], "per_node": rows, "nested": [[], [{}], [[1]]]}
    assert dumps(doc) == json.dumps(doc, indent=2)


def test_what_is_not_plain_json_is_written_as_json_writes_it():
    # tuples and non-string keys: json converts them; the fast path hands them over
    for d in ({"t": (1, 2.5, "x")}, {1: "one", 2.5: [None]}, {"nested": {True: 1}},
              [1, (2, [3])]):
        assert dumps(d) == json.dumps(d, indent=2)
