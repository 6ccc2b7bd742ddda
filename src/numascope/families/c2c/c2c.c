/* Benchmark family 'c2c': core-to-core latency by cache-line ping-pong.
 *
 * Two threads pinned to CPUs a and b share one counter alone in its cache line. a writes an
 * odd value and spins until b has answered with the next even value; b does the reverse.
 * Each round trip moves the line a -> b -> a, so one-way latency = round trip / 2.
 * The spin loops use plain loads (no pause: on recent cores pause costs ~100 cycles and
 * would be measured). Timing is taken in C on thread a, per sample.
 * The line's home: its own mapping (ns_mem_alloc), first touched by thread a (CPU a);
 * home >= 0 binds it to that node (NS_BIND), home < 0 leaves it to that first touch.
 * Either way the page's node is read back with move_pages and returned as 'where'.
 *
 * Every pair gets a fresh page. Unmapped right after its pair, a page comes straight back
 * to the next pair (same address, same physical frame: the allocator reuses the frame just
 * freed), and with it a line that may still sit in the last pair's caches (on Zen that
 * skews the next pair). So a pair's page is retired, not freed, and freed only once the
 * next pair's page is mapped and first-touched: consecutive pairs never share a frame.
 * The result names the line's address and, where /proc/self/pagemap shows it (root), its
 * physical frame. */
#include "ns.h"
#include "team.h"
#include "memory.h"
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

typedef struct {
    alignas(64) atomic_long flag;
    char pad[64 - sizeof(atomic_long)];
    alignas(64) int samples;
    long trips;
    double *ns;               /* per sample: one-way ns (round trip / 2) */
    double *tsc;              /* per sample: one-way TSC ticks */
    long answered;            /* round trips b answered */
    int stopped;              /* a stopped on ns_interrupted (between two samples) */
} pingpong_t;

#define STOP (-1L)            /* a's word to b instead of the next sample's first odd value */

/* Stopping (ns_interrupted) happens between samples only: a checks the flag before each
 * sample and, when set, writes STOP where b waits for that sample's first value. The
 * round-trip loops themselves are untouched. */
static void pingpong_fn(int tid, int nt, void *arg) {
    pingpong_t *pp = arg;
    long v = 0;
    if (tid == 0) {
        for (int s = 0; s < pp->samples; s++) {
            if (ns_interrupted) {
                atomic_store_explicit(&pp->flag, STOP, memory_order_release);
                pp->stopped = 1;
                return;
            }
            double t0 = ns_now();
            uint64_t r0 = ns_rdtsc();
            for (long i = 0; i < pp->trips; i++) {
                atomic_store_explicit(&pp->flag, v + 1, memory_order_release);
                while (atomic_load_explicit(&pp->flag, memory_order_acquire) != v + 2) {}
                v += 2;
            }
            uint64_t r1 = ns_rdtsc();
            double t1 = ns_now();
            pp->ns[s] = (t1 - t0) * 1e9 / (double)pp->trips / 2.0;
            pp->tsc[s] = (double)(r1 - r0) / (double)pp->trips / 2.0;
        }
    } else {
        long n = 0;
        for (int s = 0; s < pp->samples; s++) {
            long x;
            while ((x = atomic_load_explicit(&pp->flag, memory_order_acquire)) != v + 1)
                if (x == STOP) goto out;
            for (long i = 0;;) {
                atomic_store_explicit(&pp->flag, v + 2, memory_order_release);
                v += 2;
                n++;
                if (++i == pp->trips) break;
                while (atomic_load_explicit(&pp->flag, memory_order_acquire) != v + 1) {}
            }
        }
    out:
        pp->answered = n;
    }
}

/* Thread a (tid 0) touches the line first, so a first-touch page lands on a's node. */
static void touch_fn(int tid, int nt, void *arg) {
    if (tid == 0) memset(arg, 0, sizeof(pingpong_t));
}

/* The last pair's page, kept until the next pair's page is placed (GIL held throughout). */
static struct {
    pingpong_t *page;
    ns_mem_spec spec;
} retired;

static void retire(pingpong_t *pp, const ns_mem_spec *spec) {
    if (retired.page) ns_mem_free(retired.page, sizeof *retired.page, &retired.spec);
    retired.page = pp;
    if (spec) retired.spec = *spec;
}

/* Place pp's page from CPU a (the first touch cpu_a's thread would make) with the calling
 * thread briefly pinned there, so the page has its frame while the last pair's page still
 * holds its own: the two can never be one frame. The last page is then freed before this
 * pair's team starts, so its unmapping belongs to the pair that used it. Unpinnable (CPU
 * not allowed): left to the team's touch. */
static void place_from(int cpu, pingpong_t *pp) {
    cpu_set_t was, one;
    if (sched_getaffinity(0, sizeof was, &was) != 0) return;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) return;
    memset(pp, 0, sizeof *pp);
    sched_setaffinity(0, sizeof was, &was);
}

/* The physical frame of the page holding p (/proc/self/pagemap), -1 when not shown: not
 * present, or the frame hidden (needs CAP_SYS_ADMIN). */
static long long page_frame(const void *p) {
    long page = sysconf(_SC_PAGESIZE);
    int fd = open("/proc/self/pagemap", O_RDONLY);
    if (fd < 0) return -1;
    uint64_t e = 0;
    ssize_t got = pread(fd, &e, sizeof e, (off_t)((uintptr_t)p / (uintptr_t)page * sizeof e));
    close(fd);
    long long pfn = (long long)(e & ((1ULL << 55) - 1));
    return got == (ssize_t)sizeof e && (e >> 63) && pfn ? pfn : -1;
}

/* Python: c2c_pingpong(cpu_a, cpu_b, samples, trips, home=-1) -> dict. samples and trips
 * come checked by the Python side (families/c2c/options.py declares them, their defaults
 * and bounds); the checks below only assert them. */
static PyObject *py_c2c_pingpong(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kws[] = {"cpu_a", "cpu_b", "samples", "trips", "home", NULL};
    int cpus[2], samples, home = -1;
    long trips;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iiil|i", kws, &cpus[0], &cpus[1], &samples,
                                     &trips, &home))
        return NULL;
    if (home >= NS_MAX_NODES) return ns_value_error("home node %d out of range", home);
    if (cpus[0] == cpus[1]) return ns_value_error("ping-pong needs two different CPUs");
    if (samples < 1 || samples > 100000) return ns_value_error("samples must be in [1, 100000]");
    if (trips < 1) return ns_value_error("round trips per sample must be >= 1");
    if (ns_clear_interrupt() < 0) return NULL;
    char err[256];
    ns_mem_spec spec = {.policy = home >= 0 ? NS_BIND : NS_FIRST_TOUCH,
                        .nnodes = home >= 0, .nodes = {home >= 0 ? home : 0}};
    pingpong_t *pp = ns_mem_alloc(sizeof *pp, &spec, err, sizeof err);
    if (!pp) return home >= 0 ? ns_value_error("home node %d: %s", home, err)
                              : ns_value_error("%s", err);
    place_from(cpus[0], pp);        /* a frame for this page while the last one is held */
    retire(NULL, NULL);             /* the last pair's page: freed before this pair's team */
    ns_team *t = ns_team_create(cpus, 2, err, sizeof err);
    if (!t) {
        ns_mem_free(pp, sizeof *pp, &spec);
        return ns_value_error("%s", err);
    }
    ns_team_run(t, touch_fn, pp);   /* the first touch: places the page */
    long long frame = page_frame(&pp->flag);
    long counts[NS_MAX_NODES + 1];
    PyObject *where = ns_mem_where(&pp->flag, sizeof pp->flag, counts, 1) > 0
                          ? ns_where_to_py(counts) : (Py_INCREF(Py_None), Py_None);
    atomic_init(&pp->flag, 0);
    pp->samples = samples;
    pp->trips = trips;
    pp->ns = calloc(samples, sizeof(double));
    pp->tsc = calloc(samples, sizeof(double));
    Py_BEGIN_ALLOW_THREADS
    ns_team_run_timed(t, pingpong_fn, pp);
    ns_team_destroy(t);
    Py_END_ALLOW_THREADS
    long expect = (long)samples * trips;
    PyObject *res = NULL;
    if (pp->stopped) {
        ns_raise_interrupt();
    } else if (pp->answered != expect || atomic_load(&pp->flag) != 2 * expect) {
        PyErr_Format(PyExc_RuntimeError, "validation failed: %ld of %ld round trips answered",
                     pp->answered, expect);
    } else {
        PyObject *ns = PyList_New(samples), *tsc = PyList_New(samples);
        for (int i = 0; i < samples; i++) {
            PyList_SET_ITEM(ns, i, PyFloat_FromDouble(pp->ns[i]));
            PyList_SET_ITEM(tsc, i, PyFloat_FromDouble(pp->tsc[i]));
        }
        res = Py_BuildValue("{s:N,s:N,s:l,s:O,s:O,s:K,s:N}", "ns", ns, "tsc", tsc,
                            "round_trips", expect, "validated", Py_True, "where", where,
                            "line_address", (unsigned long long)(uintptr_t)&pp->flag,
                            "line_frame", frame >= 0 ? PyLong_FromLongLong(frame)
                                                     : Py_NewRef(Py_None));
    }
    Py_DECREF(where);
    free(pp->ns);
    free(pp->tsc);
    retire(pp, &spec);              /* freed once the next pair's page is placed */
    return res;
}

/* Python: c2c_release() -> None: frees the last pair's retired page (at the end of a
 * measurement, so its unmapping is not left to whatever runs next). */
static PyObject *py_c2c_release(PyObject *self, PyObject *args) {
    retire(NULL, NULL);
    Py_RETURN_NONE;
}

PyMethodDef ns_c2c_methods[] = {
    {"c2c_release", py_c2c_release, METH_NOARGS,
     "c2c_release() -> None: free the page the last c2c_pingpong call kept (call after the "
     "last pair)."},
    {"c2c_pingpong", (PyCFunction)(void (*)(void))py_c2c_pingpong, METH_VARARGS | METH_KEYWORDS,
     "c2c_pingpong(cpu_a, cpu_b, samples, trips, home=-1) -> {'ns': one-way ns per "
     "sample, 'tsc': one-way TSC ticks per sample, 'round_trips', 'validated', 'where': "
     "{node: pages} of the shared line's page (None when move_pages is unavailable), "
     "'line_address': the line's address, 'line_frame': its page's physical frame (None "
     "where /proc/self/pagemap hides it)}. "
     "home >= 0 binds the line to that node; -1 leaves it to the first touch by cpu_a. "
     "Each call maps a fresh page; the previous call's page is freed only after this one "
     "is placed, so consecutive pairs never share a line."},
    {NULL, NULL, 0, NULL},
};
