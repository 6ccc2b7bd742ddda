"""Rank 0's (or a lone task's) side of the store: every node written down first, each record
stored as it comes, nothing lost to a full disk.

- start(): one placeholder per expected node (numascope.fleet.manifest), one transaction;
- hellos(): placeholders named after their nodes' hellos;
- record(): the node's record (its brief, when its full record stays on the node:
  numascope.fleet.full) replaces its placeholder (one transaction), then the store is
  checkpointed (PRAGMA wal_checkpoint(TRUNCATE)): a job killed after it leaves the store
  file whole without its -wal;
- a store that cannot take a record (its disk full, most often) never stops the job: the
  record is kept in memory, said once, and written at the end (finish()); if the store
  still cannot take it, the records go as files into the first folder that takes them
  (--shared-dir, the store's folder, the working folder, the temporary folder) to be merged
  with `numascope fleet gather DIR` — or, when none can, they are said to be lost.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from numascope.errors import UserError, escape_text
from numascope.fleet import full, manifest
from numascope.results.run import RunRecord


class Keeper:
    def __init__(self, store: Any, shared: Path | None, profile: str, tags: dict[str, str],
                 launcher: str, slurm: dict[str, str]):
        self.store = store
        self.shared = shared
        self.profile, self.tags, self.launcher, self.slurm = profile, tags, launcher, slurm
        self.holders: dict[int, RunRecord] = {}     # rank -> its placeholder, until replaced
        self.stored: set[int] = set()               # placeholders in the store
        self.pending: list[RunRecord] = []          # records the store could not take yet
        self.fid: str | None = None
        self.said = False
        self.lock = threading.RLock()

    def _failed(self, what: str, e: UserError) -> None:
        if not self.said:
            self.said = True
            print(f"numascope: error: {escape_text(e)}; {what}", file=sys.stderr, flush=True)

    def start(self, fid: str, ranks: int) -> None:
        with self.lock:
            self.fid = fid
            self.holders = manifest.placeholders(fid, ranks, self.launcher, self.profile,
                                                 self.tags, self.slurm)
            try:
                self.store.save_runs(list(self.holders.values()))
                self.stored = set(self.holders)
                self.store.checkpoint()
            except UserError as e:
                self._failed("the nodes' records are kept in memory and written at the "
                             "end", e)

    def hellos(self, got: dict[int, dict[str, Any]]) -> None:
        with self.lock:
            named = [manifest.named(self.holders[r], h) for r, h in got.items()
                     if r in self.holders]
            try:
                self.store.update_runs([p for p in named
                                        if p.host["fleet"]["rank"] in self.stored])
            except UserError:
                pass    # a name is a nicety; the records themselves are kept apart

    def record(self, rec: RunRecord) -> None:
        """Store a node's record in place of its placeholder (or keep it for later)."""
        with self.lock:
            rank = (rec.host.get("fleet") or {}).get("rank")
            holder = self.holders.get(rank) if isinstance(rank, int) else None
            if holder is not None and (holder.tags.get("fleet") != rec.tags.get("fleet")
                                       or "confirm_of" in rec.tags):
                holder = None       # a --confirm measurement: a run of its own
            try:
                full.save(self.store, rec, replaces=holder.run_id if holder is not None
                          and rank in self.stored else None)
            except UserError as e:
                self.pending.append(rec)
                self._failed("this record and the next are kept in memory and written at "
                             "the end", e)
                return
            if holder is not None:
                self.holders.pop(rank, None)
                self.stored.discard(rank)
            self.store.checkpoint()

    def finish(self) -> tuple[bool, str]:
        """Everything kept in memory written now: (all stored, what to say). Called at the
        end, and before the job is ended early (MPI_Abort)."""
        with self.lock:
            if not self.pending and not (set(self.holders) - self.stored):
                return True, ""
            retry, self.pending = self.pending, []
            for rec in retry:
                self.record(rec)
            unstored = [p for r, p in self.holders.items() if r not in self.stored]
            if unstored and not self.pending:
                try:
                    self.store.save_runs(unstored)
                    self.stored |= {p.host["fleet"]["rank"] for p in unstored}
                    unstored = []
                except UserError:
                    pass
            if not self.pending:
                self.store.checkpoint()
                return True, ""
            return False, self._spill(self.pending + unstored)

    def _spill(self, recs: list[RunRecord]) -> str:
        """The records the store could not take, as record files in the first folder that
        takes them all; what to say (the folder and how to merge it, or that they are
        lost)."""
        from numascope.fleet import files
        store = escape_text(self.store.path, 160)
        name = f"numascope-unsaved-{self.fid or 'fleet'}"
        parents = [self.shared] if self.shared is not None else []
        parents += [Path(self.store.path).resolve().parent, Path.cwd(),
                    Path(tempfile.gettempdir())]
        for parent in parents:
            d = parent if parent == self.shared else parent / name
            made = False
            try:
                made = not d.exists()
                d.mkdir(exist_ok=True)
                for rec in recs:
                    files.write_record(d, rec)
            except OSError:
                if made:
                    shutil.rmtree(d, ignore_errors=True)
                continue
            self.pending = []
            where = escape_text(d, 200)
            return (f"store {store} could not take {len(recs)} record(s) (disk full?); they "
                    f"are in {where}: once there is space, `numascope fleet gather {where} "
                    f"--store {store}`")
        return (f"store {store} could not take {len(recs)} record(s) and no folder could "
                "hold them (every disk tried is full or read-only): they are lost")
