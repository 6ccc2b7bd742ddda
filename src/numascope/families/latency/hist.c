/* Histograms of timed loads for the latency family: see hist.h. */
#include "hist.h"
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The smallest value bucket i holds (the inverse of hist_index). */
uint64_t hist_lower_edge(unsigned i) {
    unsigned shift = i < 2 * HIST_SUB ? 0 : i / HIST_SUB - 1;
    return (uint64_t)(i - shift * HIST_SUB) << shift;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static uint32_t gcd_u32(uint32_t a, uint32_t b) {
    while (b) { uint32_t t = a % b; a = b; b = t; }
    return a;
}

/* The overhead and the step from the empty intervals (sorted here). */
void hist_overhead(hist_t *h) {
    uint32_t *e = h->empty;
    qsort(e, HIST_EMPTY, sizeof *e, cmp_u32);
    size_t keep = HIST_EMPTY - HIST_EMPTY / 100;
    double sum = 0;
    uint32_t g = 0;
    for (size_t i = 0; i < keep; i++) { sum += e[i]; g = gcd_u32(e[i], g); }
    h->overhead = sum / (double)keep;
    h->step = g ? g : 1;
    h->empty_p5 = e[HIST_EMPTY / 20];
    h->empty_p50 = e[HIST_EMPTY / 2];
    h->empty_p95 = e[HIST_EMPTY - HIST_EMPTY / 20];
}


int hist_group(const hist_t *h, double ticks_per_load) {
    int g = h->asked;
    if (g <= 0)
        for (g = 1; g < HIST_MAX_GROUP && g * ticks_per_load < 4.0 * h->overhead; g *= 2) {}
    return g;
}

double hist_median(const double *v, int n) {
    double *t = n > 0 ? malloc(sizeof(double) * n) : NULL, m = 0;
    if (!t) return 0;
    memcpy(t, v, sizeof(double) * n);
    qsort(t, n, sizeof(double), cmp_double);
    m = t[n / 2];
    free(t);
    return m;
}

/* least: timed groups of the pass in all, the chunks together (the caller's: a pass that is
 * one of several units of a case needs only its share of the case's tail) */
int hist_alloc(hist_t *h, int chunks, Py_ssize_t groups, int group, Py_ssize_t least_all) {
    if (groups < 0 || groups > (1 << 24))
        { ns_value_error("groups per distribution chunk must be in [0, 2^24]"); return 0; }
    if (group < 0 || group > HIST_MAX_GROUP)
        { ns_value_error("loads per timed group must be in [0, %d]", HIST_MAX_GROUP); return 0; }
    if (least_all < 0 || least_all > (1 << 26))
        { ns_value_error("tail groups per pass must be in [0, 2^26]"); return 0; }
    if (!groups) return 1;
    if (chunks < 1) { ns_value_error("a distribution pass needs at least one chunk"); return 0; }
    h->chunks = chunks < HIST_MAX_CHUNKS ? chunks : HIST_MAX_CHUNKS;
    size_t least = ((size_t)least_all + (size_t)h->chunks - 1) / (size_t)h->chunks;
    h->groups = (size_t)groups < least ? least : (size_t)groups;
    h->asked = group;
    h->counts = calloc((size_t)h->chunks * HIST_BUCKETS, sizeof(uint32_t));
    h->empty = calloc(HIST_EMPTY, sizeof(uint32_t));
    h->scratch = calloc(HIST_BUCKETS, sizeof(uint32_t));
    if (!h->counts || !h->empty || !h->scratch) { PyErr_NoMemory(); return 0; }
    return 1;
}

void hist_free(hist_t *h) {
    free(h->counts);
    free(h->empty);
    free(h->scratch);
    h->counts = NULL;
    h->empty = NULL;
    h->scratch = NULL;
}

/* The pass's result for Python: None when it did not run (no serialising timestamp on
 * this CPU, or not asked); else the buckets (lower edges in TSC ticks of a group, overhead
 * subtracted; the last bucket open-ended) and the counts per chunk, from the first bucket
 * used to the last; the overhead, how the empty intervals spread, the TSC's step. */
PyObject *hist_to_py(const hist_t *h) {
    if (!h->done) Py_RETURN_NONE;
    unsigned lo = HIST_BUCKETS, hi = 0;
    for (int k = 0; k < h->chunks; k++)
        for (unsigned i = 0; i < HIST_BUCKETS; i++)
            if (h->counts[(size_t)k * HIST_BUCKETS + i]) {
                if (i < lo) lo = i;
                if (i + 1 > hi) hi = i + 1;
            }
    if (hi <= lo) Py_RETURN_NONE;
    PyObject *edges = PyList_New(hi - lo + 1), *chunks = PyList_New(h->chunks);
    for (unsigned i = lo; i <= hi; i++)
        PyList_SET_ITEM(edges, i - lo, PyLong_FromUnsignedLongLong(hist_lower_edge(i)));
    for (int k = 0; k < h->chunks; k++) {
        PyObject *l = PyList_New(hi - lo);
        for (unsigned i = lo; i < hi; i++)
            PyList_SET_ITEM(l, i - lo, PyLong_FromUnsignedLong(h->counts[(size_t)k * HIST_BUCKETS + i]));
        PyList_SET_ITEM(chunks, k, l);
    }
    return Py_BuildValue("{s:N,s:N,s:i,s:n,s:d,s:I,s:I,s:I,s:I,s:d}", "edges", edges,
                         "counts", chunks, "group", h->group, "groups", (Py_ssize_t)h->groups,
                         "overhead", h->overhead, "empty_p5", h->empty_p5,
                         "empty_p50", h->empty_p50, "empty_p95", h->empty_p95,
                         "step", h->step, "tsc_ghz", h->tsc_ghz);
}
