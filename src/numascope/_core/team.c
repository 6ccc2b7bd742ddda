#include "team.h"
#include "ns.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ns_team {
    int n;
    int *cpus;
    pthread_t *threads;
    pthread_barrier_t gate;   /* workers + caller: start and end of a job */
    pthread_barrier_t inner;  /* workers only: synchronized start of timed work */
    ns_work_fn fn;
    void *arg;
    int timed;
    int quit;
    double *start, *end;      /* per thread: own clock at the start and end of timed work */
    double late_start;        /* test hook, see ns_team_set_late_start */
    int ended;                /* threads done with the current timed job (atomic) */
    int *pin_ok;              /* per thread: CPU observed after pinning, or -1 */
    pthread_mutex_t lock;     /* start-up: workers wait until every thread exists */
    pthread_cond_t cond;
    int go;                   /* 0 wait, 1 start, -1 creation failed: exit */
};

typedef struct { ns_team *t; int tid; } worker_arg;

static void free_team(ns_team *t) {
    pthread_barrier_destroy(&t->gate);
    pthread_barrier_destroy(&t->inner);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->cond);
    free(t->cpus);
    free(t->threads);
    free(t->pin_ok);
    free(t->start);
    free(t->end);
    free(t);
}

static void sleep_s(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* Test hook: thread 0 waits until every other thread has finished its work, then
 * `late_start` seconds more, as if it had been preempted right after the start barrier. */
static void hold_back(ns_team *t) {
    while (__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE) < t->n - 1) sleep_s(1e-4);
    sleep_s(t->late_start);
}

static void *worker(void *p) {
    worker_arg *wa = p;
    ns_team *t = wa->t;
    int tid = wa->tid;
    free(wa);
    t->pin_ok[tid] = sched_getcpu();
    pthread_mutex_lock(&t->lock);
    while (t->go == 0) pthread_cond_wait(&t->cond, &t->lock);
    int go = t->go;
    pthread_mutex_unlock(&t->lock);
    if (go < 0) return NULL;
    pthread_barrier_wait(&t->gate);           /* creation handshake */
    for (;;) {
        pthread_barrier_wait(&t->gate);       /* job posted */
        if (t->quit) break;
        if (t->timed) {
            /* Each thread stamps its own start and end: a thread preempted between the
             * barrier and its stamp only stamps late, while the others' stamps still
             * bracket the work they did meanwhile. */
            pthread_barrier_wait(&t->inner);
            if (tid == 0 && t->late_start > 0) hold_back(t);
            t->start[tid] = ns_now();
            t->fn(tid, t->n, t->arg);
            t->end[tid] = ns_now();
            __atomic_add_fetch(&t->ended, 1, __ATOMIC_RELEASE);
        } else {
            t->fn(tid, t->n, t->arg);
        }
        pthread_barrier_wait(&t->gate);       /* job done */
    }
    return NULL;
}

ns_team *ns_team_create(const int *cpus, int n, char *err, size_t errlen) {
    if (n <= 0) { snprintf(err, errlen, "a thread team needs at least one thread"); return NULL; }
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) CPU_ZERO(&allowed);
    for (int i = 0; i < n; i++) {
        if (cpus[i] < 0 || cpus[i] >= CPU_SETSIZE || !CPU_ISSET(cpus[i], &allowed)) {
            snprintf(err, errlen, "CPU %d is not in this process's affinity mask", cpus[i]);
            return NULL;
        }
    }
    ns_team *t = calloc(1, sizeof *t);
    t->n = n;
    t->cpus = malloc(sizeof(int) * n);
    memcpy(t->cpus, cpus, sizeof(int) * n);
    t->threads = calloc(n, sizeof(pthread_t));
    t->pin_ok = calloc(n, sizeof(int));
    t->start = calloc(n, sizeof(double));
    t->end = calloc(n, sizeof(double));
    pthread_barrier_init(&t->gate, NULL, n + 1);
    pthread_barrier_init(&t->inner, NULL, n);
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
    int created = 0;
    for (int i = 0; i < n; i++) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[i], &one);
        pthread_attr_setaffinity_np(&attr, sizeof one, &one);
        worker_arg *wa = malloc(sizeof *wa);
        wa->t = t;
        wa->tid = i;
        int rc = pthread_create(&t->threads[i], &attr, worker, wa);
        pthread_attr_destroy(&attr);
        if (rc != 0) {
            snprintf(err, errlen, "cannot start thread on CPU %d: %s", cpus[i], strerror(rc));
            free(wa);
            break;
        }
        created++;
    }
    pthread_mutex_lock(&t->lock);
    t->go = created == n ? 1 : -1;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
    if (created < n) {               /* the started threads see go < 0 and exit */
        for (int i = 0; i < created; i++) pthread_join(t->threads[i], NULL);
        free_team(t);
        return NULL;
    }
    pthread_barrier_wait(&t->gate);
    for (int i = 0; i < n; i++) {
        if (t->pin_ok[i] != cpus[i]) {
            snprintf(err, errlen, "thread %d did not land on CPU %d (ran on %d)", i, cpus[i],
                     t->pin_ok[i]);
            ns_team_destroy(t);
            return NULL;
        }
    }
    return t;
}

static void post(ns_team *t, ns_work_fn fn, void *arg, int timed) {
    t->fn = fn;
    t->arg = arg;
    t->timed = timed;
    t->ended = 0;
    pthread_barrier_wait(&t->gate);
    pthread_barrier_wait(&t->gate);
}

void ns_team_run(ns_team *t, ns_work_fn fn, void *arg) { post(t, fn, arg, 0); }

double ns_team_run_timed(ns_team *t, ns_work_fn fn, void *arg) {
    post(t, fn, arg, 1);
    double first = t->start[0], last = t->end[0];
    for (int i = 1; i < t->n; i++) {
        if (t->start[i] < first) first = t->start[i];
        if (t->end[i] > last) last = t->end[i];
    }
    return last - first;
}

const double *ns_team_starts(const ns_team *t) { return t->start; }
const double *ns_team_ends(const ns_team *t) { return t->end; }
void ns_team_set_late_start(ns_team *t, double seconds) { t->late_start = seconds; }

int ns_team_size(const ns_team *t) { return t->n; }
int ns_team_cpu(const ns_team *t, int tid) { return t->cpus[tid]; }

void ns_team_destroy(ns_team *t) {
    if (!t) return;
    t->quit = 1;
    pthread_barrier_wait(&t->gate);
    for (int i = 0; i < t->n; i++) pthread_join(t->threads[i], NULL);
    free_team(t);
}

void ns_split(size_t n, int tid, int nt, size_t align, size_t *begin, size_t *end) {
    if (align == 0) align = 1;
    size_t blocks = n / align;
    size_t b0 = blocks * (size_t)tid / (size_t)nt;
    size_t b1 = blocks * (size_t)(tid + 1) / (size_t)nt;
    *begin = b0 * align;
    *end = (tid == nt - 1) ? n : b1 * align;
}
