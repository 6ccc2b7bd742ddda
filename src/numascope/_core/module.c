/* numascope._core: one module, method tables contributed by each family file. */
#include "ns.h"
#include "memory.h"
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

/* The signals that stop a measurement, and the handler each had before ours was chained in
 * front of it (the interpreter's, which schedules the Python-level handler). */
static const int watched[] = {SIGINT, SIGTERM};
static struct sigaction chained[sizeof watched / sizeof watched[0]];

static void on_signal(int sig, siginfo_t *info, void *uctx) {
    ns_interrupted = 1;
    for (size_t i = 0; i < sizeof watched / sizeof watched[0]; i++) {
        if (watched[i] != sig) continue;
        if (chained[i].sa_flags & SA_SIGINFO) chained[i].sa_sigaction(sig, info, uctx);
        else chained[i].sa_handler(sig);
    }
}

/* Chain in front of the current handler of each watched signal, where there is one (a
 * process that ignores the signal, or leaves it at the default, keeps that). Idempotent.
 * Python's signal.signal() installs its own handler again, replacing ours: whoever sets
 * a handler after this module was imported calls watch_signals() again. */
static void watch(void) {
    for (size_t i = 0; i < sizeof watched / sizeof watched[0]; i++) {
        struct sigaction cur;
        if (sigaction(watched[i], NULL, &cur) != 0) continue;
        int info = (cur.sa_flags & SA_SIGINFO) != 0;
        if (info && cur.sa_sigaction == on_signal) continue;  /* ours already */
        int has_handler = info ? cur.sa_sigaction != NULL
                        : (cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN);
        if (!has_handler) continue;
        chained[i] = cur;
        struct sigaction mine = cur;
        mine.sa_flags |= SA_SIGINFO;
        mine.sa_sigaction = on_signal;
        sigaction(watched[i], &mine, NULL);
    }
}

static PyObject *py_watch_signals(PyObject *self, PyObject *unused) {
    watch();
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"watch_signals", py_watch_signals, METH_NOARGS,
     "watch_signals(): set the C core's stop flag on SIGINT and SIGTERM too, in front of "
     "the handlers installed now (call again after signal.signal())."},
    {NULL, NULL, 0, NULL},
};

int ns_clear_interrupt(void) {
    ns_interrupted = 0;
    return PyErr_CheckSignals();
}

PyObject *ns_raise_interrupt(void) {
    if (PyErr_CheckSignals() == 0) PyErr_SetNone(PyExc_KeyboardInterrupt);
    return NULL;
}

static PyMethodDef *families[] = {
    module_methods, ns_cpu_methods, ns_memory_methods, ns_bw_methods, ns_lat_methods,
    ns_chains_methods, ns_c2c_methods, ns_clock_methods, ns_compress_methods,
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "_core",
    "numascope's compiled core: pinned thread teams, placed memory, benchmark kernels.",
    -1, NULL,
};

PyMODINIT_FUNC PyInit__core(void) {
    PyObject *m = PyModule_Create(&moddef);
    if (!m) return NULL;
    watch();
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        if (PyModule_AddFunctions(m, families[f]) < 0) { Py_DECREF(m); return NULL; }
    }
    /* the node limits of memory.c: numascope.memspec.MAX_NODES is MAX_SPEC_NODES */
    if (PyModule_AddIntConstant(m, "MAX_SPEC_NODES", NS_MAX_SPEC_NODES) < 0 ||
        PyModule_AddIntConstant(m, "MAX_NODE_ID", NS_MAX_NODES - 1) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
