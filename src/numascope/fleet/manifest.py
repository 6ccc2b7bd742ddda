"""Every node accounted for: a fleet's nodes are written down before anything is measured.

Rank 0 (MPI), or a lone task with a store, stores first one placeholder record per node it
expects (status "missing", one stage "fleet" failed with REASON, host "rankN" until the
node's hello names it); each node's real record replaces its placeholder in the same
transaction. A node killed, lost, or cut off by the job's time limit therefore stays in the
store as "missing", and every output that reads the fleet (fleet run, report, check, prom,
the HTML report) lists it with the others — a job killed before any node reported leaves
all its nodes missing, never "no such fleet".

Without MPI, every task writes the same manifest file into --shared-dir (the fleet id, the
task count); `fleet gather` stores a placeholder for each task with no record file, and a
record gathered later replaces it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from numascope.results.run import RunRecord, StageInfo

MISSING = "missing"
REASON = ("no record from this node: its task was killed or lost, or the job ended before "
          "it reported")
SUFFIX = ".numascope-fleet.json"     # a shared folder's manifest (not a record file)
# Slurm variables of one task, not of the job: a placeholder has none of them
_PER_TASK = ("SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID", "SLURMD_NODENAME")


def placeholder(fleet_id: str, rank: int, ranks: int, launcher: str, profile: str,
                tags: dict[str, str], slurm: dict[str, str], host: str | None = None
                ) -> RunRecord:
    """The record of a node expected and not (yet) heard from."""
    from numascope.fleet.node import tag
    rec = RunRecord.new(profile=profile, tags=tags)
    rec.status = MISSING
    rec.stages = [StageInfo("fleet", "failed", REASON)]
    job = {k: v for k, v in slurm.items() if k not in _PER_TASK}
    ident = {"id": fleet_id, "host": host or f"rank{rank}", "rank": rank, "ranks": ranks,
             "launcher": launcher, "slurm": job}
    tag(rec, ident, REASON)
    rec.host["fleet"]["placeholder"] = True
    return rec


def placeholders(fleet_id: str, ranks: int, launcher: str, profile: str,
                 tags: dict[str, str], slurm: dict[str, str]) -> dict[int, RunRecord]:
    return {r: placeholder(fleet_id, r, ranks, launcher, profile, tags, slurm)
            for r in range(ranks)}


def named(rec: RunRecord, hello: dict[str, Any]) -> RunRecord:
    """A placeholder given the host name and Slurm ids of its node's hello."""
    from numascope.fleet.node import tag
    ident = {**rec.host["fleet"], **{k: hello[k] for k in ("host", "slurm") if k in hello}}
    ident.pop("reason", None)
    ident.pop("placeholder", None)
    tag(rec, ident, REASON)
    rec.host["fleet"]["placeholder"] = True
    return rec


def find(store: Any, fleet_id: str, rank: int) -> str | None:
    """The run id of the fleet's placeholder for this rank, if one is stored."""
    rows = store._q("SELECT run_id FROM runs WHERE status = ? AND json_extract(tags, "
                    "'$.fleet') = ? AND json_extract(record, '$.host.fleet.rank') = ?",
                    (MISSING, fleet_id, rank))
    return rows[0][0] if rows else None


def ranks_stored(store: Any, fleet_id: str) -> set[int]:
    """The ranks of the fleet with any record in the store (placeholders included)."""
    return {int(r) for (r,) in store._q(
        "SELECT json_extract(record, '$.host.fleet.rank') FROM runs WHERE "
        "json_extract(tags, '$.fleet') = ?", (fleet_id,)) if isinstance(r, int)}


# -- a shared folder's manifest --------------------------------------------------------------

def manifest_file(d: Path, fleet_id: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in fleet_id)
    return d / f"{safe}{SUFFIX}"


def write_manifest(d: Path, fleet_id: str, ranks: int, launcher: str, profile: str,
                   tags: dict[str, str], slurm: dict[str, str]) -> Path:
    """The fleet's manifest in the shared folder (every task writes the same one,
    atomically: whichever task lives, it is there)."""
    from numascope.atomic import write_atomic
    p = manifest_file(d, fleet_id)
    job = {k: v for k, v in slurm.items() if k not in _PER_TASK}
    write_atomic(p, json.dumps({"fleet": fleet_id, "ranks": ranks, "launcher": launcher,
                                "profile": profile, "tags": tags, "slurm": job},
                               sort_keys=True))
    return p


def read_manifests(d: Path) -> list[dict[str, Any]]:
    """The manifests in a shared folder; one that cannot be read is skipped (the records
    are what matters; a missing node is then not named)."""
    out = []
    for f in sorted(d.glob(f"*{SUFFIX}")):
        try:
            m = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(m, dict) and isinstance(m.get("fleet"), str) and \
                isinstance(m.get("ranks"), int) and 0 < m["ranks"] <= 1_000_000:
            out.append(m)
    return out


def gather_missing(d: Path, store: Any) -> list[RunRecord]:
    """A placeholder stored for each task a manifest of folder `d` expects and of which
    neither the store nor the folder holds a record. Returns those stored."""
    added = []
    for m in read_manifests(d):
        have = ranks_stored(store, m["fleet"])
        todo = [placeholder(m["fleet"], r, m["ranks"], m.get("launcher", "none"),
                            str(m.get("profile", "quick")), dict(m.get("tags") or {}),
                            dict(m.get("slurm") or {}))
                for r in range(m["ranks"]) if r not in have]
        if todo:
            store.save_runs(todo)
            added += todo
    return added
