/* An independent pointer chase, written apart from numascope's lat.c, following multichase's
 * method: one pointer per STRIDE bytes (multichase's default 256: with 64 B, the adjacent-line
 * and spatial prefetchers serve part of the misses), a random order (in "tlb" mode shuffled
 * inside 256 KiB windows and the windows shuffled; in "random" mode over the whole buffer), a
 * chain of dependent loads timed over repeated samples (median reported).
 *
 *   chase_peer BYTES tlb|random none|thp CPU SAMPLES [STRIDE]
 *       ->  prints "ns_per_load <median> stride <STRIDE>"
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t rng = 88172645463325252ULL;
static uint64_t xorshift(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

static void shuffle(size_t *a, size_t n) {   /* Fisher-Yates */
    for (size_t i = n; i > 1; i--) {
        size_t j = xorshift() % i;
        size_t t = a[i - 1]; a[i - 1] = a[j]; a[j] = t;
    }
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: %s BYTES tlb|random none|thp CPU SAMPLES [STRIDE]\n", argv[0]);
        return 2;
    }
    size_t bytes = strtoull(argv[1], NULL, 10), line = argc == 7 ? strtoull(argv[6], NULL, 10) : 256;
    if (line < sizeof(char *) || (line & (line - 1)) || bytes / line < 2) {
        fprintf(stderr, "STRIDE must be a power of two >= %zu with two lines in BYTES\n", sizeof(char *));
        return 2;
    }
    size_t n = bytes / line;
    int tlb = !strcmp(argv[2], "tlb"), thp = !strcmp(argv[3], "thp");
    int cpu = atoi(argv[4]), samples = atoi(argv[5]);
    cpu_set_t set; CPU_ZERO(&set); CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) { perror("affinity"); return 1; }
    char *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) { perror("mmap"); return 1; }
    madvise(buf, bytes, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    memset(buf, 0, bytes);
    size_t *order = malloc(n * sizeof *order);
    size_t win = tlb ? (256 * 1024) / line : n;
    if (win < 2) win = 2;
    size_t nwin = (n + win - 1) / win;
    size_t *wins = malloc(nwin * sizeof *wins);
    for (size_t w = 0; w < nwin; w++) wins[w] = w;
    shuffle(wins, nwin);
    size_t k = 0;
    for (size_t w = 0; w < nwin; w++) {
        size_t first = wins[w] * win, len = first + win > n ? n - first : win;
        for (size_t i = 0; i < len; i++) order[k + i] = first + i;
        shuffle(order + k, len);
        k += len;
    }
    for (size_t i = 0; i < n; i++)
        *(char **)(buf + order[i] * line) = buf + order[(i + 1) % n] * line;
    free(order);
    free(wins);
    char **p = (char **)buf;
    for (size_t i = 0; i < (n < (1u << 22) ? n : (1u << 22)); i++) p = (char **)*p;
    size_t loads = 1 << 20;
    double *ns = malloc(samples * sizeof *ns);
    for (int s = 0; s < samples; s++) {
        double t0 = now();
        for (size_t i = 0; i < loads; i += 8) {
            p = (char **)*p; p = (char **)*p; p = (char **)*p; p = (char **)*p;
            p = (char **)*p; p = (char **)*p; p = (char **)*p; p = (char **)*p;
        }
        ns[s] = (now() - t0) * 1e9 / loads;
    }
    qsort(ns, samples, sizeof *ns, cmp);
    printf("ns_per_load %.3f stride %zu  (end %p)\n", ns[samples / 2], line, (void *)p);
    return 0;
}
