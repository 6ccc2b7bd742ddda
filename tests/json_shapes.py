"""The shape (keys, nested) of each family command's --json document on small inputs, to
check that a refactor leaves every document as it was: tests/data/json_shapes.json holds
the shapes the commands gave before the families moved into folders (numascope at
7860ae5); tests/test_json_shapes.py compares today's with them.

    python tests/json_shapes.py > tests/data/json_shapes.json     # re-record (on purpose)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

FIXTURE = "{shared}/fixtures/hwloc-linux/16amd64-8n2c.tar.bz2"
COMMANDS = {
    "lat": ["lat", "--size", "256K", "--samples", "2", "--loads", "4096", "--pages", "none"],
    "lat-loaded": ["lat", "--loaded", "--size", "1M", "--delays", "0", "--samples", "2",
                   "--loads", "4096"],
    # recorded when lat --chains came (issue 25), not at 7860ae5
    "lat-chains": ["lat", "--chains", "1,2", "--size", "1M", "--samples", "2", "--loads",
                   "4096"],
    "bw": ["bw", "--size", "1M", "--reps", "2", "--threads", "1", "--kernel", "triad",
           "--isa", "scalar", "--nt", "off", "--pages", "none"],
    "matrix-dry": ["matrix", "--dry-run", "--sysfs-root", FIXTURE],
    "matrix": ["matrix", "--size", "1M", "--bw-size", "1M", "--samples", "2"],
    "c2c": ["c2c", "--samples", "2", "--trips", "100"],
    "compress": ["compress", "--synthetic", "smooth", "--size", "1M", "--codecs", "lz4",
                 "--clevels", "1", "--filters", "shuffle", "--threads", "1", "--reps", "2"],
    "topo": ["topo", "--sysfs-root", FIXTURE],
}


def shape(doc: Any) -> Any:
    """Keys all the way down: a dict's keys with their shapes, a list of dicts the union of
    its items' keys, any other list "list", a scalar its kind (2 and 2.0 alike)."""
    if isinstance(doc, dict):
        return {k: shape(v) for k, v in sorted(doc.items())}
    if isinstance(doc, list):
        items = [shape(v) for v in doc]
        dicts = [i for i in items if isinstance(i, dict)]
        if dicts:
            merged: dict[str, Any] = {}
            for d in dicts:
                for k, v in d.items():
                    merged.setdefault(k, v)
            return [dict(sorted(merged.items()))]
        return "list"           # of scalars, or empty: how many is the data's business
    if isinstance(doc, bool) or doc is None:
        return "bool" if isinstance(doc, bool) else "null"
    return "number" if isinstance(doc, (int, float)) else "str"


def run(name: str, python: list[str], shared: Path) -> Any:
    cmd = [*python, "-m", "numascope", *[a.format(shared=shared) for a in COMMANDS[name]],
           "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr[-400:]}")
    return shape(json.loads(p.stdout))


if __name__ == "__main__":
    shared = Path(__file__).resolve().parent.parent.parent / "shared"
    python = sys.argv[1:] or [sys.executable]
    print(json.dumps({n: run(n, python, shared) for n in COMMANDS}, indent=1,
                     sort_keys=True))
