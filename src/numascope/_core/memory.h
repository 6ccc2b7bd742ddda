/* Placed memory: anonymous mappings with an explicit NUMA policy (raw syscalls, so no
 * libnuma is needed), optional huge pages, and a check of where the pages really are. */
#ifndef NS_MEMORY_H
#define NS_MEMORY_H
#include "ns.h"
#include <stddef.h>
#include <stdint.h>

#define NS_MAX_NODES 1024      /* node ids 0..NS_MAX_NODES-1 (one mbind node mask) */
#define NS_MAX_SPEC_NODES 64   /* nodes named by one spec: numascope.memspec.MAX_NODES,
                                * exported as _core.MAX_SPEC_NODES */

enum ns_mem_policy { NS_FIRST_TOUCH = 0, NS_BIND, NS_INTERLEAVE, NS_PREFERRED, NS_WEIGHTED };
enum ns_huge { NS_HUGE_NONE = 0, NS_HUGE_THP, NS_HUGE_HUGETLB };

typedef struct {
    int policy;               /* enum ns_mem_policy */
    int nnodes;
    int nodes[NS_MAX_SPEC_NODES];
    int huge;                 /* enum ns_huge */
    /* NS_WEIGHTED: all zero = the kernel's MPOL_WEIGHTED_INTERLEAVE over nodes with the
     * system weights (/sys/kernel/mm/mempolicy/weighted_interleave, Linux >= 6.9); else
     * numascope places granules so that pages go weights[0] : weights[1] : … to nodes[i]
     * (see ns_weighted_slots), each granule bound to its node. */
    int weights[NS_MAX_SPEC_NODES];
} ns_mem_spec;

#define NS_MAX_WEIGHT_SUM 1024

/* Fill spec from a Python dict {"policy": "first-touch"|"bind"|"interleave"|"preferred"|
 * "weighted-interleave", "nodes": [ints], "weights": [ints] (weighted-interleave only),
 * "huge": "none"|"thp"|"hugetlb"}; None means first touch, 4 KiB pages.
 * Returns 0 with a Python exception set on bad input. */
int ns_mem_spec_from_py(PyObject *obj, ns_mem_spec *spec);

/* Explicit weighted placement: the granule (bytes, a multiple of the page kind's size, at
 * most ~8192 per mapping so the VMAs stay few) and the node slot of granules
 * [first, first + count): each block of sum(weights) granules holds weights[i] granules of
 * nodes[i], in an order shuffled per block, so that page sampling at any stride sees the
 * ratio. */
size_t ns_weighted_granule(size_t len, int huge);
void ns_weighted_slots(const ns_mem_spec *spec, size_t first, size_t count, int *slots);

/* Map `bytes` (rounded up to 2 MiB) and apply the policy before any page is touched.
 * Pages are not touched here: first touch is the caller's (pinned) business. Ordinary and
 * THP mappings are 2 MiB aligned and fenced by guard pages, so each is its own VMA.
 * On failure returns NULL with a reason in err. Free with ns_mem_free (same bytes, spec). */
void *ns_mem_alloc(size_t bytes, const ns_mem_spec *spec, char *err, size_t errlen);
void ns_mem_free(void *p, size_t bytes, const ns_mem_spec *spec);

/* Length of the mapping ns_mem_alloc makes for `bytes` (whole 2 MiB pages). */
size_t ns_mem_mapped_bytes(size_t bytes);

/* Where the pages of [p, p+bytes) are: samples up to max_samples pages evenly and counts
 * them per node into counts[0..NS_MAX_NODES) (counts[NS_MAX_NODES] gets pages not present).
 * Returns the number of pages sampled, or -1 when move_pages is unavailable. */
long ns_mem_where(const void *p, size_t bytes, long *counts, long max_samples);

/* {node: pages, ...} from counts as filled by ns_mem_where (non-zero entries only;
 * key -1 for pages not present). */
PyObject *ns_where_to_py(const long *counts);

/* Share of the k disjoint ranges [start[i], start[i]+len[i]) backed by huge pages (THP or
 * hugetlb), from /proc/self/smaps. smaps counts per VMA, so every VMA touching a range must
 * lie inside the ranges; else (or when a range is not mapped) -1: unknown, never a share
 * inflated by memory that belongs to something else. */
double ns_mem_huge_share(const uintptr_t *start, const size_t *len, int k);

/* ns_mem_huge_share of one mapping from ns_mem_alloc(bytes, ...). */
double ns_mem_huge_fraction(const void *p, size_t bytes);

#endif
