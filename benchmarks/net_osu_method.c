/* An independent program written from the OSU micro-benchmarks' published method
 * (osu_latency, osu_bw of OMB: one send and one receive buffer per rank, reused by every
 * message; OSU's iteration and warm-up counts), for benchmarks/net_peers.py. It shares no
 * code with numascope's src/numascope/families/interconnect/pt2pt.c.
 *
 *   mpicc -O2 -o net_osu_method net_osu_method.c
 *   mpirun -np 1 numactl --physcpubind=0 --membind=0 ./net_osu_method lat 8,4194304 system : \
 *          -np 1 numactl --physcpubind=1 --membind=0 ./net_osu_method lat 8,4194304 system
 *
 * Arguments: TEST (lat | bw), SIZES (comma-separated bytes), PAGES (system: no madvise, the
 * host's THP setting decides, as for stock OSU; thp: madvise the buffers MADV_HUGEPAGE
 * before their first touch; none: MADV_NOHUGEPAGE), then optionally LOOP SKIP LOOP_LARGE
 * SKIP_LARGE (default OMB 7.x's, osu_util.h: lat 10000 100 1000 10, bw 100 10 20 2;
 * "large" is a message above 8192 bytes, OSU's LARGE_MESSAGE_SIZE).
 *
 * The timing is OMB 7.x's (osu_latency.c, osu_bw.c): rank 0 reads MPI_Wtime before and
 * after each timed iteration and sums the intervals.
 *   lat: rank 0 MPI_Send then MPI_Recv, rank 1 the mirror; latency = half the round trip
 *        averaged over LOOP iterations after SKIP, in us.
 *   bw:  rank 0 posts a window of 64 MPI_Isend from its one send buffer, MPI_Waitall, then
 *        waits for a 4-byte ack; rank 1 posts 64 MPI_Irecv into its one receive buffer,
 *        MPI_Waitall, sends the ack; MB/s = size * 64 * LOOP / time / 10^6.
 *
 * Rank 0 prints OSU's table: "# Size  Value" then one "SIZE VALUE" line per size. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define LARGE_MESSAGE_SIZE 8192
#define WINDOW 64
#define MAXSIZES 64

/* pages: 0 system, 1 none, 2 thp */
static char *buffer(size_t bytes, int pages, int fill) {
    void *p = NULL;
    size_t align = pages == 2 && bytes >= (2u << 20) ? (2u << 20) : 4096;
    if (posix_memalign(&p, align, bytes)) return NULL;
    if (pages) madvise(p, bytes, pages == 2 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    memset(p, fill, bytes);           /* first touch by this (bound) rank */
    return p;
}

int main(int argc, char **argv) {
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int pages = argc < 4 ? -1 : !strcmp(argv[3], "system") ? 0 : !strcmp(argv[3], "none") ? 1
                                : !strcmp(argv[3], "thp") ? 2 : -1;
    if (pages < 0 || nranks != 2 || (strcmp(argv[1], "lat") && strcmp(argv[1], "bw"))) {
        if (rank == 0) fprintf(stderr, "usage (2 ranks): net_osu_method lat|bw SIZES "
                                       "system|none|thp [LOOP SKIP LOOP_LARGE SKIP_LARGE]\n");
        MPI_Finalize();
        return 2;
    }
    int lat = !strcmp(argv[1], "lat");
    int loop_small = lat ? 10000 : 100, skip_small = lat ? 100 : 10;
    int loop_large = lat ? 1000 : 20, skip_large = lat ? 10 : 2;
    if (argc >= 8) {
        loop_small = atoi(argv[4]);
        skip_small = atoi(argv[5]);
        loop_large = atoi(argv[6]);
        skip_large = atoi(argv[7]);
    }
    long sizes[MAXSIZES], max = 0;
    int n = 0;
    for (char *tok = strtok(argv[2], ","); tok && n < MAXSIZES; tok = strtok(NULL, ",")) {
        sizes[n] = atol(tok);
        if (sizes[n] > max) max = sizes[n];
        n++;
    }
    char *s_buf = buffer((size_t)max, pages, 'a'), *r_buf = buffer((size_t)max, pages, 'b');
    if (!s_buf || !r_buf) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Request req[WINDOW];
    if (rank == 0) printf("# Size %s\n", lat ? "Latency (us)" : "Bandwidth (MB/s)");
    for (int k = 0; k < n; k++) {
        int size = (int)sizes[k];
        int loop = size > LARGE_MESSAGE_SIZE ? loop_large : loop_small;
        int skip = size > LARGE_MESSAGE_SIZE ? skip_large : skip_small;
        double t_start = 0, t_total = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < loop + skip; i++) {
            if (i >= skip) t_start = MPI_Wtime();
            if (lat && rank == 0) {
                MPI_Send(s_buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(r_buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (lat) {
                MPI_Recv(r_buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(s_buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            } else if (rank == 0) {
                for (int j = 0; j < WINDOW; j++)
                    MPI_Isend(s_buf, size, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &req[j]);
                MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                MPI_Recv(r_buf, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                for (int j = 0; j < WINDOW; j++)
                    MPI_Irecv(r_buf, size, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &req[j]);
                MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                MPI_Send(s_buf, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
            }
            if (i >= skip) t_total += MPI_Wtime() - t_start;    /* rank 0's is printed */
        }
        if (rank == 0) {
            double t = t_total;
            double v = lat ? t * 1e6 / (2.0 * loop) : (double)size * WINDOW * loop / t / 1e6;
            printf("%-10d %.4f\n", size, v);
            fflush(stdout);
        }
    }
    free(s_buf);
    free(r_buf);
    MPI_Finalize();
    return 0;
}
