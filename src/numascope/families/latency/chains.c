/* Memory-level parallelism: N independent pointer chases walked in lockstep by one thread.
 *
 * Two layouts of the N chases over the buffer:
 *  - arena (the default, multichase's "parallel" chases): the buffer is one arena of
 *    elements of `stride` bytes, each element holding stride/8 pointer slots. Every chase
 *    visits every element, in its own Sattolo cycle (lat.c's build_order with its own
 *    seed: the same "tlb" or "random" order as `lat`), and chase k keeps its pointer in
 *    element x at slot mix[x mod M][k], M the power of two at or above N, each mix[i] a
 *    random permutation of the slots (multichase's mixer): no two chases share a slot,
 *    and the lines of an element are used by the chases alike. N <= stride/8.
 *  - regions: the buffer is cut into N equal regions, each holding one chase's cycle, its
 *    pointer at the start of each element (numascope's first layout; at a stride of two
 *    lines or more it touches only the first line of every 128 B pair, which an adjacent-
 *    line prefetcher doubles and which caps the misses a core keeps in flight below what
 *    the core can: a labelled variant, not the default).
 * One pinned thread advances all N pointers each step. Within one chain every load depends
 * on the one before; across chains nothing does, so an out-of-order core keeps up to N
 * misses in flight, as many as its miss buffers (line fill buffers, MSHRs) allow. With
 * N = 1 this is `lat`'s chase. The time per step is the latency each chain sees; N / (ns
 * per step) is the loads per ns the core sustains.
 *
 * One function per N (1..CHAINS_MAX), the chain loop fully unrolled so the N pointers live
 * in registers (or spill slots beyond 15) and never in an array indexed at run time, and
 * not vectorised: a gather would not be the N scalar loads we mean to time.
 *
 * Validation: up to 2^22 lines in all, each chain is walked alone first and must return to
 * its head after exactly its number of lines (one cycle over every line of its region);
 * always, after the timed samples every chain must sit on the line its cycle predicts
 * for the steps it was asked to make. A failure is an error, never a result.
 * Ctrl-C: the build and the walks check ns_interrupted between pieces of ~1 Mi loads. */
#include "ns.h"
#include "memory.h"
#include "team.h"
#include "chase.h"
#include "hist.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAINS_MAX 64
#define CHAINS_MAX_SAMPLES 100000
#define CHECK_EVERY ((size_t)1 << 20)   /* loads between Ctrl-C checks */
#define WALK_LINES ((size_t)1 << 22)    /* up to this many lines in all: every cycle walked */
#define ENDS 10                         /* no pass, and groups of 1, 2, 4 ... 256 steps */

#define NOVEC __attribute__((optimize("no-tree-vectorize", "no-tree-slp-vectorize")))
#define DEFINE_WALK(N)                                                        \
    static NOVEC void walk_##N(void **p, size_t steps) {                      \
        void *q[N];                                                           \
        _Pragma("GCC unroll 64") for (int c = 0; c < N; c++) q[c] = p[c];     \
        for (size_t s = 0; s < steps; s++) {                                  \
            _Pragma("GCC unroll 64") for (int c = 0; c < N; c++)              \
                q[c] = *(void **)q[c];                                        \
        }                                                                     \
        _Pragma("GCC unroll 64") for (int c = 0; c < N; c++) p[c] = q[c];     \
    }
#define W8(a) DEFINE_WALK(a##1) DEFINE_WALK(a##2) DEFINE_WALK(a##3) DEFINE_WALK(a##4) \
    DEFINE_WALK(a##5) DEFINE_WALK(a##6) DEFINE_WALK(a##7) DEFINE_WALK(a##8)
DEFINE_WALK(1) DEFINE_WALK(2) DEFINE_WALK(3) DEFINE_WALK(4) DEFINE_WALK(5) DEFINE_WALK(6)
DEFINE_WALK(7) DEFINE_WALK(8) DEFINE_WALK(9)
W8(1) DEFINE_WALK(10) DEFINE_WALK(19)
W8(2) DEFINE_WALK(20) DEFINE_WALK(29)
W8(3) DEFINE_WALK(30) DEFINE_WALK(39)
W8(4) DEFINE_WALK(40) DEFINE_WALK(49)
W8(5) DEFINE_WALK(50) DEFINE_WALK(59)
DEFINE_WALK(60) DEFINE_WALK(61) DEFINE_WALK(62) DEFINE_WALK(63) DEFINE_WALK(64)

typedef void (*walk_fn)(void **, size_t);
#define T8(a) walk_##a##1, walk_##a##2, walk_##a##3, walk_##a##4, walk_##a##5, walk_##a##6, \
    walk_##a##7, walk_##a##8, walk_##a##9
static const walk_fn walks[CHAINS_MAX + 1] = {
    NULL, walk_1, walk_2, walk_3, walk_4, walk_5, walk_6, walk_7, walk_8, walk_9,
    walk_10, T8(1), walk_20, T8(2), walk_30, T8(3), walk_40, T8(4), walk_50, T8(5),
    walk_60, walk_61, walk_62, walk_63, walk_64,
};

typedef struct {
    /* inputs */
    size_t stride, window_lines, nchains, lines;   /* lines: per chain (its cycle's length) */
    int arena;                     /* 1: arena layout, 0: regions (see the top) */
    size_t slots, mixers;          /* arena: pointer slots per element, mixer rows */
    uint16_t *mix;                 /* arena: mixers x slots, each row a permutation */
    uint64_t seed;
    ns_mem_spec spec;
    int nsamples;
    size_t steps;                  /* lockstep steps per sample (each: nchains loads) */
    /* state */
    char *buf;
    size_t bytes;                  /* mapped */
    uint32_t *order;               /* one chain's visiting order at a time (the build's) */
    size_t ends[ENDS];             /* the steps every chain will have made, mod lines: [0]
                                      with no distribution pass, [j] with a pass timing
                                      groups of end_group[j] steps (hist.h) */
    int end_group[ENDS];
    void **want;                   /* nchains x ENDS: where each chain must then sit */
    void *p[CHAINS_MAX];
    char err[256];
    /* outputs */
    double *ns, *tsc;              /* per sample: ns and TSC ticks per step */
    size_t cycle_walked;           /* lines per chain walked in the check, 0 if not */
    hist_t hist;                   /* the steps' distribution: a pass after the samples */
    int ok;
} chains_t;

/* Where chain k's pointer sits in line (element) x. */
static inline char *slot_of(const chains_t *c, size_t k, size_t x) {
    char *e = c->buf + x * c->stride;
    return c->arena ? e + (size_t)c->mix[(x & (c->mixers - 1)) * c->slots + k] * sizeof(void *)
                    : e;
}

/* Chain k's visiting order (arena: of every element; regions: of its region's). */
static int chain_order(chains_t *c, size_t k, uint32_t *o) {
    if (!build_order(o, c->lines, c->window_lines, c->seed + k)) return 0;
    if (!c->arena)
        for (size_t i = 0; i < c->lines; i++) o[i] += (uint32_t)(k * c->lines);
    return 1;
}

/* splitmix64: the mixers' permutations */
static uint64_t mix_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The steps each chain will have made when the walk ends, mod its lines, for every group
 * size the distribution pass may choose: warm-up (a full cycle walked, or a fixed part),
 * the samples, then the pass's chunks x groups x g. Known before the build, so that each
 * chain's order is needed only while it is threaded (it is not kept: 4 B per line per
 * chain, which an arena of 32 chains over 1 GiB would make 512 MiB). */
static void chains_ends(chains_t *c) {
    size_t warm = c->nchains * c->lines <= WALK_LINES ? 0 : (WALK_LINES / c->nchains) % c->lines;
    size_t base = (warm + ((size_t)c->nsamples * (c->steps % c->lines)) % c->lines) % c->lines;
    c->ends[0] = base;
    c->end_group[0] = 0;
    for (int j = 1; j < ENDS; j++) {     /* the group asked, or each the pass may choose */
        size_t g = c->hist.asked > 0 ? (size_t)c->hist.asked : (size_t)1 << (j - 1);
        size_t per = (c->hist.groups * g) % c->lines, d = base;
        for (int k = 0; k < c->hist.chunks; k++) d = (d + per) % c->lines;
        c->ends[j] = d;
        c->end_group[j] = (int)g;
    }
}

static int chains_build(chains_t *c) {
    size_t total = c->arena ? c->lines : c->nchains * c->lines;   /* elements in the buffer */
    c->order = malloc(sizeof(uint32_t) * c->lines);
    c->want = malloc(sizeof(void *) * c->nchains * ENDS);
    if (!c->order || !c->want) {
        snprintf(c->err, sizeof c->err, "out of memory for the permutations");
        return 0;
    }
    chains_ends(c);
    if (c->arena) {
        c->mix = malloc(sizeof(uint16_t) * c->mixers * c->slots);
        if (!c->mix) { snprintf(c->err, sizeof c->err, "out of memory for the mixers"); return 0; }
        uint64_t s = c->seed ^ 0x6d69786572ULL;
        for (size_t m = 0; m < c->mixers; m++) {             /* Fisher-Yates, inside out */
            uint16_t *row = c->mix + m * c->slots;
            for (size_t i = 0; i < c->slots; i++) {
                size_t j = (size_t)(mix_next(&s) % (i + 1));
                row[i] = row[j];
                row[j] = (uint16_t)i;
            }
        }
    }
    /* fault every page in, in address order, on this (pinned) thread: first touch */
    size_t len = total * c->stride;
    for (size_t off = 0; off < len; off += 4096) {
        if (off % (CHECK_EVERY * 64) == 0 && ns_interrupted) return 0;
        c->buf[off] = 0;
    }
    for (size_t k = 0; k < c->nchains; k++) {
        if (ns_interrupted) return 0;
        uint32_t *o = c->order;
        if (!chain_order(c, k, o)) {
            snprintf(c->err, sizeof c->err, "out of memory for the permutations");
            return 0;
        }
        for (size_t i = 0; i < c->lines; i++) {
            if (i % CHECK_EVERY == 0 && ns_interrupted) return 0;
            size_t a = o[i], b = o[i + 1 == c->lines ? 0 : i + 1];
            *(void **)slot_of(c, k, a) = slot_of(c, k, b);
        }
        c->p[k] = slot_of(c, k, o[0]);
        for (int j = 0; j < ENDS; j++) c->want[k * ENDS + j] = slot_of(c, k, o[c->ends[j]]);
    }
    return 1;
}

/* `steps` lockstep steps in pieces, stopping on Ctrl-C; returns the steps made. */
static size_t walk_checked(chains_t *c, size_t steps) {
    walk_fn w = walks[c->nchains];
    size_t piece = CHECK_EVERY / c->nchains, done = 0;
    while (done < steps && !ns_interrupted) {
        size_t k = steps - done < piece ? steps - done : piece;
        w(c->p, k);
        done += k;
    }
    return done;
}

/* Each chain alone, from its head back to it: must take exactly `lines` loads. */
static int chains_walk_cycles(chains_t *c) {
    for (size_t k = 0; k < c->nchains; k++) {
        void *head = c->p[k], *q = head;
        size_t n = 0;
        do {
            if (n % CHECK_EVERY == 0 && ns_interrupted) return 0;
            q = *(void **)q;
            n++;
        } while (q != head && n <= c->lines);
        if (n != c->lines) {
            snprintf(c->err, sizeof c->err, "chain %zu is not one cycle over its %zu lines "
                     "(cycle of %zu)", k, c->lines, n);
            return 0;
        }
    }
    c->cycle_walked = c->lines;
    return 1;
}

/* The distribution of lockstep steps (hist.h's pass, after the samples): groups of g steps
 * timed between serialising timestamps, g the smallest power of two whose group lasts 4x
 * the timer (1 on DRAM), the overhead of empty intervals (the same call with no step)
 * subtracted. A step's time is the latency each chain saw with `nchains` misses in flight.
 * *done counts the steps made, mod lines, for the validation. 0 on Ctrl-C. */
static int chains_hist(chains_t *c, size_t *done) {
    hist_t *h = &c->hist;
#if defined(__x86_64__)
    if (h->chunks < 1 || !h->counts || !h->empty) return 1;
#else
    return 1;                   /* no serialising timestamp here: no distribution */
#endif
    walk_fn w = walks[c->nchains];
    memset(h->counts, 0, sizeof(uint32_t) * (size_t)h->chunks * HIST_BUCKETS);
    h->done = 0;
    uint64_t prev = stamp();
    for (size_t k = 0; k < HIST_EMPTY; k++) {
        w(c->p, 0);
        uint64_t t = stamp(), d = t - prev;
        prev = t;
        h->empty[k] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
    }
    hist_overhead(h);
    uint64_t o = (uint64_t)(h->overhead + 0.5);
    int g = hist_group(h, hist_median(c->tsc, c->nsamples));   /* h->asked when given */
    h->group = g;
    double t0 = ns_now();
    uint64_t r0 = ns_rdtsc();
    for (int k = 0; k < h->chunks; k++) {
        uint32_t *counts = h->counts + (size_t)k * HIST_BUCKETS;
        prev = stamp();
        for (size_t i = 0; i < h->groups; i++) {
            w(c->p, (size_t)g);
            uint64_t t = stamp(), d = t - prev;
            prev = t;
            counts[hist_index(d > o ? d - o : 0)]++;
            if ((i & 16383) == 16383 && ns_interrupted) return 0;
        }
        *done = (*done + (h->groups * (size_t)g) % c->lines) % c->lines;
    }
    uint64_t r1 = ns_rdtsc();
    double t1 = ns_now();
    h->tsc_ghz = t1 > t0 ? (double)(r1 - r0) / ((t1 - t0) * 1e9) : 0;
    h->done = 1;
    return 1;
}

static void chains_fn(int tid, int nt, void *arg) {
    chains_t *c = arg;
    c->ok = 0;
    if (!chains_build(c)) return;
    size_t done = 0;                 /* steps made by every chain since its head, mod lines */
    if (c->nchains * c->lines <= WALK_LINES) {
        if (!chains_walk_cycles(c)) return;     /* also the warm-up */
    } else {
        size_t warm = WALK_LINES / c->nchains;
        if (walk_checked(c, warm) < warm) return;
        done = warm % c->lines;
    }
    for (int s = 0; s < c->nsamples; s++) {
        double t0 = ns_now();
        uint64_t r0 = ns_rdtsc();
        size_t made = walk_checked(c, c->steps);
        uint64_t r1 = ns_rdtsc();
        double t1 = ns_now();
        if (made < c->steps) return;             /* Ctrl-C */
        c->ns[s] = (t1 - t0) * 1e9 / (double)c->steps;
        c->tsc[s] = (double)(r1 - r0) / (double)c->steps;
        done = (done + c->steps % c->lines) % c->lines;
    }
    if (!chains_hist(c, &done)) return;          /* Ctrl-C */
    int end = 0;                                 /* which of the foreseen ends was made */
    if (c->hist.done)
        for (end = 1; end < ENDS && c->end_group[end] != c->hist.group; end++) {}
    if (end >= ENDS || c->ends[end] != done) {
        snprintf(c->err, sizeof c->err, "the walk made %zu steps mod %zu, not the %zu "
                 "foreseen", done, c->lines, end < ENDS ? c->ends[end] : (size_t)0);
        return;
    }
    for (size_t k = 0; k < c->nchains; k++) {
        if (c->p[k] != c->want[k * ENDS + end]) {
            snprintf(c->err, sizeof c->err, "chain %zu ended on the wrong line: it did not "
                     "make its %zu steps per sample", k, c->steps);
            return;
        }
    }
    c->ok = 1;
}

static PyObject *floats(const double *v, int n) {
    PyObject *l = PyList_New(n);
    for (int i = 0; i < n; i++) PyList_SET_ITEM(l, i, PyFloat_FromDouble(v[i]));
    return l;
}

static void chains_free(chains_t *c) {
    if (c->buf) ns_mem_free(c->buf, c->bytes, &c->spec);
    free(c->order);
    free(c->want);
    free(c->mix);
    free(c->ns);
    free(c->tsc);
    hist_free(&c->hist);
}

/* Python: lat_chains(bytes, cpu, chains, memory, mode, window, samples, loads, stride, seed,
 *   hist_groups, hist_group, layout) -> dict: per sample "ns" and "tsc" per step (each
 *   step: one load on every chain), "steps" per sample, "lines" per chain, "cycle_walked",
 *   "where", "huge_fraction", "seconds", "hist" (the steps' distribution, hist.h; None
 *   without the pass; hist_groups 0: no pass; hist_group: steps per timed group, 0 for
 *   the pass's choice), and "params": every parameter as the walk used it.
 *   Every argument is required and none has a default here: the values come from the
 *   latency family's option table and LatencyParams (families/latency/options.py,
 *   bench.py, via chains.py), the one place they are declared; missing ones are a
 *   TypeError, invalid ones a ValueError. `memory` None is first touch; `loads` is per
 *   sample over all chains (steps = loads / chains, at least 1); `window` (bytes) is the
 *   tlb mode's window and must hold two lines (in random mode it is not used); `layout`
 *   "arena" (at most stride/8 chains) or "regions" (see the top). */
static PyObject *py_lat_chains(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kws[] = {"bytes", "cpu", "chains", "memory", "mode", "window", "samples",
                          "loads", "stride", "seed", "hist_groups", "hist_group", "layout",
                          NULL};
    Py_ssize_t bytes, nch, window, loads, stride, hist_groups;
    int cpu, samples, hist_group;
    PyObject *memory;
    const char *mode, *layout;
    unsigned long long seed;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ninOsninnKnis", kws, &bytes, &cpu, &nch,
                                     &memory, &mode, &window, &samples, &loads, &stride, &seed,
                                     &hist_groups, &hist_group, &layout))
        return NULL;
    if (nch < 1 || nch > CHAINS_MAX) return ns_value_error("chains must be in [1, %d]", CHAINS_MAX);
    if (stride < (Py_ssize_t)sizeof(void *) || (stride & (stride - 1)))
        return ns_value_error("stride must be a power of two of at least %zu bytes", sizeof(void *));
    int arena;
    if (!strcmp(layout, "arena")) arena = 1;
    else if (!strcmp(layout, "regions")) arena = 0;
    else return ns_value_error("unknown chain layout '%s' (arena or regions)", layout);
    size_t slots = (size_t)stride / sizeof(void *);
    if (arena && ((size_t)nch > slots || slots > 65535))
        return ns_value_error("the arena layout holds at most stride/8 chains: %zd chains "
                              "need a stride of at least %zd B", nch, nch * (Py_ssize_t)sizeof(void *));
    if (bytes < 0 || (size_t)bytes / (size_t)stride / (arena ? 1 : (size_t)nch) < 2)
        return ns_value_error("each of the %zd chains needs at least two lines of %zd B",
                              nch, stride);
    if ((size_t)bytes / (size_t)stride >= UINT32_MAX) return ns_value_error("buffer too large");
    if (samples < 1 || samples > CHAINS_MAX_SAMPLES)
        return ns_value_error("samples must be in [1, %d]", CHAINS_MAX_SAMPLES);
    if (loads < 1) return ns_value_error("loads per sample must be >= 1");
    if (window < 0) return ns_value_error("window must be >= 0 bytes");
    size_t window_lines;
    if (!strcmp(mode, "random")) window_lines = 0;
    else if (!strcmp(mode, "tlb")) {
        if (window / stride < 2)
            return ns_value_error("a tlb window of %zd B holds fewer than two %zd B lines",
                                  window, stride);
        window_lines = (size_t)window / (size_t)stride;
    } else return ns_value_error("unknown chase mode '%s' (tlb or random)", mode);
    if (ns_clear_interrupt() < 0) return NULL;
    chains_t c;
    memset(&c, 0, sizeof c);
    c.stride = stride;
    c.window_lines = window_lines;
    c.nchains = nch;
    c.arena = arena;
    c.slots = slots;
    for (c.mixers = 1; c.mixers < (size_t)nch; c.mixers *= 2) {}
    c.lines = (size_t)bytes / (size_t)stride / (arena ? 1 : (size_t)nch);
    c.seed = seed;
    c.nsamples = samples;
    c.steps = (size_t)loads / (size_t)nch ? (size_t)loads / (size_t)nch : 1;
    if (!ns_mem_spec_from_py(memory, &c.spec)) return NULL;
    c.ns = calloc(samples, sizeof(double));
    c.tsc = calloc(samples, sizeof(double));
    if (!hist_alloc(&c.hist, samples, hist_groups, hist_group, HIST_TAIL_GROUPS)) {
        chains_free(&c);
        return NULL;
    }
    c.bytes = (arena ? c.lines : c.nchains * c.lines) * c.stride;
    c.buf = ns_mem_alloc(c.bytes, &c.spec, c.err, sizeof c.err);
    if (!c.buf || !c.ns || !c.tsc) {
        PyErr_SetString(PyExc_OSError, c.buf ? "out of memory" : c.err);
        chains_free(&c);
        return NULL;
    }
    ns_team *t = ns_team_create(&cpu, 1, c.err, sizeof c.err);
    if (!t) { chains_free(&c); return ns_value_error("%s", c.err); }
    double secs;
    Py_BEGIN_ALLOW_THREADS
    secs = ns_team_run_timed(t, chains_fn, &c);
    ns_team_destroy(t);
    Py_END_ALLOW_THREADS
    if (ns_interrupted) { chains_free(&c); return ns_raise_interrupt(); }
    if (!c.ok) {
        PyErr_Format(PyExc_RuntimeError, "validation failed: %s", c.err);
        chains_free(&c);
        return NULL;
    }
    long counts[NS_MAX_NODES + 1];
    long sampled = ns_mem_where(c.buf, c.bytes, counts, 4096);
    PyObject *where = sampled >= 0 ? ns_where_to_py(counts) : (Py_INCREF(Py_None), Py_None);
    /* the parameters as the walk used them: the record's come from here */
    PyObject *used = Py_BuildValue(
        "{s:n,s:i,s:n,s:s,s:n,s:n,s:i,s:n,s:n,s:K,s:n,s:i,s:s}", "bytes", bytes, "cpu", cpu,
        "chains", nch, "mode", mode, "window", window, "window_lines",
        (Py_ssize_t)window_lines, "samples", samples, "loads", loads, "stride", stride,
        "seed", seed, "hist_groups", hist_groups, "hist_group", hist_group, "layout", layout);
    PyObject *res = Py_BuildValue(
        "{s:N,s:N,s:N,s:n,s:n,s:n,s:n,s:N,s:d,s:d,s:O,s:N,s:N}", "ns", floats(c.ns, samples),
        "tsc", floats(c.tsc, samples), "where", where, "chains", (Py_ssize_t)c.nchains,
        "steps", (Py_ssize_t)c.steps, "lines", (Py_ssize_t)c.lines,
        "cycle_walked", (Py_ssize_t)c.cycle_walked, "bytes", PyLong_FromSize_t(c.bytes),
        "huge_fraction", ns_mem_huge_fraction(c.buf, c.bytes), "seconds", secs,
        "validated", Py_True, "hist", hist_to_py(&c.hist), "params", used);
    chains_free(&c);
    return res;
}

PyMethodDef ns_chains_methods[] = {
    {"lat_chains", (PyCFunction)(void (*)(void))py_lat_chains, METH_VARARGS | METH_KEYWORDS,
     "lat_chains(bytes, cpu, chains, memory, mode, window, samples, loads, stride, seed, "
     "hist_groups, hist_group, layout) -> dict with per-sample ns and TSC ticks per lockstep step of `chains` "
     "independent chases, and the parameters as used; every argument required (the latency "
     "option table gives them)."},
    {NULL, NULL, 0, NULL},
};
