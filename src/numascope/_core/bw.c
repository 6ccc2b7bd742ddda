/* Benchmark family 'bw': kernels and their Python entry points. */
#include "ns.h"

PyMethodDef ns_bw_methods[] = {
    {NULL, NULL, 0, NULL},
};
