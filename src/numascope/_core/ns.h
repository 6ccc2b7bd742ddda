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
extern PyMethodDef ns_chains_methods[];
extern PyMethodDef ns_c2c_methods[];
extern PyMethodDef ns_clock_methods[];
extern PyMethodDef ns_compress_methods[];

/* Stopping on a signal. SIGINT (Ctrl-C) and SIGTERM (Slurm's time limit, `timeout`, a
 * shutdown) both set ns_interrupted, in a C handler chained in front of the interpreter's
 * (module.c; the CLI installs Python handlers for both and calls _core.watch_signals()).
 * A long call, while it runs without the GIL:
 *   - clears the flag at its start: `if (ns_clear_interrupt() < 0) return NULL;` (this also
 *     raises at once for a signal that came just before the call; `ns_interrupted = 0;`
 *     alone works too, the signal then takes effect when the call returns);
 *   - checks ns_interrupted between units of work (a repetition, a sample, a chunk: short
 *     enough that a stop takes a moment, not the rest of the call; in every thread of a
 *     team, each stopping on its own) and stops early, leaving the result unfinished;
 *   - after the GIL is back and its memory freed: `return ns_raise_interrupt();`. That runs
 *     the Python-level handler, whose exception (KeyboardInterrupt, or the CLI's subclass
 *     naming the signal) is the call's; a partial result is never returned.
 * The Python side keeps every unit that finished before the call (bench.base.run_cases). */
#include <signal.h>
extern volatile sig_atomic_t ns_interrupted;

/* Clear ns_interrupted at the start of an interruptible call; -1 with the exception set
 * when a signal already arrived (the caller returns NULL before starting). */
int ns_clear_interrupt(void);

/* After a call stopped on ns_interrupted: set the pending exception and return NULL. */
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

/* Kernel instruction sets: one probe (cpu.c) for every family that picks a kernel at run
 * time (bandwidth, compression); `_core.isa()` lists the ones this CPU runs. */
enum { NS_ISA_SCALAR = 0, NS_ISA_AVX2, NS_ISA_AVX512, NS_ISA_COUNT };
extern const char *const ns_isa_names[NS_ISA_COUNT];
int ns_isa_supported(int isa);       /* 1 when this CPU runs kernels of that ISA */
int ns_isa_best(void);               /* the widest ISA this CPU runs */

/* The bandwidth `read` kernel (bw.c's kernel table): the sum of a[0..n) in that ISA, with
 * any 8-byte alignment, exactly as `numascope bw --kernel read` times it. The compression
 * family's plain (uncompressed) sum of doubles is this function. */
double ns_bw_read(int isa, const double *a, size_t n);

/* Convert a Python sequence of ints into a malloc'ed int array. Returns 0 and sets
 * a Python exception on failure. The caller frees *out. */
int ns_int_list(PyObject *seq, int **out, int *n);

/* Raise ValueError / OSError with a formatted message; return NULL for convenience. */
PyObject *ns_value_error(const char *fmt, ...);

#endif
