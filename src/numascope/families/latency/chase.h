/* What lat.c shares with the other chases of the latency family (chains.c). */
#ifndef NS_LAT_CHASE_H
#define NS_LAT_CHASE_H
#include <stddef.h>
#include <stdint.h>

/* Visiting order of all `lines` lines of one Sattolo cycle: order[k] is the k-th line
 * visited (window_lines 0 or >= lines: one random cycle; else random inside windows of
 * that many lines, the windows in random order). Returns 0 on OOM. Defined in lat.c. */
int build_order(uint32_t *order, size_t lines, size_t window_lines, uint64_t seed);

#endif
