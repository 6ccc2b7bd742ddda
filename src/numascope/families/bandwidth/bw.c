/* Benchmark family 'bw': STREAM-class memory bandwidth kernels on pinned threads.
 *
 * The kernels are described once, in the table `kernels[]` below (as likwid-bench's
 * kernel files do): name, formula, the arrays they use and the one they write, STREAM's
 * bytes per element and the bytes that really cross the memory bus (ordinary stores read
 * the target line first: write-allocate), whether a step takes a new scalar, the value an
 * output element must hold afterwards, and one function per ISA. `_core.kernels()` exports
 * the table to Python (numascope.families.bandwidth.bench builds its names and byte counts from
 * it); adding a kernel is one function per ISA and one row. The `read` kernel is also the
 * compression family's plain sum (ns_bw_read, ns.h).
 *
 *   read   sum += a[i]            fill   a[i] = s
 *   copy   c[i] = a[i]            scale  b[i] = s * c[i]
 *   add    c[i] = a[i] + b[i]     triad  a[i] = b[i] + s * c[i]
 * each in a scalar version (auto-vectorization switched off), AVX2 and AVX-512 versions
 * (target attributes, chosen at run time through the one ISA probe, cpu.c), each storing
 * kernel with ordinary or with non-temporal (streaming) stores.
 *
 * One call of bw_run: create a team pinned to the given CPUs, map the arrays with the
 * requested NUMA policy, first-touch them with the same static split the kernel uses,
 * run warm-ups, calibrate each variant's passes per repetition (a repetition runs the
 * kernel over the arrays as many times as it takes to last min_seconds; 1 pass where one
 * lasts that long), then `reps` timed repetitions of every requested variant (interleaved,
 * so drift hits all variants alike), validate what the kernel computed, sample where the
 * pages are. A repetition is timed from the earliest thread's start to the latest
 * thread's end (each thread stamps its own); the GIL is released; Ctrl-C stops the call
 * between repetitions.
 *
 * Every repetition's output depends on the repetition, so one that skipped its work (or a
 * thread that skipped its chunk) leaves stale values that the spot check after it finds:
 * kernels with a scalar (fill, scale, triad) take a new one each time; the others (read,
 * copy, add) get a new input value at the spot-checked elements of a before each
 * repetition (an untimed write of a few hundred elements, some in every thread's chunk).
 * Within a repetition of several passes, every pass checks two marks (see bw_args). */
#include "ns.h"
#include "memory.h"
#include "team.h"
#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Initial values: exact in binary, so expected results are exact too. */
#define A0 1.0
#define B0 2.0
#define C0 0.5
/* Relative tolerance of the check (STREAM uses 1e-13 for double). */
#define TOL 1e-13
#define SUM_STRIDE 8           /* one cache line per thread's partial sum */
#define MAX_VARIANTS 8

/* What every kernel function gets: the arrays (NULL where unused), the pass values, the
 * store kind and how many passes to make over elements [i0, i1).
 *
 * Passes: a repetition may run the kernel over its chunk several times (bw_run calibrates
 * the count so that a repetition lasts a minimum time, as likwid-bench does). The passes of
 * one step take two alternating values, the last pass the step's own value s and the ones
 * before it s + ALT_DELTA, s, s + ALT_DELTA ... backwards, so consecutive passes always
 * differ and the step ends as a one-pass step with value s would (the spot checks and the
 * full validation after it are unchanged). Kernels with a scalar use the pass's value as
 * their scalar; copy and add write it into their chunk's two marks (first and last element
 * of a, both spots). With more than one pass, a storing kernel checks after every pass
 * that its chunk's first and last output element hold that pass's result, so a pass that
 * skipped work leaves the previous pass's value and is counted; read returns the sum over
 * all its passes, which is short by a pass's partial sum when one was skipped.
 *
 * A kernel returns its partial sum over all passes (read) or the number of marks it found
 * wrong (storing kernels: 0 when every pass did its work). */
typedef struct {
    double *a, *b, *c;
    double s;                  /* the last pass's value (the step's) */
    double s_alt;              /* the other passes' value */
    double e, e_alt;           /* an output mark after a pass with s, with s_alt */
    long passes;               /* >= 1 */
    long skip_pass;            /* test hook: this pass (of every thread) does no work; -1 */
    double *poison;            /* test hook (read): an element off by one after every pass */
    int nt;                    /* streaming (non-temporal) stores */
    int acc;                   /* read: independent vector sums, 8 or 16 (numascope's choice
                                  per core: its vector loads per cycle x the add latency) */
} bw_args;
typedef double (*bw_fn)(const bw_args *x, size_t i0, size_t i1);
#define ALT_DELTA 16.0         /* s_alt = s + 16: never another step's value (1 .. 8.5) */

/* A pass's first mark, a[i0] = v. The vector kernels write the whole first vector (lane 0
 * replaced), so that their first load of the pass is forwarded from a store of its own size:
 * a load that only partly overlaps a younger store waits until that store reaches the cache
 * (store-to-load forwarding fails), a stall that costs several % of an L1-sized pass. */
static inline void mark_scalar(double *p, double v, size_t len) { (void)len; *p = v; }

/* The pass loop around a storing kernel's body (the rest: it uses `v`, this pass's value); MARKS:
 * it writes v into the marks of a (kernels without a scalar) with MARK (the first one). */
#define PASSES(OUT, MARKS, MARK, ...)                                                        \
    if (i1 <= i0) return 0;                                                                  \
    long bad_ = 0, np_ = x->passes;                                                          \
    for (long p_ = 0; p_ < np_; p_++) {                                                      \
        int alt_ = (int)((np_ - 1 - p_) & 1);                                                \
        double v = alt_ ? x->s_alt : x->s;                                                   \
        if (MARKS && np_ > 1) { MARK(x->a + i0, v, i1 - i0); x->a[i1 - 1] = v; }            \
        __asm__ volatile("" ::: "memory");                                                   \
        if (p_ != x->skip_pass) { __VA_ARGS__ }                                              \
        if (np_ > 1) {                                                                       \
            double e_ = alt_ ? x->e_alt : x->e;                                              \
            bad_ += ((OUT)[i0] != e_) + ((OUT)[i1 - 1] != e_);                               \
        }                                                                                    \
    }                                                                                        \
    return (double)bad_;

/* The pass loop of read (ONE: one pass's sum): the sum over every pass, its marks taking
 * each pass's value too, so that the total depends on every pass having read them. */
#define READ_PASSES(ONE, MARK)                                                               \
    if (i1 <= i0) return 0;                                                                  \
    double tot_ = 0;                                                                         \
    long np_ = x->passes;                                                                    \
    for (long p_ = 0; p_ < np_; p_++) {                                                      \
        if (np_ > 1) {                                                                       \
            double v = ((np_ - 1 - p_) & 1) ? x->s_alt : x->s;                               \
            MARK(x->a + i0, v, i1 - i0); x->a[i1 - 1] = v;                                  \
            if (x->poison && x->poison >= x->a + i0 && x->poison < x->a + i1) *x->poison += 1; \
        }                                                                                    \
        __asm__ volatile("" ::: "memory");   /* no pass's loads merged with another's */     \
        if (p_ != x->skip_pass) tot_ += ONE(x->a, i0, i1);                                   \
    }                                                                                        \
    return tot_;

/* ---- scalar kernels: plain loops, vectorization and memcpy/memset idioms disabled ---- */
#define SCALAR __attribute__((noinline, optimize("no-tree-vectorize", \
                                                  "no-tree-loop-distribute-patterns")))

static inline __attribute__((always_inline, optimize("no-tree-vectorize",
                                                    "no-tree-loop-distribute-patterns")))
double read1_scalar(const double *a, size_t i0, size_t i1) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = i0;
    for (; i + 4 <= i1; i += 4) { s0 += a[i]; s1 += a[i + 1]; s2 += a[i + 2]; s3 += a[i + 3]; }
    for (; i < i1; i++) s0 += a[i];
    return (s0 + s1) + (s2 + s3);
}
static SCALAR double read_scalar(const bw_args *x, size_t i0, size_t i1) {
    READ_PASSES(read1_scalar, mark_scalar)
}

static inline void st_nt64(double *p, double v) {
    long long bits;
    memcpy(&bits, &v, sizeof bits);
    _mm_stream_si64((long long *)p, bits);   /* movnti: a scalar streaming store */
}

static SCALAR double fill_scalar(const bw_args *x, size_t i0, size_t i1) {
    double *a = x->a;
    PASSES(a, 0, mark_scalar,
        if (x->nt) { for (size_t i = i0; i < i1; i++) st_nt64(&a[i], v); }
        else { for (size_t i = i0; i < i1; i++) a[i] = v; })
}
static SCALAR double copy_scalar(const bw_args *x, size_t i0, size_t i1) {
    double *c = x->c;
    const double *a = x->a;
    PASSES(c, 1, mark_scalar,
        if (x->nt) { for (size_t i = i0; i < i1; i++) st_nt64(&c[i], a[i]); }
        else { for (size_t i = i0; i < i1; i++) c[i] = a[i]; })
}
static SCALAR double scale_scalar(const bw_args *x, size_t i0, size_t i1) {
    double *b = x->b;
    const double *c = x->c;
    PASSES(b, 0, mark_scalar,
        if (x->nt) { for (size_t i = i0; i < i1; i++) st_nt64(&b[i], v * c[i]); }
        else { for (size_t i = i0; i < i1; i++) b[i] = v * c[i]; })
}
static SCALAR double add_scalar(const bw_args *x, size_t i0, size_t i1) {
    double *c = x->c;
    const double *a = x->a, *b = x->b;
    PASSES(c, 1, mark_scalar,
        if (x->nt) { for (size_t i = i0; i < i1; i++) st_nt64(&c[i], a[i] + b[i]); }
        else { for (size_t i = i0; i < i1; i++) c[i] = a[i] + b[i]; })
}
static SCALAR double triad_scalar(const bw_args *x, size_t i0, size_t i1) {
    double *a = x->a;
    const double *b = x->b, *c = x->c;
    PASSES(a, 0, mark_scalar,
        if (x->nt) { for (size_t i = i0; i < i1; i++) st_nt64(&a[i], b[i] + v * c[i]); }
        else { for (size_t i = i0; i < i1; i++) a[i] = b[i] + v * c[i]; })
}

/* ---- vector kernels, unrolled 4 vectors deep (likwid-bench's stream_avx512 and kin are
 * too): enough independent loads and stores in flight to keep an L1 port busy every
 * cycle. The streaming-store loops stay 2 deep, as they were (memory-bound: a 4-deep
 * version measured no faster at DRAM sizes). Chunks start 64-byte aligned (arrays are 2 MiB aligned and the split is a
 * multiple of 8 elements), so the storing kernels use aligned loads and stores; the last
 * chunk's tail (< one unrolled step) takes one vector at a time, then scalar code (up to
 * 4 W - 1 scalar elements were a visible share of a pass at L1 sizes: a 16 KiB fill went
 * from 0.75 to 0.94 of likwid-bench on a Sapphire Rapids guest). `read` loads unaligned
 * (as fast on aligned data on these CPUs) into 8 or 16 accumulators (x->acc: at least an
 * add's latency times the vector loads per cycle, chosen per core by the Python side) that
 * run on over every pass of a call: it is also the compression family's plain sum, over
 * blocks that start anywhere. ---- */
#define AVX2 __attribute__((noinline, target("avx2,fma")))
#define AVX512 __attribute__((noinline, target("avx512f")))
#define AVX2_INL static inline __attribute__((always_inline, target("avx2,fma")))
#define AVX512_INL static inline __attribute__((always_inline, target("avx512f")))

#define VEC_KERNELS(SUF, ATTR, INL, VT, W, LOAD, LOADU, STORE, STOREU, STREAM, SET1, ADD, MUL, \
                    FMA, LANE0)                                                              \
    INL void mark_##SUF(double *p, double v, size_t len) {                                   \
        if (len >= W) STOREU(p, LANE0(LOADU(p), SET1(v)));                                   \
        else *p = v;                                                                         \
    }                                                                                        \
    /* one aligned vector stored as the call asks (streaming or not): a chunk's tail */     \
    INL void put_##SUF(const bw_args *x, double *p, VT u) {                                  \
        if (x->nt) STREAM(p, u); else STORE(p, u);                                           \
    }                                                                                        \
    /* read: N independent vector sums that run on over every pass (one reduction per call,  \
     * not per pass: at L1 sizes a pass is a few dozen cycles and a reduction of its own     \
     * would cost a third of them); the total is the sum over all passes, as READ_PASSES'. */\
    INL double readn_##SUF(const bw_args *x, size_t i0, size_t i1, const int N_) {           \
        VT s[16];                                                                            \
        _Pragma("GCC unroll 16") for (int k = 0; k < 16; k++) s[k] = SET1(0);               \
        const double *a = x->a;                                                              \
        double tail = 0;                                                                     \
        long np_ = x->passes;                                                                \
        for (long p_ = 0; p_ < np_; p_++) {                                                  \
            if (np_ > 1) {                                                                   \
                double v = ((np_ - 1 - p_) & 1) ? x->s_alt : x->s;                           \
                mark_##SUF(x->a + i0, v, i1 - i0); x->a[i1 - 1] = v;                        \
                if (x->poison && x->poison >= x->a + i0 && x->poison < x->a + i1)            \
                    *x->poison += 1;                                                         \
            }                                                                                \
            __asm__ volatile("" ::: "memory");   /* no pass's loads merged with another's */ \
            if (p_ == x->skip_pass) continue;                                                \
            size_t i = i0;                                                                   \
            for (; i + (size_t)N_ * W <= i1; i += (size_t)N_ * W) {                          \
                _Pragma("GCC unroll 16") for (int k = 0; k < N_; k++)                        \
                    s[k] = ADD(s[k], LOADU(a + i + (size_t)k * W));                          \
            }                                                                                \
            for (; i + W <= i1; i += W) s[0] = ADD(s[0], LOADU(a + i));                      \
            for (; i < i1; i++) tail += a[i];                                                \
        }                                                                                    \
        _Pragma("GCC unroll 8") for (int k = 0; k < 8; k++) s[k] = ADD(s[k], s[k + 8]);     \
        VT t = ADD(ADD(ADD(s[0], s[1]), ADD(s[2], s[3])), ADD(ADD(s[4], s[5]), ADD(s[6], s[7]))); \
        double lanes[W];                                                                     \
        STOREU(lanes, t);                                                                    \
        double r = 0;                                                                        \
        for (int q = 0; q < W; q++) r += lanes[q];                                           \
        return r + tail;                                                                     \
    }                                                                                        \
    static ATTR double read_##SUF(const bw_args *x, size_t i0, size_t i1) {                  \
        if (i1 <= i0) return 0;                                                              \
        return x->acc == 16 ? readn_##SUF(x, i0, i1, 16) : readn_##SUF(x, i0, i1, 8);        \
    }                                                                                        \
    static ATTR double fill_##SUF(const bw_args *x, size_t i0, size_t i1) {                  \
        double *a = x->a;                                                                    \
        PASSES(a, 0, mark_##SUF,                                                             \
            VT vv = SET1(v);                                                                 \
            size_t i = i0;                                                                   \
            if (x->nt) for (; i + 2 * W <= i1; i += 2 * W) {                                 \
                _Pragma("GCC unroll 2") for (int k = 0; k < 2; k++) STREAM(a + i + k * W, vv); \
            }                                                                                \
            else for (; i + 4 * W <= i1; i += 4 * W) {                                       \
                _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++) STORE(a + i + k * W, vv); \
            }                                                                                \
            for (; i + W <= i1; i += W) put_##SUF(x, a + i, vv);                             \
            for (; i < i1; i++) a[i] = v;)                                                   \
    }                                                                                        \
    static ATTR double copy_##SUF(const bw_args *x, size_t i0, size_t i1) {                  \
        double *c = x->c;                                                                    \
        const double *a = x->a;                                                              \
        PASSES(c, 1, mark_##SUF,                                                             \
            size_t i = i0;                                                                   \
            if (x->nt) for (; i + 2 * W <= i1; i += 2 * W) {                                 \
                VT u0 = LOAD(a + i), u1 = LOAD(a + i + W);                                   \
                STREAM(c + i, u0); STREAM(c + i + W, u1);                                    \
            }                                                                                \
            else for (; i + 4 * W <= i1; i += 4 * W) {                                       \
                VT u0 = LOAD(a + i), u1 = LOAD(a + i + W), u2 = LOAD(a + i + 2 * W),         \
                   u3 = LOAD(a + i + 3 * W);                                                 \
                STORE(c + i, u0); STORE(c + i + W, u1); STORE(c + i + 2 * W, u2);            \
                STORE(c + i + 3 * W, u3);                                                    \
            }                                                                                \
            for (; i + W <= i1; i += W) put_##SUF(x, c + i, LOAD(a + i));                    \
            for (; i < i1; i++) c[i] = a[i];)                                                \
    }                                                                                        \
    static ATTR double scale_##SUF(const bw_args *x, size_t i0, size_t i1) {                 \
        double *b = x->b;                                                                    \
        const double *c = x->c;                                                              \
        PASSES(b, 0, mark_##SUF,                                                             \
            VT vs = SET1(v);                                                                 \
            size_t i = i0;                                                                   \
            if (x->nt) for (; i + 2 * W <= i1; i += 2 * W) {                                 \
                _Pragma("GCC unroll 2") for (int k = 0; k < 2; k++)                          \
                    STREAM(b + i + k * W, MUL(vs, LOAD(c + i + k * W)));                     \
            }                                                                                \
            else for (; i + 4 * W <= i1; i += 4 * W) {                                       \
                _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++)                          \
                    STORE(b + i + k * W, MUL(vs, LOAD(c + i + k * W)));                      \
            }                                                                                \
            for (; i + W <= i1; i += W) put_##SUF(x, b + i, MUL(vs, LOAD(c + i)));           \
            for (; i < i1; i++) b[i] = v * c[i];)                                            \
    }                                                                                        \
    static ATTR double add_##SUF(const bw_args *x, size_t i0, size_t i1) {                   \
        double *c = x->c;                                                                    \
        const double *a = x->a, *b = x->b;                                                   \
        PASSES(c, 1, mark_##SUF,                                                             \
            size_t i = i0;                                                                   \
            if (x->nt) for (; i + 2 * W <= i1; i += 2 * W) {                                 \
                _Pragma("GCC unroll 2") for (int k = 0; k < 2; k++)                          \
                    STREAM(c + i + k * W, ADD(LOAD(a + i + k * W), LOAD(b + i + k * W)));    \
            }                                                                                \
            else for (; i + 4 * W <= i1; i += 4 * W) {                                       \
                _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++)                          \
                    STORE(c + i + k * W, ADD(LOAD(a + i + k * W), LOAD(b + i + k * W)));     \
            }                                                                                \
            for (; i + W <= i1; i += W) put_##SUF(x, c + i, ADD(LOAD(a + i), LOAD(b + i)));  \
            for (; i < i1; i++) c[i] = a[i] + b[i];)                                         \
    }                                                                                        \
    static ATTR double triad_##SUF(const bw_args *x, size_t i0, size_t i1) {                 \
        double *a = x->a;                                                                    \
        const double *b = x->b, *c = x->c;                                                   \
        PASSES(a, 0, mark_##SUF,                                                             \
            VT vs = SET1(v);                                                                 \
            size_t i = i0;                                                                   \
            if (x->nt) for (; i + 2 * W <= i1; i += 2 * W) {                                 \
                _Pragma("GCC unroll 2") for (int k = 0; k < 2; k++)                          \
                    STREAM(a + i + k * W, FMA(vs, LOAD(c + i + k * W), LOAD(b + i + k * W))); \
            }                                                                                \
            else for (; i + 4 * W <= i1; i += 4 * W) {                                       \
                _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++)                          \
                    STORE(a + i + k * W, FMA(vs, LOAD(c + i + k * W), LOAD(b + i + k * W))); \
            }                                                                                \
            for (; i + W <= i1; i += W) put_##SUF(x, a + i, FMA(vs, LOAD(c + i), LOAD(b + i))); \
            for (; i < i1; i++) a[i] = b[i] + v * c[i];)                                     \
    }

#define AVX2_LANE0(old, v) _mm256_blend_pd(old, v, 1)
#define AVX512_LANE0(old, v) _mm512_mask_mov_pd(old, 1, v)
VEC_KERNELS(avx2, AVX2, AVX2_INL, __m256d, 4, _mm256_load_pd, _mm256_loadu_pd,
            _mm256_store_pd, _mm256_storeu_pd, _mm256_stream_pd, _mm256_set1_pd,
            _mm256_add_pd, _mm256_mul_pd, _mm256_fmadd_pd, AVX2_LANE0)
VEC_KERNELS(avx512, AVX512, AVX512_INL, __m512d, 8, _mm512_load_pd, _mm512_loadu_pd,
            _mm512_store_pd, _mm512_storeu_pd, _mm512_stream_pd, _mm512_set1_pd,
            _mm512_add_pd, _mm512_mul_pd, _mm512_fmadd_pd, AVX512_LANE0)

/* ---- expected values: what an output element holds after a step with value x, at a
 * spot-checked element (spot = 1) or elsewhere. Inputs start at A0, B0, C0; every value
 * and result is exact in binary. ---- */
static double fill_expect(double x, int spot) { (void)spot; return x; }
static double copy_expect(double x, int spot) { return spot ? x : A0; }
static double scale_expect(double x, int spot) { (void)spot; return x * C0; }
static double add_expect(double x, int spot) { return (spot ? x : A0) + B0; }
static double triad_expect(double x, int spot) { (void)spot; return B0 + x * C0; }

/* ---- the kernel table ---- */
enum { ARR_A = 1, ARR_B = 2, ARR_C = 4 };
enum { OUT_SUM = -1, OUT_A = 0, OUT_B = 1, OUT_C = 2 };

typedef struct {
    const char *name;
    const char *formula;
    unsigned arrays;           /* ARR_A | ARR_B | ARR_C: the arrays it uses */
    int out;                   /* the array it writes (OUT_A..OUT_C), or OUT_SUM: it sums a */
    int stream_bytes;          /* STREAM's bytes per element: 8 per array read or written */
    int dram_bytes;            /* bytes per element on the bus with ordinary stores
                                * (write-allocate reads the target line first); streaming
                                * stores move stream_bytes */
    int scalar;                /* 1: a new scalar s each step; 0: new inputs at a's spots */
    double (*expect)(double x, int spot);   /* NULL for OUT_SUM: the sum of a is expected */
    bw_fn fn[NS_ISA_COUNT];    /* scalar, avx2, avx512 */
} bw_kernel;

#define PER_ISA(k) {k##_scalar, k##_avx2, k##_avx512}
static const bw_kernel kernels[] = {
    {"read",  "sum += a[i]",            ARR_A,                 OUT_SUM, 8,  8,  0, NULL,
     PER_ISA(read)},
    {"fill",  "a[i] = s",               ARR_A,                 OUT_A,   8,  16, 1, fill_expect,
     PER_ISA(fill)},
    {"copy",  "c[i] = a[i]",            ARR_A | ARR_C,         OUT_C,   16, 24, 0, copy_expect,
     PER_ISA(copy)},
    {"scale", "b[i] = s * c[i]",        ARR_B | ARR_C,         OUT_B,   16, 24, 1, scale_expect,
     PER_ISA(scale)},
    {"add",   "c[i] = a[i] + b[i]",     ARR_A | ARR_B | ARR_C, OUT_C,   24, 32, 0, add_expect,
     PER_ISA(add)},
    {"triad", "a[i] = b[i] + s * c[i]", ARR_A | ARR_B | ARR_C, OUT_A,   24, 32, 1, triad_expect,
     PER_ISA(triad)},
};
#define NKERNELS ((int)(sizeof kernels / sizeof kernels[0]))
#define K_READ 0               /* kernels[K_READ] is "read": ns_bw_read */

static const bw_kernel *find_kernel(const char *name) {
    for (int k = 0; k < NKERNELS; k++) if (!strcmp(name, kernels[k].name)) return &kernels[k];
    return NULL;
}

double ns_bw_read(int isa, const double *a, size_t n) {
    bw_args x = {.a = (double *)a, .passes = 1, .skip_pass = -1, .acc = 8};  /* a unchanged */
    if (isa < 0 || isa >= NS_ISA_COUNT) isa = NS_ISA_SCALAR;
    return kernels[K_READ].fn[isa](&x, 0, n);
}

typedef struct {
    const bw_kernel *k;
    int isa;
    bw_args x;
    size_t n, align;
    double *sums;              /* nthreads * SUM_STRIDE */
} bw_job;

/* ---- per-repetition values ---- */
/* The value of step k (warm-ups and repetitions of all variants, counted together): the
 * scalar of kernels that take one and the spot inputs of the others. Consecutive steps
 * always differ; every value and every result below is exact in binary. */
static double step_value(long k) { return 1.0 + 0.5 * (double)(k % 16); }

/* The split of the arrays among the threads (ns_split): on 2 MiB boundaries when chunks
 * are large, so a (transparent) huge page is first-touched by the one thread that uses it;
 * else on cache lines. */
static size_t split_align(size_t n, int nthreads) {
    return (n / (size_t)nthreads >= 4 * 262144) ? 262144 : 8;
}

/* Spot-checked elements: in every thread's chunk its first and last element and evenly
 * spread ones between, SPOT_TARGET or more in all, ascending and distinct. Spots chosen per
 * chunk (not spread over the whole array) cover every thread at any team size, so a thread
 * that skipped its part of a repetition is caught. */
#define SPOT_TARGET 257
#define SPOT_PER_CHUNK_MIN 2
typedef struct {
    size_t *at;
    int n;
} spots_t;

static int spots_per_chunk(int nthreads) {
    int k = (SPOT_TARGET + nthreads - 1) / nthreads;
    return k < SPOT_PER_CHUNK_MIN ? SPOT_PER_CHUNK_MIN : k;
}

/* 0 when out of memory. */
static int spots_init(spots_t *sp, size_t n, int nthreads, size_t align) {
    int per = spots_per_chunk(nthreads);
    sp->n = 0;
    sp->at = malloc((size_t)per * (size_t)nthreads * sizeof *sp->at);
    if (!sp->at) return 0;
    for (int t = 0; t < nthreads; t++) {
        size_t i0, i1;
        ns_split(n, t, nthreads, align, &i0, &i1);
        if (i1 <= i0) continue;              /* no work, nothing to check */
        size_t last = i1 - 1 - i0;
        for (int k = 0; k < per; k++) {
            size_t i = i0 + (size_t)((double)last * k / (per - 1));
            if (sp->n == 0 || sp->at[sp->n - 1] < i) sp->at[sp->n++] = i;
        }
    }
    return 1;
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

/* Before a step of a kernel without a scalar: the spots of input a take this step's value.
 * corrupt >= 0 (summing kernels only; test hook) keeps one input element off by one. */
static void prepare_step(const bw_kernel *k, double *a, const spots_t *sp, double x,
                         long long corrupt) {
    if (k->scalar) return;
    for (int i = 0; i < sp->n; i++) a[sp->at[i]] = x;
    if (k->out == OUT_SUM && corrupt >= 0)
        a[corrupt] = (is_spot(sp, (size_t)corrupt) ? x : A0) + 1.0;
}

/* ---- team work functions ---- */
static void kernel_work(int tid, int nt, void *arg) {
    bw_job *j = arg;
    size_t i0, i1;
    ns_split(j->n, tid, nt, j->align, &i0, &i1);
    double r = j->k->fn[j->isa](&j->x, i0, i1);
    if (j->x.nt) _mm_sfence();  /* streaming stores are globally visible before the barrier */
    j->sums[tid * SUM_STRIDE] = r;   /* read: the sum; storing kernels: marks found wrong */
}

/* First touch: each pinned thread writes the part of every array it will later use. */
static void init_work(int tid, int nt, void *arg) {
    bw_job *j = arg;
    size_t i0, i1;
    ns_split(j->n, tid, nt, j->align, &i0, &i1);
    double *a = j->x.a, *b = j->x.b, *c = j->x.c;
    for (size_t i = i0; i < i1; i++) {
        if (a) a[i] = A0;
        if (b) b[i] = B0;
        if (c) c[i] = C0;
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
    return j->k->out == OUT_B ? j->x.b : j->k->out == OUT_C ? j->x.c : j->x.a;
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

/* Mark elements (first and last of every thread's non-empty chunk) for n and the team. */
static size_t count_marks(size_t n, int nthreads, size_t align) {
    size_t m = 0;
    for (int t = 0; t < nthreads; t++) {
        size_t i0, i1;
        ns_split(n, t, nthreads, align, &i0, &i1);
        m += i1 > i0 + 1 ? 2 : i1 > i0 ? 1 : 0;
    }
    return m;
}

/* The sum read computes over a step with value x and `passes` passes: every spot holds x,
 * but with several passes the marks take x and x + ALT_DELTA by turns (the last pass x). */
static double read_expect(size_t n, const spots_t *sp, double x, long passes, size_t marks) {
    double one = A0 * (double)(n - (size_t)sp->n) + x * (double)sp->n;
    if (passes <= 1) return one;
    double m = (double)marks, with_x = (double)((passes + 1) / 2), with_alt = (double)(passes / 2);
    return (double)passes * (one - m * x) + m * (with_x * x + with_alt * (x + ALT_DELTA));
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
    for (int i = 0; i < NS_ISA_COUNT; i++) if (!strcmp(s, ns_isa_names[i])) return i;
    return -1;
}

/* Sample page locations of each thread's chunk of every array, and of the whole. */
static PyObject *where_to_py(bw_job *j, int nthreads, long samples, PyObject **by_thread,
                             long *sampled) {
    static long counts[NS_MAX_NODES + 1], total[NS_MAX_NODES + 1];
    double *arrays[3] = {j->x.a, j->x.b, j->x.c};
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

/* Set up step `step` with `passes` passes: its values and expected marks, and the spot
 * inputs of kernels without a scalar (prepare_step). */
static void set_step(bw_job *j, const spots_t *sp, long step, long passes, long long corrupt) {
    const bw_kernel *k = j->k;
    double x = step_value(step);
    j->x.s = x;
    j->x.s_alt = x + ALT_DELTA;
    j->x.passes = passes;
    if (k->expect) {
        j->x.e = k->expect(x, 1);
        j->x.e_alt = k->expect(x + ALT_DELTA, 1);
    }
    j->x.poison = k->out == OUT_SUM && corrupt >= 0 && passes > 1 ? &j->x.a[corrupt] : NULL;
    prepare_step(k, j->x.a, sp, x, corrupt);
}

/* Marks found wrong by the storing kernels' threads in the last run. */
static long marks_bad(const bw_job *j, int nthreads) {
    if (j->k->out == OUT_SUM) return 0;
    double b = 0;
    for (int t = 0; t < nthreads; t++) b += j->sums[t * SUM_STRIDE];
    return (long)b;
}

/* Calibration: the passes a repetition needs to last min_s, from one timed trial (t, with
 * one pass; t < 0: none yet) and as many more as it takes, each trial a step of its
 * own: grown by the shortfall (x 1.2, at least x 2, at most x 1000 per trial, as a trial
 * disturbed either way must not send it far off). */
#define PASSES_MAX (1L << 40)
static long calibrate(ns_team *team, bw_job *j, const spots_t *sp, long *step, double t,
                      double min_s, long long corrupt, long *bad, int nthreads) {
    long passes = 1;
    for (;;) {
        if (t < 0) {
            set_step(j, sp, (*step)++, passes, corrupt);
            t = ns_team_run_timed(team, kernel_work, j);
            *bad += marks_bad(j, nthreads);
        }
        if (t >= min_s || passes >= PASSES_MAX || ns_interrupted) return passes;
        double grow = t > 0 ? 1.2 * min_s / t : 1000;
        grow = grow < 2 ? 2 : grow > 1000 ? 1000 : grow;
        double next = ceil((double)passes * grow);
        passes = next > (double)PASSES_MAX ? PASSES_MAX : (long)next;
        t = -1;
    }
}

static PyObject *py_bw_run(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"kernel", "cpus", "n", "reps", "variants", "memory", "warmup",
                             "corrupt_index", "where_samples", "skip_rep", "late_start",
                             "passes", "min_seconds", "skip_pass", "accumulators", NULL};
    const char *kname;
    PyObject *cpus_obj, *variants_obj, *mem_obj = Py_None;
    Py_ssize_t n_el;
    /* reps and warmup come checked from the Python side (families/bandwidth/options.py and
       BandwidthParams declare their defaults): no default here, warmup must be given */
    int reps = 0, warmup = -1;
    long long corrupt = -1;
    long where_samples = 4096;
    int skip_rep = -1;
    double late_start = 0, min_s = 0;
    PyObject *passes_obj = Py_None;
    long skip_pass = -1;
    int acc = 8;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sOniO|OiLlidOdli", kwlist, &kname, &cpus_obj,
                                     &n_el, &reps, &variants_obj, &mem_obj, &warmup, &corrupt,
                                     &where_samples, &skip_rep, &late_start, &passes_obj,
                                     &min_s, &skip_pass, &acc))
        return NULL;
    if (acc != 8 && acc != 16) return ns_value_error("accumulators must be 8 or 16 (got %d)", acc);
    const bw_kernel *kern = find_kernel(kname);
    if (!kern) return ns_value_error("unknown kernel '%s'", kname);
    if (n_el < 64) return ns_value_error("arrays need at least 64 elements (got %zd)", n_el);
    if (reps < 1) return ns_value_error("at least one repetition is needed");
    if (!(late_start >= 0 && late_start < 60)) return ns_value_error("late_start out of range");
    if (warmup < 0) return ns_value_error("warmup (untimed rounds, >= 0) must be given");
    if (!(min_s >= 0 && min_s <= 60)) return ns_value_error("min_seconds out of range (0..60)");
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
        if (!ns_isa_supported(v_isa[v])) {
            Py_DECREF(vfast);
            return ns_value_error("this CPU cannot run %s kernels", is);
        }
        v_nt[v] = kern->out == OUT_SUM ? 0 : ntf;
    }
    Py_DECREF(vfast);
    /* passes per variant: given (>= 1), or 0: calibrated to last min_seconds */
    long v_passes[MAX_VARIANTS] = {0};
    if (passes_obj != Py_None) {
        PyObject *pf = PySequence_Fast(passes_obj, "passes must be a sequence of counts");
        if (!pf) return NULL;
        if (PySequence_Fast_GET_SIZE(pf) != nvar) {
            Py_DECREF(pf);
            return ns_value_error("passes: one count per variant");
        }
        for (Py_ssize_t v = 0; v < nvar; v++) {
            v_passes[v] = PyLong_AsLong(PySequence_Fast_GET_ITEM(pf, v));
            if (v_passes[v] < 0 || v_passes[v] > PASSES_MAX) {
                Py_DECREF(pf);
                if (!PyErr_Occurred()) ns_value_error("passes out of range (0: calibrate)");
                return NULL;
            }
        }
        Py_DECREF(pf);
    }
    ns_mem_spec spec;
    if (!ns_mem_spec_from_py(mem_obj, &spec)) return NULL;
    int *cpus, ncpu;
    if (!ns_int_list(cpus_obj, &cpus, &ncpu)) return NULL;
    if (ncpu < 1 || ncpu > NS_MAX_TEAM) {
        free(cpus);
        return ns_value_error("between 1 and %d threads", NS_MAX_TEAM);
    }

    int need_a = (kern->arrays & ARR_A) != 0, need_b = (kern->arrays & ARR_B) != 0,
        need_c = (kern->arrays & ARR_C) != 0;
    size_t bytes = n * sizeof(double);
    size_t align = split_align(n, ncpu), marks = count_marks(n, ncpu, align);
    spots_t spots;
    if (!spots_init(&spots, n, ncpu, align)) {
        free(cpus);
        return PyErr_NoMemory();
    }

    char err[256] = "";
    double *times = calloc((size_t)reps * nvar, sizeof(double));
    double *rep_sums = calloc((size_t)reps * nvar, sizeof(double));
    double *rep_expect = calloc((size_t)reps * nvar, sizeof(double));
    size_t nstamp = (size_t)reps * nvar * ncpu;
    double *starts = calloc(nstamp, sizeof(double)), *ends = calloc(nstamp, sizeof(double));
    /* each repetition's first start and last end on CLOCK_MONOTONIC_RAW (ns_now): the same
     * clock in every process, so that several processes' repetitions can be set in time */
    double *rep_span = calloc((size_t)reps * nvar * 2, sizeof(double));
    double *sums = calloc((size_t)ncpu * SUM_STRIDE, sizeof(double));
    check_job *chk = calloc(1, sizeof *chk);
    bw_job job = {.k = kern, .n = n, .align = align, .sums = sums,
                  .x = {.passes = 1, .skip_pass = -1, .acc = acc}};
    ns_team *team = NULL;
    double init_s = 0, last_x = 0, huge = -1, huge_arr[3] = {-1, -1, -1};
    int interrupted = 0;
    long long bad = 0, first_bad = -1;
    long spot_bad = 0, pass_bad = 0;
    int ok_alloc = 1;
    PyObject *where = NULL, *by_thread = NULL;
    long sampled = 0;

    ns_interrupted = 0;
    Py_BEGIN_ALLOW_THREADS
    team = ns_team_create(cpus, ncpu, err, sizeof err);
    if (team) {
        ns_team_set_late_start(team, late_start);
        if (need_a && !(job.x.a = ns_mem_alloc(bytes, &spec, err, sizeof err))) ok_alloc = 0;
        if (ok_alloc && need_b && !(job.x.b = ns_mem_alloc(bytes, &spec, err, sizeof err)))
            ok_alloc = 0;
        if (ok_alloc && need_c && !(job.x.c = ns_mem_alloc(bytes, &spec, err, sizeof err)))
            ok_alloc = 0;
    }
    if (team && ok_alloc) {
        double t0 = ns_now();
        ns_team_run(team, init_work, &job);
        init_s = ns_now() - t0;
        long step = 0;
        /* warm-ups: one pass each (where passes are given, that many) */
        for (int w = 0; w < warmup && !interrupted; w++)
            for (int v = 0; v < nvar; v++) {
                if (ns_interrupted) { interrupted = 1; break; }
                job.isa = v_isa[v]; job.x.nt = v_nt[v];
                set_step(&job, &spots, step++, v_passes[v] ? v_passes[v] : 1, corrupt);
                last_x = job.x.s;
                ns_team_run(team, kernel_work, &job);
                pass_bad += marks_bad(&job, ncpu);
            }
        for (int v = 0; v < nvar && !interrupted; v++) {
            if (v_passes[v]) continue;
            job.isa = v_isa[v]; job.x.nt = v_nt[v];
            /* not from the warm-up's time: the first pass after the first touch runs cold
             * (measured: 1 pass chosen for a 16 MiB triad whose later passes took 0.3 ms) */
            v_passes[v] = min_s > 0 ? calibrate(team, &job, &spots, &step, -1, min_s,
                                                corrupt, &pass_bad, ncpu) : 1;
            last_x = job.x.s;
            if (ns_interrupted) interrupted = 1;
        }
        for (int r = 0; r < reps && !interrupted; r++)
            for (int v = 0; v < nvar; v++) {
                if (ns_interrupted) { interrupted = 1; break; }
                job.isa = v_isa[v]; job.x.nt = v_nt[v];
                set_step(&job, &spots, step++, v_passes[v], corrupt);
                last_x = job.x.s;
                /* skip_pass: test hook, a pass that does no work must be caught */
                job.x.skip_pass = r == 0 ? skip_pass : -1;
                size_t at = (size_t)v * reps + r;
                /* skip_rep: test hook, a repetition that does no work must be caught */
                times[at] = r == skip_rep ? 0.0 : ns_team_run_timed(team, kernel_work, &job);
                job.x.skip_pass = -1;
                if (r != skip_rep) {
                    const double *st = ns_team_starts(team), *en = ns_team_ends(team);
                    double first = st[0], last = en[0];
                    for (int t = 1; t < ncpu; t++) if (st[t] < first) first = st[t];
                    for (int t = 1; t < ncpu; t++) if (en[t] > last) last = en[t];
                    if (rep_span) { rep_span[at * 2] = first; rep_span[at * 2 + 1] = last; }
                    for (int t = 0; t < ncpu; t++) {
                        starts[at * ncpu + t] = st[t] - first;
                        ends[at * ncpu + t] = en[t] - first;
                    }
                }
                if (kern->out == OUT_SUM) {
                    double tot = 0;
                    for (int t = 0; t < ncpu; t++) tot += sums[t * SUM_STRIDE];
                    rep_sums[at] = tot;
                    rep_expect[at] = read_expect(n, &spots, job.x.s, v_passes[v], marks);
                } else {
                    if (r != skip_rep) pass_bad += marks_bad(&job, ncpu);
                    spot_bad += spot_check(output_array(&job), &spots,
                                           kern->expect(job.x.s, 1));
                }
            }
        if (!interrupted) {
            /* Validation: every repetition's sum (read), or every element of the output
             * after the whole sequence, as STREAM checks it. */
            if (kern->out == OUT_SUM) {
                for (int i = 0; i < reps * nvar; i++)
                    if (!(fabs(rep_sums[i] - rep_expect[i]) <= TOL * rep_expect[i])) bad++;
                chk->expect = rep_expect[(size_t)(nvar - 1) * reps + reps - 1];
            } else {
                double *out = output_array(&job);
                if (corrupt >= 0) out[corrupt] += 1.0;
                chk->job = &job;
                chk->out = out;
                chk->expect = kern->expect(last_x, 0);
                chk->spot = kern->expect(last_x, 1);
                chk->spots = &spots;
                ns_team_run(team, check_work, chk);
                for (int t = 0; t < ncpu; t++) {
                    bad += chk->bad[t];
                    if (chk->bad[t] && first_bad < 0) first_bad = (long long)chk->first_bad[t];
                }
            }
            /* Huge pages over all arrays, and per array (each is its own mapping). */
            double *arrays[3] = {job.x.a, job.x.b, job.x.c};
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
        PyList_SET_ITEM(vl, v, Py_BuildValue("(sO)", ns_isa_names[v_isa[v]],
                                             v_nt[v] ? Py_True : Py_False));
        if (kern->out == OUT_SUM)
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
    SET("validated", PyBool_FromLong(bad == 0 && spot_bad == 0 && pass_bad == 0));
    SET("spot_bad", PyLong_FromLong(spot_bad));
    SET("pass_bad", PyLong_FromLong(pass_bad));
    SET("accumulators", PyLong_FromLong(kern->out == OUT_SUM ? acc : 0));
    PyObject *pl = PyList_New(nvar);
    for (int v = 0; pl && v < nvar; v++) PyList_SET_ITEM(pl, v, PyLong_FromLong(v_passes[v]));
    SET("passes", pl);
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
    if (rep_span) SET("rep_spans", stamps_to_py(rep_span, nvar, reps, 2));
    SET("init_seconds", PyFloat_FromDouble(init_s));
    SET("n", PyLong_FromSize_t(n));
    SET("align", PyLong_FromSize_t(align));
#undef SET
done:
    Py_BEGIN_ALLOW_THREADS
    if (job.x.a) ns_mem_free(job.x.a, bytes, &spec);
    if (job.x.b) ns_mem_free(job.x.b, bytes, &spec);
    if (job.x.c) ns_mem_free(job.x.c, bytes, &spec);
    ns_team_destroy(team);
    Py_END_ALLOW_THREADS
    free(cpus);
    free(times);
    free(rep_sums);
    free(rep_expect);
    free(starts);
    free(ends);
    free(rep_span);
    free(spots.at);
    free(sums);
    free(chk);
    if (interrupted) return ns_raise_interrupt();
    return res;
}

/* kernels() -> the kernel table as a list of dicts, for Python (numascope.families.bandwidth.bench) */
static PyObject *py_kernels(PyObject *self, PyObject *noargs) {
    static const char *names[3] = {"a", "b", "c"};
    PyObject *out = PyList_New(0);
    for (int k = 0; out && k < NKERNELS; k++) {
        const bw_kernel *r = &kernels[k];
        PyObject *uses = PyList_New(0), *isas = PyList_New(0);
        for (int i = 0; uses && i < 3; i++)
            if (r->arrays & (1u << i)) {
                PyObject *v = PyUnicode_FromString(names[i]);
                PyList_Append(uses, v);
                Py_XDECREF(v);
            }
        for (int i = 0; isas && i < NS_ISA_COUNT; i++)
            if (r->fn[i]) {
                PyObject *v = PyUnicode_FromString(ns_isa_names[i]);
                PyList_Append(isas, v);
                Py_XDECREF(v);
            }
        PyObject *row = Py_BuildValue(
            "{s:s,s:s,s:n,s:N,s:s,s:i,s:i,s:i,s:i,s:O,s:N}", "name", r->name,
            "formula", r->formula, "arrays", PyList_GET_SIZE(uses), "uses", uses,
            "writes", r->out == OUT_SUM ? "" : names[r->out], "stores", r->out != OUT_SUM,
            "stream_bytes", r->stream_bytes, "dram_bytes", r->dram_bytes,
            "dram_bytes_nt", r->stream_bytes, "scalar", r->scalar ? Py_True : Py_False,
            "isas", isas);
        if (!row || PyList_Append(out, row) < 0) { Py_XDECREF(row); Py_DECREF(out); return NULL; }
        Py_DECREF(row);
    }
    return out;
}

/* read_sum(data, isa) -> the read kernel's sum of a buffer of doubles (any alignment): the
 * function compress.c's plain sum calls, open to tests. */
static PyObject *py_read_sum(PyObject *self, PyObject *args) {
    PyObject *data;
    const char *isa_s;
    if (!PyArg_ParseTuple(args, "Os", &data, &isa_s)) return NULL;
    int isa = parse_isa(isa_s);
    if (isa < 0) return ns_value_error("unknown ISA '%s'", isa_s);
    if (!ns_isa_supported(isa)) return ns_value_error("this CPU cannot run %s kernels", isa_s);
    Py_buffer v;
    if (PyObject_GetBuffer(data, &v, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (v.len % sizeof(double)) {
        PyBuffer_Release(&v);
        return ns_value_error("a buffer of doubles (length a multiple of 8)");
    }
    double r = ns_bw_read(isa, v.buf, (size_t)v.len / sizeof(double));
    PyBuffer_Release(&v);
    return PyFloat_FromDouble(r);
}

/* bw_spots(n, nthreads) -> the spot-checked elements and the threads' chunks bw_run uses
 * for that array length and team size, without starting a team (tests check coverage). */
static PyObject *py_bw_spots(PyObject *self, PyObject *args) {
    Py_ssize_t n_el;
    int nt;
    if (!PyArg_ParseTuple(args, "ni", &n_el, &nt)) return NULL;
    if (n_el < 64) return ns_value_error("arrays need at least 64 elements (got %zd)", n_el);
    if (nt < 1 || nt > NS_MAX_TEAM) return ns_value_error("between 1 and %d threads", NS_MAX_TEAM);
    size_t n = (size_t)n_el, align = split_align(n, nt);
    spots_t sp;
    if (!spots_init(&sp, n, nt, align)) return PyErr_NoMemory();
    PyObject *at = PyList_New(sp.n), *chunks = PyList_New(nt);
    for (int k = 0; at && k < sp.n; k++) PyList_SET_ITEM(at, k, PyLong_FromSize_t(sp.at[k]));
    for (int t = 0; chunks && t < nt; t++) {
        size_t i0, i1;
        ns_split(n, t, nt, align, &i0, &i1);
        PyList_SET_ITEM(chunks, t, Py_BuildValue("(nn)", (Py_ssize_t)i0, (Py_ssize_t)i1));
    }
    free(sp.at);
    return Py_BuildValue("{s:N,s:N,s:n}", "spots", at, "chunks", chunks, "align",
                         (Py_ssize_t)align);
}

PyMethodDef ns_bw_methods[] = {
    {"read_sum", py_read_sum, METH_VARARGS,
     "read_sum(data, isa) -> float: the bandwidth read kernel's sum of a buffer of doubles "
     "(any alignment), as the compression family's plain sum uses it."},
    {"bw_spots", py_bw_spots, METH_VARARGS,
     "bw_spots(n, nthreads) -> {'spots': [index], 'chunks': [(begin, end)] per thread, "
     "'align'}: the elements bw_run spot-checks after every repetition (some in every "
     "thread's chunk) and the split of the arrays among the threads."},
    {"kernels", py_kernels, METH_NOARGS,
     "kernels() -> [{'name', 'formula', 'arrays' (how many), 'uses' (['a', 'c']), 'writes' "
     "('c', or '' for a kernel that sums), 'stores' (arrays written per element, 0 or 1), "
     "'stream_bytes' (STREAM's bytes per element), 'dram_bytes' (bytes per element on the "
     "bus with ordinary stores, write-allocate included), 'dram_bytes_nt' (with streaming "
     "stores), 'scalar' (a new scalar each step), 'isas' (implemented)}]: bw_run's kernels, "
     "in table order."},
    {"bw_run", (PyCFunction)(void (*)(void))py_bw_run, METH_VARARGS | METH_KEYWORDS,
     "bw_run(kernel, cpus, n, reps, variants, memory=None, warmup (required, >= 0), "
     "corrupt_index=-1, where_samples=4096, skip_rep=-1, late_start=0.0, passes=None, "
     "min_seconds=0.0, skip_pass=-1) -> dict\n\n"
     "Run a STREAM-class kernel (a name from kernels()) on threads "
     "pinned to `cpus` over arrays of n doubles placed by `memory` (see ns_mem_spec), "
     "first-touched by the pinned threads. `variants` lists (isa, nt) pairs timed "
     "interleaved, `reps` times each, after `warmup` untimed rounds. A repetition makes "
     "`passes` passes over the arrays (one count per variant; None or 0: calibrated after "
     "the warm-ups so that a repetition lasts at least min_seconds, 1 pass when 0). "
     "Returns the passes per variant, per-variant seconds per repetition (earliest thread "
     "start to latest thread end, inside C), each "
     "thread's start and end offsets within that window, the validation outcome, the share "
     "of huge pages (all arrays and per array) and sampled page locations overall and per "
     "thread. Test hooks: corrupt_index >= 0 corrupts one element on purpose, skip_rep >= 0 "
     "skips that repetition's work, skip_pass >= 0 skips that pass of the first repetition "
     "(every thread), late_start > 0 holds thread 0 back until the other "
     "threads are done, plus that many seconds. Ctrl-C stops it between repetitions "
     "(KeyboardInterrupt)."},
    {NULL, NULL, 0, NULL},
};
