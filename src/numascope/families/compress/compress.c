/* Benchmark family 'compress': does a compressed, chunked sum beat the memory wall?
 *
 * Two aggregations over the same data, the same pinned threads and the same chunk
 * ownership (thread t owns the contiguous chunk range ns_split(nchunks, t, nt)):
 *   plain      each thread sums its chunks of a copy it first-touched itself;
 *   compressed the data is stored as Blosc2 chunks (compressed by, and so first-touched
 *              by, the owning thread); each thread decompresses its chunks one at a time
 *              with its own single-threaded dctx into its own cache-resident buffer and
 *              sums them (or sums each block in a postfilter: mode "fused").
 * Both use the same summation kernel on the same Blosc block boundaries, so the two sums
 * are bit-identical when decompression is lossless. Timing: one timed team run per
 * repetition (start and stop inside each repetition), plain and compressed alternating. */
#include "ns.h"
#include "memory.h"
#include "team.h"
#include <blosc2.h>
#include <blosc2/filters-registry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define STORE_CAPSULE "numascope.cstore"
#define PLAIN_CAPSULE "numascope.plain"

/* ---------------------------------------------------------------- sum kernels --- */

enum { DT_F4, DT_F8, DT_I1, DT_I2, DT_I4, DT_I8, DT_U1, DT_U2, DT_U4, DT_U8, DT_N };
static const char *dt_names[DT_N] = {"f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"};
static const int dt_size[DT_N] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8};

/* Floats are summed in double, integers in 64-bit two's complement (wrapping). */
typedef struct { double f; uint64_t i; } acc_t;
typedef void (*sum_fn)(const void *p, size_t n, acc_t *a);

/* Four independent double accumulators (the adds pipeline); one kernel body per vector
 * width: LOAD(q) yields W doubles from x + q, HSUM reduces a vector to one double. */
#define FLOAT_SUM(name, T, V, W, ZERO, ADD, LOAD, HSUM)                                   \
    static void name(const void *p, size_t n, acc_t *a) {                                  \
        const T *x = p;                                                                    \
        V s0 = ZERO, s1 = s0, s2 = s0, s3 = s0;                                            \
        size_t i = 0;                                                                      \
        for (; i + 4 * (W) <= n; i += 4 * (W)) {                                           \
            s0 = ADD(s0, LOAD(x + i));                                                     \
            s1 = ADD(s1, LOAD(x + i + (W)));                                               \
            s2 = ADD(s2, LOAD(x + i + 2 * (W)));                                           \
            s3 = ADD(s3, LOAD(x + i + 3 * (W)));                                           \
        }                                                                                  \
        double s = HSUM(ADD(ADD(s0, s1), ADD(s2, s3)));                                    \
        for (; i < n; i++) s += x[i];                                                      \
        a->f += s;                                                                         \
    }

#define S_ADD(u, v) ((u) + (v))
#define S_LOAD(q) ((double)*(q))
#define S_HSUM(v) (v)
FLOAT_SUM(sum_f4_scalar, float, double, 1, 0.0, S_ADD, S_LOAD, S_HSUM)

#if defined(__x86_64__)
__attribute__((target("avx2")))
static double hsum256(__m256d v) {
    __m128d lo = _mm256_castpd256_pd128(v), hi = _mm256_extractf128_pd(v, 1);
    lo = _mm_add_pd(lo, hi);
    return _mm_cvtsd_f64(lo) + _mm_cvtsd_f64(_mm_unpackhi_pd(lo, lo));
}

#define F4_AVX2(q) _mm256_cvtps_pd(_mm_loadu_ps(q))
#define F4_AVX512(q) _mm512_cvtps_pd(_mm256_loadu_ps(q))
__attribute__((target("avx2")))
FLOAT_SUM(sum_f4_avx2, float, __m256d, 4, _mm256_setzero_pd(), _mm256_add_pd, F4_AVX2, hsum256)
__attribute__((target("avx512f")))
FLOAT_SUM(sum_f4_avx512, float, __m512d, 8, _mm512_setzero_pd(), _mm512_add_pd, F4_AVX512,
          _mm512_reduce_add_pd)
#endif

/* Integer sums: associative, so gcc vectorizes these loops itself. */
#define INT_SUM(name, T)                                                   \
    static void name(const void *p, size_t n, acc_t *a) {                  \
        const T *x = p;                                                    \
        uint64_t s = 0;                                                    \
        for (size_t i = 0; i < n; i++) s += (uint64_t)(int64_t)x[i];       \
        a->i += s;                                                         \
    }
INT_SUM(sum_i1, int8_t)
INT_SUM(sum_i2, int16_t)
INT_SUM(sum_i4, int32_t)
INT_SUM(sum_i8, int64_t)
#define UINT_SUM(name, T)                                                  \
    static void name(const void *p, size_t n, acc_t *a) {                  \
        const T *x = p;                                                    \
        uint64_t s = 0;                                                    \
        for (size_t i = 0; i < n; i++) s += (uint64_t)x[i];                \
        a->i += s;                                                         \
    }
UINT_SUM(sum_u1, uint8_t)
UINT_SUM(sum_u2, uint16_t)
UINT_SUM(sum_u4, uint32_t)
UINT_SUM(sum_u8, uint64_t)

/* The plain sum of doubles is the bandwidth `read` kernel (bw.c, ns_bw_read): the
 * uncompressed baseline is exactly what `numascope bw --kernel read` times. */
static int f8_isa;
static void sum_f8(const void *p, size_t n, acc_t *a) { a->f += ns_bw_read(f8_isa, p, n); }

static int best_isa(void) {  /* 0 scalar, 1 avx2, 2 avx512: the one probe (cpu.c) */
    return ns_isa_best();
}

static sum_fn pick_kernel(int dt, const char **isa_name) {
    int isa = best_isa();
    *isa_name = "scalar";
    switch (dt) {
    case DT_F8:
        f8_isa = isa;
        *isa_name = ns_isa_names[isa];
        return sum_f8;
    case DT_F4:
#if defined(__x86_64__)
        if (isa == 2) { *isa_name = "avx512"; return sum_f4_avx512; }
        if (isa == 1) { *isa_name = "avx2"; return sum_f4_avx2; }
#endif
        return sum_f4_scalar;
    case DT_I1: return sum_i1;
    case DT_I2: return sum_i2;
    case DT_I4: return sum_i4;
    case DT_I8: return sum_i8;
    case DT_U1: return sum_u1;
    case DT_U2: return sum_u2;
    case DT_U4: return sum_u4;
    default: return sum_u8;
    }
}

static int dtype_code(const char *s) {
    for (int i = 0; i < DT_N; i++)
        if (!strcmp(s, dt_names[i])) return i;
    ns_value_error("unsupported dtype '%s' (one of f4 f8 i1 i2 i4 i8 u1 u2 u4 u8)", s);
    return -1;
}

static PyObject *acc_to_py(int dt, const acc_t *a) {
    if (dt == DT_F4 || dt == DT_F8) return PyFloat_FromDouble(a->f);
    if (dt >= DT_U1) return PyLong_FromUnsignedLongLong(a->i);
    return PyLong_FromLongLong((long long)(int64_t)a->i);
}

/* ------------------------------------------------------------ stored data ------- */

/* What the compressed store and the plain copy share: the data's bytes cut in chunks,
 * the CPUs of the team (thread t owns the chunks ns_split gives it) and where memory goes. */
typedef struct {
    size_t nbytes, chunk_bytes, nchunks;
    int nthreads;
    int *cpus;
    ns_mem_spec spec;
} chunks_t;

static void chunks_init(chunks_t *k, const ns_mem_spec *spec, Py_ssize_t nbytes,
                        Py_ssize_t chunk_bytes, int *cpus, int n) {
    k->spec = *spec;
    k->nbytes = (size_t)nbytes;
    k->chunk_bytes = (size_t)chunk_bytes;
    k->nchunks = (k->nbytes + k->chunk_bytes - 1) / k->chunk_bytes;
    k->nthreads = n;
    k->cpus = cpus;
}

typedef struct {
    chunks_t k;
    int typesize;
    unsigned char **cdata;    /* per chunk: where its compressed bytes are */
    int32_t *csize;
    int32_t *cblock;          /* per chunk: its Blosc block size (from its header) */
    void **region;            /* per owner thread: its first-touched memory */
    size_t *region_len;
} cstore;

typedef struct {
    chunks_t k;
    void *p;
} plain_t;

static size_t chunk_len(size_t nbytes, size_t chunk_bytes, size_t c) {
    size_t off = c * chunk_bytes;
    return nbytes - off < chunk_bytes ? nbytes - off : chunk_bytes;
}

static void free_regions(void **region, size_t *len, int n, const ns_mem_spec *spec) {
    for (int t = 0; t < n; t++)
        if (region[t]) ns_mem_free(region[t], len[t], spec);
}

static void store_free(cstore *s) {
    if (!s) return;
    if (s->region) free_regions(s->region, s->region_len, s->k.nthreads, &s->k.spec);
    free(s->region);
    free(s->region_len);
    free(s->cdata);
    free(s->csize);
    free(s->cblock);
    free(s->k.cpus);
    free(s);
}

static void store_capsule_free(PyObject *cap) {
    store_free(PyCapsule_GetPointer(cap, STORE_CAPSULE));
}

static void plain_capsule_free(PyObject *cap) {
    plain_t *p = PyCapsule_GetPointer(cap, PLAIN_CAPSULE);
    if (!p) return;
    if (p->p) ns_mem_free(p->p, p->k.nbytes, &p->k.spec);
    free(p->k.cpus);
    free(p);
}

static ns_team *make_team(PyObject *cpus_obj, int **cpus, int *n) {
    if (!ns_int_list(cpus_obj, cpus, n)) return NULL;
    char err[256];
    ns_team *t = ns_team_create(*cpus, *n, err, sizeof err);
    if (!t) {
        free(*cpus);
        ns_value_error("%s", err);
    }
    return t;
}

/* --------------------------------------------------------------- compression ----- */

typedef struct {
    cstore *s;
    const unsigned char *src;
    blosc2_cparams cp;
    blosc2_context **ctx;
    int *err;
} compress_job;

static void compress_prep(int tid, int nt, void *arg) {
    compress_job *j = arg;
    cstore *s = j->s;
    size_t c0, c1;
    ns_split(s->k.nchunks, tid, nt, 1, &c0, &c1);
    size_t worst = 0;
    for (size_t c = c0; c < c1; c++)
        worst += chunk_len(s->k.nbytes, s->k.chunk_bytes, c) + BLOSC2_MAX_OVERHEAD;
    /* Worst-case size, mapped but untouched: only the pages the compressed bytes land in
     * become resident, first-touched by this (owner) thread. */
    char err[128];
    s->region_len[tid] = worst;
    s->region[tid] = worst ? ns_mem_alloc(worst, &s->k.spec, err, sizeof err) : NULL;
    if (worst && !s->region[tid]) j->err[tid] = -1000;
    j->ctx[tid] = blosc2_create_cctx(j->cp);
    if (!j->ctx[tid]) j->err[tid] = -1001;
}

#define ERR_INTERRUPTED (-1003)  /* a stop signal (ns_interrupted) between two chunks */
#define ERR_SHORT (-1005)        /* a chunk decompressed to fewer bytes than it holds */

static void compress_work(int tid, int nt, void *arg) {
    compress_job *j = arg;
    cstore *s = j->s;
    if (j->err[tid]) return;
    size_t c0, c1, off = 0;
    ns_split(s->k.nchunks, tid, nt, 1, &c0, &c1);
    unsigned char *dst = s->region[tid];
    for (size_t c = c0; c < c1; c++) {
        if (ns_interrupted) { j->err[tid] = ERR_INTERRUPTED; return; }
        size_t len = chunk_len(s->k.nbytes, s->k.chunk_bytes, c);
        int r = blosc2_compress_ctx(j->ctx[tid], j->src + c * s->k.chunk_bytes, (int32_t)len,
                                    dst + off, (int32_t)(len + BLOSC2_MAX_OVERHEAD));
        if (r <= 0) { j->err[tid] = r ? r : -1002; return; }
        s->cdata[c] = dst + off;
        s->csize[c] = r;
        off += (size_t)r;
    }
}

static int blosc_ready = 0;

static int parse_filter(const char *f, int typesize, blosc2_cparams *cp) {
    memset(cp->filters, 0, sizeof cp->filters);
    memset(cp->filters_meta, 0, sizeof cp->filters_meta);
    if (!strcmp(f, "none")) return 1;
    if (!strcmp(f, "shuffle")) { cp->filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_SHUFFLE; return 1; }
    if (!strcmp(f, "bitshuffle")) {
        cp->filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_BITSHUFFLE;
        return 1;
    }
    if (!strcmp(f, "bytedelta")) {  /* as Blosc2 recommends: shuffle, then bytedelta */
        cp->filters[BLOSC2_MAX_FILTERS - 2] = BLOSC_SHUFFLE;
        cp->filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_FILTER_BYTEDELTA;
        cp->filters_meta[BLOSC2_MAX_FILTERS - 1] = (uint8_t)typesize;
        return 1;
    }
    ns_value_error("unknown filter '%s' (none, shuffle, bitshuffle, bytedelta)", f);
    return 0;
}

static int parse_codec(const char *c) {
    if (!strcmp(c, "blosclz")) return BLOSC_BLOSCLZ;
    if (!strcmp(c, "lz4")) return BLOSC_LZ4;
    if (!strcmp(c, "lz4hc")) return BLOSC_LZ4HC;
    if (!strcmp(c, "zlib")) return BLOSC_ZLIB;
    if (!strcmp(c, "zstd")) return BLOSC_ZSTD;
    ns_value_error("unknown codec '%s' (blosclz, lz4, lz4hc, zlib, zstd)", c);
    return -1;
}

/* store_new(data, chunk_bytes, typesize, codec, clevel, filter, cpus, block_bytes, mem)
 *   -> (capsule, compress_seconds, compressed_bytes, block_bytes of the first chunk);
 * block_bytes 0: Blosc's automatic choice (given: the Python side resolves --block, see
 * families/compress/options.py); mem: a memory spec (memory.h; None: first touch by the
 * owning thread, 4 KiB pages) for every region the store maps. */
static PyObject *py_store_new(PyObject *self, PyObject *args) {
    PyObject *data, *cpus_obj, *mem_obj = Py_None;
    Py_ssize_t chunk_bytes, block_bytes;
    int typesize, clevel;
    const char *codec, *filter;
    if (!PyArg_ParseTuple(args, "OnisisOn|O", &data, &chunk_bytes, &typesize, &codec, &clevel,
                          &filter, &cpus_obj, &block_bytes, &mem_obj))
        return NULL;
    ns_mem_spec spec;
    if (!ns_mem_spec_from_py(mem_obj, &spec)) return NULL;
    if (typesize < 1 || typesize > 255) return ns_value_error("bad typesize %d", typesize);
    if (chunk_bytes < typesize || chunk_bytes % typesize || chunk_bytes > BLOSC2_MAX_BUFFERSIZE)
        return ns_value_error("chunk size %zd must be a positive multiple of the item size "
                              "(%d) below 2 GiB", chunk_bytes, typesize);
    if (clevel < 0 || clevel > 9) return ns_value_error("clevel %d outside 0..9", clevel);
    if (block_bytes < 0 || block_bytes % typesize || block_bytes > chunk_bytes)
        return ns_value_error("block size %zd must be 0 (automatic) or a multiple of the item "
                              "size (%d) up to the chunk size", block_bytes, typesize);
    int compcode = parse_codec(codec);
    if (compcode < 0) return NULL;
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = (uint8_t)compcode;
    cp.clevel = (uint8_t)clevel;
    cp.typesize = typesize;
    cp.nthreads = 1;
    cp.blocksize = (int32_t)block_bytes;
    if (!parse_filter(filter, typesize, &cp)) return NULL;

    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (view.len == 0 || view.len % typesize) {
        PyBuffer_Release(&view);
        return ns_value_error("data of %zd bytes is empty or not a whole number of items",
                              view.len);
    }
    int *cpus, n;
    ns_team *team = make_team(cpus_obj, &cpus, &n);
    if (!team) { PyBuffer_Release(&view); return NULL; }
    if (!blosc_ready) { blosc2_init(); blosc_ready = 1; }

    cstore *s = calloc(1, sizeof *s);
    chunks_init(&s->k, &spec, view.len, chunk_bytes, cpus, n);
    s->typesize = typesize;
    s->cdata = calloc(s->k.nchunks, sizeof *s->cdata);
    s->csize = calloc(s->k.nchunks, sizeof *s->csize);
    s->cblock = calloc(s->k.nchunks, sizeof *s->cblock);
    s->region = calloc(n, sizeof *s->region);
    s->region_len = calloc(n, sizeof *s->region_len);
    compress_job j = {s, view.buf, cp, calloc(n, sizeof(blosc2_context *)), calloc(n, sizeof(int))};
    double secs;
    ns_interrupted = 0;
    Py_BEGIN_ALLOW_THREADS
    ns_team_run(team, compress_prep, &j);
    secs = ns_team_run_timed(team, compress_work, &j);
    ns_team_destroy(team);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    int bad = 0;
    for (int t = 0; t < n; t++) {
        if (j.ctx[t]) blosc2_free_ctx(j.ctx[t]);
        if (j.err[t] && !bad) bad = j.err[t];
    }
    free(j.ctx);
    free(j.err);
    if (bad) {
        store_free(s);
        if (bad == ERR_INTERRUPTED) return ns_raise_interrupt();
        if (bad == -1000) return PyErr_NoMemory();
        return ns_value_error("blosc2 compression failed (code %d) with %s/%d/%s", bad, codec,
                              clevel, filter);
    }
    size_t cbytes = 0;
    for (size_t c = 0; c < s->k.nchunks; c++) {
        int32_t nb, cb;
        cbytes += (size_t)s->csize[c];
        if (blosc2_cbuffer_sizes(s->cdata[c], &nb, &cb, &s->cblock[c]) < 0 || s->cblock[c] <= 0
            || nb != (int32_t)chunk_len(s->k.nbytes, s->k.chunk_bytes, c)) {
            store_free(s);
            return ns_value_error("blosc2 wrote an unreadable chunk header (chunk %zu)", c);
        }
    }
    PyObject *cap = PyCapsule_New(s, STORE_CAPSULE, store_capsule_free);
    if (!cap) { store_free(s); return NULL; }
    return Py_BuildValue("Ndni", cap, secs, (Py_ssize_t)cbytes, (int)s->cblock[0]);
}

/* ------------------------------------------------------- (re)placing memory ------ */

typedef struct {
    cstore *s;
    void **region;
    size_t *len;
    unsigned char **cdata;
    int *err;
    ns_mem_spec spec;
} place_job;

static void place_work(int tid, int nt, void *arg) {
    place_job *j = arg;
    cstore *s = j->s;
    size_t c0, c1, need = 0, off = 0;
    ns_split(s->k.nchunks, tid, nt, 1, &c0, &c1);
    for (size_t c = c0; c < c1; c++) need += (size_t)s->csize[c];
    char err[128];
    j->len[tid] = need;
    j->region[tid] = need ? ns_mem_alloc(need, &j->spec, err, sizeof err) : NULL;
    if (need && !j->region[tid]) { j->err[tid] = 1; return; }
    unsigned char *dst = j->region[tid];
    for (size_t c = c0; c < c1; c++) {  /* the owner's copy is its first touch */
        memcpy(dst + off, s->cdata[c], (size_t)s->csize[c]);
        j->cdata[c] = dst + off;
        off += (size_t)s->csize[c];
    }
}

/* store_place(capsule, cpus): move the compressed chunks so that a team on `cpus` owns
 * (and has first-touched) its chunks. */
static PyObject *py_store_place(PyObject *self, PyObject *args) {
    PyObject *cap, *cpus_obj;
    if (!PyArg_ParseTuple(args, "OO", &cap, &cpus_obj)) return NULL;
    cstore *s = PyCapsule_GetPointer(cap, STORE_CAPSULE);
    if (!s) return NULL;
    int *cpus, n;
    ns_team *team = make_team(cpus_obj, &cpus, &n);
    if (!team) return NULL;
    place_job j = {s, calloc(n, sizeof(void *)), calloc(n, sizeof(size_t)),
                   calloc(s->k.nchunks, sizeof(unsigned char *)), calloc(n, sizeof(int)), s->k.spec};
    Py_BEGIN_ALLOW_THREADS
    ns_team_run(team, place_work, &j);
    ns_team_destroy(team);
    Py_END_ALLOW_THREADS
    int bad = 0;
    for (int t = 0; t < n; t++) bad |= j.err[t];
    if (bad) {
        free_regions(j.region, j.len, n, &s->k.spec);
        free(j.region); free(j.len); free(j.cdata); free(j.err); free(cpus);
        return PyErr_NoMemory();
    }
    free_regions(s->region, s->region_len, s->k.nthreads, &s->k.spec);
    free(s->region); free(s->region_len); free(s->cdata); free(s->k.cpus); free(j.err);
    s->region = j.region;
    s->region_len = j.len;
    s->cdata = j.cdata;
    s->k.cpus = cpus;
    s->k.nthreads = n;
    Py_RETURN_NONE;
}

typedef struct { plain_t *p; const unsigned char *src; } plain_job;

static void plain_copy(int tid, int nt, void *arg) {
    plain_job *j = arg;
    plain_t *p = j->p;
    size_t c0, c1;
    ns_split(p->k.nchunks, tid, nt, 1, &c0, &c1);
    size_t b0 = c0 * p->k.chunk_bytes;
    size_t b1 = c1 * p->k.chunk_bytes < p->k.nbytes ? c1 * p->k.chunk_bytes : p->k.nbytes;
    if (b1 > b0) memcpy((unsigned char *)p->p + b0, j->src + b0, b1 - b0);
}

/* plain_new(data, chunk_bytes, cpus, mem) -> capsule: a copy of data whose chunk range of
 * thread t was first written (first-touched) by thread t, under the memory spec `mem`
 * (None: first touch, 4 KiB pages). */
static PyObject *py_plain_new(PyObject *self, PyObject *args) {
    PyObject *data, *cpus_obj, *mem_obj = Py_None;
    Py_ssize_t chunk_bytes;
    if (!PyArg_ParseTuple(args, "OnO|O", &data, &chunk_bytes, &cpus_obj, &mem_obj)) return NULL;
    ns_mem_spec spec;
    if (!ns_mem_spec_from_py(mem_obj, &spec)) return NULL;
    if (chunk_bytes <= 0) return ns_value_error("chunk size must be positive");
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (view.len == 0) { PyBuffer_Release(&view); return ns_value_error("empty data"); }
    int *cpus, n;
    ns_team *team = make_team(cpus_obj, &cpus, &n);
    if (!team) { PyBuffer_Release(&view); return NULL; }
    plain_t *p = calloc(1, sizeof *p);
    chunks_init(&p->k, &spec, view.len, chunk_bytes, cpus, n);
    char err[256];
    p->p = ns_mem_alloc(p->k.nbytes, &p->k.spec, err, sizeof err);
    if (!p->p) {
        ns_team_destroy(team);
        PyBuffer_Release(&view);
        free(cpus); free(p);
        return ns_value_error("%s", err);
    }
    plain_job j = {p, view.buf};
    Py_BEGIN_ALLOW_THREADS
    ns_team_run(team, plain_copy, &j);
    ns_team_destroy(team);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyCapsule_New(p, PLAIN_CAPSULE, plain_capsule_free);
}

/* ------------------------------------------------------------- measurement ------- */

/* How the compressed sum reads the decompressed data (every byte is decompressed and
 * summed in both):
 *   buffer  blosc2_decompress_ctx of the whole chunk into the thread's chunk-sized
 *           buffer, then a second pass sums that buffer (from L2);
 *   fused   a Blosc2 postfilter sums each block right after its decompression (Blosc calls
 *           it once per block); the bytes it saw are counted and must be the chunk's.
 * Measured on a Sapphire Rapids VM (lz4/blosclz/zstd, smooth/noisy/precip data), fused was
 * 0-12 % slower than buffer; it stays selectable. (blosc2_getitem_ctx block by block into a
 * block-sized buffer was no faster than buffer and was dropped.) */
enum { MODE_BUFFER, MODE_FUSED, MODE_N };
static const char *mode_names[MODE_N] = {"buffer", "fused"};

typedef struct {              /* one per thread, on its own cache lines, first-touched by it */
    sum_fn kern;
    acc_t a;
    size_t seen;              /* bytes the postfilter summed */
    size_t item;
    blosc2_postfilter_params pp;
} __attribute__((aligned(128))) thread_state;

typedef struct {
    plain_t *p;
    cstore *s;
    sum_fn kern;
    int mode;
    blosc2_context **dctx;
    void **buf;               /* per thread: cache-resident decompression buffer */
    thread_state **st;
    acc_t *part;              /* per thread partial sums, padded to a cache line each */
    int *err;
} measure_job;

#define PAD 8  /* acc_t is 16 bytes: stride 8 keeps partials 128 bytes apart */

/* The fused path's postfilter: sum the block Blosc just decompressed (it is not copied on
 * to the destination buffer: nothing reads it). */
static int sum_postfilter(blosc2_postfilter_params *pp) {
    thread_state *st = pp->user_data;
    st->kern(pp->input, (size_t)pp->size / st->item, &st->a);
    st->seen += (size_t)pp->size;
    return 0;
}

static void measure_prep(int tid, int nt, void *arg) {
    measure_job *j = arg;
    thread_state *st = aligned_alloc(128, sizeof *st);
    j->st[tid] = st;
    if (!st) { j->err[tid] = -1000; return; }
    memset(st, 0, sizeof *st);  /* first touch by its thread */
    st->kern = j->kern;
    st->item = (size_t)j->s->typesize;
    st->pp.user_data = st;
    blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.nthreads = 1;
    dp.typesize = j->s->typesize;
    if (j->mode == MODE_FUSED) {
        dp.postfilter = sum_postfilter;
        dp.postparams = &st->pp;
    }
    j->dctx[tid] = blosc2_create_dctx(dp);
    char err[128];
    size_t nb = j->s->k.chunk_bytes;
    j->buf[tid] = ns_mem_alloc(nb, &j->s->k.spec, err, sizeof err);
    if (!j->dctx[tid] || !j->buf[tid]) { j->err[tid] = -1000; return; }
    memset(j->buf[tid], 0, nb);  /* first touch by its thread */
}

/* Sum one chunk's bytes block by block (Blosc's block boundaries), so that the plain, the
 * buffer and the fused sums add the same numbers in the same order: bit-identical. */
static void sum_blocks(sum_fn kern, const unsigned char *q, size_t len, size_t bs, size_t item,
                       acc_t *a) {
    for (size_t off = 0; off < len; off += bs)
        kern(q + off, (len - off < bs ? len - off : bs) / item, a);
}

static void plain_sum_work(int tid, int nt, void *arg) {
    measure_job *j = arg;
    plain_t *p = j->p;
    size_t c0, c1;
    ns_split(p->k.nchunks, tid, nt, 1, &c0, &c1);
    acc_t a = {0, 0};
    size_t item = (size_t)j->s->typesize;
    for (size_t c = c0; c < c1; c++) {
        if (ns_interrupted) { j->err[tid] = ERR_INTERRUPTED; break; }
        sum_blocks(j->kern, (const unsigned char *)p->p + c * p->k.chunk_bytes,
                   chunk_len(p->k.nbytes, p->k.chunk_bytes, c), (size_t)j->s->cblock[c], item, &a);
    }
    j->part[tid * PAD] = a;
}

static void comp_sum_work(int tid, int nt, void *arg) {
    measure_job *j = arg;
    cstore *s = j->s;
    thread_state *st = j->st[tid];
    blosc2_context *ctx = j->dctx[tid];
    unsigned char *buf = j->buf[tid];
    size_t c0, c1;
    ns_split(s->k.nchunks, tid, nt, 1, &c0, &c1);
    acc_t a = {0, 0};
    st->a = a;
    for (size_t c = c0; c < c1; c++) {
        if (ns_interrupted) { j->err[tid] = ERR_INTERRUPTED; break; }
        size_t len = chunk_len(s->k.nbytes, s->k.chunk_bytes, c), bs = (size_t)s->cblock[c];
        size_t seen = st->seen;
        int r = blosc2_decompress_ctx(ctx, s->cdata[c], s->csize[c], buf, (int32_t)s->k.chunk_bytes);
        if (r != (int)len) { j->err[tid] = r < 0 ? r : ERR_SHORT; break; }
        if (j->mode == MODE_BUFFER)
            sum_blocks(j->kern, buf, len, bs, st->item, &a);
        else if (st->seen - seen != len) { j->err[tid] = -1004; break; }
    }
    if (j->mode == MODE_FUSED) a = st->a;
    j->part[tid * PAD] = a;
}

static acc_t total(const measure_job *j, int n) {  /* fixed order: bit-reproducible */
    acc_t a = {0, 0};
    for (int t = 0; t < n; t++) { a.f += j->part[t * PAD].f; a.i += j->part[t * PAD].i; }
    return a;
}

/* measure(plain, store, cpus, dtype, reps, mode) -> dict with per-repetition seconds and
 * sums of both aggregations (alternating plain, compressed after one untimed warm-up
 * each). reps and mode (--reps, --read) come checked by the Python side, their defaults
 * declared once in families/compress/options.py; the checks below only assert them. */
static PyObject *py_measure(PyObject *self, PyObject *args) {
    PyObject *pcap, *scap, *cpus_obj;
    const char *dtype, *mode_s;
    int reps;
    if (!PyArg_ParseTuple(args, "OOOsis", &pcap, &scap, &cpus_obj, &dtype, &reps, &mode_s))
        return NULL;
    plain_t *p = PyCapsule_GetPointer(pcap, PLAIN_CAPSULE);
    cstore *s = PyCapsule_GetPointer(scap, STORE_CAPSULE);
    if (!p || !s) return NULL;
    int dt = dtype_code(dtype);
    if (dt < 0) return NULL;
    if (dt_size[dt] != s->typesize) return ns_value_error("dtype %s does not match typesize %d",
                                                         dtype, s->typesize);
    if (reps < 1) return ns_value_error("reps must be >= 1");
    int mode = -1;
    for (int m = 0; m < MODE_N; m++)
        if (!strcmp(mode_s, mode_names[m])) mode = m;
    if (mode < 0) return ns_value_error("unknown mode '%s' (buffer, fused)", mode_s);
    if (p->k.nbytes != s->k.nbytes || p->k.chunk_bytes != s->k.chunk_bytes)
        return ns_value_error("plain copy and compressed store hold different data layouts");
    int *cpus, n;
    if (!ns_int_list(cpus_obj, &cpus, &n)) return NULL;
    int same = n == p->k.nthreads && n == s->k.nthreads;
    for (int t = 0; same && t < n; t++) same = cpus[t] == p->k.cpus[t] && cpus[t] == s->k.cpus[t];
    if (!same) { free(cpus); return ns_value_error("data not placed for these CPUs"); }
    if (ns_clear_interrupt() < 0) { free(cpus); return NULL; }
    char err[256];
    ns_team *team = ns_team_create(cpus, n, err, sizeof err);
    free(cpus);
    if (!team) return ns_value_error("%s", err);
    const char *isa;
    measure_job j = {p, s, pick_kernel(dt, &isa), mode, calloc(n, sizeof(blosc2_context *)),
                     calloc(n, sizeof(void *)), calloc(n, sizeof(thread_state *)),
                     calloc((size_t)n * PAD, sizeof(acc_t)), calloc(n, sizeof(int))};
    double *tp = calloc(reps, sizeof(double)), *tc = calloc(reps, sizeof(double));
    acc_t *sp = calloc(reps, sizeof(acc_t)), *sc = calloc(reps, sizeof(acc_t));
    size_t seen = 0, nbuf = s->k.chunk_bytes;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    ns_team_run(team, measure_prep, &j);
    for (int t = 0; t < n; t++) bad |= j.err[t];
    if (!bad) {
        ns_team_run(team, plain_sum_work, &j);  /* warm-up, untimed */
        ns_team_run(team, comp_sum_work, &j);
        for (int r = 0; r < reps && !ns_interrupted; r++) {
            tp[r] = ns_team_run_timed(team, plain_sum_work, &j);
            sp[r] = total(&j, n);
            tc[r] = ns_team_run_timed(team, comp_sum_work, &j);
            sc[r] = total(&j, n);
        }
        for (int t = 0; t < n; t++) if (j.err[t]) bad = j.err[t];
        if (ns_interrupted) bad = ERR_INTERRUPTED;  /* stopped between repetitions */
    }
    ns_team_destroy(team);
    Py_END_ALLOW_THREADS
    for (int t = 0; t < n; t++) {
        if (j.dctx[t]) blosc2_free_ctx(j.dctx[t]);
        if (j.buf[t]) ns_mem_free(j.buf[t], nbuf, &s->k.spec);
        if (j.st[t]) seen += j.st[t]->seen;
        free(j.st[t]);
    }
    free(j.dctx); free(j.buf); free(j.st); free(j.part); free(j.err);
    PyObject *res = NULL;
    if (bad == ERR_INTERRUPTED) {
        ns_raise_interrupt();
    } else if (bad == -1000) {
        PyErr_NoMemory();
    } else if (bad == -1004) {
        ns_value_error("the postfilter did not see every decompressed byte of a chunk");
    } else if (bad) {
        ns_value_error("blosc2 decompression failed (code %d)", bad);
    } else {
        PyObject *ltp = PyList_New(reps), *ltc = PyList_New(reps);
        PyObject *lsp = PyList_New(reps), *lsc = PyList_New(reps);
        for (int r = 0; r < reps; r++) {
            PyList_SET_ITEM(ltp, r, PyFloat_FromDouble(tp[r]));
            PyList_SET_ITEM(ltc, r, PyFloat_FromDouble(tc[r]));
            PyList_SET_ITEM(lsp, r, acc_to_py(dt, &sp[r]));
            PyList_SET_ITEM(lsc, r, acc_to_py(dt, &sc[r]));
        }
        res = Py_BuildValue("{s:N,s:N,s:N,s:N,s:s,s:s,s:n}", "plain_s", ltp, "comp_s", ltc,
                            "plain_sums", lsp, "comp_sums", lsc, "isa", isa,
                            "mode", mode_names[mode], "postfilter_bytes", (Py_ssize_t)seen);
    }
    free(tp); free(tc); free(sp); free(sc);
    return res;
}

/* ------------------------------------------------------------ reference, where ---- */

/* ref_sum(data, dtype) -> (sum, sum of |x|): Kahan-compensated double for floats (the
 * reference the measured sums are validated against), exact wrapping int64 for ints. */
static PyObject *py_ref_sum(PyObject *self, PyObject *args) {
    PyObject *data;
    const char *dtype;
    if (!PyArg_ParseTuple(args, "Os", &data, &dtype)) return NULL;
    int dt = dtype_code(dtype);
    if (dt < 0) return NULL;
    Py_buffer v;
    if (PyObject_GetBuffer(data, &v, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    size_t n = (size_t)v.len / (size_t)dt_size[dt];
    acc_t a = {0, 0};
    double absum = 0;
    Py_BEGIN_ALLOW_THREADS
    if (dt == DT_F4 || dt == DT_F8) {
        double s = 0, c = 0;
        for (size_t i = 0; i < n; i++) {
            double x = dt == DT_F4 ? (double)((const float *)v.buf)[i] : ((const double *)v.buf)[i];
            double y = x - c, t = s + y;
            c = (t - s) - y;
            s = t;
            absum += x < 0 ? -x : x;
        }
        a.f = s;
    } else {
        const char *isa;
        pick_kernel(dt, &isa)(v.buf, n, &a);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&v);
    return Py_BuildValue("Nd", acc_to_py(dt, &a), absum);
}

static PyObject *py_where(PyObject *self, PyObject *args) {
    PyObject *cap;
    if (!PyArg_ParseTuple(args, "O", &cap)) return NULL;
    long *counts = calloc(NS_MAX_NODES + 1, sizeof(long));
    long got = 0;
    if (PyCapsule_IsValid(cap, STORE_CAPSULE)) {
        cstore *s = PyCapsule_GetPointer(cap, STORE_CAPSULE);
        for (int t = 0; t < s->k.nthreads; t++) {
            if (!s->region[t]) continue;
            long *c = calloc(NS_MAX_NODES + 1, sizeof(long));
            long r = ns_mem_where(s->region[t], s->region_len[t], c, 256);
            if (r > 0) { got += r; for (int k = 0; k <= NS_MAX_NODES; k++) counts[k] += c[k]; }
            free(c);
        }
    } else if (PyCapsule_IsValid(cap, PLAIN_CAPSULE)) {
        plain_t *p = PyCapsule_GetPointer(cap, PLAIN_CAPSULE);
        got = ns_mem_where(p->p, p->k.nbytes, counts, 1024);
    } else {
        free(counts);
        return ns_value_error("not a numascope compress object");
    }
    PyObject *res = got > 0 ? ns_where_to_py(counts) : (Py_INCREF(Py_None), Py_None);
    free(counts);
    return res;
}

PyMethodDef ns_compress_methods[] = {
    {"cz_store_new", py_store_new, METH_VARARGS,
     "cz_store_new(data, chunk_bytes, typesize, codec, clevel, filter, cpus, block_bytes, "
     "mem=None) "
     "-> (store, compress_seconds, compressed_bytes, block_bytes): Blosc2 chunks compressed "
     "by their owners; block_bytes 0: Blosc's choice."},
    {"cz_store_place", py_store_place, METH_VARARGS,
     "cz_store_place(store, cpus): re-own the compressed chunks for a team on cpus."},
    {"cz_plain_new", py_plain_new, METH_VARARGS,
     "cz_plain_new(data, chunk_bytes, cpus, mem=None) -> plain copy first-touched by its "
     "owners under the memory spec."},
    {"cz_measure", py_measure, METH_VARARGS,
     "cz_measure(plain, store, cpus, dtype, reps, mode) -> {plain_s, comp_s, "
     "plain_sums, comp_sums, isa, mode, postfilter_bytes}: timed plain and decompress+sum "
     "repetitions, alternating; mode buffer or fused."},
    {"cz_ref_sum", py_ref_sum, METH_VARARGS,
     "cz_ref_sum(data, dtype) -> (reference sum, sum of |x|): Kahan for floats."},
    {"cz_where", py_where, METH_VARARGS,
     "cz_where(store_or_plain) -> {node: pages} sampled with move_pages, or None."},
    {NULL, NULL, 0, NULL},
};
