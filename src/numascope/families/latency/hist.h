/* The latency family's histograms of timed loads (lat.c's chase, chains.c's lockstep
 * steps), in hist.c.
 *
 * A pass after the timed samples, which keep their own method: the walk goes on in groups
 * of `group` dependent loads (or lockstep steps), each group timed by `rdtscp; lfence` on
 * both sides (the next group's loads cannot start before the timestamp, and the timestamp
 * waits for the group's loads), one timestamp ending one group and starting the next. The
 * mean of HIST_EMPTY empty intervals (the same loop without a load; the slowest 1 % left
 * out: interrupts) is subtracted from each group as the timer's overhead. The mean, not the
 * median: where the TSC advances in steps (26 ticks every 10 ns on AMD Zen) an interval
 * reads as a whole number of steps and only the mean is unbiased. Group times go into
 * log-linear buckets of TSC ticks (HDR histogram style): exact below 64 ticks, then 32
 * sub-buckets per power of two (each at most 1/32 of its value wide), 2^36 ticks and
 * beyond in the last. */
#ifndef NS_LAT_HIST_H
#define NS_LAT_HIST_H
#include "ns.h"
#include <stddef.h>
#include <stdint.h>

#define HIST_SUB_BITS 5
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_TOP_BITS 36
#define HIST_BUCKETS ((HIST_TOP_BITS - HIST_SUB_BITS + 1) * HIST_SUB)   /* 1024 */
#define HIST_MAX_CHUNKS 64
#define HIST_MAX_GROUP 256
#define HIST_EMPTY 16384        /* empty intervals timed for the overhead */
#define HIST_GROUPS 16384       /* timed groups per chunk unless given (the Python side's
                                   distribution.DIST_GROUPS passes the same) */
#define HIST_TAIL_GROUPS 100000 /* timed groups per pass at least, the chunks together: 100
                                   beyond p99.9 (distribution.MIN_BEYOND, why 100) */

typedef struct {
    int chunks;                 /* histograms, one after the other (one per sample) */
    size_t groups;              /* timed groups per chunk */
    int asked;                  /* loads per group; 0: the smallest power of two whose
                                   group lasts >= 4x the overhead (1 for DRAM) */
    int group;                  /* the loads per group used */
    uint32_t *counts;           /* chunks x HIST_BUCKETS */
    uint32_t *scratch;          /* HIST_BUCKETS: the empty intervals' buckets (unused) */
    uint32_t *empty;            /* HIST_EMPTY empty intervals, ticks */
    double overhead;            /* their trimmed mean (subtracted, rounded) */
    uint32_t empty_p5, empty_p50, empty_p95, step;   /* and how they spread; the TSC's step:
                                   the greatest common divisor of the intervals */
    double tsc_ghz;             /* TSC ticks per ns over the pass (CLOCK_MONOTONIC_RAW) */
    int done;                   /* the pass ran */
} hist_t;

static inline unsigned hist_index(uint64_t v) {
    if (v >> HIST_TOP_BITS) v = ((uint64_t)1 << HIST_TOP_BITS) - 1;
    if (v < 2 * HIST_SUB) return (unsigned)v;
    unsigned shift = (63 - (unsigned)__builtin_clzll(v)) - HIST_SUB_BITS;
    return shift * HIST_SUB + (unsigned)(v >> shift);
}

/* A timestamp that waits for every earlier load to finish and that later instructions
 * cannot pass; "memory": nor does the compiler move a load across it. */
static inline uint64_t stamp(void) {
#if defined(__x86_64__)
    uint32_t lo, hi, aux;
    __asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) :: "memory");
    return ((uint64_t)hi << 32) | lo;
#else
    return 0;
#endif
}

/* The smallest value bucket i holds (the inverse of hist_index). */
uint64_t hist_lower_edge(unsigned i);
/* The overhead and the step from the empty intervals (sorted here). */
void hist_overhead(hist_t *h);
/* The group for a walk of `ticks_per_load` TSC ticks per load (h->asked when given). */
int hist_group(const hist_t *h, double ticks_per_load);
/* The pass's buffers: `chunks` histograms of `groups` groups of `group` loads (0: chosen
 * by the pass), more groups per chunk where the chunks together would hold fewer than
 * HIST_TAIL_GROUPS (the tail is read from them merged). groups == 0: no pass. 0 on bad
 * input or OOM (exception set). */
int hist_alloc(hist_t *h, int chunks, Py_ssize_t groups, int group, Py_ssize_t least);
void hist_free(hist_t *h);
/* The pass's result for Python: None when it did not run (no serialising timestamp on
 * this CPU, or not asked); else the buckets (lower edges in TSC ticks of a group, overhead
 * subtracted; the last bucket open-ended) and the counts per chunk, from the first bucket
 * used to the last; the overhead, how the empty intervals spread, the TSC's step. */
PyObject *hist_to_py(const hist_t *h);
/* The median of n doubles (a copy is sorted; 0 when it cannot be had). */
double hist_median(const double *v, int n);

#endif
