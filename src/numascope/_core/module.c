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
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        if (PyModule_AddFunctions(m, families[f]) < 0) { Py_DECREF(m); return NULL; }
    }
    return m;
}
