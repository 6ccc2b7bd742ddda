"""Rank 0's (or a lone task's) side of the store: every node written down first, each record
stored as it comes, nothing lost to a full disk.

- start(): one placeholder per expected node (numascope.fleet.manifest), one transaction;
- hellos(): placeholders named after their nodes' hellos;
- record(): the node's record (its brief, when its full record stays on the node:
  numascope.fleet.full) replaces its placeholder (one transaction), then the store is
  checkpointed (PRAGMA wal_checkpoint(TRUNCATE)): a job killed after it leaves the store
  file whole without its -wal;
- live(): a node measured here (a lone task, rank 0's own; under MPI the other ranks' too,
  result by result as they send them) writes its run into the store as it goes: its
  placeholder replaced when it begins, each result committed and checkpointed into the store
  file itself as it finishes, so that a SIGKILL (Open MPI's, 1 s after it forwards SIGTERM;
  Slurm's, after KillWait) loses no finished result; the final record then rewrites its row;
- a checkpoint that the disk cannot take (the record committed only in the -wal) is the
  disk full too: said, and the record is not counted as stored;
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
        self.live_ids: dict[int, str] = {}          # rank -> its run stored as it goes
        self.unsaved: set[int] = set()              # ranks whose record is only in the -wal
        self.lives: dict[int, Live] = {}
        # run id -> where its record is, for every record given to record(): "stored" (in
        # the store file), "wal" (committed, only in the -wal), "memory" (until finish()),
        # "files" (spilled: self.spilled_to), "lost"
        self.fates: dict[str, str] = {}
        self.spilled_to: str = ""

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
                self._checkpoint()
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
                self.store.checkpoint()     # the names in the store file, not only its -wal
            except UserError:
                pass    # a name is a nicety; the records themselves are kept apart

    def _checkpoint(self) -> bool:
        """The -wal copied into the store file; a disk that cannot take it is StoreFull
        (a reader holding the -wal back is not: the -wal keeps it, and the next one will)."""
        return self.store.checkpoint(strict=True)

    def _rank(self, rec: RunRecord) -> int | None:
        rank = (rec.host.get("fleet") or {}).get("rank")
        return rank if isinstance(rank, int) else None

    def live(self, rank: int) -> Live:
        """The store a node measured here writes its run into as it goes (suite.run_suite's
        begin_run / add_result / finish_run)."""
        return Live(self, rank)

    def record(self, rec: RunRecord) -> None:
        """Store a node's record in place of its placeholder, or of the run it wrote as it
        went (or keep it for later)."""
        with self.lock:
            rank = self._rank(rec)
            holder = self.holders.get(rank) if rank is not None else None
            own = holder is None or (holder.tags.get("fleet") == rec.tags.get("fleet")
                                     and "confirm_of" not in rec.tags)
            if not own:
                holder = None       # a --confirm measurement: a run of its own
            live = self.live_ids.get(rank) if own and rank is not None else None
            try:
                # the run written as it went (its figures) gives way to the final record:
                # its brief where its full record stays on the node, else the record whole
                replaces = live if live is not None else \
                    holder.run_id if holder is not None and rank in self.stored else None
                full.save(self.store, rec, replaces=replaces)
            except UserError as e:
                self.pending.append(rec)
                self.fates[rec.run_id] = "memory"
                self._failed("this record and the next are kept in memory and written at "
                             "the end", e)
                return
            self.fates[rec.run_id] = "wal"
            if live is not None:
                self.live_ids.pop(rank, None)
            if holder is not None:
                self.holders.pop(rank, None)
                self.stored.discard(rank)
            try:
                self._checkpoint()
                self._folded()
            except UserError as e:     # committed, but only to the -wal
                self.unsaved.add(rank if rank is not None else -1)
                self._failed("the store file does not hold the record (only its -wal "
                             "does)", e)

    def stopped(self, signame: str) -> None:
        """A stop signal reached the job: every node not yet recorded says so in the store
        at once (its run interrupted by it, a placeholder stopped before it reported),
        before the launcher's SIGKILL can come; the records that follow replace this."""
        with self.lock:
            runs = []
            for rank, run_id in self.live_ids.items():
                rec = self.lives[rank].rec if rank in self.lives else None
                if rec is None or rec.run_id != run_id:
                    continue
                rec.status = "interrupted"
                for st in rec.stages:
                    if st.status in ("pending", "running"):
                        st.status = "interrupted"
                        st.reason = (f"stopped by {signame} (the job's stop); the results "
                                     "that finished are kept")
                runs.append(rec)
            for rank, p in self.holders.items():
                if rank in self.stored:
                    p.stages[0].reason = (f"no record: the job was stopped ({signame}) "
                                          "before this node reported")
                    p.host["fleet"]["reason"] = p.stages[0].reason
                    runs.append(p)
            if not runs:
                return
            try:
                self.store.update_runs(runs)
                self._checkpoint()
            except UserError:
                pass        # the records themselves follow, or are kept apart

    def finish(self) -> tuple[bool, str]:
        """Everything kept in memory written now: (all stored, what to say). Called at the
        end, and before the job is ended early (MPI_Abort)."""
        with self.lock:
            if not self.pending and not (set(self.holders) - self.stored) and \
                    not self.unsaved:
                return True, ""
            retry, self.pending = self.pending, []
            for rec in retry:
                self.record(rec)
            # a node whose record is pending needs no placeholder beside it (gather would
            # store both)
            reported = {self._rank(rec) for rec in self.pending}
            unstored = [p for r, p in self.holders.items()
                        if r not in self.stored and r not in reported]
            if unstored and not self.pending:
                try:
                    self.store.save_runs(unstored)
                    self.stored |= {p.host["fleet"]["rank"] for p in unstored}
                    unstored = []
                except UserError:
                    pass
            if not self.pending:
                try:
                    self._checkpoint()
                    self._folded()
                except UserError as e:
                    store = escape_text(self.store.path, 160)
                    return False, (f"{escape_text(e)}: the store file {store} does not hold "
                                   f"{len(self.unsaved) or 'every'} record(s) (only its -wal "
                                   "does); free space, then open the store once to fold it in")
                return True, ""
            return False, self._spill(self.pending + unstored)

    def _folded(self) -> None:
        """The -wal is in the store file: every record committed is stored."""
        self.unsaved.clear()
        for rid, fate in self.fates.items():
            if fate == "wal":
                self.fates[rid] = "stored"

    def not_stored(self) -> dict[str, str]:
        """run id -> where its record is instead, for each record given to record() that
        the store file does not hold (after finish(): the -wal, record files, or lost)."""
        with self.lock:
            said = {"wal": "only in the store's -wal",
                    "files": f"kept as record files in {self.spilled_to}",
                    "memory": "in memory only", "lost": "lost"}
            return {rid: said[f] for rid, f in self.fates.items() if f != "stored"}

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
            self.spilled_to = where
            for rec in recs:
                if rec.run_id in self.fates:
                    self.fates[rec.run_id] = "files"
            return (f"store {store} could not take {len(recs)} record(s) (disk full?); they "
                    f"are in {where}: once there is space, `numascope fleet gather {where} "
                    f"--store {store}`")
        for rec in recs:
            if rec.run_id in self.fates:
                self.fates[rec.run_id] = "lost"
        return (f"store {store} could not take {len(recs)} record(s) and no folder could "
                "hold them (every disk tried is full or read-only): they are lost")


class Live:
    """A node's run written into the fleet's store while it runs (numascope.suite's store
    interface). Its placeholder is replaced by the run when it begins, and each result is
    committed and checkpointed into the store file as it finishes. The first write the store
    cannot take (its disk full) is said once and ends the live writes: the whole record is
    then stored, kept or spilled at the end by Keeper.record and finish()."""

    def __init__(self, keeper: Keeper, rank: int):
        self.k, self.rank = keeper, rank
        self.broken = False
        self.rec: RunRecord | None = None
        keeper.lives[rank] = self

    def _do(self, run_id: str, fn: Any) -> None:
        k = self.k
        with k.lock:
            if self.broken:
                return
            try:
                fn()
                k._checkpoint()
            except UserError as e:
                self.broken = True
                k._failed("this node's results are kept in memory and written at the end", e)

    def begin_run(self, rec: RunRecord) -> None:
        k = self.k

        def do() -> None:
            holder = k.holders.get(self.rank)
            stored = holder is not None and self.rank in k.stored and \
                holder.tags.get("fleet") == rec.tags.get("fleet")
            k.store.save_run(rec, replaces=holder.run_id if stored else None, medians=True)
            if holder is not None and stored:
                k.holders.pop(self.rank, None)
                k.stored.discard(self.rank)
            k.live_ids[self.rank] = rec.run_id
            self.rec = rec
        self._do(rec.run_id, do)

    def add_result(self, run_id: str, res: Any) -> None:
        if self.k.live_ids.get(self.rank) == run_id:
            # its figures only: the shared store of 100,000 nodes holds no repetitions
            # (numascope.fleet.full); the final record replaces the run at the end
            self._do(run_id, lambda: self.k.store.add_result(run_id, res, medians=True))

    def finish_run(self, rec: RunRecord) -> None:
        if self.k.live_ids.get(self.rank) == rec.run_id:
            self._do(rec.run_id, lambda: self.k.store.finish_run(rec))
