"""Without MPI: each node writes its record as one JSON file into a shared folder (atomically:
a temporary name in the same folder, fsync, rename), and `numascope fleet gather DIR` merges
the files into a store. Gathering is idempotent: a run id already in the store is skipped,
so gathering the same folder twice (or a folder that grew) never duplicates a run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from numascope.atomic import write_atomic
from numascope.errors import UserError
from numascope.results.plain import to_plain
from numascope.results.run import RunRecord

SUFFIX = ".numascope.json"


def check_dir(d: str | Path, flag: str = "--shared-dir") -> Path:
    p = Path(d)
    if not p.is_dir():
        raise UserError(f"{flag} {d}: not a directory")
    if not os.access(p, os.W_OK | os.X_OK):
        raise UserError(f"{flag} {d}: no permission to write there")
    return p


def record_file(d: Path, rec: RunRecord) -> Path:
    host = "".join(c if c.isalnum() or c in "-._" else "_" for c in
                   str(rec.host.get("hostname") or "node"))
    return d / f"{host}.{rec.run_id}{SUFFIX}"


def write_record(d: Path, rec: RunRecord) -> Path:
    p = record_file(d, rec)
    write_atomic(p, json.dumps(to_plain(rec.to_dict()), sort_keys=True))
    return p


def read_records(d: str | Path) -> list[tuple[Path, RunRecord]]:
    """Every record file in `d` (sorted by name); UserError naming the first bad file, so
    that nothing is merged from a folder holding a damaged one."""
    p = Path(d)
    if not p.is_dir():
        raise UserError(f"{d}: not a directory")
    files = sorted(f for f in p.iterdir() if f.name.endswith(SUFFIX) and f.is_file())
    if not files:
        raise UserError(f"{d}: no record files (*{SUFFIX}) to gather")
    out = []
    for f in files:
        try:
            d_: Any = json.loads(f.read_text(encoding="utf-8"))
            if not isinstance(d_, dict) or "run_id" not in d_:
                raise ValueError("not a run record")
            out.append((f, RunRecord.from_dict(d_)))
        except UserError as e:   # a newer record schema
            raise UserError(f"{f}: {e}") from None
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UserError(f"{f} is not a numascope record ({type(e).__name__}: "
                            f"{str(e).splitlines()[0] if str(e) else ''}); nothing gathered")\
                from None
    return out


def gather(d: str | Path, store: Any) -> tuple[list[RunRecord], list[RunRecord]]:
    """Merge the folder's records into `store` (one transaction per record). Returns
    (added, already there)."""
    records = read_records(d)
    have = {r.run_id for r in store.list_runs()}
    added, skipped = [], []
    for _, rec in records:
        if rec.run_id in have:
            skipped.append(rec)
            continue
        try:
            store.save_run(rec)
        except UserError as e:   # another gather stored it meanwhile
            if "UNIQUE" not in str(e):
                raise
            skipped.append(rec)
            continue
        have.add(rec.run_id)
        added.append(rec)
    return added, skipped
