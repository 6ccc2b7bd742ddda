/* Benchmark family 'bw': STREAM-class memory bandwidth kernels on pinned threads.
 *
 * Kernels (double precision, STREAM definitions):
 *   read   sum += a[i]            fill   a[i] = s
 *   copy   c[i] = a[i]            scale  b[i] = s * c[i]
 *   add    c[i] = a[i] + b[i]     triad  a[i] = b[i] + s * c[i]
 * each in a scalar version (auto-vectorization switched off), AVX2 and AVX-512 versions
 * (target attributes, chosen at run time), each storing kernel with ordinary or with
 * non-temporal (streaming) stores.
 *
 * One call of bw_run: create a team pinned to the given CPUs, map the arrays with the
 * requested NUMA policy, first-touch them with the same static split the kernel uses,
 * run warm-ups, then `reps` timed repetitions of every requested variant (interleaved, so
 * drift hits all variants alike), validate what the kernel computed, sample where the
 * pages are. A repetition is timed from the earliest thread's start to the latest
 * thread's end (each thread stamps its own); the GIL is released; Ctrl-C stops the call
 * between repetitions.
 *
 * Every repetition's output depends on the repetition, so one that skipped its work leaves
 * stale values that the spot check after it finds: fill, scale and triad take a new scalar
 * each time; read, copy and add (no scalar) get a new input value at the spot-checked
 * elements before each repetition (an untimed write of a few hundred elements). */
#include "ns.h"
#include "memory.h"
#include "team.h"
#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { K_READ = 0, K_FILL, K_COPY, K_SCALE, K_ADD, K_TRIAD, K_COUNT };
enum { ISA_SCALAR = 0, ISA_AVX2, ISA_AVX512 };

static const char *kernel_names[K_COUNT] = {"read", "fill", "copy", "scale", "add", "triad"};
static const char *isa_names[3] = {"scalar", "avx2", "avx512"};

/* Initial values: exact in binary, so expected results are exact too. */
#define A0 1.0
#define B0 2.0
#define C0 0.5
/* Relative tolerance of the check (STREAM uses 1e-13 for double). */
#define TOL 1e-13
#define SUM_STRIDE 8           /* one cache line per thread's partial sum */
#define MAX_VARIANTS 8

typedef struct {
    int kernel, isa, nt;
    double *a, *b, *c;
    size_t n, align;
    double s;
    double *sums;              /* nthreads * SUM_STRIDE */
} bw_job;

/* ---- scalar kernels: plain loops, vectorization and memcpy/memset idioms disabled ---- */
#define SCALAR __attribute__((noinline, optimize("no-tree-vectorize", \
                                                  "no-tree-loop-distribute-patterns")))

static SCALAR double read_scalar(const double *a, size_t i0, size_t i1) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = i0;
    for (; i + 4 <= i1; i += 4) { s0 += a[i]; s1 += a[i + 1]; s2 += a[i + 2]; s3 += a[i + 3]; }
    for (; i < i1; i++) s0 += a[i];
    return (s0 + s1) + (s2 + s3);
}

static inline void st_nt64(double *p, double v) {
    long long bits;
    memcpy(&bits, &v, sizeof bits);
    _mm_stream_si64((long long *)p, bits);   /* movnti: a scalar streaming store */
}

static SCALAR void fill_scalar(double *a, double s, size_t i0, size_t i1, int nt) {
    if (nt) { for (size_t i = i0; i < i1; i++) st_nt64(&a[i], s); }
    else { for (size_t i = i0; i < i1; i++) a[i] = s; }
}
static SCALAR void copy_scalar(double *c, const double *a, size_t i0, size_t i1, int nt) {
    if (nt) { for (size_t i = i0; i < i1; i++) st_nt64(&c[i], a[i]); }
    else { for (size_t i = i0; i < i1; i++) c[i] = a[i]; }
}
static SCALAR void scale_scalar(double *b, const double *c, double s, size_t i0, size_t i1,
                                int nt) {
    if (nt) { for (size_t i = i0; i < i1; i++) st_nt64(&b[i], s * c[i]); }
    else { for (size_t i = i0; i < i1; i++) b[i] = s * c[i]; }
}
static SCALAR void add_scalar(double *c, const double *a, const double *b, size_t i0,
                              size_t i1, int nt) {
    if (nt) { for (size_t i = i0; i < i1; i++) st_nt64(&c[i], a[i] + b[i]); }
    else { for (size_t i = i0; i < i1; i++) c[i] = a[i] + b[i]; }
}
static SCALAR void triad_scalar(double *a, const double *b, const double *c, double s,
                                size_t i0, size_t i1, int nt) {
    if (nt) { for (size_t i = i0; i < i1; i++) st_nt64(&a[i], b[i] + s * c[i]); }
    else { for (size_t i = i0; i < i1; i++) a[i] = b[i] + s * c[i]; }
}

/* ---- vector kernels. Chunks start 64-byte aligned (arrays are 2 MiB aligned and the
 * split is a multiple of 8 elements), so aligned loads/stores are safe; the last chunk's
 * tail (< one unrolled step) is finished with scalar code. ---- */
#define AVX2 __attribute__((noinline, target("avx2,fma")))
#define AVX512 __attribute__((noinline, target("avx512f")))

#define VEC_KERNELS(SUF, ATTR, VT, W, LOAD, STORE, STREAM, SET1, ADD, MUL, FMA)               \
    static ATTR double read_##SUF(const double *a, size_t i0, size_t i1) {                   \
        VT s0 = SET1(0), s1 = SET1(0), s2 = SET1(0), s3 = SET1(0);                           \
        size_t i = i0;                                                                       \
        for (; i + 4 * W <= i1; i += 4 * W) {                                                \
            s0 = ADD(s0, LOAD(a + i)); s1 = ADD(s1, LOAD(a + i + W));                       \
            s2 = ADD(s2, LOAD(a + i + 2 * W)); s3 = ADD(s3, LOAD(a + i + 3 * W));           \
        }                                                                                    \
        double lanes[W];                                                                     \
        STORE(lanes, ADD(ADD(s0, s1), ADD(s2, s3)));                                         \
        double r = 0;                                                                        \
        for (int k = 0; k < W; k++) r += lanes[k];                                           \
        for (; i < i1; i++) r += a[i];                                                       \
        return r;                                                                            \
    }                                                                                        \
    static ATTR void fill_##SUF(double *a, double s, size_t i0, size_t i1, int nt) {         \
        VT v = SET1(s);                                                                      \
        size_t i = i0;                                                                       \
        if (nt) for (; i + 2 * W <= i1; i += 2 * W) { STREAM(a + i, v); STREAM(a + i + W, v); } \
        else for (; i + 2 * W <= i1; i += 2 * W) { STORE(a + i, v); STORE(a + i + W, v); }   \
        for (; i < i1; i++) a[i] = s;                                                        \
    }                                                                                        \
    static ATTR void copy_##SUF(double *c, const double *a, size_t i0, size_t i1, int nt) {  \
        size_t i = i0;                                                                       \
        if (nt) for (; i + 2 * W <= i1; i += 2 * W) {                                        \
            VT x = LOAD(a + i), y = LOAD(a + i + W); STREAM(c + i, x); STREAM(c + i + W, y); \
        }                                                                                    \
        else for (; i + 2 * W <= i1; i += 2 * W) {                                           \
            VT x = LOAD(a + i), y = LOAD(a + i + W); STORE(c + i, x); STORE(c + i + W, y);   \
        }                                                                                    \
        for (; i < i1; i++) c[i] = a[i];                                                     \
    }                                                                                        \
    static ATTR void scale_##SUF(double *b, const double *c, double s, size_t i0, size_t i1, \
                                 int nt) {                                                   \
        VT vs = SET1(s);                                                                     \
        size_t i = i0;                                                                       \
        if (nt) for (; i + 2 * W <= i1; i += 2 * W) {                                        \
            STREAM(b + i, MUL(vs, LOAD(c + i))); STREAM(b + i + W, MUL(vs, LOAD(c + i + W))); \
        }                                                                                    \
        else for (; i + 2 * W <= i1; i += 2 * W) {                                           \
            STORE(b + i, MUL(vs, LOAD(c + i))); STORE(b + i + W, MUL(vs, LOAD(c + i + W)));  \
        }                                                                                    \
        for (; i < i1; i++) b[i] = s * c[i];                                                 \
    }                                                                                        \
    static ATTR void add_##SUF(double *c, const double *a, const double *b, size_t i0,       \
                               size_t i1, int nt) {                                          \
        size_t i = i0;                                                                       \
        if (nt) for (; i + 2 * W <= i1; i += 2 * W) {                                        \
            STREAM(c + i, ADD(LOAD(a + i), LOAD(b + i)));                                    \
            STREAM(c + i + W, ADD(LOAD(a + i + W), LOAD(b + i + W)));                        \
        }                                                                                    \
        else for (; i + 2 * W <= i1; i += 2 * W) {                                           \
            STORE(c + i, ADD(LOAD(a + i), LOAD(b + i)));                                     \
            STORE(c + i + W, ADD(LOAD(a + i + W), LOAD(b + i + W)));                         \
        }                                                                                    \
        for (; i < i1; i++) c[i] = a[i] + b[i];                                              \
    }                                                                                        \
    static ATTR void triad_##SUF(double *a, const double *b, const double *c, double s,      \
                                 size_t i0, size_t i1, int nt) {                             \
        VT vs = SET1(s);                                                                     \
        size_t i = i0;                                                                       \
        if (nt) for (; i + 2 * W <= i1; i += 2 * W) {                                        \
            STREAM(a + i, FMA(vs, LOAD(c + i), LOAD(b + i)));                                \
            STREAM(a + i + W, FMA(vs, LOAD(c + i + W), LOAD(b + i + W)));                    \
        }                                                                                    \
        else for (; i + 2 * W <= i1; i += 2 * W) {                                           \
            STORE(a + i, FMA(vs, LOAD(c + i), LOAD(b + i)));                                 \
            STORE(a + i + W, FMA(vs, LOAD(c + i + W), LOAD(b + i + W)));                     \
        }                                                                                    \
        for (; i < i1; i++) a[i] = b[i] + s * c[i];                                          \
    }

VEC_KERNELS(avx2, AVX2, __m256d, 4, _mm256_load_pd, _mm256_store_pd, _mm256_stream_pd,
            _mm256_set1_pd, _mm256_add_pd, _mm256_mul_pd, _mm256_fmadd_pd)
VEC_KERNELS(avx512, AVX512, __m512d, 8, _mm512_load_pd, _mm512_store_pd, _mm512_stream_pd,
            _mm512_set1_pd, _mm512_add_pd, _mm512_mul_pd, _mm512_fmadd_pd)

/* ---- per-repetition values ---- */
/* The value of step k (warm-ups and repetitions of all variants, counted together): the
 * scalar of fill/scale/triad and the spot inputs of read/copy/add. Consecutive steps always
 * differ; every value and every result below is exact in binary. */
static double step_value(long k) { return 1.0 + 0.5 * (double)(k % 16); }

/* Output at a spot-checked element after a step with value x. */
static double spot_expect(int kernel, double x) {
    switch (kernel) {
    case K_FILL: case K_COPY: return x;
    case K_SCALE: return x * C0;
    case K_ADD: return x + B0;
    default: return B0 + x * C0;    /* K_TRIAD */
    }
}

/* Output everywhere else: read/copy/add inputs only change at the spots. */
static double base_expect(int kernel, double x) {
    return kernel == K_COPY ? A0 : kernel == K_ADD ? A0 + B0 : spot_expect(kernel, x);
}

/* Spot-checked elements: up to SPOT_SAMPLES indices spread over the array (so over every
 * thread's chunk), ascending and distinct. */
#define SPOT_SAMPLES 257
typedef struct {
    size_t at[SPOT_SAMPLES];
    int n;
} spots_t;

static void spots_init(spots_t *sp, size_t n) {
    sp->n = 0;
    for (int k = 0; k < SPOT_SAMPLES; k++) {
        size_t i = (size_t)((double)(n - 1) * k / (SPOT_SAMPLES - 1));
        if (sp->n == 0 || sp->at[sp->n - 1] != i) sp->at[sp->n++] = i;
    }
}

static int is_spot(const spots_t *sp, size_t i) {
    int lo = 0, hi = sp->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (sp->at[mid] == i) return 1;
        if (sp->at[mid] < i) lo = mid + 1; else hi = mid - 1;
    }
    return 0;
}

/* Before a step of read/copy/add: the spots of input a take this step's value. corrupt >= 0
 * (read only; test hook) keeps one input element off by one. */
static void prepare_step(int kernel, double *a, const spots_t *sp, double x, long long corrupt) {
    if (kernel != K_READ && kernel != K_COPY && kernel != K_ADD) return;
    for (int k = 0; k < sp->n; k++) a[sp->at[k]] = x;
    if (kernel == K_READ && corrupt >= 0)
        a[corrupt] = (is_spot(sp, (size_t)corrupt) ? x : A0) + 1.0;
}

/* ---- team work functions ---- */
static void kernel_work(int tid, int nt, void *arg) {
    bw_job *j = arg;
    size_t i0, i1;
    ns_split(j->n, tid, nt, j->align, &i0, &i1);
    double r = 0;
    switch (j->kernel) {
    case K_READ:
        r = j->isa == ISA_AVX512 ? read_avx512(j->a, i0, i1)
          : j->isa == ISA_AVX2 ? read_avx2(j->a, i0, i1) : read_scalar(j->a, i0, i1);
        break;
    case K_FILL:
        if (j->isa == ISA_AVX512) fill_avx512(j->a, j->s, i0, i1, j->nt);
        else if (j->isa == ISA_AVX2) fill_avx2(j->a, j->s, i0, i1, j->nt);
        else fill_scalar(j->a, j->s, i0, i1, j->nt);
        break;
    case K_COPY:
        if (j->isa == ISA_AVX512) copy_avx512(j->c, j->a, i0, i1, j->nt);
        else if (j->isa == ISA_AVX2) copy_avx2(j->c, j->a, i0, i1, j->nt);
        else copy_scalar(j->c, j->a, i0, i1, j->nt);
        break;
    case K_SCALE:
        if (j->isa == ISA_AVX512) scale_avx512(j->b, j->c, j->s, i0, i1, j->nt);
        else if (j->isa == ISA_AVX2) scale_avx2(j->b, j->c, j->s, i0, i1, j->nt);
        else scale_scalar(j->b, j->c, j->s, i0, i1, j->nt);
        break;
    case K_ADD:
        if (j->isa == ISA_AVX512) add_avx512(j->c, j->a, j->b, i0, i1, j->nt);
        else if (j->isa == ISA_AVX2) add_avx2(j->c, j->a, j->b, i0, i1, j->nt);
        else add_scalar(j->c, j->a, j->b, i0, i1, j->nt);
        break;
    case K_TRIAD:
        if (j->isa == ISA_AVX512) triad_avx512(j->a, j->b, j->c, j->s, i0, i1, j->nt);
        else if (j->isa == ISA_AVX2) triad_avx2(j->a, j->b, j->c, j->s, i0, i1, j->nt);
        else triad_scalar(j->a, j->b, j->c, j->s, i0, i1, j->nt);
        break;
    }
    if (j->nt) _mm_sfence();  /* streaming stores are globally visible before the barrier */
    j->sums[tid * SUM_STRIDE] = r;
}

/* First touch: each pinned thread writes the part of every array it will later use. */
static void init_work(int tid, int nt, void *arg) {
    bw_job *j = arg;
    size_t i0, i1;
    ns_split(j->n, tid, nt, j->align, &i0, &i1);
    for (size_t i = i0; i < i1; i++) {
        if (j->a) j->a[i] = A0;
        if (j->b) j->b[i] = B0;
        if (j->c) j->c[i] = C0;
    }
}

typedef struct {
    bw_job *job;
    const double *out;
    double expect;             /* every element but the spots */
    double spot;               /* the spots */
    const spots_t *spots;
    long bad[1024];            /* per thread; team size is bounded by NS_MAX_TEAM below */
    size_t first_bad[1024];
} check_job;
#define NS_MAX_TEAM 1024

static void check_work(int tid, int nt, void *arg) {
    check_job *c = arg;
    size_t i0, i1;
    ns_split(c->job->n, tid, nt, c->job->align, &i0, &i1);
    long bad = 0;
    size_t first = (size_t)-1;
    double tol = TOL * fabs(c->expect), stol = TOL * fabs(c->spot);
    for (size_t i = i0; i < i1; i++) {
        if (!(fabs(c->out[i] - c->expect) <= tol) &&   /* also catches NaN */
            !(is_spot(c->spots, i) && fabs(c->out[i] - c->spot) <= stol)) {
            if (!bad) first = i;
            bad++;
        }
    }
    c->bad[tid] = bad;
    c->first_bad[tid] = first;
}

static double *output_array(const bw_job *j) {
    return j->kernel == K_FILL ? j->a : j->kernel == K_COPY ? j->c
         : j->kernel == K_SCALE ? j->b : j->kernel == K_ADD ? j->c : j->a;
}

/* Untimed spot check after each repetition: the spots must hold this repetition's value,
 * which differs from the previous one's, so a repetition that skipped work is caught, not
 * only the last. */
static long spot_check(const double *out, const spots_t *sp, double expect) {
    long bad = 0;
    for (int k = 0; k < sp->n; k++)
        if (!(fabs(out[sp->at[k]] - expect) <= TOL * fabs(expect))) bad++;
    return bad;
}

/* The sum read computes after a step with value x. */
static double read_expect(size_t n, const spots_t *sp, double x) {
    return A0 * (double)(n - (size_t)sp->n) + x * (double)sp->n;
}

/* [variant][rep][thread] offsets (s) from the repetition's window start, as Python lists. */
static PyObject *stamps_to_py(const double *st, int nvar, int reps, int nt) {
    PyObject *out = PyList_New(nvar);
    for (int v = 0; v < nvar; v++) {
        PyObject *per_rep = PyList_New(reps);
        for (int r = 0; r < reps; r++) {
            PyObject *l = PyList_New(nt);
            for (int t = 0; t < nt; t++)
                PyList_SET_ITEM(l, t, PyFloat_FromDouble(st[((size_t)v * reps + r) * nt + t]));
            PyList_SET_ITEM(per_rep, r, l);
        }
        PyList_SET_ITEM(out, v, per_rep);
    }
    return out;
}

static int parse_isa(const char *s) {
    for (int i = 0; i < 3; i++) if (!strcmp(s, isa_names[i])) return i;
    return -1;
}

static int isa_available(int isa) {
    __builtin_cpu_init();
    if (isa == ISA_AVX2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (isa == ISA_AVX512) return __builtin_cpu_supports("avx512f");
    return 1;
}

/* Sample page locations of each thread's chunk of every array, and of the whole. */
static PyObject *where_to_py(bw_job *j, int nthreads, long samples, PyObject **by_thread,
                             long *sampled) {
    static long counts[NS_MAX_NODES + 1], total[NS_MAX_NODES + 1];
    double *arrays[3] = {j->a, j->b, j->c};
    memset(total, 0, sizeof total);
    int unavailable = 0;
    *sampled = 0;
    *by_thread = PyList_New(nthreads);
    long per = samples / (3 * nthreads);
    if (per < 16) per = 16;
    for (int t = 0; t < nthreads; t++) {
        long tcounts[NS_MAX_NODES + 1];
        memset(tcounts, 0, sizeof tcounts);
        size_t i0, i1;
        ns_split(j->n, t, nthreads, j->align, &i0, &i1);
        for (int k = 0; k < 3; k++) {
            if (!arrays[k] || i1 <= i0) continue;
            long got = ns_mem_where(arrays[k] + i0, (i1 - i0) * sizeof(double), counts, per);
            if (got < 0) { unavailable = 1; continue; }
            *sampled += got;
            for (int x = 0; x <= NS_MAX_NODES; x++) {
                tcounts[x] += counts[x];
                total[x] += counts[x];
            }
        }
        PyList_SET_ITEM(*by_thread, t, ns_where_to_py(tcounts));
    }
    if (unavailable) *sampled = -1;   /* move_pages refused: location unknown */
    return ns_where_to_py(total);
}

static PyObject *py_bw_run(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"kernel", "cpus", "n", "reps", "variants", "memory", "warmup",
                             "corrupt_index", "where_samples", "skip_rep", "late_start",
                             NULL};
    const char *kname;
    PyObject *cpus_obj, *variants_obj, *mem_obj = Py_None;
    Py_ssize_t n_el;
    int reps = 10, warmup = 1;
    long long corrupt = -1;
    long where_samples = 4096;
    int skip_rep = -1;
    double late_start = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sOniO|OiLlid", kwlist, &kname, &cpus_obj,
                                     &n_el, &reps, &variants_obj, &mem_obj, &warmup, &corrupt,
                                     &where_samples, &skip_rep, &late_start))
        return NULL;
    int kernel = -1;
    for (int k = 0; k < K_COUNT; k++) if (!strcmp(kname, kernel_names[k])) kernel = k;
    if (kernel < 0) return ns_value_error("unknown kernel '%s'", kname);
    if (n_el < 64) return ns_value_error("arrays need at least 64 elements (got %zd)", n_el);
    if (reps < 1) return ns_value_error("at least one repetition is needed");
    if (!(late_start >= 0 && late_start < 60)) return ns_value_error("late_start out of range");
    if (warmup < 0) warmup = 0;
    size_t n = (size_t)n_el;
    if (corrupt >= (long long)n)
        return ns_value_error("corrupt_index %lld outside the array", corrupt);

    /* variants: sequence of (isa, nt) */
    PyObject *vfast = PySequence_Fast(variants_obj, "variants must be a sequence of (isa, nt)");
    if (!vfast) return NULL;
    Py_ssize_t nvar = PySequence_Fast_GET_SIZE(vfast);
    if (nvar < 1 || nvar > MAX_VARIANTS) {
        Py_DECREF(vfast);
        return ns_value_error("between 1 and %d variants", MAX_VARIANTS);
    }
    int v_isa[MAX_VARIANTS], v_nt[MAX_VARIANTS];
    for (Py_ssize_t v = 0; v < nvar; v++) {
        const char *is;
        int ntf;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(vfast, v), "sp", &is, &ntf)) {
            Py_DECREF(vfast);
            return NULL;
        }
        v_isa[v] = parse_isa(is);
        if (v_isa[v] < 0) { Py_DECREF(vfast); return ns_value_error("unknown ISA '%s'", is); }
        if (!isa_available(v_isa[v])) {
            Py_DECREF(vfast);
            return ns_value_error("this CPU cannot run %s kernels", is);
        }
        v_nt[v] = kernel == K_READ ? 0 : ntf;
    }
    Py_DECREF(vfast);

    ns_mem_spec spec;
    if (!ns_mem_spec_from_py(mem_obj, &spec)) return NULL;
    int *cpus, ncpu;
    if (!ns_int_list(cpus_obj, &cpus, &ncpu)) return NULL;
    if (ncpu < 1 || ncpu > NS_MAX_TEAM) {
        free(cpus);
        return ns_value_error("between 1 and %d threads", NS_MAX_TEAM);
    }

    int need_a = kernel == K_READ || kernel == K_FILL || kernel == K_COPY || kernel == K_ADD ||
                 kernel == K_TRIAD;
    int need_b = kernel == K_SCALE || kernel == K_ADD || kernel == K_TRIAD;
    int need_c = kernel == K_COPY || kernel == K_SCALE || kernel == K_ADD || kernel == K_TRIAD;
    size_t bytes = n * sizeof(double);
    /* Split on 2 MiB boundaries when chunks are large, so a (transparent) huge page is
     * first-touched by the one thread that uses it; else on cache lines. */
    size_t align = (n / (size_t)ncpu >= 4 * 262144) ? 262144 : 8;

    char err[256] = "";
    double *times = calloc((size_t)reps * nvar, sizeof(double));
    double *rep_sums = calloc((size_t)reps * nvar, sizeof(double));
    double *rep_expect = calloc((size_t)reps * nvar, sizeof(double));
    size_t nstamp = (size_t)reps * nvar * ncpu;
    double *starts = calloc(nstamp, sizeof(double)), *ends = calloc(nstamp, sizeof(double));
    spots_t *spots = malloc(sizeof *spots);
    spots_init(spots, n);
    double *sums = calloc((size_t)ncpu * SUM_STRIDE, sizeof(double));
    check_job *chk = calloc(1, sizeof *chk);
    bw_job job = {.kernel = kernel, .n = n, .align = align, .sums = sums};
    ns_team *team = NULL;
    double init_s = 0, last_x = 0, huge = -1, huge_arr[3] = {-1, -1, -1};
    int interrupted = 0;
    long long bad = 0, first_bad = -1;
    long spot_bad = 0;
    int ok_alloc = 1;
    PyObject *where = NULL, *by_thread = NULL;
    long sampled = 0;

    ns_interrupted = 0;
    Py_BEGIN_ALLOW_THREADS
    team = ns_team_create(cpus, ncpu, err, sizeof err);
    if (team) {
        ns_team_set_late_start(team, late_start);
        if (need_a && !(job.a = ns_mem_alloc(bytes, &spec, err, sizeof err))) ok_alloc = 0;
        if (ok_alloc && need_b && !(job.b = ns_mem_alloc(bytes, &spec, err, sizeof err)))
            ok_alloc = 0;
        if (ok_alloc && need_c && !(job.c = ns_mem_alloc(bytes, &spec, err, sizeof err)))
            ok_alloc = 0;
    }
    if (team && ok_alloc) {
        double t0 = ns_now();
        ns_team_run(team, init_work, &job);
        init_s = ns_now() - t0;
        long step = 0;
        for (int w = 0; w < warmup && !interrupted; w++)
            for (int v = 0; v < nvar; v++) {
                if (ns_interrupted) { interrupted = 1; break; }
                job.isa = v_isa[v]; job.nt = v_nt[v];
                job.s = last_x = step_value(step++);
                prepare_step(kernel, job.a, spots, job.s, corrupt);
                ns_team_run(team, kernel_work, &job);
            }
        for (int r = 0; r < reps && !interrupted; r++)
            for (int v = 0; v < nvar; v++) {
                if (ns_interrupted) { interrupted = 1; break; }
                job.isa = v_isa[v]; job.nt = v_nt[v];
                job.s = last_x = step_value(step++);
                prepare_step(kernel, job.a, spots, job.s, corrupt);
                size_t at = (size_t)v * reps + r;
                /* skip_rep: test hook, a repetition that does no work must be caught */
                times[at] = r == skip_rep ? 0.0 : ns_team_run_timed(team, kernel_work, &job);
                if (r != skip_rep) {
                    const double *st = ns_team_starts(team), *en = ns_team_ends(team);
                    double first = st[0];
                    for (int t = 1; t < ncpu; t++) if (st[t] < first) first = st[t];
                    for (int t = 0; t < ncpu; t++) {
                        starts[at * ncpu + t] = st[t] - first;
                        ends[at * ncpu + t] = en[t] - first;
                    }
                }
                if (kernel == K_READ) {
                    double tot = 0;
                    for (int t = 0; t < ncpu; t++) tot += sums[t * SUM_STRIDE];
                    rep_sums[at] = tot;
                    rep_expect[at] = read_expect(n, spots, job.s);
                } else {
                    spot_bad += spot_check(output_array(&job), spots,
                                           spot_expect(kernel, job.s));
                }
            }
        if (!interrupted) {
            /* Validation: every repetition's sum (read), or every element of the output
             * after the whole sequence, as STREAM checks it. */
            if (kernel == K_READ) {
                for (int i = 0; i < reps * nvar; i++)
                    if (!(fabs(rep_sums[i] - rep_expect[i]) <= TOL * rep_expect[i])) bad++;
                chk->expect = rep_expect[(size_t)(nvar - 1) * reps + reps - 1];
            } else {
                double *out = output_array(&job);
                if (corrupt >= 0) out[corrupt] += 1.0;
                chk->job = &job;
                chk->out = out;
                chk->expect = base_expect(kernel, last_x);
                chk->spot = spot_expect(kernel, last_x);
                chk->spots = spots;
                ns_team_run(team, check_work, chk);
                for (int t = 0; t < ncpu; t++) {
                    bad += chk->bad[t];
                    if (chk->bad[t] && first_bad < 0) first_bad = (long long)chk->first_bad[t];
                }
            }
            /* Huge pages over all arrays, and per array (each is its own mapping). */
            double *arrays[3] = {job.a, job.b, job.c};
            uintptr_t st[3];
            size_t ln[3];
            int k = 0;
            for (int i = 0; i < 3; i++) {
                if (!arrays[i]) continue;
                huge_arr[k] = ns_mem_huge_fraction(arrays[i], bytes);
                st[k] = (uintptr_t)arrays[i];
                ln[k++] = ns_mem_mapped_bytes(bytes);
            }
            huge = ns_mem_huge_share(st, ln, k);
        }
    }
    Py_END_ALLOW_THREADS

    PyObject *res = NULL;
    if (!team || !ok_alloc) {
        ns_value_error("%s", err);
        goto done;
    }
    if (interrupted) goto done;
    where = where_to_py(&job, ncpu, where_samples, &by_thread, &sampled);
    res = PyDict_New();
    PyObject *tl = PyList_New(nvar), *vl = PyList_New(nvar), *sl = PyList_New(0);
    for (int v = 0; v < nvar; v++) {
        PyObject *one = PyList_New(reps);
        for (int r = 0; r < reps; r++)
            PyList_SET_ITEM(one, r, PyFloat_FromDouble(times[v * reps + r]));
        PyList_SET_ITEM(tl, v, one);
        PyList_SET_ITEM(vl, v, Py_BuildValue("(sO)", isa_names[v_isa[v]],
                                             v_nt[v] ? Py_True : Py_False));
        if (kernel == K_READ)
            for (int r = 0; r < reps; r++) {
                PyObject *f = PyFloat_FromDouble(rep_sums[v * reps + r]);
                PyList_Append(sl, f);
                Py_DECREF(f);
            }
    }
    PyObject *tmp;
#define SET(key, val) (tmp = (val), PyDict_SetItemString(res, key, tmp), Py_DECREF(tmp))
    SET("times", tl);
    SET("variants", vl);
    SET("read_sums", sl);
    SET("validated", PyBool_FromLong(bad == 0 && spot_bad == 0));
    SET("spot_bad", PyLong_FromLong(spot_bad));
    SET("bad_elements", PyLong_FromLongLong(bad));
    SET("first_bad", PyLong_FromLongLong(first_bad));
    SET("expected", PyFloat_FromDouble(chk->expect));
    SET("pages", where);
    SET("pages_by_thread", by_thread);
    SET("sampled_pages", PyLong_FromLong(sampled));
    SET("huge_fraction", PyFloat_FromDouble(huge));
    PyObject *hl = PyList_New(0);
    for (int i = 0; i < need_a + need_b + need_c; i++) {
        PyObject *f = PyFloat_FromDouble(huge_arr[i]);
        PyList_Append(hl, f);
        Py_DECREF(f);
    }
    SET("huge_by_array", hl);
    SET("thread_starts", stamps_to_py(starts, nvar, reps, ncpu));
    SET("thread_ends", stamps_to_py(ends, nvar, reps, ncpu));
    SET("init_seconds", PyFloat_FromDouble(init_s));
    SET("n", PyLong_FromSize_t(n));
    SET("align", PyLong_FromSize_t(align));
#undef SET
done:
    Py_BEGIN_ALLOW_THREADS
    if (job.a) ns_mem_free(job.a, bytes, &spec);
    if (job.b) ns_mem_free(job.b, bytes, &spec);
    if (job.c) ns_mem_free(job.c, bytes, &spec);
    ns_team_destroy(team);
    Py_END_ALLOW_THREADS
    free(cpus);
    free(times);
    free(rep_sums);
    free(rep_expect);
    free(starts);
    free(ends);
    free(spots);
    free(sums);
    free(chk);
    if (interrupted) return ns_raise_interrupt();
    return res;
}

PyMethodDef ns_bw_methods[] = {
    {"bw_run", (PyCFunction)(void (*)(void))py_bw_run, METH_VARARGS | METH_KEYWORDS,
     "bw_run(kernel, cpus, n, reps, variants, memory=None, warmup=1, corrupt_index=-1, "
     "where_samples=4096, skip_rep=-1, late_start=0.0) -> dict\n\n"
     "Run a STREAM-class kernel ('read', 'fill', 'copy', 'scale', 'add', 'triad') on threads "
     "pinned to `cpus` over arrays of n doubles placed by `memory` (see ns_mem_spec), "
     "first-touched by the pinned threads. `variants` lists (isa, nt) pairs timed "
     "interleaved, `reps` times each, after `warmup` untimed rounds. Returns per-variant "
     "seconds per repetition (earliest thread start to latest thread end, inside C), each "
     "thread's start and end offsets within that window, the validation outcome, the share "
     "of huge pages (all arrays and per array) and sampled page locations overall and per "
     "thread. Test hooks: corrupt_index >= 0 corrupts one element on purpose, skip_rep >= 0 "
     "skips that repetition's work, late_start > 0 holds thread 0 back until the other "
     "threads are done, plus that many seconds. Ctrl-C stops it between repetitions "
     "(KeyboardInterrupt)."},
    {NULL, NULL, 0, NULL},
};
