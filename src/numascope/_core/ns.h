/* Shared declarations of the numascope._core extension.
 *
 * Each benchmark family lives in its own .c file and exports one method table
 * (ns_<family>_methods); module.c stitches them into one module. */
#ifndef NS_H
#define NS_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

extern PyMethodDef ns_cpu_methods[];
extern PyMethodDef ns_memory_methods[];
extern PyMethodDef ns_bw_methods[];
extern PyMethodDef ns_lat_methods[];
extern PyMethodDef ns_c2c_methods[];
extern PyMethodDef ns_clock_methods[];
extern PyMethodDef ns_compress_methods[];

/* Set by SIGINT (Ctrl-C) while C code runs without the GIL; long loops check it between
 * units of work and stop early, so Ctrl-C takes effect in a moment, not at the end of a
 * minute-long call. Python's own handler still runs, so the caller's next
 * PyErr_CheckSignals() raises KeyboardInterrupt. Cleared at the start of such a call. */
#include <signal.h>
extern volatile sig_atomic_t ns_interrupted;

/* After a call stopped on ns_interrupted: set KeyboardInterrupt and return NULL. */
PyObject *ns_raise_interrupt(void);

/* Monotonic wall clock in seconds (CLOCK_MONOTONIC_RAW). */
double ns_now(void);

static inline uint64_t ns_rdtsc(void) {
#if defined(__x86_64__) || defined(__i386__)
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#else
    return 0;
#endif
}

/* Convert a Python sequence of ints into a malloc'ed int array. Returns 0 and sets
 * a Python exception on failure. The caller frees *out. */
int ns_int_list(PyObject *seq, int **out, int *n);

/* Raise ValueError / OSError with a formatted message; return NULL for convenience. */
PyObject *ns_value_error(const char *fmt, ...);

#endif
