/* CPU facts the kernels need at run time: which ISAs are usable, where we run. */
#include "ns.h"
#include <sched.h>

static PyObject *py_isa(PyObject *self, PyObject *noargs) {
    PyObject *l = PyList_New(0);
    PyObject *s = PyUnicode_FromString("scalar");
    PyList_Append(l, s);
    Py_DECREF(s);
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        s = PyUnicode_FromString("avx2");
        PyList_Append(l, s);
        Py_DECREF(s);
    }
    if (__builtin_cpu_supports("avx512f")) {
        s = PyUnicode_FromString("avx512");
        PyList_Append(l, s);
        Py_DECREF(s);
    }
#endif
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
