/* numascope._core: one module, method tables contributed by each family file. */
#include "ns.h"
#include <stdarg.h>
#include <time.h>

double ns_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int ns_int_list(PyObject *seq, int **out, int *n) {
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of ints");
    if (!fast) return 0;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    int *a = malloc(sizeof(int) * (len ? len : 1));
    if (!a) { Py_DECREF(fast); PyErr_NoMemory(); return 0; }
    for (Py_ssize_t i = 0; i < len; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) { free(a); Py_DECREF(fast); return 0; }
        a[i] = (int)v;
    }
    Py_DECREF(fast);
    *out = a;
    *n = (int)len;
    return 1;
}

PyObject *ns_value_error(const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    PyErr_SetString(PyExc_ValueError, buf);
    return NULL;
}

volatile sig_atomic_t ns_interrupted = 0;
static struct sigaction python_sigint;

static void on_sigint(int sig, siginfo_t *info, void *uctx) {
    ns_interrupted = 1;
    if (python_sigint.sa_flags & SA_SIGINFO) python_sigint.sa_sigaction(sig, info, uctx);
    else python_sigint.sa_handler(sig);
}

/* Chain in front of the interpreter's SIGINT handler (only when it has one: a process that
 * ignores SIGINT, or leaves it at the default, keeps that). */
static void watch_sigint(void) {
    struct sigaction cur;
    if (sigaction(SIGINT, NULL, &cur) != 0) return;
    int has_handler = (cur.sa_flags & SA_SIGINFO) ? cur.sa_sigaction != NULL
                    : (cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN);
    if (!has_handler) return;
    python_sigint = cur;
    struct sigaction mine = cur;
    mine.sa_flags |= SA_SIGINFO;
    mine.sa_sigaction = on_sigint;
    sigaction(SIGINT, &mine, NULL);
}

PyObject *ns_raise_interrupt(void) {
    if (PyErr_CheckSignals() == 0) PyErr_SetNone(PyExc_KeyboardInterrupt);
    return NULL;
}

static PyMethodDef *families[] = {
    ns_cpu_methods, ns_memory_methods, ns_bw_methods, ns_lat_methods,
    ns_c2c_methods, ns_clock_methods, ns_compress_methods,
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "_core",
    "numascope's compiled core: pinned thread teams, placed memory, benchmark kernels.",
    -1, NULL,
};

PyMODINIT_FUNC PyInit__core(void) {
    PyObject *m = PyModule_Create(&moddef);
    if (!m) return NULL;
    watch_sigint();
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        if (PyModule_AddFunctions(m, families[f]) < 0) { Py_DECREF(m); return NULL; }
    }
    return m;
}
