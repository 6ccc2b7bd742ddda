/* Benchmark family 'compress': kernels and their Python entry points. */
#include "ns.h"

PyMethodDef ns_compress_methods[] = {
    {NULL, NULL, 0, NULL},
};
