/* chase_peer: an idle-latency pointer chase written from multichase's documented method
 * (its README and usage text), independent of numascope's C. Not multichase itself: Debian
 * packages neither multichase nor lmbench, so this is the peer the latency script builds.
 *
 * Method, as multichase documents it for its default "simple" chase on one thread:
 *  - one element per STRIDE bytes (default 256: adjacent-line and stride prefetchers cannot
 *    serve the next load); each element's pointer sits at a random 8-byte word of its slot,
 *    so the chase does not use only every (STRIDE/64)-th set of the caches;
 *  - the buffer is cut into groups of LOCALITY bytes ("TLB locality", default 64 base pages =
 *    256 KiB); the groups are visited in a random order and the elements inside each group in
 *    a random order, the whole forming ONE cycle through every element. LOCALITY = the buffer
 *    size gives a single random cycle over the whole buffer (every load a likely TLB miss);
 *  - the size is rounded down to a multiple of LOCALITY, LOCALITY to a multiple of STRIDE;
 *  - pages: mmap'd anonymous, madvise(MADV_HUGEPAGE) with -H, MADV_NOHUGEPAGE without it;
 *    the chase is threaded (written) straight after, which is the first touch;
 *  - the thread is pinned; time is cut into samples of fixed duration (multichase: 0.5 s),
 *    the first sample is dropped (parts of the chain may still be in cache), and the BEST
 *    sample is the result (multichase's default; -a there gives the average).
 *  - -p N: multichase's "parallelN" chases, N non-dependent chases alternated in the one
 *    thread over ONE shared arena: every chase visits every element, each in a visiting
 *    order of its own (built as above), and each at its own word of every element (chase k
 *    at word (w_x + k) mod words of element x, w_x random per element: no two chases share
 *    a word, so the stride must hold N pointers). A step advances every chase once; the
 *    figure is ns per step (each chase's latency) and N / ns the loads per ns.
 *
 *   chase_peer -m BYTES [-s STRIDE] [-T LOCALITY] [-H] [-n SAMPLES] [-d SAMPLE_MS] [-c CPU]
 *              [-p N]
 *
 * Prints one "sample NS" line per kept sample (ns per dependent load, per step with -p),
 * then one line
 *   "best NS median NS average NS bytes B stride S locality L huge_fraction F chains N"
 * where huge_fraction is the share of the buffer the kernel backs with huge pages
 * (AnonHugePages of its mapping in /proc/self/smaps). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static uint64_t rng_state = 0x853c49e6748fea9bULL;

static uint64_t rng_next(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* fill a[0..n) with base..base+n-1 in a uniformly random order (inside-out Fisher-Yates) */
static void random_order(size_t *a, size_t n, size_t base) {
    for (size_t i = 0; i < n; i++) {
        size_t j = rng_next() % (i + 1);
        a[i] = a[j];
        a[j] = base + i;
    }
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int parse_bytes(const char *s, size_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s) return -1;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end) return -1;
    *out = (size_t)v;
    return 0;
}

/* share of [buf, buf+bytes) backed by huge pages, from the smaps entry that holds buf */
static double huge_fraction(const void *buf, size_t bytes) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    char line[512];
    int inside = 0;
    double frac = -1;
    uintptr_t a = (uintptr_t)buf;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = a >= lo && a < hi;
            continue;
        }
        unsigned long kb;
        if (inside && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1) {
            frac = (double)kb * 1024.0 / (double)bytes;
            if (frac > 1) frac = 1;
            break;
        }
    }
    fclose(f);
    return frac;
}

static void usage(const char *me) {
    fprintf(stderr, "usage: %s -m BYTES [-s STRIDE] [-T LOCALITY] [-H] [-n SAMPLES] "
                    "[-d SAMPLE_MS] [-c CPU] [-p N]\n", me);
    exit(2);
}

/* `steps` lockstep steps of N chases, each chase's pointer in a register */
#define PAR(N)                                                                    \
    static void walk##N(char ***q, uint64_t steps) {                             \
        char **r[N];                                                              \
        _Pragma("GCC unroll 32") for (int c = 0; c < N; c++) r[c] = q[c];         \
        for (uint64_t s = 0; s < steps; s++) {                                    \
            _Pragma("GCC unroll 32") for (int c = 0; c < N; c++) r[c] = (char **)*r[c]; \
        }                                                                         \
        _Pragma("GCC unroll 32") for (int c = 0; c < N; c++) q[c] = r[c];         \
    }
PAR(1) PAR(2) PAR(4) PAR(8) PAR(12) PAR(16) PAR(24) PAR(32)
typedef void (*walk_fn)(char ***, uint64_t);
static walk_fn walk_for(int n) {
    switch (n) {
    case 1: return walk1; case 2: return walk2; case 4: return walk4; case 8: return walk8;
    case 12: return walk12; case 16: return walk16; case 24: return walk24;
    case 32: return walk32; default: return NULL;
    }
}

int main(int argc, char **argv) {
    size_t bytes = 256u << 20, stride = 256, locality = 64 * (size_t)sysconf(_SC_PAGESIZE);
    int thp = 0, samples = 5, cpu = -1, chains = 1;
    double sample_ms = 500;
    int c;
    while ((c = getopt(argc, argv, "m:s:T:Hn:d:c:p:")) != -1) {
        switch (c) {
        case 'm': if (parse_bytes(optarg, &bytes)) usage(argv[0]); break;
        case 's': if (parse_bytes(optarg, &stride)) usage(argv[0]); break;
        case 'T': if (parse_bytes(optarg, &locality)) usage(argv[0]); break;
        case 'H': thp = 1; break;
        case 'n': samples = atoi(optarg); break;
        case 'd': sample_ms = atof(optarg); break;
        case 'c': cpu = atoi(optarg); break;
        case 'p': chains = atoi(optarg); break;
        default: usage(argv[0]);
        }
    }
    if (optind != argc || samples < 1 || sample_ms <= 0) usage(argv[0]);
    walk_fn walk = walk_for(chains);
    if (!walk) {
        fprintf(stderr, "-p takes 1, 2, 4, 8, 12, 16, 24 or 32 chases\n");
        return 2;
    }
    if ((size_t)chains > stride / sizeof(void *)) {
        fprintf(stderr, "-p %d: a stride of %zu B holds only %zu pointers\n", chains, stride,
                stride / sizeof(void *));
        return 2;
    }
    if (stride < sizeof(void *) || stride % sizeof(void *)) {
        fprintf(stderr, "stride must be a multiple of %zu\n", sizeof(void *));
        return 2;
    }
    locality = locality < stride ? stride : locality - locality % stride;
    if (bytes < locality) {
        bytes = bytes < stride ? stride : bytes - bytes % stride;
        locality = bytes;
    } else {
        bytes -= bytes % locality;
    }
    size_t n = bytes / stride, per_group = locality / stride, groups = bytes / locality;
    if (n < 2) {
        fprintf(stderr, "the buffer holds fewer than two elements\n");
        return 2;
    }
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set)) { perror("sched_setaffinity"); return 1; }
    }

    char *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) { perror("mmap"); return 1; }
    if (madvise(buf, bytes, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) perror("madvise");

    /* per chase: its visiting order (groups shuffled, elements shuffled inside each group),
     * checked to be a permutation, then threaded through the chase's word of each element */
    size_t *order = malloc(n * sizeof *order), *gorder = malloc(groups * sizeof *gorder);
    size_t words = stride / sizeof(void *);
    uint16_t *w0 = malloc(n * sizeof *w0);      /* element x: chase k at word w0[x] + k */
    unsigned char *seen = malloc(n);
    if (!order || !gorder || !w0 || !seen) { perror("malloc"); return 1; }
    for (size_t i = 0; i < n; i++) w0[i] = (uint16_t)(rng_next() % words);
    char **p[32];
    for (int k = 0; k < chains; k++) {
        random_order(gorder, groups, 0);
        for (size_t g = 0; g < groups; g++)
            random_order(order + g * per_group, per_group, gorder[g] * per_group);
        memset(seen, 0, n);
        for (size_t j = 0; j < n; j++) {
            if (order[j] >= n || seen[order[j]]++) {
                fprintf(stderr, "internal error: the visiting order is not a permutation\n");
                return 1;
            }
        }
#define AT(x) (buf + (x) * stride + ((w0[x] + (size_t)k) % words) * sizeof(void *))
        for (size_t j = 0; j < n; j++)
            *(char **)AT(order[j]) = AT(order[(j + 1) % n]);
        p[k] = (char **)AT(order[0]);
#undef AT
    }
    free(gorder);
    free(order);
    free(w0);
    free(seen);

    /* samples of fixed duration; the clock is read once per 1024 dependent loads of a
     * chase (steps) */
    double *ns = malloc((size_t)(samples + 1) * sizeof *ns);
    if (!ns) { perror("malloc"); return 1; }
    uint64_t span = (uint64_t)(sample_ms * 1e6);
    for (int s = 0; s <= samples; s++) {
        uint64_t steps = 0, t0 = now_ns(), t;
        do {
            walk(p, 1024);
            steps += 1024;
            t = now_ns();
        } while (t - t0 < span);
        ns[s] = (double)(t - t0) / (double)steps;
    }
    double *kept = ns + 1, sum = 0;  /* the first sample is dropped */
    for (int s = 0; s < samples; s++) {
        printf("sample %.3f\n", kept[s]);
        sum += kept[s];
    }
    qsort(kept, (size_t)samples, sizeof *kept, by_value);
    double median = samples % 2 ? kept[samples / 2]
                                : (kept[samples / 2 - 1] + kept[samples / 2]) / 2;
    uintptr_t end = 0;
    for (int k = 0; k < chains; k++) end ^= (uintptr_t)p[k];    /* the walks are used */
    printf("best %.3f median %.3f average %.3f bytes %zu stride %zu locality %zu "
           "huge_fraction %.3f chains %d end %#lx\n", kept[0], median, sum / samples, bytes,
           stride, locality, huge_fraction(buf, bytes), chains, (unsigned long)end);
    return 0;
}
