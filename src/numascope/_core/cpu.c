/* CPU facts the kernels need at run time: which ISAs are usable, where we run. */
#include "ns.h"
#include <sched.h>

const char *const ns_isa_names[NS_ISA_COUNT] = {"scalar", "avx2", "avx512"};

/* The one ISA probe: the bandwidth kernels, the compression sums and `_core.isa()` ask
 * here. AVX2 kernels use FMA too, so "avx2" means AVX2 and FMA. */
int ns_isa_supported(int isa) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (isa == NS_ISA_AVX2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (isa == NS_ISA_AVX512) return __builtin_cpu_supports("avx512f");
#endif
    return isa == NS_ISA_SCALAR;
}

int ns_isa_best(void) {
    for (int i = NS_ISA_COUNT - 1; i > 0; i--)
        if (ns_isa_supported(i)) return i;
    return NS_ISA_SCALAR;
}

static PyObject *py_isa(PyObject *self, PyObject *noargs) {
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < NS_ISA_COUNT; i++) {
        if (!ns_isa_supported(i)) continue;
        PyObject *s = PyUnicode_FromString(ns_isa_names[i]);
        if (!s || PyList_Append(l, s) < 0) { Py_XDECREF(s); Py_DECREF(l); return NULL; }
        Py_DECREF(s);
    }
    return l;
}

static PyObject *py_getcpu(PyObject *self, PyObject *noargs) {
    return PyLong_FromLong(sched_getcpu());
}

static PyObject *py_rdtsc(PyObject *self, PyObject *noargs) {
    return PyLong_FromUnsignedLongLong(ns_rdtsc());
}

PyMethodDef ns_cpu_methods[] = {
    {"isa", py_isa, METH_NOARGS, "Kernel ISAs usable on this CPU, e.g. ['scalar', 'avx2', 'avx512']."},
    {"getcpu", py_getcpu, METH_NOARGS, "The CPU the calling thread runs on now."},
    {"rdtsc", py_rdtsc, METH_NOARGS, "The time-stamp counter."},
    {NULL, NULL, 0, NULL},
};
