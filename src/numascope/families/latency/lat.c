/* Benchmark family 'lat': idle and loaded memory latency by pointer chasing.
 *
 * The buffer is cut into lines of `stride` bytes (given, checked, by the Python side:
 * families/latency/options.py, 256 B by default as multichase): the first word of each holds the address of the next line of one random cycle that visits every
 * line exactly once, so every load depends on the previous one. With one pointer per 64 B the
 * adjacent-line and spatial prefetchers fetch lines the chase visits later and serve part of
 * the misses (latency reads low); 256 B apart, what they fetch is never used. Two orders:
 *   - "tlb":    the lines of each window (a few hundred KiB) are visited in random order, and
 *               the windows themselves in random order (MLC / multichase style: few TLB misses);
 *   - "random": one random cycle over the whole buffer (TLB misses included).
 * Both cycles come from Sattolo's algorithm (a uniformly random permutation with one cycle).
 * Timing is taken in C on the pinned thread, per sample, in ns and TSC ticks.
 *
 * Ctrl-C: every loop longer than a moment (building, the warm-up walk, the samples, the
 * loaders' fill, the delays of loaded latency) checks ns_interrupted between units of work;
 * the call then frees what it allocated and raises KeyboardInterrupt. */
#include "ns.h"
#include "memory.h"
#include "team.h"
#include "chase.h"
#include "hist.h"
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAT_MAX_SAMPLES 100000
#define CHECK_EVERY ((size_t)1 << 20)   /* loads (or lines, words) between Ctrl-C checks */

/* ---- random cycles -------------------------------------------------------------------- */

static inline uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, n). */
static inline size_t rnd_below(uint64_t *s, size_t n) {
    return (size_t)(((unsigned __int128)splitmix(s) * n) >> 64);
}

/* Sattolo: a[] becomes a random cyclic permutation of 0..n-1 (next[i] = a[i]). */
static void sattolo(uint32_t *a, size_t n, uint64_t *s) {
    for (size_t i = 0; i < n; i++) a[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = rnd_below(s, i);      /* j < i: what makes it a single cycle */
        uint32_t t = a[i]; a[i] = a[j]; a[j] = t;
    }
}

/* Visiting order of all `lines` lines: order[k] is the k-th line of the cycle.
 * window_lines == 0 or >= lines means one window (full random). Returns 0 on OOM. */
int build_order(uint32_t *order, size_t lines, size_t window_lines, uint64_t seed) {
    uint64_t s = seed ? seed : 0x5eed;
    if (window_lines == 0 || window_lines > lines) window_lines = lines;
    size_t nwin = (lines + window_lines - 1) / window_lines;
    uint32_t *wnext = malloc(sizeof(uint32_t) * nwin);
    uint32_t *lnext = malloc(sizeof(uint32_t) * window_lines);
    if (!wnext || !lnext) { free(wnext); free(lnext); return 0; }
    if (nwin > 1) sattolo(wnext, nwin, &s); else wnext[0] = 0;
    size_t k = 0;
    uint32_t w = 0;
    for (size_t i = 0; i < nwin; i++) {
        size_t first = (size_t)w * window_lines;
        size_t len = lines - first < window_lines ? lines - first : window_lines;
        if (len > 1) sattolo(lnext, len, &s); else lnext[0] = 0;
        uint32_t l = 0;
        for (size_t j = 0; j < len; j++) {
            order[k++] = (uint32_t)(first + l);
            l = lnext[l];
        }
        w = wnext[w];
    }
    free(wnext);
    free(lnext);
    return k == lines;
}

/* Python: lat_permutation(lines, window_lines=0, seed=1) -> list next[i] (line indices). */
static PyObject *py_lat_permutation(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kws[] = {"lines", "window_lines", "seed", NULL};
    Py_ssize_t lines, window = 0;
    unsigned long long seed = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "n|nK", kws, &lines, &window, &seed)) return NULL;
    if (lines < 2 || lines > (Py_ssize_t)UINT32_MAX) return ns_value_error("lines must be in [2, 2^32)");
    if (window < 0) return ns_value_error("window_lines must be >= 0");
    uint32_t *order = malloc(sizeof(uint32_t) * lines);
    if (!order || !build_order(order, lines, window, seed)) { free(order); return PyErr_NoMemory(); }
    PyObject *l = PyList_New(lines);
    for (Py_ssize_t k = 0; k < lines; k++) {
        PyList_SET_ITEM(l, order[k], PyLong_FromUnsignedLong(order[(k + 1) % lines]));
    }
    free(order);
    return l;
}

/* ---- the chase ------------------------------------------------------------------------ */

typedef struct {
    /* inputs */
    size_t bytes, stride, window_lines;
    uint64_t seed;
    ns_mem_spec spec;
    int nsamples;
    size_t loads;              /* dependent loads per sample */
    /* state */
    char *buf;
    size_t lines;
    uint32_t *order;
    char err[256];
    /* outputs */
    double *ns;                /* per sample, ns per load */
    double *tsc;               /* per sample, TSC ticks per load */
    hist_t hist;               /* single-load distribution: a pass after the samples */
    size_t cycle_len;          /* measured by walking, 0 when not walked */
    int ok;
    void *final;
    /* loaded latency: loaders */
    atomic_int stop;
    atomic_int go;
    atomic_int ready;          /* loaders running (the chaser times only once all are) */
    int nloaders;
    double *lsecs;             /* per loader: seconds it read for */
    size_t load_bytes;
    long delay;
    char **lbuf;
    double *lbytes;            /* per loader: bytes read */
    double *lsum;              /* per loader: validation sum */
    double *lexpect;
    double chase_seconds;
    /* loaded latency: the mix of each loader's step (lat_loaded's reads/writes/nt) */
    int mix_reads, mix_writes; /* 1 KiB bursts read, then written, per step */
    int mix_nt;                /* the writes are streaming (non-temporal) stores */
    int skip_stores;           /* tests only: the writers skip their stores */
    uint64_t pattern;          /* what this delay's stores write (new for every delay) */
    char **wbuf;               /* per loader: its write stream, load_bytes (NULL: no writes) */
    double *lwritten;          /* per loader: bytes written */
    long *lchecked;            /* per loader: written lines read back (-1: one was wrong) */
} chase_t;

/* Each line at order[k] points to the line at order[k+1]. Runs on the pinned thread, so
 * first-touch pages land where that thread's policy puts them. */
static int chase_build(chase_t *c) {
    c->order = malloc(sizeof(uint32_t) * c->lines);
    if (!c->order) { snprintf(c->err, sizeof c->err, "out of memory for the permutation"); return 0; }
    if (!build_order(c->order, c->lines, c->window_lines, c->seed)) {
        snprintf(c->err, sizeof c->err, "out of memory for the permutation");
        return 0;
    }
    /* fault every page in, in address order (zeroing), before the links are written */
    size_t len = c->lines * c->stride;
    for (size_t off = 0; off < len; off += 4096) {
        if (off % (CHECK_EVERY * 64) == 0 && ns_interrupted) return 0;
        c->buf[off] = 0;
    }
    for (size_t k = 0; k < c->lines; k++) {
        if (k % CHECK_EVERY == 0 && ns_interrupted) return 0;
        size_t a = c->order[k], b = c->order[k + 1 == c->lines ? 0 : k + 1];
        *(void **)(c->buf + a * c->stride) = c->buf + b * c->stride;
    }
    return 1;
}

#define STEP p = *(void **)p;
#define STEP8 STEP STEP STEP STEP STEP STEP STEP STEP

static inline void *chase(void *p, size_t n) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32) { STEP8 STEP8 STEP8 STEP8 }
    for (; i < n; i++) { STEP }
    return p;
}

/* n loads in pieces of CHECK_EVERY, stopping early on Ctrl-C (one flag read per million
 * loads: nothing against the loads' own time). *done gets the loads made. */
static inline void *chase_checked(void *p, size_t n, size_t *done) {
    size_t i = 0;
    while (i < n && !ns_interrupted) {
        size_t k = n - i < CHECK_EVERY ? n - i : CHECK_EVERY;
        p = chase(p, k);
        i += k;
    }
    *done = i;
    return p;
}

/* `groups` timed groups of `g` loads into h (overhead `o` subtracted); g == 0: empty
 * intervals, each also kept in raw[] when given. Ctrl-C is checked every 2^14 groups. */
static void *hist_groups(void *p, size_t groups, int g, uint64_t o, uint32_t *h,
                         uint32_t *raw) {
    uint64_t prev = stamp();
    for (size_t k = 0; k < groups; k++) {
        for (int j = 0; j < g; j++) STEP
        uint64_t t = stamp();
        uint64_t d = t - prev;
        prev = t;
        h[hist_index(d > o ? d - o : 0)]++;
        if (raw) raw[k] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
        if ((k & 16383) == 16383 && ns_interrupted) break;
    }
    return p;
}

/* The distribution pass (hist_t), run after the samples on the chaser's thread, from where
 * they left the pointer: the overhead first, then the chunks (the group chosen from the
 * samples' median, unless given). *done counts the loads made, for chase_check. Returns
 * the pointer (NULL on Ctrl-C). Each call starts afresh (loaded latency: one per delay). */
static void *chase_hist(chase_t *c, void *p, size_t *done) {
    hist_t *h = &c->hist;
#if defined(__x86_64__)
    if (h->chunks < 1 || !h->counts || !h->empty || !h->scratch) return p;
#else
    return p;                   /* no serialising timestamp here: no distribution */
#endif
    memset(h->counts, 0, sizeof(uint32_t) * (size_t)h->chunks * HIST_BUCKETS);
    h->done = 0;
    double ticks_per_load = hist_median(c->tsc, c->nsamples);
    hist_groups(p, HIST_EMPTY, 0, 0, h->scratch, h->empty);
    if (ns_interrupted) return NULL;
    hist_overhead(h);
    uint64_t o = (uint64_t)(h->overhead + 0.5);
    int g = hist_group(h, ticks_per_load);
    h->group = g;
    double t0 = ns_now();
    uint64_t r0 = ns_rdtsc();
    for (int k = 0; k < h->chunks; k++) {
        p = hist_groups(p, h->groups, g, o, h->counts + (size_t)k * HIST_BUCKETS, NULL);
        if (ns_interrupted) return NULL;
        *done = (*done + h->groups * (size_t)g) % c->lines;
    }
    uint64_t r1 = ns_rdtsc();
    double t1 = ns_now();
    h->tsc_ghz = t1 > t0 ? (double)(r1 - r0) / ((t1 - t0) * 1e9) : 0;
    h->done = 1;
    return p;
}

/* Warm up and validate: for buffers up to 2^22 lines, walk the whole cycle and count its
 * length (must be every line); otherwise warm up with 2^22 loads. Returns the pointer
 * (NULL when Ctrl-C stopped it). */
static void *chase_warm(chase_t *c) {
    void *head = c->buf + (size_t)c->order[0] * c->stride;
    void *p = head;
    if (c->lines <= (1u << 22)) {
        size_t n = 0;
        do {
            if (n % CHECK_EVERY == 0 && ns_interrupted) return NULL;
            p = *(void **)p;
            n++;
        } while (p != head && n <= c->lines);
        c->cycle_len = n;
    } else {
        size_t made;
        p = chase_checked(p, (size_t)1 << 22, &made);
        if (made < (size_t)1 << 22) return NULL;
        c->cycle_len = 0;
    }
    return p;
}

/* After `done` loads from order[0] the pointer must be at order[done % lines]. */
static int chase_check(chase_t *c, void *p, size_t done) {
    if (c->cycle_len && c->cycle_len != c->lines) {
        snprintf(c->err, sizeof c->err, "the chain is not one cycle over every line "
                 "(cycle of %zu, %zu lines)", c->cycle_len, c->lines);
        return 0;
    }
    void *want = c->buf + (size_t)c->order[done % c->lines] * c->stride;
    if (p != want) {
        snprintf(c->err, sizeof c->err, "the chase ended on the wrong line");
        return 0;
    }
    return 1;
}

static void chase_samples(chase_t *c) {
    void *p = chase_warm(c);
    if (!p) return;
    size_t done = c->cycle_len ? 0 : ((size_t)1 << 22) % c->lines;
    for (int s = 0; s < c->nsamples; s++) {
        size_t made;
        double t0 = ns_now();
        uint64_t r0 = ns_rdtsc();
        p = chase_checked(p, c->loads, &made);
        uint64_t r1 = ns_rdtsc();
        double t1 = ns_now();
        if (made < c->loads) return;    /* Ctrl-C */
        c->ns[s] = (t1 - t0) * 1e9 / (double)c->loads;
        c->tsc[s] = (double)(r1 - r0) / (double)c->loads;
        done = (done + c->loads) % c->lines;
    }
    p = chase_hist(c, p, &done);
    if (!p) return;             /* Ctrl-C */
    c->final = p;
    c->ok = chase_check(c, p, done);
}

static void idle_fn(int tid, int nt, void *arg) {
    chase_t *c = arg;
    c->ok = 0;
    if (!chase_build(c)) return;
    chase_samples(c);
}

static int parse_mode(const char *mode, size_t window_bytes, size_t stride, size_t *window_lines) {
    if (!strcmp(mode, "random")) { *window_lines = 0; return 1; }
    if (!strcmp(mode, "tlb")) {
        *window_lines = window_bytes / stride;
        if (*window_lines < 2) *window_lines = 2;
        return 1;
    }
    ns_value_error("unknown chase mode '%s' (tlb or random)", mode);
    return 0;
}

static PyObject *list_of(const double *v, int n) {
    PyObject *l = PyList_New(n);
    for (int i = 0; i < n; i++) PyList_SET_ITEM(l, i, PyFloat_FromDouble(v[i]));
    return l;
}

static PyObject *placement_info(chase_t *c) {
    long counts[NS_MAX_NODES + 1];
    size_t len = c->lines * c->stride;
    long sampled = ns_mem_where(c->buf, len, counts, 4096);
    PyObject *where = sampled >= 0 ? ns_where_to_py(counts) : (Py_INCREF(Py_None), Py_None);
    double huge = ns_mem_huge_fraction(c->buf, len);
    PyObject *d = Py_BuildValue("{s:N,s:d,s:n}", "where", where, "huge_fraction", huge,
                                "lines", (Py_ssize_t)c->lines);
    return d;
}

static int chase_setup(chase_t *c, Py_ssize_t bytes, Py_ssize_t stride, const char *mode,
                       Py_ssize_t window, PyObject *memory, int samples, Py_ssize_t loads,
                       unsigned long long seed) {
    /* the stride comes checked (families/latency/options.py declares it and its rule):
     * here only what the chase itself needs, a power of two holding a pointer */
    if (stride < (Py_ssize_t)sizeof(void *) || (stride & (stride - 1))) {
        ns_value_error("stride must be a power of two of at least %zu bytes (got %zd)",
                       sizeof(void *), stride);
        return 0;
    }
    if (bytes < 2 * stride) { ns_value_error("buffer must hold at least two lines"); return 0; }
    if ((size_t)bytes / (size_t)stride >= UINT32_MAX) { ns_value_error("buffer too large"); return 0; }
    if (samples < 1 || samples > LAT_MAX_SAMPLES) { ns_value_error("samples must be in [1, %d]", LAT_MAX_SAMPLES); return 0; }
    if (loads < 1) { ns_value_error("loads per sample must be >= 1"); return 0; }
    c->bytes = bytes;
    c->stride = stride;
    c->lines = (size_t)bytes / (size_t)stride;
    c->seed = seed;
    c->nsamples = samples;
    c->loads = loads;
    if (!parse_mode(mode, window, stride, &c->window_lines)) return 0;
    if (!ns_mem_spec_from_py(memory, &c->spec)) return 0;
    c->ns = calloc(samples, sizeof(double));
    c->tsc = calloc(samples, sizeof(double));
    c->buf = ns_mem_alloc(c->lines * c->stride, &c->spec, c->err, sizeof c->err);
    if (!c->buf) { PyErr_SetString(PyExc_OSError, c->err); return 0; }
    return 1;
}

static void chase_free(chase_t *c) {
    if (c->buf) ns_mem_free(c->buf, c->lines * c->stride, &c->spec);
    free(c->order);
    free(c->ns);
    free(c->tsc);
    hist_free(&c->hist);
}

/* Python: lat_chase(bytes, cpu, memory=None, mode="tlb", window=262144, samples=15,
 *                   loads=262144, stride, seed=1, hist_groups=16384, group=0,
 *                   tail_groups=HIST_TAIL_GROUPS) -> dict;
 *   stride is required; hist_groups: groups per distribution chunk (one chunk per sample,
 *   at most HIST_MAX_CHUNKS; more where the chunks would hold fewer than tail_groups in
 *   all; 0: no distribution pass), group: loads per group (0: auto) */
static PyObject *py_lat_chase(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kws[] = {"bytes", "cpu", "memory", "mode", "window", "samples", "loads",
                          "stride", "seed", "hist_groups", "group", "tail_groups", NULL};
    Py_ssize_t bytes, window = 256 * 1024, loads = 1 << 18, stride = -1,
               hist_groups = HIST_GROUPS, tail_groups = HIST_TAIL_GROUPS;
    int cpu, samples = 15, group = 0;
    PyObject *memory = Py_None;
    const char *mode = "tlb";
    unsigned long long seed = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ni|OsninnKnin", kws, &bytes, &cpu, &memory,
                                     &mode, &window, &samples, &loads, &stride, &seed,
                                     &hist_groups, &group, &tail_groups))
        return NULL;
    ns_interrupted = 0;
    chase_t c;
    memset(&c, 0, sizeof c);
    if (!chase_setup(&c, bytes, stride, mode, window, memory, samples, loads, seed)
        || !hist_alloc(&c.hist, samples, hist_groups, group, tail_groups)) {
        chase_free(&c);
        return NULL;
    }
    ns_team *t = ns_team_create(&cpu, 1, c.err, sizeof c.err);
    if (!t) { chase_free(&c); return ns_value_error("%s", c.err); }
    double secs;
    Py_BEGIN_ALLOW_THREADS
    secs = ns_team_run_timed(t, idle_fn, &c);
    ns_team_destroy(t);
    Py_END_ALLOW_THREADS
    PyObject *res = NULL;
    if (ns_interrupted) {
        chase_free(&c);
        return ns_raise_interrupt();
    }
    if (c.ok) {
        res = placement_info(&c);
        PyObject *ns = list_of(c.ns, samples), *tsc = list_of(c.tsc, samples);
        PyDict_SetItemString(res, "ns", ns);
        PyDict_SetItemString(res, "tsc", tsc);
        Py_DECREF(ns);
        Py_DECREF(tsc);
        PyObject *hist = hist_to_py(&c.hist);
        PyDict_SetItemString(res, "hist", hist);
        Py_DECREF(hist);
        PyObject *v = Py_BuildValue("{s:n,s:n,s:d,s:O}", "cycle_walked", (Py_ssize_t)c.cycle_len,
                                    "loads", (Py_ssize_t)c.loads, "seconds", secs,
                                    "validated", Py_True);
        PyDict_Update(res, v);
        Py_DECREF(v);
    } else {
        PyErr_Format(PyExc_RuntimeError, "validation failed: %s", c.err);
    }
    chase_free(&c);
    return res;
}

/* ---- loaded latency ------------------------------------------------------------------- */

#if defined(__x86_64__)
#include <immintrin.h>             /* _mm_stream_si64, _mm_sfence: the streaming stores */
#endif

#define BURST_BYTES 1024
#define WRITE_CHECKS 4096      /* written lines read back per loader and delay, evenly spread */

/* One burst of full-line stores of v: ordinary stores, or streaming ones (movnti: SSE2,
 * on every x86-64; lat_loaded refuses nt elsewhere). */
static inline void store_burst(uint64_t *w, size_t words, uint64_t v, int nt) {
#if defined(__x86_64__)
    if (nt) {
        for (size_t k = 0; k < words; k++) _mm_stream_si64((long long *)&w[k], (long long)v);
        return;
    }
#endif
    (void)nt;
    for (size_t k = 0; k < words; k++) w[k] = v;
}

/* Read back up to WRITE_CHECKS lines, evenly spread, of the first `words` words of a write
 * stream: each must hold v in every word. The count checked, or -1 at the first that does
 * not (a store that did not happen). */
static long store_check(const uint64_t *w, size_t words, uint64_t v) {
    size_t lines = words / 8, n = lines < WRITE_CHECKS ? lines : WRITE_CHECKS;
    for (size_t s = 0; s < n; s++) {
        const uint64_t *l = w + (s * lines / n) * 8;
        for (int k = 0; k < 8; k++)
            if (l[k] != v) return -1;
    }
    return (long)n;
}

/* One loader. A step: `mix_reads` bursts of BURST_BYTES (full lines) read from its read
 * stream, `mix_writes` bursts stored to its write stream (another buffer of the same size),
 * then `delay` iterations of an empty loop; until told to stop. Every word of the read
 * stream holds 1, so the sum must equal the words read: the loads really happened. Every
 * stored word gets this delay's pattern, read back once stopped: the stores happened. */
static void loader(chase_t *c, int id) {
    const uint64_t *b = (const uint64_t *)c->lbuf[id];
    uint64_t *w = c->wbuf ? (uint64_t *)c->wbuf[id] : NULL;
    size_t words = c->load_bytes / 8, per = BURST_BYTES / 8, i = 0, j = 0;
    uint64_t sum = 0, read = 0, written = 0, stored = 0;   /* stored: the first step's too */
    const uint64_t v = c->pattern;
    const int nr = c->mix_reads, nw = w ? c->mix_writes : 0, nt = c->mix_nt;
    const int store = !c->skip_stores;
    double t0 = 0;
    while (!atomic_load_explicit(&c->go, memory_order_acquire)) __builtin_ia32_pause();
    for (int first = 1;; first = 0) {
        for (int r = 0; r < nr; r++) {
            uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (size_t k = 0; k < per; k += 4) {
                s0 += b[i + k]; s1 += b[i + k + 1]; s2 += b[i + k + 2]; s3 += b[i + k + 3];
            }
            sum += s0 + s1 + s2 + s3;
            read += per;
            i += per;
            if (i + per > words) i = 0;
        }
        for (int r = 0; r < nw; r++) {
            if (store) store_burst(w + j, per, v, nt);
            written += per;
            stored += per;
            j += per;
            if (j + per > words) j = 0;
        }
        for (long d = 0; d < c->delay; d++) __asm__ __volatile__("" ::: "memory");
        if (first) {                    /* counting starts once this loader runs */
            t0 = ns_now();
            read = 0;
            sum = 0;
            written = 0;
            atomic_fetch_add(&c->ready, 1);
        }
        if (atomic_load_explicit(&c->stop, memory_order_relaxed)) break;
    }
    c->lsecs[id] = ns_now() - t0;
    c->lbytes[id] = (double)read * 8.0;
    c->lwritten[id] = (double)written * 8.0;
    c->lsum[id] = (double)sum;
    c->lexpect[id] = (double)read;
#if defined(__x86_64__)
    if (nt) _mm_sfence();               /* the streaming stores are visible to the reads */
#endif
    if (w) c->lchecked[id] = store_check(w, stored < words ? stored : words, v);
}

/* The chaser (thread 0). On Ctrl-C it tells the loaders to stop and returns early. */
static void loaded_fn(int tid, int nt, void *arg) {
    chase_t *c = arg;
    if (tid > 0) { loader(c, tid - 1); return; }
    void *p = chase_warm(c);
    if (!p) {
        atomic_store_explicit(&c->stop, 1, memory_order_relaxed);
        atomic_store_explicit(&c->go, 1, memory_order_release);
        return;
    }
    size_t done = c->cycle_len ? 0 : ((size_t)1 << 22) % c->lines;
    atomic_store_explicit(&c->go, 1, memory_order_release);
    while (atomic_load(&c->ready) < c->nloaders) __builtin_ia32_pause();
    double t0 = ns_now();
    for (int s = 0; s < c->nsamples; s++) {
        size_t made;
        double a = ns_now();
        uint64_t r0 = ns_rdtsc();
        p = chase_checked(p, c->loads, &made);
        uint64_t r1 = ns_rdtsc();
        if (made < c->loads) {          /* Ctrl-C */
            atomic_store_explicit(&c->stop, 1, memory_order_relaxed);
            return;
        }
        c->ns[s] = (ns_now() - a) * 1e9 / (double)c->loads;
        c->tsc[s] = (double)(r1 - r0) / (double)c->loads;
        done = (done + c->loads) % c->lines;
    }
    c->chase_seconds = ns_now() - t0;
    p = chase_hist(c, p, &done);   /* the single-load tail, under the same load */
    atomic_store_explicit(&c->stop, 1, memory_order_relaxed);
    if (!p) return;                /* Ctrl-C */
    c->ok = chase_check(c, p, done);
}

/* Loader buffers: the read stream filled with ones, the write stream (if any) with zeros,
 * by their own pinned thread (first touch / bind). */
static void fill_fn(int tid, int nt, void *arg) {
    chase_t *c = arg;
    if (tid == 0) { c->ok = chase_build(c); return; }
    uint64_t *b = (uint64_t *)c->lbuf[tid - 1];
    uint64_t *w = c->wbuf ? (uint64_t *)c->wbuf[tid - 1] : NULL;
    for (size_t i = 0; i < c->load_bytes / 8; i++) {
        if (i % CHECK_EVERY == 0 && ns_interrupted) return;
        b[i] = 1;
        if (w) w[i] = 0;
    }
}

/* Python: lat_loaded(bytes, cpu, load_cpus, delays, memory=None, load_bytes=..., mode="tlb",
 *   window=262144, samples=5, loads=65536, seed=1, stride, reads=1, writes=0, nt=False,
 *   skip_stores=False) -> {'points': [one dict per delay], 'chase': {...}}. A loader's step
 *   reads `reads` and stores `writes` 1 KiB bursts (streaming stores with nt); skip_stores
 *   (tests only) leaves the stores out, which the read-back check must catch. */
static PyObject *py_lat_loaded(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kws[] = {"bytes", "cpu", "load_cpus", "delays", "memory", "load_bytes", "mode",
                          "window", "samples", "loads", "seed", "stride", "reads", "writes",
                          "nt", "skip_stores", NULL};
    Py_ssize_t bytes, window = 256 * 1024, loads = 1 << 16, load_bytes = 256 << 20;
    Py_ssize_t stride = -1;
    int cpu, samples = 5, reads = 1, writes = 0, nt = 0, skip_stores = 0;
    PyObject *load_cpus, *delays_o, *memory = Py_None;
    const char *mode = "tlb";
    unsigned long long seed = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "niOO|OnsninKniipp", kws, &bytes, &cpu,
                                     &load_cpus, &delays_o, &memory, &load_bytes, &mode, &window,
                                     &samples, &loads, &seed, &stride, &reads, &writes, &nt,
                                     &skip_stores))
        return NULL;
    if (reads < 0 || reads > 64 || writes < 0 || writes > 64 || reads + writes < 1)
        return ns_value_error("a loader's step reads 0 to 64 and writes 0 to 64 bursts, "
                              "at least one in all (got %d and %d)", reads, writes);
    if (nt && writes < 1) return ns_value_error("streaming stores need writes >= 1");
#if !defined(__x86_64__)
    if (nt) return ns_value_error("streaming stores (nt) are implemented for x86-64 only");
#endif
    ns_interrupted = 0;
    int *lcpus = NULL, nl = 0, *delays = NULL, nd = 0;
    if (!ns_int_list(load_cpus, &lcpus, &nl)) return NULL;
    if (!ns_int_list(delays_o, &delays, &nd)) { free(lcpus); return NULL; }
    if (nl < 1 || nd < 1) {
        free(lcpus); free(delays);
        return ns_value_error("loaded latency needs at least one load CPU and one delay");
    }
    load_bytes = load_bytes / BURST_BYTES * BURST_BYTES;
    if (load_bytes < BURST_BYTES) { free(lcpus); free(delays); return ns_value_error("load buffer too small"); }
    chase_t c;
    memset(&c, 0, sizeof c);
    PyObject *out = NULL;
    int *team_cpus = malloc(sizeof(int) * (nl + 1));
    ns_team *t = NULL;
    if (!chase_setup(&c, bytes, stride, mode, window, memory, samples, loads, seed)
        || !hist_alloc(&c.hist, samples, HIST_GROUPS, 0, HIST_TAIL_GROUPS)) goto done;
    c.load_bytes = load_bytes;
    c.lbuf = calloc(nl, sizeof(char *));
    c.lbytes = calloc(nl, sizeof(double));
    c.lsum = calloc(nl, sizeof(double));
    c.lexpect = calloc(nl, sizeof(double));
    c.lsecs = calloc(nl, sizeof(double));
    c.lwritten = calloc(nl, sizeof(double));
    c.lchecked = calloc(nl, sizeof(long));
    c.nloaders = nl;
    c.mix_reads = reads;
    c.mix_writes = writes;
    c.mix_nt = nt;
    c.skip_stores = skip_stores;
    if (writes) c.wbuf = calloc(nl, sizeof(char *));
    for (int i = 0; i < nl; i++) {
        c.lbuf[i] = ns_mem_alloc(load_bytes, &c.spec, c.err, sizeof c.err);
        if (!c.lbuf[i]) { PyErr_SetString(PyExc_OSError, c.err); goto done; }
        if (!c.wbuf) continue;
        c.wbuf[i] = ns_mem_alloc(load_bytes, &c.spec, c.err, sizeof c.err);
        if (!c.wbuf[i]) { PyErr_SetString(PyExc_OSError, c.err); goto done; }
    }
    team_cpus[0] = cpu;
    memcpy(team_cpus + 1, lcpus, sizeof(int) * nl);
    t = ns_team_create(team_cpus, nl + 1, c.err, sizeof c.err);
    if (!t) { ns_value_error("%s", c.err); goto done; }
    Py_BEGIN_ALLOW_THREADS
    ns_team_run(t, fill_fn, &c);
    Py_END_ALLOW_THREADS
    if (ns_interrupted) { ns_raise_interrupt(); goto done; }
    if (!c.ok) { PyErr_Format(PyExc_RuntimeError, "validation failed: %s", c.err); goto done; }
    out = PyList_New(0);
    for (int d = 0; d < nd; d++) {
        c.delay = delays[d];
        c.pattern = ((uint64_t)(d + 1) << 32) | 0xa5a5a5a5u;   /* new for every delay */
        atomic_store(&c.stop, 0);
        atomic_store(&c.go, 0);
        atomic_store(&c.ready, 0);
        c.ok = 0;
        double secs;
        Py_BEGIN_ALLOW_THREADS
        secs = ns_team_run_timed(t, loaded_fn, &c);
        Py_END_ALLOW_THREADS
        (void)secs;
        if (ns_interrupted) {
            Py_CLEAR(out);
            ns_raise_interrupt();
            goto done;
        }
        if (!c.ok) {
            Py_CLEAR(out);
            PyErr_Format(PyExc_RuntimeError, "validation failed: %s", c.err);
            goto done;
        }
        double total = 0, gbs = 0, wtotal = 0, wgbs = 0;
        long checked = 0;
        for (int i = 0; i < nl; i++) {
            if (c.lsum[i] != c.lexpect[i]) {
                Py_CLEAR(out);
                PyErr_Format(PyExc_RuntimeError, "validation failed: loader %d summed %.0f, "
                             "expected %.0f", i, c.lsum[i], c.lexpect[i]);
                goto done;
            }
            if (c.wbuf && c.lchecked[i] <= 0) {
                Py_CLEAR(out);
                PyErr_Format(PyExc_RuntimeError, "validation failed: loader %d's write stream "
                             "does not hold the value it stored (the stores did not happen)",
                             i);
                goto done;
            }
            total += c.lbytes[i];
            wtotal += c.lwritten[i];
            checked += c.wbuf ? c.lchecked[i] : 0;
            if (c.lsecs[i] > 0) {
                gbs += c.lbytes[i] / c.lsecs[i] / 1e9;
                wgbs += c.lwritten[i] / c.lsecs[i] / 1e9;
            }
        }
        PyObject *ns = list_of(c.ns, samples), *tsc = list_of(c.tsc, samples);
        PyObject *row = Py_BuildValue("{s:i,s:N,s:N,s:d,s:d,s:d,s:d,s:d,s:l,s:N}", "delay",
                                      delays[d], "ns", ns, "tsc", tsc, "loader_bytes", total,
                                      "seconds", c.chase_seconds, "loader_gbs", gbs,
                                      "loader_written_bytes", wtotal, "loader_write_gbs", wgbs,
                                      "lines_checked", checked, "hist", hist_to_py(&c.hist));
        PyList_Append(out, row);
        Py_DECREF(row);
    }
    if (out) {
        PyObject *info = placement_info(&c);
        PyObject *wrapped = Py_BuildValue("{s:N,s:N}", "points", out, "chase", info);
        out = wrapped;
    }
done:
    if (t) ns_team_destroy(t);
    if (c.lbuf)
        for (int i = 0; i < nl; i++)
            if (c.lbuf[i]) ns_mem_free(c.lbuf[i], load_bytes, &c.spec);
    if (c.wbuf)
        for (int i = 0; i < nl; i++)
            if (c.wbuf[i]) ns_mem_free(c.wbuf[i], load_bytes, &c.spec);
    free(c.lbuf); free(c.lbytes); free(c.lsum); free(c.lexpect); free(c.lsecs);
    free(c.wbuf); free(c.lwritten); free(c.lchecked);
    chase_free(&c);
    free(team_cpus); free(lcpus); free(delays);
    return out;
}

PyMethodDef ns_lat_methods[] = {
    {"lat_permutation", (PyCFunction)(void (*)(void))py_lat_permutation,
     METH_VARARGS | METH_KEYWORDS,
     "lat_permutation(lines, window_lines=0, seed=1) -> next[i]: the chase's cycle of lines."},
    {"lat_chase", (PyCFunction)(void (*)(void))py_lat_chase, METH_VARARGS | METH_KEYWORDS,
     "lat_chase(bytes, cpu, memory=None, mode='tlb', window=262144, samples=15, loads=262144, "
     "stride, seed=1, hist_groups=16384, group=0) -> dict with per-sample ns and TSC ticks "
     "per load, and 'hist': the single-load distribution pass (None where not run)."},
    {"lat_loaded", (PyCFunction)(void (*)(void))py_lat_loaded, METH_VARARGS | METH_KEYWORDS,
     "lat_loaded(bytes, cpu, load_cpus, delays, memory=None, load_bytes=256MiB, mode='tlb', "
     "window=262144, samples=5, loads=65536, seed=1, stride, reads=1, writes=0, nt=False, "
     "skip_stores=False) -> {'points': [...], 'chase': {...}}."},
    {NULL, NULL, 0, NULL},
};
