#include "memory.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MPOL_PREFERRED_ 1
#define MPOL_BIND_ 2
#define MPOL_INTERLEAVE_ 3
#define MPOL_WEIGHTED_INTERLEAVE_ 6   /* Linux >= 6.9 */
#define MASK_WORDS (NS_MAX_NODES / (8 * sizeof(unsigned long)))
#define HUGE_2M (2UL << 20)

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }
static int weights_from_py(PyObject *w, ns_mem_spec *spec);

int ns_mem_spec_from_py(PyObject *obj, ns_mem_spec *spec) {
    memset(spec, 0, sizeof *spec);
    if (obj == NULL || obj == Py_None) return 1;
    if (!PyDict_Check(obj)) { PyErr_SetString(PyExc_TypeError, "memory spec must be a dict"); return 0; }
    PyObject *pol = PyDict_GetItemString(obj, "policy");
    if (pol) {
        const char *s = PyUnicode_AsUTF8(pol);
        if (!s) return 0;
        if (!strcmp(s, "first-touch")) spec->policy = NS_FIRST_TOUCH;
        else if (!strcmp(s, "bind")) spec->policy = NS_BIND;
        else if (!strcmp(s, "interleave")) spec->policy = NS_INTERLEAVE;
        else if (!strcmp(s, "preferred")) spec->policy = NS_PREFERRED;
        else if (!strcmp(s, "weighted-interleave")) spec->policy = NS_WEIGHTED;
        else { ns_value_error("unknown memory policy '%s'", s); return 0; }
    }
    PyObject *nodes = PyDict_GetItemString(obj, "nodes");
    if (nodes && nodes != Py_None) {
        int *a, n;
        if (!ns_int_list(nodes, &a, &n)) return 0;
        if (n > NS_MAX_SPEC_NODES) {
            free(a);
            ns_value_error("at most %d nodes in a memory spec", NS_MAX_SPEC_NODES);
            return 0;
        }
        for (int i = 0; i < n; i++) {
            if (a[i] < 0 || a[i] >= NS_MAX_NODES) { free(a); ns_value_error("bad node %d", a[i]); return 0; }
            spec->nodes[i] = a[i];
        }
        spec->nnodes = n;
        free(a);
    }
    if (spec->policy != NS_FIRST_TOUCH && spec->nnodes == 0) {
        ns_value_error("memory policy needs at least one node");
        return 0;
    }
    if (!weights_from_py(PyDict_GetItemString(obj, "weights"), spec)) return 0;
    PyObject *huge = PyDict_GetItemString(obj, "huge");
    if (huge && huge != Py_None) {
        const char *s = PyUnicode_AsUTF8(huge);
        if (!s) return 0;
        if (!strcmp(s, "none")) spec->huge = NS_HUGE_NONE;
        else if (!strcmp(s, "thp")) spec->huge = NS_HUGE_THP;
        else if (!strcmp(s, "hugetlb")) spec->huge = NS_HUGE_HUGETLB;
        else { ns_value_error("unknown page kind '%s'", s); return 0; }
    }
    return 1;
}

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* Ordinary and THP mappings start on a 2 MiB boundary (so huge pages can back all of it) and
 * sit between two PROT_NONE guard pages. The guards keep every mapping its own VMA: two
 * arrays mapped back to back with the same settings would otherwise merge into one, and
 * /proc/self/smaps, which counts huge pages per VMA, could not tell them apart. */
static void *map_guarded(size_t len, char *err, size_t errlen) {
    size_t g = page_size(), span = len + HUGE_2M + 2 * g;
    char *base = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                      -1, 0);
    if (base == MAP_FAILED) {
        snprintf(err, errlen, "cannot map %zu bytes: %s", len, strerror(errno));
        return NULL;
    }
    char *p = (char *)round_up((size_t)(uintptr_t)base + g, HUGE_2M);
    char *lo = p - g, *hi = p + len + g;
    if (lo > base) munmap(base, (size_t)(lo - base));
    if (base + span > hi) munmap(hi, (size_t)(base + span - hi));
    if (mprotect(p, len, PROT_READ | PROT_WRITE) != 0) {
        snprintf(err, errlen, "cannot map %zu bytes: %s", len, strerror(errno));
        munmap(lo, len + 2 * g);
        return NULL;
    }
    return p;
}

/* "weights": one per node, >= 0, not all zero, summing to at most NS_MAX_WEIGHT_SUM */
static int weights_from_py(PyObject *w, ns_mem_spec *spec) {
    if (!w || w == Py_None) return 1;
    if (spec->policy != NS_WEIGHTED) {
        ns_value_error("weights belong to the weighted-interleave policy only");
        return 0;
    }
    int *a, n, sum = 0;
    if (!ns_int_list(w, &a, &n)) return 0;
    if (n != spec->nnodes) {
        free(a);
        ns_value_error("%d weights for %d nodes", n, spec->nnodes);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        if (a[i] < 0 || a[i] > NS_MAX_WEIGHT_SUM) {
            free(a);
            ns_value_error("bad weight %d (0 to %d)", a[i], NS_MAX_WEIGHT_SUM);
            return 0;
        }
        spec->weights[i] = a[i];
        sum += a[i];
    }
    free(a);
    if (sum == 0 || sum > NS_MAX_WEIGHT_SUM) {
        ns_value_error("weights must sum to 1..%d (got %d)", NS_MAX_WEIGHT_SUM, sum);
        return 0;
    }
    return 1;
}

static int weight_sum(const ns_mem_spec *spec) {
    int sum = 0;
    for (int i = 0; i < spec->nnodes; i++) sum += spec->weights[i];
    return sum;
}

static void node_mask(unsigned long *mask, const int *nodes, int n) {
    memset(mask, 0, sizeof(unsigned long) * MASK_WORDS);
    for (int i = 0; i < n; i++)
        mask[nodes[i] / (8 * sizeof(unsigned long))] |=
            1UL << (nodes[i] % (8 * sizeof(unsigned long)));
}

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

size_t ns_weighted_granule(size_t len, int huge) {
    size_t base = huge == NS_HUGE_NONE ? (size_t)sysconf(_SC_PAGESIZE) : HUGE_2M;
    size_t g = round_up((len + 8191) / 8192, base);
    return g > base ? g : base;
}

void ns_weighted_slots(const ns_mem_spec *spec, size_t first, size_t count, int *slots) {
    int w = weight_sum(spec), block[NS_MAX_WEIGHT_SUM];
    size_t cur = (size_t)-1;
    for (size_t g = first; g < first + count; g++) {
        size_t b = g / (size_t)w;
        if (b != cur) {   /* this block's order: weights[i] copies of i, shuffled */
            int k = 0;
            for (int i = 0; i < spec->nnodes; i++)
                for (int x = 0; x < spec->weights[i]; x++) block[k++] = i;
            uint64_t seed = (uint64_t)b * 0x2545F4914F6CDD1DULL + 1;
            for (int i = w - 1; i > 0; i--) {
                int j = (int)(splitmix64(&seed) % (uint64_t)(i + 1)), t = block[i];
                block[i] = block[j];
                block[j] = t;
            }
            cur = b;
        }
        slots[g - first] = block[g % (size_t)w];
    }
}

static int bind_run(uintptr_t lo, uintptr_t hi, int node, char *err, size_t errlen) {
    unsigned long mask[MASK_WORDS];
    node_mask(mask, &node, 1);
    if (syscall(SYS_mbind, (void *)lo, hi - lo, MPOL_BIND_, mask,
                (unsigned long)NS_MAX_NODES + 1, 0UL) == 0)
        return 1;
    snprintf(err, errlen, "cannot bind part of the memory to node %d: %s", node,
             strerror(errno));
    return 0;
}

/* Bind each run of same-node granules of [p, p+len) to its node. Granules are aligned to
 * absolute multiples of their size, so a huge page never straddles two nodes. */
static int bind_weighted(char *p, size_t len, const ns_mem_spec *spec, char *err,
                         size_t errlen) {
    size_t g = ns_weighted_granule(len, spec->huge);
    uintptr_t start = (uintptr_t)p, end = start + len, base = start - start % g;
    size_t count = (end - base + g - 1) / g, n;
    int slots[4096], run_slot = -1;
    uintptr_t run_lo = start;
    for (size_t first = 0; first < count; first += n) {
        n = count - first < 4096 ? count - first : 4096;
        ns_weighted_slots(spec, first, n, slots);
        for (size_t i = 0; i < n; i++) {
            if (slots[i] == run_slot) continue;
            uintptr_t lo = base + (first + i) * g;
            if (lo < start) lo = start;
            if (run_slot >= 0 && !bind_run(run_lo, lo, spec->nodes[run_slot], err, errlen))
                return 0;
            run_lo = lo;
            run_slot = slots[i];
        }
    }
    return bind_run(run_lo, end, spec->nodes[run_slot], err, errlen);
}

void *ns_mem_alloc(size_t bytes, const ns_mem_spec *spec, char *err, size_t errlen) {
    size_t len = round_up(bytes ? bytes : 1, HUGE_2M);
    void *p;
    if (spec->huge == NS_HUGE_HUGETLB) {
        /* No MAP_NORESERVE: an unreserved hugetlb mapping succeeds on an empty pool and then
         * dies with SIGBUS on first touch; reserved, it fails here. Hugetlb mappings never
         * merge (each is its own hugetlbfs file), so they need no guard. */
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB,
                 -1, 0);
        if (p == MAP_FAILED) {
            snprintf(err, errlen, "cannot map %zu bytes of hugetlb pages: %s", len,
                     strerror(errno));
            return NULL;
        }
    } else if (!(p = map_guarded(len, err, errlen))) {
        return NULL;
    }
    if (spec->huge == NS_HUGE_THP) madvise(p, len, MADV_HUGEPAGE);
    else if (spec->huge == NS_HUGE_NONE) madvise(p, len, MADV_NOHUGEPAGE);
    if (spec->policy == NS_WEIGHTED && weight_sum(spec) > 0) {
        if (!bind_weighted(p, len, spec, err, errlen)) {
            ns_mem_free(p, bytes, spec);
            return NULL;
        }
    } else if (spec->policy != NS_FIRST_TOUCH) {
        unsigned long mask[MASK_WORDS];
        node_mask(mask, spec->nodes, spec->nnodes);
        int mode = spec->policy == NS_BIND ? MPOL_BIND_
                 : spec->policy == NS_INTERLEAVE ? MPOL_INTERLEAVE_
                 : spec->policy == NS_WEIGHTED ? MPOL_WEIGHTED_INTERLEAVE_ : MPOL_PREFERRED_;
        if (syscall(SYS_mbind, p, len, mode, mask, (unsigned long)NS_MAX_NODES + 1, 0UL) != 0) {
            if (spec->policy == NS_WEIGHTED && errno == EINVAL)
                snprintf(err, errlen, "the kernel refused weighted interleave "
                         "(MPOL_WEIGHTED_INTERLEAVE needs Linux >= 6.9): %s", strerror(errno));
            else
                snprintf(err, errlen, "cannot bind memory to the requested node(s): %s",
                         strerror(errno));
            ns_mem_free(p, bytes, spec);
            return NULL;
        }
    }
    return p;
}

size_t ns_mem_mapped_bytes(size_t bytes) { return round_up(bytes ? bytes : 1, HUGE_2M); }

void ns_mem_free(void *p, size_t bytes, const ns_mem_spec *spec) {
    if (!p) return;
    size_t len = round_up(bytes ? bytes : 1, HUGE_2M);
    if (spec->huge == NS_HUGE_HUGETLB) munmap(p, len);
    else munmap((char *)p - page_size(), len + 2 * page_size());
}

long ns_mem_where(const void *p, size_t bytes, long *counts, long max_samples) {
    long page = sysconf(_SC_PAGESIZE);
    long npages = (long)((bytes + page - 1) / page);
    if (npages <= 0) return 0;
    long ns = npages < max_samples ? npages : max_samples;
    void **pages = malloc(sizeof(void *) * ns);
    int *status = malloc(sizeof(int) * ns);
    for (long i = 0; i < ns; i++)
        pages[i] = (char *)p + (size_t)((npages * i) / ns) * page;
    long rc = syscall(SYS_move_pages, 0, ns, pages, NULL, status, 0);
    if (rc != 0) { free(pages); free(status); return -1; }
    memset(counts, 0, sizeof(long) * (NS_MAX_NODES + 1));
    for (long i = 0; i < ns; i++) {
        if (status[i] >= 0 && status[i] < NS_MAX_NODES) counts[status[i]]++;
        else counts[NS_MAX_NODES]++;
    }
    free(pages);
    free(status);
    return ns;
}

PyObject *ns_where_to_py(const long *counts) {
    PyObject *d = PyDict_New();
    for (int i = 0; i <= NS_MAX_NODES; i++) {
        if (!counts[i]) continue;
        PyObject *k = PyLong_FromLong(i == NS_MAX_NODES ? -1 : i);
        PyObject *v = PyLong_FromLong(counts[i]);
        PyDict_SetItem(d, k, v);
        Py_DECREF(k);
        Py_DECREF(v);
    }
    return d;
}

/* Bytes of [lo, hi) covered by the (disjoint) ranges. */
static size_t covered(uintptr_t lo, uintptr_t hi, const uintptr_t *start, const size_t *len,
                      int k) {
    size_t c = 0;
    for (int i = 0; i < k; i++) {
        uintptr_t a = start[i] > lo ? start[i] : lo;
        uintptr_t b = start[i] + len[i] < hi ? start[i] + len[i] : hi;
        if (b > a) c += b - a;
    }
    return c;
}

double ns_mem_huge_share(const uintptr_t *start, const size_t *len, int k) {
    size_t total = 0;
    for (int i = 0; i < k; i++) total += len[i];
    if (total == 0) return -1;
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    char line[512];
    int in = 0, foreign = 0;
    size_t seen = 0, huge_kb = 0;
    unsigned long lo, hi;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
            size_t c = hi > lo ? covered(lo, hi, start, len, k) : 0;
            in = c > 0;
            seen += c;
            if (in && c < hi - lo) foreign = 1;   /* the VMA also holds other memory */
            continue;
        }
        unsigned long kb;
        if (in && (sscanf(line, "AnonHugePages: %lu kB", &kb) == 1 ||
                   sscanf(line, "Private_Hugetlb: %lu kB", &kb) == 1 ||
                   sscanf(line, "Shared_Hugetlb: %lu kB", &kb) == 1))
            huge_kb += kb;
    }
    fclose(f);
    if (foreign || seen != total) return -1;
    return (double)huge_kb * 1024.0 / (double)total;
}

double ns_mem_huge_fraction(const void *p, size_t bytes) {
    uintptr_t start = (uintptr_t)p;
    size_t len = round_up(bytes ? bytes : 1, HUGE_2M);
    return ns_mem_huge_share(&start, &len, 1);
}

static PyObject *py_huge_share(PyObject *self, PyObject *ranges) {
    PyObject *fast = PySequence_Fast(ranges, "ranges must be a sequence of (address, length)");
    if (!fast) return NULL;
    Py_ssize_t k = PySequence_Fast_GET_SIZE(fast);
    if (k < 1 || k > 64) {
        Py_DECREF(fast);
        return ns_value_error("between 1 and 64 ranges");
    }
    uintptr_t start[64];
    size_t len[64];
    for (Py_ssize_t i = 0; i < k; i++) {
        unsigned long long a, n;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "KK", &a, &n)) {
            Py_DECREF(fast);
            return NULL;
        }
        start[i] = (uintptr_t)a;
        len[i] = (size_t)n;
    }
    Py_DECREF(fast);
    return PyFloat_FromDouble(ns_mem_huge_share(start, len, (int)k));
}

static PyObject *py_numa_syscalls(PyObject *self, PyObject *noargs) {
    int mode = 0;
    long rc = syscall(SYS_get_mempolicy, &mode, NULL, 0UL, NULL, 0UL);
    return PyBool_FromLong(rc == 0);
}

static PyObject *py_weighted_layout(PyObject *self, PyObject *args) {
    PyObject *weights;
    Py_ssize_t granules;
    if (!PyArg_ParseTuple(args, "On", &weights, &granules)) return NULL;
    if (granules < 0 || granules > (1 << 24)) return ns_value_error("granules: 0 to 2^24");
    ns_mem_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.policy = NS_WEIGHTED;
    int *a, n;
    if (!ns_int_list(weights, &a, &n)) return NULL;
    if (n < 1 || n > NS_MAX_SPEC_NODES) {
        free(a);
        return ns_value_error("1 to %d weights", NS_MAX_SPEC_NODES);
    }
    spec.nnodes = n;
    for (int i = 0; i < n; i++) spec.nodes[i] = i;
    free(a);
    if (!weights_from_py(weights, &spec)) return NULL;
    int *slots = malloc(sizeof(int) * (granules ? (size_t)granules : 1));
    ns_weighted_slots(&spec, 0, (size_t)granules, slots);
    PyObject *out = PyList_New(granules);
    for (Py_ssize_t i = 0; i < granules; i++) PyList_SET_ITEM(out, i, PyLong_FromLong(slots[i]));
    free(slots);
    return out;
}

static PyObject *py_weighted_granule(PyObject *self, PyObject *args) {
    Py_ssize_t len;
    int huge;
    if (!PyArg_ParseTuple(args, "np", &len, &huge)) return NULL;
    return PyLong_FromSize_t(ns_weighted_granule((size_t)len, huge ? NS_HUGE_THP : NS_HUGE_NONE));
}

/* Map with a spec, touch every page, and report the kernel's policy mode at the first page
 * (get_mempolicy MPOL_F_ADDR: 2 bind, 3 interleave, 6 weighted interleave …) and where up
 * to 65536 sampled pages are: proof that a policy was applied, not just accepted. */
static PyObject *py_mem_probe(PyObject *self, PyObject *args) {
    PyObject *mem;
    Py_ssize_t bytes;
    if (!PyArg_ParseTuple(args, "On", &mem, &bytes)) return NULL;
    if (bytes <= 0) return ns_value_error("bytes must be positive");
    ns_mem_spec spec;
    if (!ns_mem_spec_from_py(mem, &spec)) return NULL;
    char err[256] = "";
    char *p = ns_mem_alloc((size_t)bytes, &spec, err, sizeof err);
    if (!p) return ns_value_error("%s", err);
    long page = sysconf(_SC_PAGESIZE);
    for (Py_ssize_t i = 0; i < bytes; i += page) p[i] = 1;
    int mode = -1;
    if (syscall(SYS_get_mempolicy, &mode, NULL, 0UL, p, 2UL /* MPOL_F_ADDR */) != 0) mode = -1;
    static long counts[NS_MAX_NODES + 1];
    long got = ns_mem_where(p, (size_t)bytes, counts, 65536);
    PyObject *where = got < 0 ? Py_NewRef(Py_None) : ns_where_to_py(counts);
    ns_mem_free(p, (size_t)bytes, &spec);
    return Py_BuildValue("{s:i,s:N}", "mode", mode, "pages", where);
}

PyMethodDef ns_memory_methods[] = {
    {"mem_probe", py_mem_probe, METH_VARARGS,
     "mem_probe(memory, bytes) -> {'mode': kernel policy mode at the first page, 'pages': "
     "{node: sampled pages}}: maps with the spec, touches every page, asks the kernel."},
    {"weighted_layout", py_weighted_layout, METH_VARARGS,
     "weighted_layout(weights, granules) -> [slot per granule]: which of the weighted nodes "
     "each granule of an explicit weighted-interleave mapping is bound to."},
    {"weighted_granule", py_weighted_granule, METH_VARARGS,
     "weighted_granule(bytes, huge) -> granule size in bytes of explicit weighted placement."},
    {"numa_syscalls", py_numa_syscalls, METH_NOARGS,
     "True when the kernel answers the NUMA memory-policy syscalls."},
    {"huge_share", py_huge_share, METH_O,
     "huge_share([(address, length), ...]) -> float\n\n"
     "Share of these disjoint ranges of this process backed by huge pages (THP or hugetlb), "
     "from /proc/self/smaps; -1 when it cannot be told exactly: a range not mapped, or a "
     "mapping (VMA) that also holds memory outside the ranges, since smaps counts per VMA."},
    {NULL, NULL, 0, NULL},
};
