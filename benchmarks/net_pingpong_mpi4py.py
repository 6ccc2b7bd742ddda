"""An independent MPI ping-pong and windowed bandwidth in mpi4py, for benchmarks/net_peers.py.

Run under mpirun with 2 ranks (each bound by the launcher, e.g. numactl per app context):

    mpirun -np 1 numactl --physcpubind=0 --membind=0 python net_pingpong_mpi4py.py \
        --sizes 8,1048576 : -np 1 numactl --physcpubind=1 --membind=0 python ...

Latency: half the round trip of MPI_Send/MPI_Recv ping-pongs (us). Bandwidth: rank 0 posts a
window of Isend, rank 1 a window of Irecv, then a 4-byte ack; MB/s = 10^6 B/s. Rank 0 prints
one JSON line per (test, size) and where both ranks ran."""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
from mpi4py import MPI


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="8,1048576")
    ap.add_argument("--lat-iters", type=int, default=1000)
    ap.add_argument("--bw-iters", type=int, default=20)
    ap.add_argument("--window", type=int, default=64)
    a = ap.parse_args()
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    peer = 1 - rank
    sizes = [int(x) for x in a.sizes.split(",")]
    big = max(sizes)
    sbuf = np.full(big * a.window, 0xA0 if rank == 0 else 0xB1, dtype=np.uint8)  # touched
    rbuf = np.empty(big * a.window, dtype=np.uint8)
    rbuf.fill(0)                                     # first touch by this (bound) rank
    ack = np.zeros(4, dtype=np.uint8)
    where = comm.gather({"rank": rank, "cpu": _cpu(), "pid": os.getpid(),
                         "anon_huge_kb": _anon_huge_kb()}, root=0)
    if rank == 0:
        print(json.dumps({"type": "ranks", "ranks": where}), flush=True)
    for size in sizes:
        # latency
        it = a.lat_iters if size <= 8192 else max(1, a.lat_iters // 10)
        warm = max(1, it // 10)
        s, r = [sbuf[:size], MPI.BYTE], [rbuf[:size], MPI.BYTE]   # built once, not per call
        send, recv = comm.Send, comm.Recv
        comm.Barrier()
        t0 = 0.0
        for i in range(warm + it):
            if i == warm:
                t0 = MPI.Wtime()
            if rank == 0:
                send(s, peer, 1)
                recv(r, peer, 1)
            else:
                recv(r, peer, 1)
                send(s, peer, 1)
        t = MPI.Wtime() - t0
        if rank == 0:
            print(json.dumps({"test": "lat", "size": size, "usec": t * 1e6 / (2 * it)}),
                  flush=True)
        # bandwidth
        it = a.bw_iters if size <= 8192 else max(1, a.bw_iters // 5)
        warm = max(1, it // 10)
        views = [([sbuf[w * size:(w + 1) * size], MPI.BYTE],
                  [rbuf[w * size:(w + 1) * size], MPI.BYTE]) for w in range(a.window)]
        comm.Barrier()
        for i in range(warm + it):
            if i == warm:
                t0 = MPI.Wtime()
            if rank == 0:
                reqs = [comm.Isend(sv, peer, 2) for sv, _ in views]
                MPI.Request.Waitall(reqs)
                comm.Recv([ack, MPI.BYTE], source=peer, tag=3)
            else:
                reqs = [comm.Irecv(rv, peer, 2) for _, rv in views]
                MPI.Request.Waitall(reqs)
                comm.Send([ack, MPI.BYTE], dest=peer, tag=3)
        t = MPI.Wtime() - t0
        if rank == 1 and not (rbuf[:size] == 0xA0).all():
            raise SystemExit("rank 1: the payload arrived corrupted")
        if rank == 0:
            print(json.dumps({"test": "bw", "size": size,
                              "mbps": size * a.window * it / t / 1e6}), flush=True)


def _anon_huge_kb() -> int:
    """This process's anonymous memory in transparent huge pages (kB)."""
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1])
    return -1


def _cpu() -> int:
    with open("/proc/self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])


if __name__ == "__main__":
    main()
