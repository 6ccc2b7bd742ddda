/* Placement witness: an LD_PRELOAD library that asks the kernel where numascope's buffers
 * really are, independently of numascope's own page report.
 *
 * Every munmap() called from numascope's C core (_core.*.so) is intercepted just before
 * the pages go: each page of the range is looked up with move_pages(2) (all of them, not a
 * sample), the range's memory policy with get_mempolicy(MPOL_F_ADDR), and one JSON line is
 * appended to $NUMA_WITNESS_LOG with the counts per node, the node runs in address order,
 * and the CPUs of the thread team that last ran (each thread's CPU as sched_getcpu() saw
 * it). Threads are followed by wrapping pthread_create() calls made from the C core.
 * witness_mark(name) writes a marker line so that a driver can split the log per command. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_NODES 64
#define MAX_TEAM 256
#define MAX_RUNS 64
#define BATCH 1024
#define MPOL_F_ADDR_ 2

static int logfd = -1;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int live;                    /* core threads running now */
static int nteam;                   /* the last team: threads created since live was 0 */
static int team_asked[MAX_TEAM], team_cpu[MAX_TEAM];

__attribute__((constructor)) static void witness_init(void) {
    const char *path = getenv("NUMA_WITNESS_LOG");
    if (path && *path) logfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

static void emit(const char *fmt, ...) {
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || logfd < 0) return;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    (void)!write(logfd, line, (size_t)n);   /* one write per line: O_APPEND keeps it whole */
}

static int from_core(void *ret) {
    Dl_info info;
    if (!dladdr(ret, &info) || !info.dli_fname) return 0;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    return strncmp(base, "_core.", 6) == 0;
}

void witness_mark(const char *name) { emit("{\"ev\":\"mark\",\"name\":\"%s\"}", name); }

/* -- threads ----------------------------------------------------------------------------- */
typedef struct { void *(*fn)(void *); void *arg; int slot; } start_t;

static void *start(void *p) {
    start_t s = *(start_t *)p;
    free(p);
    int cpu = sched_getcpu();
    pthread_mutex_lock(&mu);
    if (s.slot >= 0 && s.slot < nteam) team_cpu[s.slot] = cpu;
    pthread_mutex_unlock(&mu);
    void *r = s.fn(s.arg);
    pthread_mutex_lock(&mu);
    live--;
    pthread_mutex_unlock(&mu);
    return r;
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
    static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    if (!real) real = dlsym(RTLD_NEXT, "pthread_create");
    if (logfd < 0 || !from_core(__builtin_return_address(0))) return real(t, attr, fn, arg);
    int asked = -1;
    cpu_set_t set;
    if (attr && pthread_attr_getaffinity_np(attr, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set)) { asked = c; break; }
    start_t *s = malloc(sizeof *s);
    s->fn = fn;
    s->arg = arg;
    pthread_mutex_lock(&mu);
    if (live == 0) nteam = 0;
    live++;
    s->slot = nteam < MAX_TEAM ? nteam++ : -1;
    if (s->slot >= 0) { team_asked[s->slot] = asked; team_cpu[s->slot] = -1; }
    pthread_mutex_unlock(&mu);
    int rc = real(t, attr, start, s);
    if (rc != 0) {
        free(s);
        pthread_mutex_lock(&mu);
        live--;
        pthread_mutex_unlock(&mu);
    }
    return rc;
}

/* -- buffers ----------------------------------------------------------------------------- */
static void report(void *addr, size_t len) {
    long page = sysconf(_SC_PAGESIZE);
    size_t npages = len / (size_t)page;
    long counts[MAX_NODES] = {0}, absent = 0, other = 0;
    int run_node[MAX_RUNS];
    long run_len[MAX_RUNS];
    int nruns = 0, truncated = 0;
    void *pages[BATCH];
    int status[BATCH];
    for (size_t i0 = 0; i0 < npages; i0 += BATCH) {
        size_t n = npages - i0 < BATCH ? npages - i0 : BATCH;
        for (size_t i = 0; i < n; i++) pages[i] = (char *)addr + (i0 + i) * (size_t)page;
        if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0) != 0) {
            emit("{\"ev\":\"error\",\"what\":\"move_pages failed\",\"bytes\":%zu}", len);
            return;
        }
        for (size_t i = 0; i < n; i++) {
            int s = status[i];
            if (s < 0) { absent++; continue; }
            if (s >= MAX_NODES) { other++; continue; }
            counts[s]++;
            if (nruns && run_node[nruns - 1] == s) run_len[nruns - 1]++;
            else if (nruns < MAX_RUNS) { run_node[nruns] = s; run_len[nruns++] = 1; }
            else truncated = 1;
        }
    }
    int mode = -1;
    unsigned long mask[MAX_NODES / (8 * sizeof(unsigned long))] = {0};
    if (syscall(SYS_get_mempolicy, &mode, mask, (unsigned long)MAX_NODES, addr, MPOL_F_ADDR_))
        mode = -1;

    char nodes[1024] = "", runs[2048] = "", pol[512] = "", team[4096] = "";
    size_t o = 0;
    for (int k = 0; k < MAX_NODES; k++)
        if (counts[k])
            o += snprintf(nodes + o, sizeof nodes - o, "%s\"%d\":%ld", o ? "," : "", k, counts[k]);
    o = 0;
    for (int r = 0; r < nruns; r++)
        o += snprintf(runs + o, sizeof runs - o, "%s[%d,%ld]", r ? "," : "", run_node[r],
                      run_len[r]);
    o = 0;
    for (int k = 0; k < MAX_NODES; k++)
        if (mask[k / (8 * sizeof(unsigned long))] >> (k % (8 * sizeof(unsigned long))) & 1UL)
            o += snprintf(pol + o, sizeof pol - o, "%s%d", o ? "," : "", k);
    pthread_mutex_lock(&mu);
    o = 0;
    for (int i = 0; i < nteam && o < sizeof team - 32; i++)
        o += snprintf(team + o, sizeof team - o, "%s[%d,%d]", i ? "," : "", team_asked[i],
                      team_cpu[i]);
    pthread_mutex_unlock(&mu);
    emit("{\"ev\":\"buffer\",\"bytes\":%zu,\"page\":%ld,\"nodes\":{%s},\"absent\":%ld,"
         "\"other\":%ld,\"runs\":[%s],\"runs_truncated\":%d,\"policy\":%d,"
         "\"policy_nodes\":[%s],\"team\":[%s]}",
         len, page, nodes, absent, other, runs, truncated, mode, pol, team);
}

/* The accessible part of [addr, addr+len) per /proc/self/maps: numascope fences its
 * buffers with PROT_NONE guard pages and trims PROT_NONE reservations; neither is a
 * buffer. Returns 0 when nothing in the range is accessible. */
static int accessible(void *addr, size_t len, uintptr_t *lo, uintptr_t *hi) {
    uintptr_t a = (uintptr_t)addr, b = a + len;
    *lo = b;
    *hi = a;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) { *lo = a; *hi = b; return 1; }
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long s, e;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) != 3) continue;
        if (e <= a || s >= b || perms[0] != 'r') continue;
        if (s < *lo) *lo = s < a ? a : s;
        if (e > *hi) *hi = e > b ? b : e;
    }
    fclose(f);
    return *hi > *lo;
}

int munmap(void *addr, size_t len) {
    static int (*real)(void *, size_t);
    if (!real) real = dlsym(RTLD_NEXT, "munmap");
    uintptr_t lo, hi;
    if (logfd >= 0 && from_core(__builtin_return_address(0)) && accessible(addr, len, &lo, &hi))
        report((void *)lo, hi - lo);
    return real(addr, len);
}
