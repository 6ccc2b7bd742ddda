/* A minimal, independent MPI ping-pong and windowed bandwidth in C, for
 * benchmarks/net_peers.py (the mpi4py peer carries Python's per-call overhead, which is
 * larger than a shared-memory small-message latency; this one does not).
 *
 *   mpicc -O2 -o net_pingpong net_pingpong.c
 *   mpirun -np 1 numactl -C 0 -m 0 ./net_pingpong SMALL LARGE LAT_ITERS BW_ITERS THP : \
 *          -np 1 numactl -C 1 -m 0 ./net_pingpong …
 *
 * Prints (rank 0) "lat SMALL usec" and "bw LARGE MB/s" (10^6 B/s): latency is half the
 * round trip of MPI_Send/MPI_Recv at SMALL bytes, a tenth of the iterations as warm-up;
 * bandwidth is a window of 64 MPI_Isend/MPI_Irecv at LARGE bytes then a 1-byte ack.
 * Buffers from malloc, madvise(MADV_HUGEPAGE) when THP is 1, touched by the rank itself. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define WINDOW 64

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 6) {
        fprintf(stderr, "usage: net_pingpong SMALL LARGE LAT_ITERS BW_ITERS THP\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long small = atol(argv[1]), large = atol(argv[2]);
    int lat_iters = atoi(argv[3]), bw_iters = atoi(argv[4]), thp = atoi(argv[5]);
    int rank, peer;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer = 1 - rank;
    size_t bytes = (size_t)large * WINDOW;
    char *s = malloc(bytes), *r = malloc(bytes), ack = 0;
    madvise((void *)((unsigned long)s & ~4095UL), bytes, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    madvise((void *)((unsigned long)r & ~4095UL), bytes, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    memset(s, rank + 1, bytes);
    memset(r, 0, bytes);

    int warm = lat_iters / 10 > 0 ? lat_iters / 10 : 1;
    double t0 = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < warm + lat_iters; i++) {
        if (i == warm) t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(s, small, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(r, small, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(r, small, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(s, small, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
        }
    }
    double lat = (MPI_Wtime() - t0) * 1e6 / (2.0 * lat_iters);

    MPI_Request req[WINDOW];
    warm = bw_iters / 10 > 0 ? bw_iters / 10 : 1;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < warm + bw_iters; i++) {
        if (i == warm) t0 = MPI_Wtime();
        for (int w = 0; w < WINDOW; w++) {
            if (rank == 0)
                MPI_Isend(s + (size_t)w * large, large, MPI_CHAR, peer, 2, MPI_COMM_WORLD,
                          &req[w]);
            else
                MPI_Irecv(r + (size_t)w * large, large, MPI_CHAR, peer, 2, MPI_COMM_WORLD,
                          &req[w]);
        }
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        if (rank == 0) MPI_Recv(&ack, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else MPI_Send(&ack, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
    }
    double secs = MPI_Wtime() - t0;
    if (rank == 1 && r[large - 1] != 1) {
        fprintf(stderr, "rank 1: the payload arrived corrupted\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (rank == 0) {
        printf("lat %ld %.6f\n", small, lat);
        printf("bw %ld %.3f\n", large, (double)large * WINDOW * bw_iters / secs / 1e6);
    }
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
