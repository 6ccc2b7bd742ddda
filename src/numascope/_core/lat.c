/* Benchmark family 'lat': kernels and their Python entry points. */
#include "ns.h"

PyMethodDef ns_lat_methods[] = {
    {NULL, NULL, 0, NULL},
};
