"""Coordination over MPI (mpi4py, imported only when the launcher started MPI ranks; MPI
calls on rank 0 come from one thread at a time, the receiver's while rank 0 measures).

MPI only carries messages; every rank measures its own node with the same suite as
`numascope run`. Rank 0 picks the fleet id and broadcasts it; every rank sends rank 0 a
hello (its host name and Slurm ids), its run as it begins, each result as it finishes
(Sender: rank 0 stores them at once, so that Open MPI's SIGKILL 1 s after it forwards
SIGTERM takes no finished result with it) and then its record. Rank 0 measures its own node in
its main thread while a receiver thread takes the others' messages with non-blocking probes
until every rank has answered or the deadline (--node-timeout after the start) passes;
every record is written to the store as it arrives, one transaction per node. If rank 0's
own node is still measuring 2 s past the deadline, it is recorded as failed too and the
job is ended. A rank that
never answered is stored as failed with its reason ("no record within … (hung, or its rank
was lost)"); rank 0 then ends the job with MPI_Abort, since MPI_Finalize would wait for the
hung rank forever.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from numascope.results.run import RunRecord

TAG_HELLO, TAG_RECORD, TAG_PLAN, TAG_AGAIN, TAG_BEGIN, TAG_RESULT = 11, 12, 13, 14, 15, 16
GRACE_S = 2.0
POLL_S = 0.05
# Set by MPI launchers in every rank: mpirun (Open MPI), hydra / Slurm PMI, PMIx.
LAUNCHER_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK")


class Tasks(NamedTuple):
    """This task's place among the tasks its launcher started, MPI used or not."""
    rank: int
    size: int
    launcher: str        # srun | mpirun | none


def launched(env: dict[str, str] | None = None) -> Tasks:
    """The rank and task count the launcher set: a Slurm step's (srun, with or without
    --mpi), else an MPI launcher's rank variables (mpirun, hydra, PMIx: net.launch's
    mpi_world); one task of its own otherwise. A task that does not use MPI reads them to
    know it is not alone: `mpirun -np 2 … --no-mpi` would else write two one-node fleets.
    Not SLURM_NTASKS: a batch script has it without being one of several tasks."""
    from numascope.families.interconnect.launch import mpi_world
    e = os.environ if env is None else env
    steps = e.get("SLURM_STEP_NUM_TASKS", "")
    if steps.isdigit():
        procid = e.get("SLURM_PROCID", "")
        return Tasks(int(procid) if procid.isdigit() else 0, int(steps), "srun")
    w = mpi_world(dict(e))
    if w is not None:
        return Tasks(w[0], w[1], "mpirun")
    return Tasks(0, 1, "none")


def world(allow: bool = True) -> Any | None:
    """MPI.COMM_WORLD when the launcher started several MPI ranks and mpi4py is installed;
    None otherwise (then the node works alone: store or --shared-dir). mpi4py is imported
    only under an MPI launcher, so plain `srun` never starts a singleton MPI."""
    if not allow or os.environ.get("NUMASCOPE_FLEET_MPI") == "0":
        return None
    if not any(os.environ.get(v) for v in LAUNCHER_VARS):
        return None
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    comm = MPI.COMM_WORLD
    return comm if comm.Get_size() > 1 else None


def missing_reason(rank: int, hello: dict[str, Any] | None, timeout: float) -> str:
    if hello is None:
        return (f"rank {rank} never reported within --node-timeout {timeout:g} s "
                "(its rank was lost or never started)")
    return (f"no record within --node-timeout {timeout:g} s (hung, or its rank was lost)")


class Rank0(NamedTuple):
    """What rank 0 is told as the job goes (numascope.fleet.run_command stores it)."""
    on_record: Callable[[RunRecord], Any]          # store a node's record; keep the return
    failed: Callable[[dict[str, Any], str, str], RunRecord]   # (ident, reason, status)
    on_start: Callable[[str, int], None] | None = None      # (fleet id, ranks): before any
    on_hellos: Callable[[dict[int, dict[str, Any]]], None] | None = None   # new hellos
    on_abort: Callable[[], None] | None = None     # the job is about to end early
    live: Callable[[int], Any] | None = None       # rank -> where its run goes as it runs
    on_stop: Callable[[str], None] | None = None   # a stop signal reached rank 0 (its name)


class Sender:
    """A rank's run sent to rank 0 as it goes (numascope.suite's store interface): the run
    when it begins, each result when it finishes; its record follows at the end."""

    def __init__(self, comm: Any):
        self.comm = comm

    def begin_run(self, rec: RunRecord) -> None:
        self.comm.send(rec.to_dict(with_results=False), dest=0, tag=TAG_BEGIN)

    def add_result(self, run_id: str, res: Any) -> None:
        # its figures only (each metric's median of its finite values, as the store keeps
        # them): rank 0 of 100,000 nodes gathers no repetitions; the record follows whole
        import math
        import statistics
        d = res.to_dict()
        for m in (d.get("metrics") or {}).values():
            vals = [v for v in m.get("values") or [] if isinstance(v, (int, float))
                    and not isinstance(v, bool) and math.isfinite(v)]
            m["values"] = [statistics.median(vals)] if vals else []
        self.comm.send((run_id, d), dest=0, tag=TAG_RESULT)

    def finish_run(self, rec: RunRecord) -> None:
        pass


def run(comm: Any, fleet_id: str | None, timeout: float,
        ident_of: Callable[[str, int, int], dict[str, Any]],
        measure: Callable[[dict[str, Any]], RunRecord], zero: Rank0
        ) -> tuple[list[Any], list[int]]:
    """Every rank calls this. Rank 0 returns (on_record's value for every node's record, in
    rank order; the ranks that never answered); the other ranks return ([their own
    record], []) once rank 0 has it. `zero.on_record` is called on rank 0 for each record
    as it arrives (it stores it): rank 0 keeps what it returns, not the records.

    A stop signal on rank 0 (SIGINT, SIGTERM: the launcher forwards it to every rank) ends
    its own measurement as interrupted and gives the others STOP_GRACE_S to send theirs;
    one still silent then is recorded interrupted. A failure of the receiver itself (an
    MPI error) ends the job at once (MPI_Abort) with one line: never a hang."""
    from numascope import signals
    rank, size = comm.Get_rank(), comm.Get_size()
    t0 = time.monotonic()
    fleet_id = comm.bcast(fleet_id, root=0)
    ident = ident_of(fleet_id, rank, size)
    if rank != 0:
        comm.send(ident, dest=0, tag=TAG_HELLO)
        rec = measure(ident)
        comm.send(rec.to_dict(), dest=0, tag=TAG_RECORD)
        return [rec], []
    if zero.on_start is not None:       # every node written down before any is measured
        zero.on_start(fleet_id, size)

    # Rank 0 measures its own node in this thread while a receiver thread takes the other
    # ranks' messages as they come (stored at once), so that a slow rank 0 delays nobody
    # and a hung rank 0 is caught by the same deadline.
    lock = threading.Lock()
    records: dict[int, Any] = {}
    hellos: dict[int, dict[str, Any]] = {0: ident}
    own_done = threading.Event()
    stopped = threading.Event()      # a stop signal reached rank 0
    deadline = [t0 + timeout]
    silent: set[int] = set()       # ranks with no record of their own by the deadline
    lives: dict[int, Any] = {}     # rank -> where its run is stored as it goes
    told = [False]                 # on_stop called

    def keep(r: int, rec: RunRecord) -> None:
        with lock:
            if r not in records:
                records[r] = zero.on_record(rec)   # stored; kept: what the caller needs

    def receive() -> None:
        try:
            _receive()
        except BaseException as e:  # noqa: BLE001 — never a silent thread and a hung job
            import sys
            sys.stderr.write(f"numascope: error: rank 0 could not take the nodes' records "
                             f"({type(e).__name__}: {e}); the records received are "
                             "stored; ending the job\n")
            _before_abort()
            abort(comm, 1)

    def _receive() -> None:
        status = _status()
        others = set(range(1, size))
        if zero.on_hellos is not None:
            zero.on_hellos({0: ident})
        while not others <= set(records):
            fresh: dict[int, dict[str, Any]] = {}
            while comm.iprobe(source=_any_source(), tag=_any_tag(), status=status):
                src, tag = status.Get_source(), status.Get_tag()
                msg = comm.recv(source=src, tag=tag)
                if tag == TAG_HELLO:
                    hellos[src] = fresh[src] = msg
                elif tag == TAG_BEGIN and zero.live is not None and src not in records:
                    lives[src] = zero.live(src)
                    lives[src].begin_run(RunRecord.from_dict(msg))
                elif tag == TAG_RESULT and src in lives and src not in records:
                    from numascope.results.record import BenchResult
                    lives[src].add_result(msg[0], BenchResult.from_dict(msg[1]))
                elif tag == TAG_RECORD:
                    keep(src, RunRecord.from_dict(msg))
            if fresh and zero.on_hellos is not None:
                zero.on_hellos(fresh)
            if signals.received() and not told[0] and zero.on_stop is not None:
                told[0] = True      # said in the store before the launcher's SIGKILL
                zero.on_stop(signals.name(signals.signum_of(None)))
            if stopped.is_set():
                deadline[0] = min(deadline[0], stopped_at[0] + STOP_GRACE_S)
            if time.monotonic() >= deadline[0]:
                break
            time.sleep(POLL_S)
        silent.update(others - set(records))
        for r in sorted(silent):
            who = hellos.get(r) or {**ident, "host": f"rank{r}", "rank": r, "slurm": {}}
            if stopped.is_set():
                keep(r, zero.failed({**who, "id": fleet_id},
                                    f"no record: the job was stopped "
                                    f"({signals.name(signals.signum_of(None))}) before "
                                    "this node reported", "interrupted"))
            else:
                keep(r, zero.failed({**who, "id": fleet_id},
                                    missing_reason(r, hellos.get(r), timeout), "failed"))
        if not own_done.wait(max(0.0, deadline[0] - time.monotonic()) + GRACE_S):
            # rank 0's own node hangs: record it, then end the job (every rank with it)
            keep(0, zero.failed(ident, f"no record within --node-timeout {timeout:g} s "
                                       "(rank 0's own node hung; the other nodes are "
                                       "stored)", "failed"))
            import sys
            sys.stderr.write(f"numascope: error: {ident['host']} (rank 0) exceeded "
                             f"--node-timeout {timeout:g} s; the other nodes are stored\n")
            _before_abort()
            abort(comm, 1)

    def _before_abort() -> None:
        if zero.on_abort is not None:
            try:
                zero.on_abort()
            except BaseException as e:  # noqa: BLE001 — the job ends whatever happens here
                import sys
                sys.stderr.write(f"numascope: error: before ending the job: {e}\n")

    stopped_at = [0.0]
    receiver = threading.Thread(target=receive, name="fleet-receiver", daemon=True)
    receiver.start()
    own = measure(ident)
    if own.status == "interrupted" or signals.received():
        stopped_at[0] = time.monotonic()
        stopped.set()
    own_done.set()
    try:
        with signals.deferred():    # its record stored whole, a signal raised after
            keep(0, own)
    except KeyboardInterrupt:
        stopped_at[0] = time.monotonic()
        stopped.set()
    while receiver.is_alive():
        try:
            receiver.join(POLL_S * 4)
        except KeyboardInterrupt:        # a stop signal while waiting for the others
            if not stopped.is_set():
                stopped_at[0] = time.monotonic()
                stopped.set()
    return [records[r] for r in range(size)], sorted(silent)


STOP_GRACE_S = 10.0     # after a stop signal, how long rank 0 waits for the others' records


def wait_plan(comm: Any) -> Any:
    """A rank other than 0, after its record: rank 0's word on a second measurement (what
    to measure again, or None: nothing, end), polled with sleeps so that a waiting node
    idles instead of spinning in MPI's progress loop."""
    while not comm.iprobe(source=0, tag=TAG_PLAN):
        time.sleep(POLL_S)
    return comm.recv(source=0, tag=TAG_PLAN)


def second_round(comm: Any, plans: dict[int, Any], timeout: float,
                 measure: Callable[[Any], RunRecord],
                 on_record: Callable[[RunRecord], Any],
                 failed: Callable[[int, str], RunRecord], skip: set[int]) -> list[Any]:
    """Rank 0 (`fleet run --confirm`): tell every rank that answered the first round what it
    measures again (plans[rank]; the others are released at once), measure its own when it
    is planned, and gather the second records as they come until the deadline. Returns
    on_record's value for each, rank order; a planned rank with no second record by the
    deadline gets failed(rank, reason)."""
    size = comm.Get_size()
    for r in range(1, size):
        if r not in skip:
            comm.send(plans.get(r), dest=r, tag=TAG_PLAN)
    want = {r for r in plans if r != 0}
    got: dict[int, Any] = {}
    deadline = time.monotonic() + timeout
    lock = threading.Lock()

    def receive() -> None:
        status = _status()
        while not want <= set(got) and time.monotonic() < deadline:
            while comm.iprobe(source=_any_source(), tag=TAG_AGAIN, status=status):
                src = status.Get_source()
                rec = RunRecord.from_dict(comm.recv(source=src, tag=TAG_AGAIN))
                with lock:
                    got[src] = on_record(rec)
            time.sleep(POLL_S)

    receiver = threading.Thread(target=receive, name="fleet-confirm", daemon=True)
    receiver.start()
    if 0 in plans:
        own = measure(plans[0])
        with lock:
            got[0] = on_record(own)
    receiver.join()
    for r in sorted(set(plans) - set(got)):
        got[r] = on_record(failed(r, f"no second record within --node-timeout "
                                     f"{timeout:g} s"))
    return [got[r] for r in sorted(got)]


def measure_again(comm: Any, plan: Any, measure: Callable[[Any], RunRecord]) -> None:
    """A rank other than 0 with a plan: measure again and send rank 0 the record."""
    rec = measure(plan)
    comm.send(rec.to_dict(), dest=0, tag=TAG_AGAIN)


def abort(comm: Any, code: int) -> None:
    """End every rank (the hung ones too); MPI_Finalize would wait for them forever."""
    import sys
    sys.stdout.flush()
    sys.stderr.flush()
    comm.Abort(code)


def _status() -> Any:
    from mpi4py import MPI
    return MPI.Status()


def _any_source() -> int:
    from mpi4py import MPI
    return MPI.ANY_SOURCE


def _any_tag() -> int:
    from mpi4py import MPI
    return MPI.ANY_TAG
