/* numascope net: MPI point-to-point latency, bandwidth and message rate, the OSU method.
 *
 *   lat   ping-pong between ranks 0 and 1, half the round trip (us)
 *   bw    rank 0 sends a window of W MPI_Isend, rank 1 posts W MPI_Irecv, then a 4-byte ack
 *   bibw  both ranks send and receive a window at once
 *   mbw   N pairs (rank i sends to rank i+N) of bw windows at once: total bandwidth and
 *         message rate
 *
 * Each rank binds itself before allocating: --bind "CPUS@NODE;CPUS@NODE;..." (one entry per
 * rank, CPUS a list such as 0-3,8, NODE a memory node or -1 for none), sched_setaffinity and
 * set_mempolicy(MPOL_BIND), then touches its buffers first. Warm-up iterations, then timed
 * iterations per message size; the timed loops are OSU's (OMB 7.x osu_latency, osu_bw,
 * osu_bibw): the transfers only, no status read and no byte looked at, rank 0 summing the
 * MPI_Wtime interval of each timed iteration (mbw: each rank's whole timed loop, the
 * slowest).
 *
 * Buffers (--buffers): "same" (OSU's method) gives each rank one send and one
 * receive buffer of the largest size, and every message of a window is sent from / received
 * into that one buffer; "distinct" gives every window slot its own buffer (a window x the
 * largest size per rank: what an application streaming fresh data sees). Pages (--pages):
 * system (no madvise: the host's THP setting decides, as for stock OSU), none
 * (MADV_NOHUGEPAGE), thp (MADV_HUGEPAGE, 2 MiB aligned).
 *
 * After all timed loops, an untimed validation pass (--check-iters N times per size) runs
 * each test again with the timed loop's calls and window: every message with a pattern that
 * differs per message, per iteration and per sender (a counter mixed into each 8-byte
 * word), and the receiver checks its byte count (MPI_Get_count) and every byte of every
 * message (see check_window for the one-buffer mode). Everything is printed by rank 0 as
 * JSON lines:
 *
 *   {"type":"rank","rank":0,"host":"h","cpu":3,"cpus":"0-3","node":0,"buf_node":0,...}
 *   {"type":"result","test":"bw","size":8,"iters":100,"window":64,"usec":..,"mbps":..}
 *   {"type":"check","test":"bw","size":8,"window":64,"messages":128,"bytes":1024,
 *    "reused":2,"bad":0,"bad_reused":0,"offset":-1}
 *   {"type":"done"}
 *
 * --sweep 1 (two ranks started by the user's own mpirun/srun, one per host): each rank reads
 * its host's nodes with CPUs (sysfs), and for every (rank 0's node, rank 1's node) both bind
 * to the first allowed CPU of their node with memory on it, allocate and touch new buffers,
 * and run --tests (lat,bw) over the sizes; lines carry "node_a" and "node_b".
 *
 * Every parameter is given on the command line (launch.py writes it from checked values):
 * none has a default here, and a missing one is an error (exit 2) rather than a second
 * default that could disagree with numascope's. Always: --sizes, --iters, --warmup, --large,
 * --large-iters, --large-warmup, --window, --pages system|none|thp, --buffers same|distinct,
 * --check-iters; one launch per test: --test, --pairs, --bind; --sweep 1: --tests.
 *
 * Fault injection for numascope's own tests, acting only when NUMASCOPE_TEST_HOOKS is
 * "falsify-results" too (the fleet's test switch: a hook left in an environment without it
 * does nothing): NUMASCOPE_NET_DIE_RANK=R makes rank R exit(7) after MPI_Init;
 * NUMASCOPE_NET_HANG_RANK=R makes it sleep forever; NUMASCOPE_NET_CORRUPT=SIZE flips the
 * byte at offset SIZE/2 of the first message of SIZE bytes that each sender sends in the
 * validation pass's last iteration (after the pattern is written, before it is sent), and
 * of its one send buffer in that iteration's window into the one receive buffer, which
 * the receiver must catch.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MPOL_BIND_ 2
#define MPOL_F_NODE_ (1 << 0)
#define MPOL_F_ADDR_ (1 << 1)
#define MAXSIZES 64
#define HOSTLEN 64
#define TAG 17
#define ACK 18

static int rank, world;
static int step_a = -1, step_b = -1;     /* --sweep: the node pair being measured */
#define UNSET INT_MIN                    /* a parameter not given (each one is required) */
enum { PAGES_SYSTEM, PAGES_NONE, PAGES_THP };
static const char *const PAGE_WORDS[] = {"system", "none", "thp"};
static int pages = UNSET;                /* --pages: what the buffers are madvised */
static int distinct = UNSET;             /* --buffers distinct: a buffer per window slot */
static int check_iters = UNSET;          /* --check-iters: validation iterations per size */
static long corrupt_size = -1;           /* NUMASCOPE_NET_CORRUPT (tests only) */

static void die(const char *msg) {
    fprintf(stderr, "rank %d: %s\n", rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

/* one entry of --bind for this rank: "0-3,8@1" */
static int parse_bind(const char *spec, int r, cpu_set_t *set, int *node, char *cpus_out) {
    const char *p = spec;
    for (int i = 0; i < r; i++) {
        p = strchr(p, ';');
        if (!p) return -1;
        p++;
    }
    char entry[512];
    size_t n = strcspn(p, ";");
    if (n == 0 || n >= sizeof entry) return -1;
    memcpy(entry, p, n);
    entry[n] = 0;
    char *at = strchr(entry, '@');
    if (!at) return -1;
    *at = 0;
    *node = atoi(at + 1);
    snprintf(cpus_out, 256, "%.255s", entry);
    CPU_ZERO(set);
    if (strcmp(entry, "-") == 0) return 0;     /* unbound */
    char *save = NULL;
    for (char *tok = strtok_r(entry, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int a, b;
        if (sscanf(tok, "%d-%d", &a, &b) == 2) {
            for (int c = a; c <= b; c++) CPU_SET(c, set);
        } else if (sscanf(tok, "%d", &a) == 1) {
            CPU_SET(a, set);
        } else {
            return -1;
        }
    }
    return CPU_COUNT(set) ? 1 : -1;
}

static int buf_node(void *addr) {
    int node = -1;
    if (syscall(SYS_get_mempolicy, &node, NULL, 0, addr, MPOL_F_NODE_ | MPOL_F_ADDR_) != 0)
        return -1;
    return node;
}

static void *alloc_touch(size_t bytes, unsigned char fill) {
    void *p = NULL;
    int thp = pages == PAGES_THP;
    size_t align = thp && bytes >= (2u << 20) ? (2u << 20) : 4096;
    if (posix_memalign(&p, align, bytes ? bytes : 1) != 0) die("cannot allocate buffers");
    /* system: no madvise, the host's THP setting decides (what stock OSU gets) */
    if (thp) madvise(p, bytes, MADV_HUGEPAGE);             /* before the first touch */
    else if (pages == PAGES_NONE) madvise(p, bytes, MADV_NOHUGEPAGE);  /* even "always" */
    memset(p, fill, bytes);       /* first touch by the bound rank */
    return p;
}

/* this process's anonymous memory in transparent huge pages (kB), -1 when unreadable */
static long anon_huge_kb(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long kb = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) break;
    fclose(f);
    return kb;
}

static int parse_sizes(const char *s, long *out) {
    int n = 0;
    char *copy = strdup(s), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && n < MAXSIZES;
         tok = strtok_r(NULL, ",", &save)) {
        out[n++] = atol(tok);
    }
    free(copy);
    return n;
}

static void result(const char *test, long size, int iters, int window, int pairs, double usec,
                   double mbps, double rate) {
    if (rank != 0) return;
    if (step_a >= 0) printf("{\"node_a\":%d,\"node_b\":%d,", step_a, step_b);
    else printf("{");
    printf("\"type\":\"result\",\"test\":\"%s\",\"size\":%ld,\"iters\":%d,\"window\":%d,"
           "\"pairs\":%d,\"usec\":%.6f,\"mbps\":%.6f,\"msg_rate\":%.3f}\n",
           test, size, iters, window, pairs, usec, mbps, rate);
    fflush(stdout);
}

/* The timed loops do only what OSU's do (OMB 7.x osu_latency.c, osu_bw.c, osu_bibw.c): the
 * transfers, no status and no byte looked at, rank 0 summing each timed iteration's
 * MPI_Wtime interval. What arrived is checked by validate(), untimed, afterwards. */
static void run_lat(long size, int iters, int warm, unsigned char *s, unsigned char *r) {
    double total = 0, t_start = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < warm + iters; i++) {
            if (i >= warm) t_start = MPI_Wtime();
            MPI_Send(s, (int)size, MPI_BYTE, 1, TAG, MPI_COMM_WORLD);
            MPI_Recv(r, (int)size, MPI_BYTE, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (i >= warm) total += MPI_Wtime() - t_start;
        }
    } else if (rank == 1) {
        for (int i = 0; i < warm + iters; i++) {
            MPI_Recv(r, (int)size, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(s, (int)size, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
        }
    }
    double usec = total * 1e6 / (2.0 * iters);
    result("lat", size, iters, 1, 1, usec, size / usec, 1e6 / usec);
}

/* bw / bibw / mbw: sender ranks [0,pairs), receivers [pairs, 2*pairs); bidir: both send.
 * bw and bibw: rank 0's summed window times (osu_bw, osu_bibw); mbw: each rank's time from
 * the end of its warm-up to its last window, the slowest rank's. */
static void run_bw(const char *test, long size, int iters, int warm, int window, int pairs,
                   int bidir, unsigned char *s, unsigned char *r) {
    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)window);
    double total = 0, t0 = 0, t_start = 0;
    int active = rank < 2 * pairs;
    int sender = rank < pairs;
    int peer = sender ? rank + pairs : rank - pairs;
    size_t stride = distinct ? (size_t)size : 0;   /* same: every slot is the one buffer */
    char ack[4] = {0};
    MPI_Barrier(MPI_COMM_WORLD);
    if (active) {
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm) t0 = MPI_Wtime();
            if (i >= warm) t_start = MPI_Wtime();
            int nreq = 0;
            if (!sender || bidir)
                for (int w = 0; w < window; w++)
                    MPI_Irecv(r + (size_t)w * stride, (int)size, MPI_BYTE, peer, TAG,
                              MPI_COMM_WORLD, &req[nreq++]);
            if (sender || bidir)
                for (int w = 0; w < window; w++)
                    MPI_Isend(s + (size_t)w * stride, (int)size, MPI_BYTE, peer, TAG,
                              MPI_COMM_WORLD, &req[nreq++]);
            MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
            if (!bidir) {          /* osu_bibw: no ack, both Waitalls pace the window */
                if (sender) MPI_Recv(ack, 4, MPI_BYTE, peer, ACK, MPI_COMM_WORLD,
                                     MPI_STATUS_IGNORE);
                else MPI_Send(ack, 4, MPI_BYTE, peer, ACK, MPI_COMM_WORLD);
            }
            if (i >= warm) total += MPI_Wtime() - t_start;
        }
    }
    double t = pairs > 1 ? (active ? MPI_Wtime() - t0 : 0) : (rank == 0 ? total : 0);
    double tmax = 0;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double expect = (double)size * window * iters * pairs * (bidir ? 2 : 1);
    double msgs = (double)window * iters * pairs * (bidir ? 2 : 1);
    /* MB/s = 10^6 B/s, bytes moved by all pairs (both ways for bibw) over the time */
    result(test, size, iters, window, pairs, tmax * 1e6 / iters, expect / tmax / 1e6,
           msgs / tmax);
    free(req);
}

/* -- the validation pass ------------------------------------------------------------------ */

static uint64_t mix64(uint64_t x) {          /* splitmix64's finaliser */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* the pattern's seed: one per (test, size, iteration, message, sender) */
static uint64_t seed_of(const char *test, long size, int iter, int msg, int from) {
    uint64_t h = 1469598103934665603ULL;
    for (const char *c = test; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    return mix64(h ^ mix64((uint64_t)size ^ ((uint64_t)iter << 32) ^ ((uint64_t)msg << 44)
                           ^ ((uint64_t)from << 56)));
}

/* word k of a message: the seed with the word's counter mixed in */
static inline uint64_t word_of(uint64_t seed, uint64_t k) {
    return seed ^ ((k + 1) * 0x9E3779B97F4A7C15ULL);
}

static void fill(unsigned char *p, long size, uint64_t seed) {
    long k = 0;
    for (; k + 8 <= size; k += 8) {
        uint64_t w = word_of(seed, (uint64_t)k / 8);
        memcpy(p + k, &w, 8);
    }
    if (k < size) {
        uint64_t w = word_of(seed, (uint64_t)k / 8);
        memcpy(p + k, &w, (size_t)(size - k));
    }
}

/* the first byte offset that differs from the pattern, -1 when every byte matches */
static long first_bad(const unsigned char *p, long size, uint64_t seed) {
    for (long k = 0; k < size; k += 8) {
        uint64_t w = word_of(seed, (uint64_t)k / 8);
        size_t n = size - k < 8 ? (size_t)(size - k) : 8;
        if (memcmp(p + k, &w, n) != 0) {
            const unsigned char *b = (const unsigned char *)&w;
            for (size_t j = 0; j < n; j++)
                if (p[k + j] != b[j]) return k + (long)j;
        }
    }
    return -1;
}

struct tally { long msgs, bad, offset, reused, bad_reused; double bytes; };

/* one received message: its byte count, then every byte against the sender's pattern */
static void check_one(struct tally *t, MPI_Status *st, const unsigned char *m, long size,
                      uint64_t seed) {
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    long off = count == size ? first_bad(m, size, seed) : (count < 0 ? 0 : count);
    t->msgs += 1;
    t->bytes += count < 0 ? 0 : count;
    if (off >= 0) {
        t->bad += 1;
        if (t->offset < 0 || off < t->offset) t->offset = off;
    }
}

static void corrupt_maybe(unsigned char *m, long size, int iter, int msg) {
    if (size == corrupt_size && iter == check_iters - 1 && msg == 0) m[size / 2] ^= 0x5A;
}

/* One validation iteration of a window test, the timed loop's calls (Irecv, Isend, Waitall,
 * ack) with `window` messages in flight: each message from its own slot of `vs` with its
 * own pattern into its own slot of `vr`, every byte of every message checked after the
 * Waitall. With one buffer per rank (same), a second window then goes from the one send
 * buffer into the one receive buffer, as timed: the sender's pattern for this iteration
 * in `s`, the receiver checks every message's count and every byte of `r` (the last
 * message's place). */
static void check_window(const char *test, long size, int it, int window, int pairs,
                         int bidir, unsigned char *s, unsigned char *r, unsigned char *vs,
                         unsigned char *vr, MPI_Request *req, MPI_Status *st,
                         struct tally *t) {
    int sender = rank < pairs, peer = sender ? rank + pairs : rank - pairs;
    int sends = sender || bidir, recvs = !sender || bidir;
    char ack[4] = {0};
    for (int pass = 0; pass < (distinct ? 1 : 2); pass++) {
        int reuse = pass == 1;
        unsigned char *out = reuse ? s : vs, *in = reuse ? r : vr;
        size_t stride = reuse ? 0 : (size_t)size;
        if (sends) {
            if (reuse) {
                fill(s, size, seed_of(test, size, it, window, rank));
                corrupt_maybe(s, size, it, 0);
            } else
                for (int j = 0; j < window; j++) {
                    fill(vs + (size_t)j * size, size, seed_of(test, size, it, j, rank));
                    corrupt_maybe(vs + (size_t)j * size, size, it, j);
                }
        }
        int nreq = 0;
        if (recvs)
            for (int j = 0; j < window; j++)
                MPI_Irecv(in + (size_t)j * stride, (int)size, MPI_BYTE, peer, TAG + 2,
                          MPI_COMM_WORLD, &req[nreq++]);
        if (sends)
            for (int j = 0; j < window; j++)
                MPI_Isend(out + (size_t)j * stride, (int)size, MPI_BYTE, peer, TAG + 2,
                          MPI_COMM_WORLD, &req[nreq++]);
        MPI_Waitall(nreq, req, st);
        if (recvs && !reuse)
            for (int j = 0; j < window; j++)
                check_one(t, &st[j], vr + (size_t)j * size, size,
                          seed_of(test, size, it, j, peer));
        if (recvs && reuse) {        /* one bad window: its first wrong byte, or 0 */
            int wrong = 0;
            for (int j = 0; j < window; j++) {
                int count = -1;
                MPI_Get_count(&st[j], MPI_BYTE, &count);
                wrong |= count != size;
            }
            long off = first_bad(r, size, seed_of(test, size, it, window, peer));
            if (wrong || off >= 0) {
                t->bad_reused += 1;
                if (off < 0) off = 0;
                if (t->offset < 0 || off < t->offset) t->offset = off;
            }
            t->reused += 1;
        }
        if (!bidir) {
            if (sender) MPI_Recv(ack, 4, MPI_BYTE, peer, ACK, MPI_COMM_WORLD,
                                 MPI_STATUS_IGNORE);
            else MPI_Send(ack, 4, MPI_BYTE, peer, ACK, MPI_COMM_WORLD);
        }
    }
}

/* The untimed pass after the timed loops, check_iters times per size: lat is the timed
 * ping-pong with a pattern per iteration and direction, checked on arrival; the window
 * tests are check_window(). Rank 0 prints the sums. */
static void validate(const char *test, long size, int window, int pairs, int bidir,
                     unsigned char *s, unsigned char *r, unsigned char *vs,
                     unsigned char *vr) {
    int lat = !strcmp(test, "lat");
    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)window);
    MPI_Status *st = malloc(sizeof(MPI_Status) * 2 * (size_t)window);
    struct tally t = {0, 0, -1, 0, 0, 0};
    int in_pair = rank < 2 * pairs;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = 0; in_pair && it < check_iters; it++) {
        if (lat) {
            int peer = 1 - rank;
            MPI_Status one;
            if (rank == 0) {
                fill(s, size, seed_of(test, size, it, 0, 0));
                corrupt_maybe(s, size, it, 0);
                MPI_Send(s, (int)size, MPI_BYTE, peer, TAG + 2, MPI_COMM_WORLD);
                MPI_Recv(r, (int)size, MPI_BYTE, peer, TAG + 2, MPI_COMM_WORLD, &one);
                check_one(&t, &one, r, size, seed_of(test, size, it, 0, 1));
            } else {
                MPI_Recv(r, (int)size, MPI_BYTE, peer, TAG + 2, MPI_COMM_WORLD, &one);
                check_one(&t, &one, r, size, seed_of(test, size, it, 0, 0));
                fill(s, size, seed_of(test, size, it, 0, 1));
                corrupt_maybe(s, size, it, 0);
                MPI_Send(s, (int)size, MPI_BYTE, peer, TAG + 2, MPI_COMM_WORLD);
            }
        } else {
            check_window(test, size, it, window, pairs, bidir, s, r, vs, vr, req, st, &t);
        }
    }
    long all_msgs = 0, all_bad = 0, all_reused = 0, all_bad_reused = 0,
         off = t.offset < 0 ? LONG_MAX : t.offset, all_off = 0;
    double all_bytes = 0;
    MPI_Reduce(&t.msgs, &all_msgs, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t.bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t.reused, &all_reused, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t.bad_reused, &all_bad_reused, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t.bytes, &all_bytes, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&off, &all_off, 1, MPI_LONG, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (step_a >= 0) printf("{\"node_a\":%d,\"node_b\":%d,", step_a, step_b);
        else printf("{");
        printf("\"type\":\"check\",\"test\":\"%s\",\"size\":%ld,\"window\":%d,"
               "\"messages\":%ld,\"bytes\":%.0f,\"reused\":%ld,\"bad\":%ld,\"bad_reused\":%ld,"
               "\"offset\":%ld}\n", test, size, lat ? 1 : window, all_msgs, all_bytes,
               all_reused, all_bad, all_bad_reused, all_off == LONG_MAX ? -1L : all_off);
        fflush(stdout);
    }
    free(req);
    free(st);
}

/* The validation window's slots, one per message (check_window): the timed buffers
 * themselves with a buffer per slot (distinct); new ones, bound and touched by this rank
 * after the timed loops, with one buffer per rank (same); none for lat. */
static void slots(int lat, long maxsize, int window, int pairs, int bidir, unsigned char *s,
                  unsigned char *r, unsigned char **vs, unsigned char **vr) {
    *vs = s;
    *vr = r;
    if (lat || distinct) return;
    int sender = rank < pairs, in_pair = rank < 2 * pairs;
    size_t bytes = (size_t)maxsize * window;
    *vs = in_pair && (sender || bidir) ? alloc_touch(bytes, 0) : NULL;
    *vr = in_pair && (!sender || bidir) ? alloc_touch(bytes, 0) : NULL;
}

static void free_slots(unsigned char *s, unsigned char *r, unsigned char *vs,
                       unsigned char *vr) {
    if (vs != s) free(vs);
    if (vr != r) free(vr);
}

/* nodes with CPUs on this host, and the first CPU of each allowed to this process */
#define MAXNODES 64
static int host_nodes(int *nodes, int *cpus, int which) {
    cpu_set_t allowed;
    sched_getaffinity(0, sizeof allowed, &allowed);
    int n = 0;
    for (int node = 0; node < 1024 && n < MAXNODES; node++) {
        char path[96], buf[4096];
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = 0;
        int first = -1, second = -1;   /* the first and second allowed CPUs of the node */
        char *save = NULL;
        for (char *tok = strtok_r(buf, ",\n", &save); tok && second < 0;
             tok = strtok_r(NULL, ",\n", &save)) {
            int a, b;
            if (sscanf(tok, "%d-%d", &a, &b) != 2) {
                if (sscanf(tok, "%d", &a) != 1) continue;
                b = a;
            }
            for (int c = a; c <= b && second < 0; c++)
                if (c < CPU_SETSIZE && CPU_ISSET(c, &allowed)) {
                    if (first < 0) first = c;
                    else second = c;
                }
        }
        if (which == 1 && second >= 0) first = second;
        if (first >= 0) {
            nodes[n] = node;
            cpus[n++] = first;
        }
    }
    if (n == 0) {           /* no NUMA in sysfs: one node 0, the first allowed CPU */
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &allowed)) { nodes[0] = 0; cpus[0] = c; return 1; }
    }
    return n;
}

static void bind_to(int cpu, int node) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) die("sched_setaffinity failed");
    unsigned long mask[16] = {0};
    mask[node / 64] = 1UL << (node % 64);
    if (syscall(SYS_set_mempolicy, MPOL_BIND_, mask, 16 * 64 + 1) != 0)
        die("set_mempolicy failed");
}

static void rank_line(const char *host, const char *cpus_text, int node, unsigned char *s,
                      unsigned char *r);

static int run_sweep(const char *tests, long *sizes, int nsizes, int iters, int warm,
                     int large_iters, int large_warm, long large, int window) {
    int nodes[MAXNODES], cpus[MAXNODES], n, all_n[2], all_nodes[2][MAXNODES];
    int all_cpus[2][MAXNODES];
    char host[HOSTLEN];
    gethostname(host, sizeof host);
    host[HOSTLEN - 1] = 0;
    if (world != 2) die("--sweep needs exactly 2 ranks");
    char hosts[2][HOSTLEN];
    MPI_Allgather(host, HOSTLEN, MPI_CHAR, hosts, HOSTLEN, MPI_CHAR, MPI_COMM_WORLD);
    /* both ranks on one host (a rehearsal): rank 1 takes each node's second CPU */
    n = host_nodes(nodes, cpus, rank == 1 && !strcmp(hosts[0], hosts[1]));
    MPI_Allgather(&n, 1, MPI_INT, all_n, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgather(nodes, MAXNODES, MPI_INT, all_nodes, MAXNODES, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgather(cpus, MAXNODES, MPI_INT, all_cpus, MAXNODES, MPI_INT, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < 2; r++) {
            printf("{\"type\":\"host\",\"rank\":%d,\"host\":\"%s\",\"nodes\":[", r, hosts[r]);
            for (int i = 0; i < all_n[r]; i++) printf("%s%d", i ? "," : "", all_nodes[r][i]);
            printf("],\"cpus\":[");
            for (int i = 0; i < all_n[r]; i++) printf("%s%d", i ? "," : "", all_cpus[r][i]);
            printf("]}\n");
        }
        fflush(stdout);
    }
    long maxsize = 0;
    for (int i = 0; i < nsizes; i++) if (sizes[i] > maxsize) maxsize = sizes[i];
    for (int a = 0; a < all_n[0]; a++) {
        for (int b = 0; b < all_n[1]; b++) {
            int mine = rank == 0 ? a : b;
            step_a = all_nodes[0][a];
            step_b = all_nodes[1][b];
            bind_to(cpus[mine], nodes[mine]);
            size_t bytes = (size_t)maxsize * (distinct ? window : 1);
            unsigned char *s = alloc_touch(bytes, rank == 0 ? 0xA0 : 0xB1);
            unsigned char *r = alloc_touch(bytes, 0);
            char cpus_text[32];
            snprintf(cpus_text, sizeof cpus_text, "%d", cpus[mine]);
            rank_line(host, cpus_text, nodes[mine], s, r);
            for (int i = 0; i < nsizes; i++) {
                int big = sizes[i] > large;
                int it = big ? large_iters : iters;
                int wu = big ? large_warm : warm;
                if (strstr(tests, "lat")) run_lat(sizes[i], it, wu, s, r);
                if (strstr(tests, "bw")) run_bw("bw", sizes[i], it, wu, window, 1, 0, s, r);
            }
            unsigned char *vs, *vr;
            slots(!strstr(tests, "bw"), maxsize, window, 1, 0, s, r, &vs, &vr);
            for (int i = 0; i < nsizes; i++) {     /* untimed, after the timed loops */
                if (strstr(tests, "lat")) validate("lat", sizes[i], 1, 1, 0, s, r, s, r);
                if (strstr(tests, "bw")) validate("bw", sizes[i], window, 1, 0, s, r, vs, vr);
            }
            free_slots(s, r, vs, vr);
            free(s);
            free(r);
        }
    }
    if (rank == 0) {
        printf("{\"type\":\"done\",\"cpu_end\":[]}\n");
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}

static int getenv_rank(const char *name) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : -1;
}

/* a fault hook's value, -1 unless the test switch is on (launch.py's HOOKS_SWITCH) */
static int test_hook(const char *name) {
    const char *on = getenv("NUMASCOPE_TEST_HOOKS");
    return on && !strcmp(on, "falsify-results") ? getenv_rank(name) : -1;
}

/* where each rank really is: gathered, printed by rank 0 */
static void rank_line(const char *host, const char *cpus_text, int node, unsigned char *s,
                      unsigned char *r) {
    char line[768];
    int mode = -1;
    unsigned long mask[16] = {0};
    syscall(SYS_get_mempolicy, &mode, mask, 16 * 64 + 1, NULL, 0);
    char step[64] = "";
    if (step_a >= 0) snprintf(step, sizeof step, "\"node_a\":%d,\"node_b\":%d,", step_a, step_b);
    snprintf(line, sizeof line,
             "{%s\"type\":\"rank\",\"rank\":%d,\"host\":\"%s\",\"pid\":%d,\"cpu\":%d,"
             "\"bind_cpus\":\"%s\",\"bind_node\":%d,\"policy\":%d,\"policy_mask\":%lu,"
             "\"send_node\":%d,\"recv_node\":%d,\"pages\":\"%s\",\"thp\":%d,"
             "\"anon_huge_kb\":%ld}",
             step, rank, host, (int)getpid(), sched_getcpu(), cpus_text, node, mode, mask[0],
             buf_node(s), buf_node(r), PAGE_WORDS[pages], pages == PAGES_THP, anon_huge_kb());
    char *all = rank == 0 ? malloc(sizeof line * world) : NULL;
    MPI_Gather(line, sizeof line, MPI_CHAR, all, sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < world; i++) printf("%s\n", all + (size_t)i * sizeof line);
        fflush(stdout);
        free(all);
    }
}

int main(int argc, char **argv) {
    const char *test = NULL, *sizes_s = NULL, *bind = NULL, *tests = NULL;
    int sweep = 0;
    int iters = UNSET, warm = UNSET, window = UNSET, pairs = UNSET, large_iters = UNSET,
        large_warm = UNSET;
    long large = UNSET;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) break;
        if (!strcmp(a, "--test")) test = v;
        else if (!strcmp(a, "--sizes")) sizes_s = v;
        else if (!strcmp(a, "--iters")) iters = atoi(v);
        else if (!strcmp(a, "--warmup")) warm = atoi(v);
        else if (!strcmp(a, "--large-iters")) large_iters = atoi(v);
        else if (!strcmp(a, "--large-warmup")) large_warm = atoi(v);
        else if (!strcmp(a, "--large")) large = atol(v);
        else if (!strcmp(a, "--window")) window = atoi(v);
        else if (!strcmp(a, "--pairs")) pairs = atoi(v);
        else if (!strcmp(a, "--bind")) bind = v;
        else if (!strcmp(a, "--sweep")) sweep = atoi(v);
        else if (!strcmp(a, "--pages"))
            pages = !strcmp(v, "system") ? PAGES_SYSTEM : !strcmp(v, "none") ? PAGES_NONE
                  : !strcmp(v, "thp") ? PAGES_THP : -1;
        else if (!strcmp(a, "--tests")) tests = v;
        else if (!strcmp(a, "--buffers"))
            distinct = !strcmp(v, "distinct") ? 1 : !strcmp(v, "same") ? 0 : -1;
        else if (!strcmp(a, "--check-iters")) check_iters = atoi(v);
        else continue;
        i++;
    }
    struct { int unset; const char *flag; } need[] = {
        {!sizes_s, "--sizes"}, {iters == UNSET, "--iters"}, {warm == UNSET, "--warmup"},
        {large == UNSET, "--large"}, {large_iters == UNSET, "--large-iters"},
        {large_warm == UNSET, "--large-warmup"}, {window == UNSET, "--window"},
        {pages == UNSET, "--pages"}, {distinct == UNSET, "--buffers"},
        {check_iters == UNSET, "--check-iters"}, {sweep && !tests, "--tests"},
        {!sweep && !test, "--test"}, {!sweep && pairs == UNSET, "--pairs"},
        {!sweep && !bind, "--bind"}};
    for (size_t k = 0; k < sizeof need / sizeof need[0]; k++) {
        if (need[k].unset) {
            fprintf(stderr, "pt2pt: %s is required (numascope gives every parameter)\n",
                    need[k].flag);
            return 2;
        }
    }
    if (distinct < 0 || pages < 0) {
        fprintf(stderr, "pt2pt: --buffers same|distinct, --pages system|none|thp\n");
        return 2;
    }
    /* bind before MPI_Init so the library's own allocations follow the policy too */
    cpu_set_t set;
    int node = -1, bound = 0;
    char cpus_text[256] = "-";
    int pre_rank = getenv_rank("OMPI_COMM_WORLD_RANK");
    if (pre_rank < 0) pre_rank = getenv_rank("PMI_RANK");
    if (bind && pre_rank >= 0) {
        bound = parse_bind(bind, pre_rank, &set, &node, cpus_text);
        if (bound < 0) {
            fprintf(stderr, "rank %d: bad --bind entry\n", pre_rank);
            return 2;
        }
        if (bound && sched_setaffinity(0, sizeof set, &set) != 0) {
            fprintf(stderr, "rank %d: sched_setaffinity(%s): %s\n", pre_rank, cpus_text,
                    strerror(errno));
            return 3;
        }
        if (node >= 0) {
            unsigned long mask[16] = {0};
            if (node >= 16 * 64) return 2;
            mask[node / 64] = 1UL << (node % 64);
            if (syscall(SYS_set_mempolicy, MPOL_BIND_, mask, 16 * 64 + 1) != 0) {
                fprintf(stderr, "rank %d: set_mempolicy(bind %d): %s\n", pre_rank, node,
                        strerror(errno));
                return 3;
            }
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (test_hook("NUMASCOPE_NET_DIE_RANK") == rank) exit(7);
    if (test_hook("NUMASCOPE_NET_HANG_RANK") == rank) for (;;) pause();
    corrupt_size = test_hook("NUMASCOPE_NET_CORRUPT");
    if (check_iters < 1) die("--check-iters must be at least 1");
    if (iters < 1 || warm < 0 || large < 0 || large_iters < 1 || large_warm < 0 || window < 1)
        die("bad arguments");

    long sizes[MAXSIZES];
    int nsizes = parse_sizes(sizes_s, sizes);
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] < 1 || sizes[i] > (1L << 26)) die("bad message size");
    if (sweep) return run_sweep(tests, sizes, nsizes, iters, warm, large_iters, large_warm,
                                large, window);
    int mbw = !strcmp(test, "mbw"), bidir = !strcmp(test, "bibw");
    if (!mbw) pairs = 1;
    if (iters < 1 || warm < 0 || window < 1 || pairs < 1 || nsizes < 1) die("bad arguments");
    if (world < 2 * pairs) die("too few ranks for the pairs asked");
    long maxsize = 0;
    for (int i = 0; i < nsizes; i++) {
        if (sizes[i] < 0 || sizes[i] > (1L << 30)) die("bad message size");
        if (sizes[i] > maxsize) maxsize = sizes[i];
    }
    int nbuf = !strcmp(test, "lat") || !distinct ? 1 : window;
    size_t bytes = (size_t)maxsize * nbuf;
    unsigned char *s = alloc_touch(bytes, rank < pairs ? 0xA0 : 0xB1);
    unsigned char *r = alloc_touch(bytes, 0);

    char host[HOSTLEN];
    gethostname(host, sizeof host);
    host[HOSTLEN - 1] = 0;
    rank_line(host, cpus_text, node, s, r);
    for (int i = 0; i < nsizes; i++) {
        int big = sizes[i] > large;
        int it = big ? large_iters : iters;
        int wu = big ? large_warm : warm;
        if (!strcmp(test, "lat")) run_lat(sizes[i], it, wu, s, r);
        else if (!strcmp(test, "bw") || bidir || mbw)
            run_bw(test, sizes[i], it, wu, window, pairs, bidir, s, r);
        else die("unknown --test");
    }
    int lat = !strcmp(test, "lat");
    unsigned char *vs, *vr;
    slots(lat, maxsize, window, pairs, bidir, s, r, &vs, &vr);
    for (int i = 0; i < nsizes; i++)        /* untimed, after the timed loops */
        validate(test, sizes[i], lat ? 1 : window, pairs, bidir, s, r, vs, vr);
    free_slots(s, r, vs, vr);
    /* where the CPU is at the end too (a rank the scheduler moved would show here) */
    int cpu_end = sched_getcpu(), *ends = rank == 0 ? malloc(sizeof(int) * world) : NULL;
    MPI_Gather(&cpu_end, 1, MPI_INT, ends, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("{\"type\":\"done\",\"cpu_end\":[");
        for (int i = 0; i < world; i++) printf("%s%d", i ? "," : "", ends[i]);
        printf("]}\n");
        fflush(stdout);
        free(ends);
    }
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
