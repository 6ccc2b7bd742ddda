"""The command surface, checked the same way for every command.

Each family's tests add rows to its own `tests/surface_<family>.py`:

    BAD = [Bad(["bw", "--cpus", "99"], 2, "CPU 99 does not exist"), ...]
    JSON = [["bw", "--size", "8M", "--reps", "2"], ...]       # commands that must succeed
    WIDE = [["bw", "--size", "8M", "--reps", "2"], ...]       # rendered at 80 columns

and tests/test_surface.py runs every row: a bad input exits with its code, says one line
containing `says` (and, with --json, prints the envelope carrying it), and leaves the store
byte-identical; a JSON command prints one envelope; a table fits 80 columns.
"{store}" in an argv is replaced by a store holding two runs, "{tmp}" by a temporary folder."""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Bad:
    argv: list[str]
    code: int                 # the documented exit code: 2 bad input, 3 validation, 4 cannot
    says: str                 # a piece of the one-line message
    why: str = ""             # what a user did wrong, for the test's id
    env: dict[str, str] = field(default_factory=dict)


def fill(argv: list[str], store: str, tmp: str) -> list[str]:
    return [a.replace("{store}", store).replace("{tmp}", tmp) for a in argv]


ENVELOPE_KEYS = ("schema_version", "command", "results", "errors")


def check_envelope(text: str, command: str) -> dict:
    """One JSON document on standard output in the envelope shape; returns it."""
    doc = json.loads(text)
    assert isinstance(doc, dict), text[:200]
    assert list(doc)[:4] == list(ENVELOPE_KEYS), list(doc)
    assert doc["command"] == command and isinstance(doc["schema_version"], int)
    assert isinstance(doc["results"], list) and isinstance(doc["errors"], list)
    return doc
