"""Coordination over MPI (mpi4py, imported only when the launcher started MPI ranks).

MPI only carries messages; every rank measures its own node with the same suite as
`numascope run`. Rank 0 picks the fleet id and broadcasts it; every rank sends rank 0 a
hello (its host name and Slurm ids) and then its record. Rank 0 measures its own node too,
then receives with non-blocking probes until every rank has answered or the deadline
(--node-timeout after the start, at least a short grace after rank 0's own run) passes;
every record is written to the store as it arrives, one transaction per node. A rank that
never answered is stored as failed with its reason ("no record within … (hung, or its rank
was lost)"); rank 0 then ends the job with MPI_Abort, since MPI_Finalize would wait for the
hung rank forever.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from numascope.results.run import RunRecord

TAG_HELLO, TAG_RECORD = 11, 12
GRACE_S = 2.0
POLL_S = 0.05
# Set by MPI launchers in every rank: mpirun (Open MPI), hydra / Slurm PMI, PMIx.
LAUNCHER_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK")


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


def run(comm: Any, fleet_id: str | None, timeout: float,
        ident_of: Callable[[str, int, int], dict[str, Any]],
        measure: Callable[[dict[str, Any]], RunRecord],
        on_record: Callable[[RunRecord], None],
        failed: Callable[[dict[str, Any], str], RunRecord]) -> tuple[list[RunRecord], int]:
    """Every rank calls this. Rank 0 returns (every node's record, in rank order; the number
    of ranks that never answered); the other ranks return ([their own record], 0) once
    rank 0 has it. `on_record` is called on rank 0 for each record as it arrives."""
    rank, size = comm.Get_rank(), comm.Get_size()
    t0 = time.monotonic()
    fleet_id = comm.bcast(fleet_id, root=0)
    ident = ident_of(fleet_id, rank, size)
    if rank != 0:
        comm.send(ident, dest=0, tag=TAG_HELLO)
        rec = measure(ident)
        comm.send(rec.to_dict(), dest=0, tag=TAG_RECORD)
        return [rec], 0

    records: dict[int, RunRecord] = {}
    hellos: dict[int, dict[str, Any]] = {0: ident}
    own = measure(ident)
    records[0] = own
    on_record(own)
    deadline = max(t0 + timeout, time.monotonic() + GRACE_S)
    status = _status()
    while len(records) < size:
        while comm.iprobe(source=_any_source(), tag=_any_tag(), status=status):
            src, tag = status.Get_source(), status.Get_tag()
            msg = comm.recv(source=src, tag=tag)
            if tag == TAG_HELLO:
                hellos[src] = msg
            elif tag == TAG_RECORD and src not in records:
                rec = RunRecord.from_dict(msg)
                records[src] = rec
                on_record(rec)
        if len(records) == size or time.monotonic() >= deadline:
            break
        time.sleep(POLL_S)
    missing = [r for r in range(size) if r not in records]
    for r in missing:
        who = hellos.get(r) or {**ident, "host": f"rank{r}", "rank": r, "slurm": {}}
        rec = failed({**who, "id": fleet_id}, missing_reason(r, hellos.get(r), timeout))
        records[r] = rec
        on_record(rec)
    return [records[r] for r in range(size)], len(missing)


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
