/* Benchmark family 'clock': the core clock measured, never read from /proc/cpuinfo.
 *
 * Each pinned thread runs a chain of dependent register-register integer adds. An add has
 * a latency of exactly one cycle on every x86-64 and Arm core we know of, and each add
 * waits for the previous one, so cycles = adds. Register-register (not add-immediate):
 * some renamers (Golden Cove and later) fold small immediates, which would make a chain of
 * `add $1` run faster than one per cycle. Cycles / CLOCK_MONOTONIC seconds = the clock the
 * core really ran at; TSC ticks over the same interval give the TSC rate. The chain's final
 * value is checked against the expected sum, so a kernel that did not run fully is caught. */
#include "ns.h"
#include "team.h"
#include <stdlib.h>
#include <time.h>

#define MAX_BLOCKS 65536

static double thread_cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define ADDS_PER_BLOCK 64            /* adds in one unrolled loop body */
#define BLOCK_ITERS 4096             /* loop bodies between clock reads (262144 adds) */

/* Run `iters` loop bodies of ADDS_PER_BLOCK dependent adds of `k` onto x; return x. */
static uint64_t add_chain(uint64_t x, uint64_t k, uint64_t iters) {
#if defined(__x86_64__)
#define A1 "add %[k], %[x]\n\t"
#define A8 A1 A1 A1 A1 A1 A1 A1 A1
#define A64 A8 A8 A8 A8 A8 A8 A8 A8
    __asm__ volatile(
        "1:\n\t" A64
        "dec %[n]\n\t"
        "jnz 1b\n\t"
        : [x] "+r"(x), [n] "+r"(iters)
        : [k] "r"(k)
        : "cc");
#elif defined(__aarch64__)
#define A1 "add %[x], %[x], %[k]\n\t"
#define A8 A1 A1 A1 A1 A1 A1 A1 A1
#define A64 A8 A8 A8 A8 A8 A8 A8 A8
    __asm__ volatile(
        "1:\n\t" A64
        "subs %[n], %[n], #1\n\t"
        "b.ne 1b\n\t"
        : [x] "+r"(x), [n] "+r"(iters)
        : [k] "r"(k)
        : "cc");
#else
    /* Portable fallback: the empty asm makes each add opaque, so gcc keeps the chain. */
    for (uint64_t i = 0; i < iters; i++) {
        for (int j = 0; j < ADDS_PER_BLOCK; j++) {
            x += k;
            __asm__ volatile("" : "+r"(x));
        }
    }
#endif
    return x;
}

typedef struct {
    double seconds;        /* CLOCK_MONOTONIC_RAW seconds of the timed part */
    uint64_t tsc;          /* TSC ticks over the same interval */
    uint64_t adds;         /* dependent adds executed */
    uint64_t value;        /* the chain's final value, for validation */
    uint64_t expected;
    double cpu_seconds;    /* CPU time the thread really got (less than seconds if preempted) */
    double block_median;   /* median seconds of one block: immune to preemption, which hits
                              only the few blocks it lands in */
    double block_min;
    int stopped;           /* left early on ns_interrupted: no result */
} clock_sample;

typedef struct {
    double warmup;         /* seconds of untimed chain first (lets the core ramp up) */
    double target;         /* seconds of timed chain */
    uint64_t k;            /* the addend (opaque to the compiler: comes from Python) */
    clock_sample *out;     /* one per thread */
} clock_job;

static void clock_work(int tid, int nt, void *p) {
    clock_job *job = p;
    uint64_t x = (uint64_t)tid, blocks = 0;
    double t0 = ns_now();
    clock_sample *o = &job->out[tid];
    while (ns_now() - t0 < job->warmup) {
        if (ns_interrupted) { o->stopped = 1; return; }
        x = add_chain(x, job->k, BLOCK_ITERS);
    }
    uint64_t start_value = x;
    double *bt = malloc(sizeof(double) * MAX_BLOCKS);
    double cpu0 = thread_cpu_seconds();
    double s0 = ns_now();
    uint64_t c0 = ns_rdtsc();
    double s1, prev = s0;
    do {
        x = add_chain(x, job->k, BLOCK_ITERS);
        s1 = ns_now();
        if (bt && blocks < MAX_BLOCKS) bt[blocks] = s1 - prev;
        prev = s1;
        blocks++;
        if (ns_interrupted) { o->stopped = 1; break; }  /* between blocks (~0.1 ms) */
    } while (s1 - s0 < job->target);
    uint64_t c1 = ns_rdtsc();
    double cpu1 = thread_cpu_seconds();
    o->cpu_seconds = cpu1 - cpu0;
    if (bt) {
        size_t nb = blocks < MAX_BLOCKS ? blocks : MAX_BLOCKS;
        qsort(bt, nb, sizeof(double), cmp_double);
        o->block_median = bt[nb / 2];
        o->block_min = bt[0];
        free(bt);
    }
    o->seconds = s1 - s0;
    o->tsc = c1 - c0;
    o->adds = blocks * BLOCK_ITERS * ADDS_PER_BLOCK;
    o->value = x;
    o->expected = start_value + o->adds * job->k;  /* wraps identically modulo 2^64 */
}

/* _core.clock_chain(cpus, seconds, warmup=0.02, k=3) -> list of dicts, one per CPU.
 * All CPUs run at the same time (one team): pass one CPU for a single-core clock. */
static PyObject *py_clock_chain(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"cpus", "seconds", "warmup", "k", NULL};
    PyObject *cpus_obj;
    double seconds, warmup = 0.02;
    unsigned long long k = 3;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Od|dK", kwlist, &cpus_obj, &seconds, &warmup,
                                     &k))
        return NULL;
    if (!(seconds > 0 && seconds <= 60)) return ns_value_error("seconds must be in (0, 60]");
    if (!(warmup >= 0 && warmup <= 10)) return ns_value_error("warmup must be in [0, 10]");
    int *cpus, n;
    if (!ns_int_list(cpus_obj, &cpus, &n)) return NULL;
    if (n == 0) { free(cpus); return ns_value_error("clock_chain needs at least one CPU"); }
    if (ns_clear_interrupt() < 0) { free(cpus); return NULL; }
    char err[256];
    ns_team *team = ns_team_create(cpus, n, err, sizeof err);
    if (!team) { free(cpus); return ns_value_error("%s", err); }
    clock_sample *out = calloc((size_t)n, sizeof *out);
    clock_job job = {warmup, seconds, (uint64_t)k, out};
    Py_BEGIN_ALLOW_THREADS
    ns_team_run_timed(team, clock_work, &job);
    Py_END_ALLOW_THREADS
    ns_team_destroy(team);
    int stopped = 0;
    for (int i = 0; i < n; i++) stopped |= out[i].stopped;
    if (stopped) {
        free(out);
        free(cpus);
        return ns_raise_interrupt();
    }
    PyObject *res = PyList_New(n);
    for (int i = 0; i < n; i++) {
        PyObject *d = Py_BuildValue(
            "{s:i,s:d,s:K,s:K,s:O,s:d,s:d,s:d,s:K}", "cpu", cpus[i], "seconds",
            out[i].seconds, "tsc_ticks", (unsigned long long)out[i].tsc, "adds",
            (unsigned long long)out[i].adds, "valid",
            out[i].value == out[i].expected ? Py_True : Py_False, "cpu_seconds",
            out[i].cpu_seconds, "block_median_s", out[i].block_median, "block_min_s",
            out[i].block_min, "adds_per_block",
            (unsigned long long)BLOCK_ITERS * ADDS_PER_BLOCK);
        PyList_SET_ITEM(res, i, d);
    }
    free(out);
    free(cpus);
    return res;
}

PyMethodDef ns_clock_methods[] = {
    {"clock_chain", (PyCFunction)(void (*)(void))py_clock_chain, METH_VARARGS | METH_KEYWORDS,
     "clock_chain(cpus, seconds, warmup=0.02, k=3): run a dependent-add chain on every CPU "
     "at once; per CPU: seconds, tsc_ticks, adds (= cycles), valid, cpu_seconds, "
     "block_median_s, block_min_s, adds_per_block."},
    {NULL, NULL, 0, NULL},
};
