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
