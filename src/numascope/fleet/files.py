"""Without MPI: each node writes its record as one JSON file into a shared folder (atomically:
a temporary name in the same folder, fsync, rename), and `numascope fleet gather DIR` merges
the files into a store: a fleet node's brief (numascope.fleet.full), its file staying its
full record (`fleet gather --full`, `fleet show`). Gathering is idempotent: a run id already in the store is skipped,
so gathering the same folder twice (or a folder that grew) never duplicates a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from numascope.atomic import write_atomic
from numascope.errors import UserError, escape_text
from numascope.fleet import manifest
from numascope.results.plain import to_plain
from numascope.results.run import RunRecord

SUFFIX = ".numascope.json"
RECORD_MAX = 256 << 20      # a record file larger than this is not one (a full run: ~1 MB)


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
    shown = escape_text(d, 160)
    try:
        if not p.is_dir():
            raise UserError(f"fleet gather {shown}: no such folder" if not p.exists() else
                            f"fleet gather {shown}: not a folder")
        files = sorted(f for f in p.iterdir() if f.name.endswith(SUFFIX) and f.is_file())
    except OSError as e:
        raise UserError(f"fleet gather {shown}: cannot read the folder "
                        f"({e.strerror or type(e).__name__})") from None
    except ValueError:        # a NUL in the name
        raise UserError(f"fleet gather {shown}: the name holds a NUL character") from None
    if not files:
        raise UserError(f"fleet gather {shown}: no record files (*{SUFFIX}) to gather")
    out = []
    for f in files:
        try:
            size = f.stat().st_size
            if size > RECORD_MAX:
                raise UserError(f"{escape_text(f, 160)}: {size:,} bytes, more than a record "
                                f"file holds ({RECORD_MAX:,} at most); nothing gathered")
            d_: Any = json.loads(f.read_text(encoding="utf-8"))
            if not isinstance(d_, dict) or "run_id" not in d_:
                raise ValueError("not a run record")
            out.append((f, RunRecord.from_dict(d_)))
        except UserError as e:   # a newer record schema, or too big
            raise UserError(str(e) if str(e).startswith(escape_text(f, 160)) else
                            f"{escape_text(f, 160)}: {e}") from None
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UserError(f"{escape_text(f, 160)} is not a numascope record "
                            f"({type(e).__name__}: {escape_text(e, 120)}); nothing gathered")\
                from None
    return out


def keep_full(rec: RunRecord, folder: Path) -> Path:
    """Write a node's full record into its node folder `folder` (made when missing:
    numascope.fleet.full's brief points at it); OSError when it cannot."""
    folder.mkdir(parents=True, exist_ok=True)
    return write_record(folder, rec).resolve()


def gather(d: str | Path, store: Any) -> tuple[list[RunRecord], list[RunRecord]]:
    """Merge the folder's records into `store` (one transaction per record; a record
    replaces its node's placeholder, or the same run stored as it went and never finished:
    a store whose disk filled took the run's beginning, not its record), then a placeholder
    for each task the folder's manifest expects that left no record
    (numascope.fleet.manifest). Returns (added, already there)."""
    from numascope.fleet import full
    records = read_records(d)
    have = dict(store._q("SELECT run_id, status FROM runs"))
    added, skipped = [], []
    for path, rec in records:
        begun = rec.run_id in have and have[rec.run_id] == "running" and \
            rec.status != "running"
        if rec.run_id in have and not begun:
            skipped.append(rec)
            continue
        if not full.is_brief(rec) and rec.tags.get("fleet"):
            rec = full.slim(rec, path.resolve())     # the file stays the full record
        fl = rec.host.get("fleet") if isinstance(rec.host, dict) else None
        hold = None
        if isinstance(fl, dict) and isinstance(fl.get("rank"), int) and rec.tags.get("fleet"):
            hold = manifest.find(store, rec.tags["fleet"], fl["rank"])   # its placeholder
        if begun:
            hold = rec.run_id
        try:
            full.save(store, rec, replaces=hold)
        except UserError as e:   # another gather stored it meanwhile
            if "UNIQUE" not in str(e):
                raise
            skipped.append(rec)
            continue
        have[rec.run_id] = rec.status
        added.append(rec)
    # the tasks a manifest expects that left no record file: stored as missing
    added += manifest.gather_missing(Path(d), store)
    return added, skipped
