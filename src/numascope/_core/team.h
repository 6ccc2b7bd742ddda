/* A team of worker threads, each pinned to one CPU, that run a function together
 * between barriers. Timing is taken inside the team, never in Python. */
#ifndef NS_TEAM_H
#define NS_TEAM_H
#include <stddef.h>

typedef void (*ns_work_fn)(int tid, int nthreads, void *arg);
typedef struct ns_team ns_team;

/* Start n threads pinned to cpus[0..n-1] (cpus may repeat). On failure returns NULL
 * and writes a one-line reason into err (e.g. a CPU outside the affinity mask). */
ns_team *ns_team_create(const int *cpus, int n, char *err, size_t errlen);

/* Run fn on every thread and wait for all of them. */
void ns_team_run(ns_team *t, ns_work_fn fn, void *arg);

/* Same, but all threads start together after a barrier and each stamps its own start and
 * end (ns_now: CLOCK_MONOTONIC_RAW, one clock for all CPUs); returns the seconds from the
 * earliest start to the latest end, a window that holds every thread's work even when a
 * thread is preempted before it starts. */
double ns_team_run_timed(ns_team *t, ns_work_fn fn, void *arg);

/* Per-thread stamps (ns_now seconds) of the last timed run, n entries each. */
const double *ns_team_starts(const ns_team *t);
const double *ns_team_ends(const ns_team *t);

/* Test hook: in timed runs thread 0 starts only after every other thread has finished and
 * `seconds` more have passed, as if preempted right after the start barrier; 0: off. */
void ns_team_set_late_start(ns_team *t, double seconds);

int ns_team_size(const ns_team *t);
int ns_team_cpu(const ns_team *t, int tid);
void ns_team_destroy(ns_team *t);

/* Static split of [0, n) for thread tid of nt, aligned to `align` elements. */
void ns_split(size_t n, int tid, int nt, size_t align, size_t *begin, size_t *end);

#endif
