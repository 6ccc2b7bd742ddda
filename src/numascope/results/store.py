"""The results store: an embedded SQLite file holding run records and their results.

Safety rules (a store is someone's measurement history):
- a file that is not a numascope store (empty, truncated, text, another application's
  SQLite database) is refused with one clear line and never written: the header and the
  marker table are checked through a read-only connection before anything else;
- a new store is built under a temporary name and linked into place atomically, so a
  half-created file is never seen and two processes creating it at once both succeed;
- writes are short transactions (BEGIN IMMEDIATE) in WAL mode with a busy timeout and
  retries, so two runs can write at once and readers see a consistent state meanwhile;
- each BenchResult is committed as soon as it finishes, so an interrupted run keeps it;
- reading leaves no file behind (no -wal or -shm is made when no writer is at work) and
  works where nothing can be written (a read-only disk, someone else's folder); writing
  there is refused as "read-only" before anything is measured, never called "damaged";
- a new store is made only in a folder that exists (the default location's folders are
  made) and can be written; anything else is one line, exit 2.
"""

from __future__ import annotations

import errno
import json
import math
import os
import random
import sqlite3
import statistics
import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from numascope.errors import UserError, escape_text
from numascope.results.plain import to_plain
from numascope.results.record import BenchResult
from numascope.results.run import RunRecord, migrate

APP = "numascope"
STORE_FORMAT = 1          # layout of the tables below (record schema is versioned apart)
_HEADER = b"SQLite format 3\x00"
_BUSY_MS = 30_000
SPEC_MAX = 200            # the longest run selection (id, prefix, tags, id,id,…) taken
CHECK_MAX_BYTES = 256 << 20   # stores up to this size are checked whole when opened
T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS numascope_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    started TEXT NOT NULL,
    finished TEXT,
    status TEXT NOT NULL,
    hostname TEXT,
    profile TEXT,
    tags TEXT NOT NULL,          -- JSON object
    record TEXT NOT NULL         -- JSON run record without its results
);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    family TEXT NOT NULL,
    "case" TEXT NOT NULL,
    result TEXT NOT NULL         -- JSON BenchResult with every repetition
);
CREATE INDEX IF NOT EXISTS results_run ON results(run_id);
"""

# Each result's metrics, one row per metric with the median of its repetitions: what a
# fleet's analysis reads (numascope.fleet.load) without decoding whole results (10,000
# nodes' JSON took seconds). Derived from the results table, written in the same
# transaction; a store made before it is indexed on its first write (Store.open). A result
# without metrics gets one row with metric NULL, so that "indexed" is "has a row".
_FIGURES = """
CREATE TABLE IF NOT EXISTS figures (
    result_id INTEGER NOT NULL REFERENCES results(id),
    run_id TEXT NOT NULL,
    family TEXT NOT NULL,
    "case" TEXT NOT NULL,
    ord INTEGER NOT NULL,        -- the metric's place in its result (0: the first)
    metric TEXT,
    unit TEXT,
    higher_is_better INTEGER,
    median REAL,
    validated INTEGER NOT NULL,
    kernel TEXT                  -- the result's params.kernel (bandwidth: triad, copy …)
);
-- (no index on run_id: a run's rows are found through its results and figures_result, the
-- index was 6 kB of a node's 30 in a fleet's store. Stores made before keep theirs)
CREATE INDEX IF NOT EXISTS figures_result ON figures(result_id);
-- each run's record without its bulk (BRIEF_DROPS): the same JSON paths, a tenth the bytes
-- to parse for a reader of many runs' host facts and stages
-- ('' for a run whose record is its brief: Store.save_run medians=True)
CREATE TABLE IF NOT EXISTS run_briefs (run_id TEXT PRIMARY KEY, brief TEXT NOT NULL);
"""
BRIEF_DROPS = ("topology", "noise")           # record keys left out of a run's brief
BRIEF_HOST_DROPS = ("facts", "readiness")     # host keys left out


def default_path() -> Path:
    """$NUMASCOPE_STORE, else $XDG_DATA_HOME/numascope/runs.db, else ~/.local/share/…"""
    env = os.environ.get("NUMASCOPE_STORE")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "numascope" / "runs.db"


@dataclass
class RunSummary:
    run_id: str
    started: str
    finished: str | None
    status: str
    hostname: str | None
    profile: str | None
    tags: dict[str, str]
    memory_mode: str | None
    stages: list[dict[str, Any]]
    results: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _check_header(path: Path) -> None:
    """Refuse anything that is not a complete SQLite file, before SQLite itself opens it."""
    try:
        with open(path, "rb") as f:
            head = f.read(100)
    except OSError as e:
        raise UserError(f"cannot read store {_shown(path)}: {e.strerror}") from None
    if len(head) == 0:
        raise UserError(f"{_shown(path)} is an empty file, not a numascope store; refusing "
                        "to use it")
    if not head.startswith(_HEADER) or len(head) < 100:
        raise UserError(f"{_shown(path)} is not a numascope store (not an SQLite database); "
                        "refusing to touch it — pass another --store")
    page = struct.unpack(">H", head[16:18])[0]
    page = 65536 if page == 1 else page
    change, pages, valid_for = (struct.unpack(">I", head[o:o + 4])[0] for o in (24, 28, 92))
    wal = Path(str(path) + "-wal")
    # The in-header page count is trustworthy when valid_for matches the change counter;
    # in WAL mode newer pages may still sit in the -wal file, so only check without one.
    wal_busy = wal.exists() and wal.stat().st_size > 0
    if pages and valid_for == change and not wal_busy and path.stat().st_size < pages * page:
        raise UserError(f"store {_shown(path)} is truncated ({path.stat().st_size} bytes, header "
                        f"says {pages * page}); refusing to use it — restore a backup")


def _shown(p: object) -> str:
    """A path as messages show it: one line, control characters visible."""
    return escape_text(p, 300)


def _not_writable(p: Path) -> str:
    """Why the store at `p` cannot be written ("" when it can): the file itself, or its
    folder, where SQLite keeps the -wal and -shm files beside it."""
    if not os.access(p, os.W_OK):
        return "no permission to write the file, or a read-only file system"
    folder = p.parent if str(p.parent) else Path(".")
    if not os.access(folder, os.W_OK | os.X_OK):
        wal, shm = Path(f"{p}-wal"), Path(f"{p}-shm")
        if not (os.access(wal, os.W_OK) and os.access(shm, os.W_OK)):
            return f"folder {_shown(folder)} is read-only"
    return ""


def _ro_uri(p: Path) -> str:
    """How to open `p` for reading only, leaving no file behind. With no -wal file beside
    it no writer has the store open (a WAL writer keeps one), so it is opened immutable:
    no -shm or -wal is made, and a store in a read-only folder reads as well. With one, a
    writer may be at work: plain mode=ro, which reads its committed transactions."""
    from urllib.parse import quote
    uri = f"file:{quote(str(p.resolve()))}?mode=ro"
    wal = Path(f"{p}-wal")
    folder = p.parent if str(p.parent) else Path(".")
    pending = wal.exists() and (wal.stat().st_size > 0 or os.access(folder, os.W_OK))
    return uri if pending else uri + "&immutable=1"


def _unsupported_fs(path: Path, e: Exception) -> UserError:
    """SQLite's WAL mode needs shared memory maps and locks that NFS, 9p and some FUSE file
    systems do not give: say so instead of calling the store damaged; a full disk (SQLite
    says "disk is full", or an I/O error or "unable to open" where the folder has no room
    left) is said as disk full (_full)."""
    full = _full(path, e, created=False)
    if full is not None:
        return full
    return UserError(f"store {_shown(path)}: SQLite cannot use this file system "
                     f"({_one_line(e)}); put the store on a local disk (--store or "
                     "$NUMASCOPE_STORE)")


def _one_line(text: object) -> str:
    """SQLite's message on one line: its lines ("*** in database main ***", "Page 3: …")
    joined with "; ", control characters shown as escapes."""
    lines = [" ".join(x.split()) for x in str(text).splitlines()]
    return escape_text("; ".join(x for x in lines if x))


# the tag of `advise --verify`'s runs (numascope.predict.verify): a check of one layout's
# prediction, stored as a run, never what `latest` picks
VERIFY_TAG = "verify"


class StoreFull(UserError):
    """The store's disk (or quota) is full: nothing in the store is damaged, the write that
    did not fit was rolled back; the caller may keep what it meant to write and retry."""


def _free_bytes(path: Path) -> int | None:
    """The bytes free to this user in the store's folder (None when it cannot be told)."""
    try:
        st = os.statvfs(path.parent if str(path.parent) else ".")
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def _full(path: Path, e: Exception, created: bool = True) -> StoreFull | None:
    """StoreFull when the error is a full disk: SQLITE_FULL or ENOSPC, or an I/O error or
    "unable to open" on a file system with no space left (SQLite reports ENOSPC while
    growing the -wal or -shm file as SQLITE_IOERR, and while making them as CANTOPEN);
    None otherwise. `created`: the store existed before (it is intact), else nothing was
    made."""
    code = getattr(e, "sqlite_errorcode", None)
    free = _free_bytes(path)
    full = code == sqlite3.SQLITE_FULL or "disk is full" in str(e) or \
        getattr(e, "errno", None) == errno.ENOSPC
    if not full and (code is not None and code & 0xFF in (sqlite3.SQLITE_IOERR,
                                                          sqlite3.SQLITE_CANTOPEN)
                     or "disk I/O error" in str(e) or "unable to open" in str(e)):
        full = free is not None and free < FULL_BYTES
    if not full:
        return None
    what = e.strerror if isinstance(e, OSError) and e.strerror else _one_line(e)
    return StoreFull(f"disk full: {_shown(path)}: "
                     f"{'?' if free is None else free} bytes free ({what}); "
                     + ("the store itself is intact" if created else
                        "no store was made") + " — free space or pass another --store")


FULL_BYTES = 1 << 20    # under this much free space, SQLite's I/O error is the disk full


def _corrupt(path: Path, e: Exception) -> UserError:
    return UserError(f"store {_shown(path)} is damaged or not a numascope store "
                     f"({_one_line(e)}); it was left untouched: restore a backup or pass "
                     "another --store")


class Store:
    """Open with Store.open(path, write=...) — not the constructor."""

    def __init__(self, path: Path, conn: sqlite3.Connection, writable: bool):
        self.path = path
        self.conn = conn
        self.writable = writable

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path | None = None, write: bool = False) -> Store:
        """The store at `path` (default: default_path()). Reading needs only read access
        (a store on a read-only disk or in someone else's folder reads fine); writing says
        "read-only" when the file or its folder cannot be written, before anything runs.
        A new store is created only for writing, in an existing, writable folder (the
        default location's folders are made)."""
        if path is not None and not str(path).strip():
            raise UserError("--store is empty: give the store's file (or leave --store out "
                            "for the default)")
        p = Path(path).expanduser() if path else default_path()
        if p.is_dir():
            raise UserError(f"store {_shown(p)} is a directory; pass a file path with --store")
        if p.exists() and not p.is_file():    # a FIFO would block the open, a device is no store
            raise UserError(f"store {_shown(p)} is not a regular file (a pipe, socket or "
                            "device); pass a file path with --store")
        if not p.exists():
            if not write:
                raise UserError(f"no store at {_shown(p)} (nothing has been run yet; "
                                "`numascope run` creates it, or pass --store)")
            cls._create(p, make_folders=not path)
        cls._verify(p, whole=write)
        if not write:
            return cls(p, cls._connect(_ro_uri(p), uri=True), False)
        why = _not_writable(p)
        if why:
            raise UserError(f"store {_shown(p)} is read-only ({why}): it can be read, not written; "
                            "pass another --store to store a run")
        conn = cls._connect(str(p))
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("BEGIN IMMEDIATE")   # can it really be written? (a read-only
            conn.execute("ROLLBACK")          # mount, a file only root may write …)
        except sqlite3.Error as e:
            if "locked" in str(e) or "busy" in str(e):   # another writer: writable, then
                store = cls(p, conn, True)
                store._index_figures()
                return store
            conn.close()    # _verify read it as a numascope store: the file system refused
            if "readonly" in str(e) or "read-only" in str(e):
                raise UserError(f"store {_shown(p)} is read-only ({e}): it can be read, not "
                                "written; pass another --store to store a run") from None
            raise (_full(p, e) or _unsupported_fs(p, e)) from None
        store = cls(p, conn, True)
        store._index_figures()
        return store

    @classmethod
    def in_memory(cls) -> Store:
        """A writable store in memory: the same tables and code paths, nothing on disk
        (a fleet node's suite, whose record travels to rank 0 or a shared folder)."""
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.executescript(_SCHEMA + _FIGURES)
        conn.executemany("INSERT INTO numascope_meta VALUES (?, ?)",
                         [("app", APP), ("store_format", str(STORE_FORMAT))])
        return cls(Path(":memory:"), conn, True)

    @staticmethod
    def _connect(target: str, uri: bool = False) -> sqlite3.Connection:
        conn = sqlite3.connect(target, uri=uri, timeout=_BUSY_MS / 1000,
                               isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
        return conn

    @classmethod
    def _create(cls, p: Path, make_folders: bool = False) -> None:
        parent = p.parent
        if make_folders:
            try:
                parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise UserError(f"cannot create the store folder {_shown(parent)}: {e.strerror}") \
                    from None
        if not parent.is_dir():
            raise UserError(f"cannot create the store {_shown(p)}: folder {_shown(parent)} "
                            "does not exist")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise UserError(f"cannot create the store {_shown(p)}: folder {_shown(parent)} "
                            "is read-only (no permission to write there)")
        tmp = p.with_name(f".{p.name}.{os.getpid()}.{random.getrandbits(32):08x}.tmp")
        try:
            os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except OSError as e:
            raise (_full(p, e, created=False) or
                   UserError(f"cannot create the store {_shown(p)}: {e.strerror} (folder "
                             f"{_shown(parent)})")) from None
        try:
            conn = sqlite3.connect(str(tmp), isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA + _FIGURES)
            conn.executemany("INSERT INTO numascope_meta VALUES (?, ?)",
                             [("app", APP), ("store_format", str(STORE_FORMAT))])
            conn.close()
            try:
                os.link(tmp, p)   # atomic; fails when another process was faster
            except FileExistsError:
                pass
        except OSError as e:
            raise (_full(p, e, created=False) or
                   UserError(f"cannot create the store {_shown(p)}: {e.strerror}")) from None
        except sqlite3.Error as e:
            raise _unsupported_fs(p, e) from None
        finally:
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.unlink(str(tmp) + suffix)
                except OSError:
                    pass

    @classmethod
    def _verify(cls, p: Path, whole: bool = True) -> None:
        _check_header(p)
        try:
            conn = sqlite3.connect(_ro_uri(p), uri=True, timeout=_BUSY_MS / 1000)
        except sqlite3.Error as e:
            raise (_full(p, e) or _corrupt(p, e)) from None
        try:
            names = {r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
            if "numascope_meta" not in names:
                raise UserError(f"{_shown(p)} is an SQLite database of another application, not a "
                                "numascope store; refusing to touch it — pass another --store")
            meta = dict(conn.execute("SELECT key, value FROM numascope_meta"))
            if meta.get("app") != APP:
                raise UserError(f"{_shown(p)} is not a numascope store; refusing to touch it")
            fmt = int(meta.get("store_format", "0"))
            if fmt > STORE_FORMAT:
                raise UserError(f"store {_shown(p)} has format {fmt}, newer than this numascope "
                                f"({STORE_FORMAT}); upgrade numascope")
            if not {"runs", "results"} <= names:
                raise UserError(f"store {_shown(p)} lacks its tables; refusing to touch it")
            # SQLite's quick_check reads every page: 5 s for a 50,000-node fleet store that
            # a report reads in seconds. Before writing it always runs; a reader of a store
            # past CHECK_MAX_BYTES leaves it out: SQLite still checks each page it reads, a
            # damaged one being the same one line (_corrupt)
            bad = "ok" if not whole and p.stat().st_size > CHECK_MAX_BYTES else \
                conn.execute("PRAGMA quick_check(1)").fetchone()[0]
            if bad != "ok":
                raise UserError(f"store {_shown(p)} is damaged (SQLite's check says: "
                                f"{_one_line(bad)}); it was left untouched: restore a "
                                "backup or pass another --store")
        except sqlite3.Error as e:
            raise (_full(p, e) or _corrupt(p, e)) from None
        finally:
            conn.close()

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------------
    def _tx(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run fn inside BEGIN IMMEDIATE … COMMIT, retrying while another writer holds it."""
        if not self.writable:
            raise UserError(f"store {_shown(self.path)} was opened read-only")
        delay = 0.01
        for _ in range(60):
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                try:
                    out = fn(self.conn)
                    self.conn.execute("COMMIT")
                    return out
                except BaseException:
                    if self.conn.in_transaction:
                        try:
                            self.conn.execute("ROLLBACK")
                        except sqlite3.Error:   # SQLite rolled back already (disk full)
                            pass
                    raise
            except sqlite3.OperationalError as e:
                full = _full(self.path, e)
                if full is not None:
                    raise full from None
                if "readonly" in str(e):
                    raise UserError(f"store {_shown(self.path)} is read-only ({e}); pass another "
                                    "--store") from None
                if "locked" not in str(e) and "busy" not in str(e):
                    raise _corrupt(self.path, e) from None
            except sqlite3.IntegrityError as e:
                raise UserError(f"store {_shown(self.path)}: {e}") from None
            except sqlite3.DatabaseError as e:
                raise (_full(self.path, e) or _corrupt(self.path, e)) from None
            # busy beyond the 30 s timeout (or a lock upgrade conflict): back off, retry
            time.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, 0.5)
        raise UserError(f"store {_shown(self.path)} stayed locked by another process; try again")

    def _index_figures(self) -> None:
        """The figures of results and the briefs of runs stored before those tables existed
        (or by an older numascope), added once; cheap when there are none (an index lookup
        per row)."""
        def do(c: sqlite3.Connection) -> None:
            for stmt in _FIGURES.split(";"):
                if stmt.strip():
                    c.execute(stmt)
            missing = c.execute(
                "SELECT r.id, r.run_id, r.result FROM results r WHERE NOT EXISTS "
                "(SELECT 1 FROM figures f WHERE f.result_id = r.id)").fetchall()
            for rid, run_id, blob in missing:
                try:
                    res = BenchResult.from_dict(json.loads(blob))
                except (ValueError, KeyError, TypeError):
                    continue        # unreadable: the readers fall back to the JSON
                c.executemany(_FIGURE_ROW, figure_rows(rid, run_id, res))
            for run_id, record in c.execute(
                    "SELECT run_id, record FROM runs r WHERE NOT EXISTS "
                    "(SELECT 1 FROM run_briefs b WHERE b.run_id = r.run_id)").fetchall():
                try:
                    d = json.loads(record)
                except ValueError:
                    continue        # unreadable: the readers use the record itself
                if isinstance(d, dict):
                    _put_brief(c, run_id, d)
        self._tx(do)

    def begin_run(self, rec: RunRecord) -> None:
        """Insert the run (status 'running') so its results can be attached as they come."""
        self._tx(lambda c: _put_run(c, rec, insert=True))

    def add_result(self, run_id: str, res: BenchResult, medians: bool = False) -> None:
        """One result of a run being measured (medians: its figures only, as save_run)."""
        self._tx(lambda c: _insert_result(c, run_id, res, medians))

    def finish_run(self, rec: RunRecord) -> None:
        """Store the record's final state (status, stages, noise); results are already in."""
        self._tx(lambda c: _put_run(c, rec, insert=False))

    def save_run(self, rec: RunRecord, replaces: str | None = None,
                 medians: bool = False) -> None:
        """Store a complete record with its results in one transaction (imports, tests,
        fleet nodes); `replaces`: a run id deleted in the same transaction (a fleet node's
        placeholder, numascope.fleet.manifest). medians: the record as it is given (a fleet's
        shared store is given a node's brief: numascope.fleet.full) and each result as its
        figures only (each metric's median) with its family, case, params and validated
        flag, not its repetitions; get_run gives each metric its median as its one value."""
        def do(c: sqlite3.Connection) -> None:
            if replaces is not None:    # its own id too: a partial run stored whole
                _delete_run(c, replaces)
            _put_run(c, rec, insert=True, medians=medians)
            for r in rec.results:
                _insert_result(c, rec.run_id, r, medians)
        self._tx(do)

    def save_runs(self, recs: list[RunRecord]) -> None:
        """Several records (without results: a fleet's placeholders) in one transaction."""
        def do(c: sqlite3.Connection) -> None:
            for rec in recs:
                _put_run(c, rec, insert=True)
        self._tx(do)

    def update_runs(self, recs: list[RunRecord]) -> None:
        """Several stored runs' rows rewritten from their records, in one transaction."""
        def do(c: sqlite3.Connection) -> None:
            for rec in recs:
                _put_run(c, rec, insert=False)
        self._tx(do)

    def checkpoint(self, strict: bool = False) -> bool:
        """Copy every committed transaction from the -wal file into the store file itself
        and empty the -wal (the file alone is then whole: copied, backed up, or left by a
        job that was killed). True when done; False when a reader kept it from finishing or
        the disk could not take it (nothing is lost: the -wal still holds it). `strict`: a
        disk that could not take it raises StoreFull instead (a busy reader stays False)."""
        if not self.writable or str(self.path) == ":memory:":
            return False
        try:
            busy, log, done = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error as e:
            full = _full(self.path, e) if strict else None
            if full is not None:
                raise full from None
            return False
        if strict and busy == 0 and log > 0 and done < log:
            free = _free_bytes(self.path)
            raise StoreFull(f"disk full: {_shown(self.path)}: "
                            f"{'?' if free is None else free} bytes free (the store file "
                            "could not take what its -wal holds); the store itself is intact")
        return busy == 0

    # -- reading ---------------------------------------------------------------------------
    def has_table(self, name: str) -> bool:
        """Whether the store has this table (the derived ones, figures and run_briefs, are
        missing from a store an older numascope made and that was only read since)."""
        return bool(self._q("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                            (name,)))

    def _q(self, sql: str, args: tuple = ()) -> list[tuple]:
        try:
            return self.conn.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as e:
            raise _corrupt(self.path, e) from None

    def rows(self, sql: str, args: tuple = (), batch: int = 4096) -> Iterator[tuple]:
        """The rows of a query, a batch at a time (a reader of millions of rows never holds
        them all); a damaged store is the same one line as _q's."""
        for got in self.batches(sql, batch, args):
            yield from got

    def batches(self, sql: str, batch: int = 4096, args: tuple = ()) -> Iterator[list[tuple]]:
        """The rows of a query as lists of up to `batch` rows (a columnar reader turns each
        into arrays); a damaged store is the same one line as _q's."""
        try:
            cur = self.conn.execute(sql, args)
            while True:
                got = cur.fetchmany(batch)
                if not got:
                    return
                yield got
        except sqlite3.DatabaseError as e:
            raise _corrupt(self.path, e) from None

    def list_runs(self) -> list[RunSummary]:
        counts = dict(self._q("SELECT run_id, count(*) FROM results GROUP BY run_id"))
        out = []
        # json_extract: only the fields listed, not whole records (topologies can be large)
        for run_id, started, finished, status, host, profile, tags, mode, stages in self._q(
                "SELECT run_id, started, finished, status, hostname, profile, tags, "
                "json_extract(record, '$.host.memory_mode'), json_extract(record, '$.stages') "
                "FROM runs ORDER BY started, rowid"):
            out.append(RunSummary(run_id, started, finished, status, host, profile,
                                  json.loads(tags), mode, json.loads(stages or "[]"),
                                  counts.get(run_id, 0)))
        return out

    def get_run(self, run_id: str) -> RunRecord:
        rows = self._q("SELECT record FROM runs WHERE run_id=?", (run_id,))
        if not rows:
            raise UserError(f"no run {run_id!r} in {_shown(self.path)}")
        d = json.loads(rows[0][0])
        results = [(rid, {"family": fam, "case": case, **json.loads(r)})
                   for rid, fam, case, r in self._q(
                       'SELECT id, family, "case", result FROM results WHERE run_id=? '
                       "ORDER BY id", (run_id,))]
        if any(MEDIANS in r for _, r in results):    # stored as figures only
            figs: dict[int, dict[str, Any]] = {}
            for rid, metric, unit, hib, median in self._q(
                    "SELECT result_id, metric, unit, higher_is_better, median FROM figures "
                    "WHERE result_id IN (SELECT id FROM results WHERE run_id=?) AND metric "
                    "IS NOT NULL ORDER BY result_id, ord", (run_id,)):
                figs.setdefault(rid, {})[metric] = {
                    "name": metric, "unit": unit or "", "higher_is_better": bool(hib),
                    "values": [] if median is None else [median]}
            valid = dict(self._q("SELECT result_id, min(validated) FROM figures WHERE "
                                 "result_id IN (SELECT id FROM results WHERE run_id=?) "
                                 "GROUP BY result_id", (run_id,)))
            for rid, r in results:
                if MEDIANS in r:
                    r.setdefault("params", {})
                    r.setdefault("metrics", figs.get(rid, {}))
                    r.setdefault("validated", bool(valid.get(rid, 1)))
        d["results"] = [r for _, r in results]
        return RunRecord.from_dict(migrate(d))

    def resolve(self, spec: str) -> list[str]:
        """Run ids selected by `spec` (at most SPEC_MAX characters): an id or unique id
        prefix, `latest` (the latest complete measurement of the machine: never an
        interrupted, failed or running run, nor an `advise --verify` check, tagged verify=…:
        one layout's triad, not a run of the suite; `last` is the same), KEY=VALUE tags (all
        must match; several separated by commas), or several ids separated by commas."""
        if len(spec) > SPEC_MAX:
            raise UserError(f"run selection {escape_text(spec, 60)} is too long: at most "
                            f"{SPEC_MAX} characters (an id, a prefix, KEY=VALUE tags or "
                            "id,id,…)")
        runs = self.list_runs()
        if not runs:
            raise UserError(f"no runs stored in {_shown(self.path)}")
        spec = spec.strip()
        if spec in ("latest", "last"):   # the latest complete run, never an interrupted one
            done = [r for r in runs if r.status == "complete"]
            measured = [r for r in done if VERIFY_TAG not in r.tags]
            if not measured:
                checks = len(done) - len(measured)
                held = ", ".join(x for x in (
                    f"{len(runs) - len(done)} interrupted, failed or still running"
                    if len(runs) > len(done) else "",
                    f"{checks} advise --verify check{'s' if checks != 1 else ''}"
                    if checks else "") if x)
                raise UserError(f"'{spec}' is the latest complete run and "
                                f"{_shown(self.path)} holds none ({held}); name a run by "
                                "its id (see `numascope runs`)")
            return [measured[-1].run_id]
        parts = [s.strip() for s in spec.split(",") if s.strip()]
        if parts and all("=" in s for s in parts):
            want = dict(s.split("=", 1) for s in parts)
            ids = [r.run_id for r in runs
                   if all(r.tags.get(k) == v for k, v in want.items())]
            if not ids:
                raise UserError(f"no stored run has tags '{escape_text(spec)}'")
            return ids
        ids = []
        for s in parts:
            hits = [r.run_id for r in runs if r.run_id == s] or \
                   [r.run_id for r in runs if r.run_id.startswith(s)]
            if not hits:
                raise UserError(f"no run matches '{escape_text(s)}' (see `numascope runs`)")
            if len(hits) > 1:
                raise UserError(f"'{escape_text(s)}' matches {len(hits)} runs; give more of "
                                "the id")
            ids.append(hits[0])
        if not ids:
            raise UserError("empty run selection")
        return ids

    def load(self, specs: list[str]) -> list[RunRecord]:
        """Records for every spec (see resolve), each run once, in the order given."""
        seen: list[str] = []
        for s in specs:
            seen += [i for i in self.resolve(s) if i not in seen]
        return [self.get_run(i) for i in seen]


_FIGURE_ROW = ('INSERT INTO figures (result_id, run_id, family, "case", ord, metric, unit, '
               "higher_is_better, median, validated, kernel) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
               "?, ?, ?)")


def brief(record: dict[str, Any]) -> dict[str, Any]:
    """A run record's dict without its bulk (BRIEF_DROPS, the host's BRIEF_HOST_DROPS)."""
    d = {k: v for k, v in record.items() if k not in BRIEF_DROPS}
    if isinstance(d.get("host"), dict):
        d["host"] = {k: v for k, v in d["host"].items() if k not in BRIEF_HOST_DROPS}
    return d


def _put_brief(c: sqlite3.Connection, run_id: str, record: dict[str, Any]) -> None:
    c.execute("INSERT OR REPLACE INTO run_briefs VALUES (?, ?)",
              (run_id, json.dumps(brief(record))))


def _put_run(c: sqlite3.Connection, rec: RunRecord, insert: bool,
             medians: bool = False) -> None:
    """The run's row (inserted, or its final state updated) and its brief, from one dict of
    the record. medians: the record kept as its brief, once (run_briefs holds '' for it:
    the readers take the record then)."""
    d = rec.to_dict(with_results=False)
    if medians:
        d = brief(d)
    row = (rec.run_id, rec.started, rec.finished, rec.status, rec.host.get("hostname"),
           rec.profile, json.dumps(rec.tags),
           json.dumps(d, separators=(",", ":")) if medians else json.dumps(d))
    if insert:
        c.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
    else:
        c.execute("UPDATE runs SET started=?, finished=?, status=?, hostname=?, profile=?, "
                  "tags=?, record=? WHERE run_id=?", row[1:] + (row[0],))
    if medians:
        c.execute("INSERT OR REPLACE INTO run_briefs VALUES (?, '')", (rec.run_id,))
    else:
        _put_brief(c, rec.run_id, d)


def _delete_run(c: sqlite3.Connection, run_id: str) -> None:
    for sql in (("DELETE FROM figures WHERE result_id IN (SELECT id FROM results WHERE "
                 "run_id = ?)"), "DELETE FROM results WHERE run_id = ?",
                "DELETE FROM run_briefs WHERE run_id = ?", "DELETE FROM runs WHERE run_id = ?"):
        c.execute(sql, (run_id,))


MEDIANS = "medians"     # a result stored as its figures only (Store.save_run medians=True)


def _insert_result(c: sqlite3.Connection, run_id: str, res: BenchResult,
                   medians: bool = False) -> None:
    # figures only: the params, and the flag saying so (family and case are the row's
    # columns, validated and the metrics the figures')
    d = {MEDIANS: 1, **({"params": res.params} if res.params else {})} if medians \
        else res.to_dict()
    cur = c.execute('INSERT INTO results (run_id, family, "case", result) VALUES (?, ?, ?, ?)',
                    (run_id, res.family, res.case,
                     json.dumps(to_plain(d), separators=(",", ":") if medians else None)))
    c.executemany(_FIGURE_ROW, figure_rows(cur.lastrowid, run_id, res))


def figure_rows(rid: int, run_id: str, res: BenchResult) -> list[tuple]:
    """The figures rows of one result: each metric and the median of its finite values
    (the one value per node the fleet analysis uses; NULL when none is finite); one row
    with metric NULL for a result without metrics."""
    kernel = res.params.get("kernel") if isinstance(res.params, dict) else None
    kernel = kernel if isinstance(kernel, str) else None
    head = (rid, run_id, res.family, res.case)
    rows = []
    for k, m in enumerate(res.metrics.values()):
        vals = [v for v in m.values
                if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)]
        rows.append((*head, k, m.name, m.unit, int(bool(m.higher_is_better)),
                     statistics.median(vals) if vals else None, int(bool(res.validated)),
                     kernel))
    return rows or [(*head, -1, None, None, None, None, int(bool(res.validated)), kernel)]
