/* SPDX-License-Identifier: BSD-3-Clause
 *
 * SEER's worker team: persistent pthreads, one team per calling OS thread,
 * that run elastic phases (the caller never waits for a member that did not
 * join) and whose waits spin briefly, then (some) yield, then block.
 *
 * Why not OpenMP's team: libgomp's region and barrier waits spin (for
 * milliseconds by default) and every barrier waits for every member, so a
 * team larger than the cores it really gets stalls on every descheduled
 * member; and its thread pool does not survive fork(), so a forked child
 * that opens a parallel region hangs.  This team parks its threads on a
 * futex, adapts its spin budget to the waits it measures, lets whoever is
 * running do a phase's work, and is rebuilt in a child after fork.
 *
 * One team per calling thread (thread-local): engines driven from separate
 * Python threads never share workers, and every engine and boundary loop
 * used from one thread shares one set of workers (no two pools competing
 * for the cores).  The caller is member 0 of every phase.
 *
 * Built parallel only where the build enabled OpenMP (_OPENMP: the build's
 * "parallel" switch, kept so SEER_NO_OPENMP / SEER_FAIL_NO_OPENMP keep their
 * meaning); otherwise every job runs on the caller alone.
 */
#ifndef SEER_TEAM_H
#define SEER_TEAM_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "atomics.h"
#include "clock.h"

typedef void (*seer_team_fn)(void *arg, void *team, int tid, int nt);

/* Wait kinds: each thread adapts one spin budget per kind. */
enum { SEER_WAIT_DOCK = 0, SEER_WAIT_JOIN = 1, SEER_WAIT_PHASE = 2 };
/* What a run is (seer_team_live): none, or one of an engine round by round
 * or in copy groups; members inside one wait for its phases. */
enum { SEER_LIVE_OFF = 0, SEER_LIVE_ROUNDS = 1, SEER_LIVE_GROUPS = 2 };

/* The test hooks' sleep (here and in loop.pyx). */
static inline void seer_sleep_ns(int64_t d) {
    struct timespec ts;
    ts.tv_sec = d / 1000000000;
    ts.tv_nsec = d % 1000000000;
    nanosleep(&ts, NULL);
}

/* Read and set in every build (the serial one too: the Python knobs exist
 * there, and do nothing). */
/* Spin budgets (ns): start, floor and per-kind ceiling.  A dock wait (a
 * worker waiting for work between runs) may spin longer: the gap between
 * two env steps is a few tens of microseconds when Python is quick.  A
 * phase wait is a member waiting for the next phase inside a run. */
#define SEER_SPIN_START_NS 4000
#define SEER_SPIN_MIN_NS 300
static int64_t seer_spin_max_ns[3] = {200000, 50000, 50000};
/* Set a kind's ceiling (read relaxed at each wait; budgets follow). */
static inline void seer_spin_set_max(int kind, int64_t ns) {
    __atomic_store_n(&seer_spin_max_ns[kind], ns, __ATOMIC_RELAXED);
}
static inline int64_t seer_spin_get_max(int kind) {
    return __atomic_load_n(&seer_spin_max_ns[kind], __ATOMIC_RELAXED);
}
/* Spreading the team over CPUs (seer_spread, below): 0 off, 1 on, 2 (tests)
 * every join moves. */
static int seer_team_spread = 1;
static inline void seer_spread_set(int on) { __atomic_store_n(&seer_team_spread, on, __ATOMIC_RELAXED); }
static inline int seer_spread_get(void) { return __atomic_load_n(&seer_team_spread, __ATOMIC_RELAXED); }
/* Moves made, for statistics and tests (all teams). */
static int64_t seer_spread_moves = 0;
/* sched_yield calls a wait makes between spinning and parking: at the dock,
 * for members to leave (join), for a run's next phase, and for the next phase
 * in a run of an engine in copy groups (whose step is one phase: a member
 * that has left it waits for the next step, through that step's action
 * injection).  None for that last one: under EEVDF a yield costs the thread
 * its place in the queue, and a member that yielded there comes back late
 * when the next step wakes it (docs/runtime.md, "Which waits yield before
 * they park"). */
enum { SEER_YIELDS_GROUPS = 3 };
static int seer_team_yields[4] = {2, 2, 2, 0};
static inline void seer_yields_set(int which, int n) {
    __atomic_store_n(&seer_team_yields[which], n, __ATOMIC_RELAXED);
}
static inline int seer_yields_get(int which) {
    return __atomic_load_n(&seer_team_yields[which], __ATOMIC_RELAXED);
}

#if defined(_OPENMP) && (defined(__unix__) || defined(__APPLE__))
#define SEER_TEAM_PARALLEL 1
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <limits.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

/* Two spin checks this far apart mean the spinner itself lost its core:
 * the machine is oversubscribed, so spinning only steals time. */
#define SEER_PREEMPT_GAP_NS 40000
#define SEER_TEAM_MAX 1024

static __thread int64_t seer_spin_budget[3] = {SEER_SPIN_START_NS, SEER_SPIN_START_NS,
                                               SEER_SPIN_START_NS};
static __thread int32_t seer_spin_ok[3] = {512, 512, 512};
/* Whether this thread's last wait ended parked (then woken: where the
 * kernel put it is the waker's choice; see seer_spread). */
static __thread int seer_woke = 0;

/* ---- park / wake: futex on Linux, one mutex + condvar per word elsewhere */
#ifdef __linux__
typedef struct { uint32_t word; uint32_t sleepers; char pad[56]; } seer_wword;
static inline void seer_wword_init(seer_wword *w, uint32_t v) { w->word = v; w->sleepers = 0; }
static inline void seer_wword_destroy(seer_wword *w) { (void)w; }
static inline void seer_park(seer_wword *w, uint32_t old) {
    __atomic_fetch_add(&w->sleepers, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&w->word, __ATOMIC_SEQ_CST) == old)
        syscall(SYS_futex, &w->word, FUTEX_WAIT_PRIVATE, old, NULL, NULL, 0);
    __atomic_fetch_sub(&w->sleepers, 1, __ATOMIC_RELAXED);
}
/* Call after changing w->word with a SEQ_CST operation. */
static inline void seer_unpark(seer_wword *w) {
    if (__atomic_load_n(&w->sleepers, __ATOMIC_SEQ_CST) > 0)
        syscall(SYS_futex, &w->word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
#else
typedef struct {
    uint32_t word; uint32_t sleepers;
    pthread_mutex_t mu; pthread_cond_t cv;
} seer_wword;
static inline void seer_wword_init(seer_wword *w, uint32_t v) {
    w->word = v; w->sleepers = 0;
    pthread_mutex_init(&w->mu, NULL); pthread_cond_init(&w->cv, NULL);
}
static inline void seer_wword_destroy(seer_wword *w) {
    pthread_mutex_destroy(&w->mu); pthread_cond_destroy(&w->cv);
}
static inline void seer_park(seer_wword *w, uint32_t old) {
    pthread_mutex_lock(&w->mu);
    __atomic_fetch_add(&w->sleepers, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&w->word, __ATOMIC_SEQ_CST) == old)
        pthread_cond_wait(&w->cv, &w->mu);
    __atomic_fetch_sub(&w->sleepers, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&w->mu);
}
static inline void seer_unpark(seer_wword *w) {
    if (__atomic_load_n(&w->sleepers, __ATOMIC_SEQ_CST) > 0) {
        pthread_mutex_lock(&w->mu);
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
}
#endif

/* Wait until w->word != old: spin (budget adapted per thread and kind),
 * then yield `yields` times, then park.  Returns the new value (acquire). */
static inline uint32_t seer_wait_change(seer_wword *w, uint32_t old, int kind, int yields) {
    int64_t t0 = seer_clock_ns(), prev = t0, now = t0, wait;
    int64_t budget = seer_spin_budget[kind], cap = seer_spin_get_max(kind);
    int i, preempted = 0, spun = 0;
    int32_t ok;
    uint32_t v;
    seer_woke = 0;
    for (;;) {
        for (i = 0; i < 32; i++) {
            v = __atomic_load_n(&w->word, __ATOMIC_ACQUIRE);
            if (v != old) { spun = 1; goto done; }
            seer_cpu_relax();
        }
        now = seer_clock_ns();
        if (now - prev > SEER_PREEMPT_GAP_NS) { preempted = 1; break; }
        prev = now;
        if (now - t0 >= budget) break;
    }
    if (!preempted) {
        for (i = 0; i < yields; i++) {
            sched_yield();
            v = __atomic_load_n(&w->word, __ATOMIC_ACQUIRE);
            if (v != old) goto done;
        }
    }
    seer_park(w, old);
    seer_woke = 1;
    v = __atomic_load_n(&w->word, __ATOMIC_ACQUIRE);
done:
    now = seer_clock_ns();
    wait = now - t0;
    /* Success rate of spinning, in 1/1024 (EWMA over about 16 waits). */
    ok = seer_spin_ok[kind];
    ok += ((spun ? 1024 : 0) - ok) / 16;
    seer_spin_ok[kind] = ok;
    if (spun || wait < cap) {
        /* spinning paid off, or a short wait we blocked on: cover such waits */
        if (budget < 2 * wait) budget = 2 * wait;
    } else if (preempted || ok < 256) {
        /* we lost the core while spinning, or spins mostly fail (peers are
         * descheduled or the work is imbalanced): spin less */
        budget /= 2;
    }
    if (budget > cap) budget = cap;
    if (budget < SEER_SPIN_MIN_NS) budget = SEER_SPIN_MIN_NS;
    seer_spin_budget[kind] = budget;
    return v;
}

/* ---- the team ------------------------------------------------------------
 *
 * Two kinds of work:
 *
 * - An elastic phase (seer_team_phase): a set of work units that the phase
 *   function claims from counters of its own.  The caller opens it, works
 *   on it, closes it, and then waits only for the members that joined while
 *   it was open.  A member that is descheduled, parked or late holds nothing
 *   up: the caller (or whoever is running) does its share, and a member that
 *   arrives after the close finds nothing to join.  This is what keeps a
 *   team larger than the free cores from running slower than one thread.
 *
 * - A job (seer_team_run): every member tid < nt runs fn once, concurrently,
 *   and the caller waits for all of them (tests that need real concurrency).
 *
 * The gate word says which phase is open and who is in it:
 *   seq (bits 32-63) | CLOSED | JOB | nt (bits 16-27) | members inside (0-15)
 * A member joins with a CAS that fails once the gate is closed, so after the
 * close the caller's wait covers exactly the members that hold units.  The
 * phase's function and argument are written before the gate opens and read
 * after a successful join, so a late member never sees a stale phase. */

#define SEER_GATE_INSIDE 0xFFFFull
#define SEER_GATE_NT_SHIFT 16
#define SEER_GATE_NT_MASK 0xFFFull
#define SEER_GATE_JOB (1ull << 30)
#define SEER_GATE_CLOSED (1ull << 31)

/* One slot per two cache lines (aligned; the slots are allocated so):
 * members write theirs at each join. */
typedef struct __attribute__((aligned(128))) {
    pthread_t thread;
    void *team;
    int tid;
    int quit;
    int cpu;                    /* the CPU this member was on when it last entered a phase */
    uint32_t cpu_seq;           /* ... of the phase with this seq */
} seer_slot;

typedef struct {
    seer_wword phase_gen;       /* bumped when a phase opens: idle members wait on it */
    uint64_t gate;
    int caller_cpu;             /* the caller's CPU when it opened the gate (on the gate's
                                 * line: a member that joined has it in its cache) */
    char pad1[52];
    seer_wword left_gen;        /* bumped by the last member to leave a closed phase */
    seer_wword left;            /* job: members still running */
    seer_team_fn fn;            /* the open phase or job, written before the gate opens */
    void *arg;
    uint32_t seq;               /* the last phase's seq (caller only) */
    int live;                   /* caller: inside a run (SEER_LIVE_*: members wait with the
                                 * phase budget) */
    int size;                   /* threads including the caller */
    int ncpus;                  /* CPUs the creating thread was allowed when the team was
                                 * made (0: unknown; see seer_spread) */
    seer_slot *slots;           /* SEER_TEAM_MAX; slot 0 unused (the caller) */
    uint64_t fork_gen;          /* seer_fork_gen when the workers were made */
} seer_team_t;

static uint64_t seer_fork_gen = 0;
/* Test hook: members sleep this long before each attempt to join (as if
 * descheduled); 0 in normal runs. */
static int64_t seer_test_join_delay_ns = 0;
static pthread_key_t seer_team_key;
static pthread_once_t seer_team_once = PTHREAD_ONCE_INIT;
static __thread seer_team_t *seer_tls_team = NULL;

/* ---- spreading the team over CPUs
 *
 * On an oversubscribed machine (every CPU has work), the kernel wakes a
 * parked member on its waker's CPU (wake-affine): member and caller then
 * share one CPU while another process keeps a CPU to itself, and the team
 * gets one CPU's time where its fair share is more (2-core machine, one
 * busy-loop process beside a 2-thread vector env: caller and member on one
 * CPU in about half the steps).  A member that enters a phase on the CPU
 * its caller opened it on (or, after a wake-up, on another member's CPU in
 * that phase) moves once to an allowed CPU no teammate is on (its affinity
 * narrowed, then restored at once: nothing stays pinned), so it shares a
 * CPU with a stranger instead.  When a CPU is idle the wake-up already
 * lands there and no move happens. */
#if defined(__linux__) && defined(_GNU_SOURCE)
static inline int seer_cpu_now(void) { return sched_getcpu(); }
static inline int seer_allowed_cpus(void) {
    cpu_set_t m;
    return sched_getaffinity(0, sizeof(m), &m) == 0 ? CPU_COUNT(&m) : 0;
}
static void seer_spread(seer_team_t *t, int tid, int nt, uint32_t seq, int woke) {
    cpu_set_t allowed, away;
    int i, cpu, c, stacked;
    /* the tests' setting: as if stacked, and any other allowed CPU will do */
    int test = seer_spread_get() == 2;
    seer_slot *s;
    cpu = sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE) return;
    /* a team larger than its CPUs shares them among its own threads: a move
     * would only trade places with a teammate (and cost a system call at
     * each stacked join) */
    if (nt > t->ncpus && !test)
        goto mark;
    /* the caller's CPU at every join (written before the gate opened, on
     * the gate's line); the other members' only after a wake-up (nt slots) */
    stacked = test || t->caller_cpu == cpu;
    for (i = 1; i < nt && woke && !stacked; i++) {
        s = &t->slots[i];
        stacked = i != tid && __atomic_load_n(&s->cpu_seq, __ATOMIC_RELAXED) == seq
                  && __atomic_load_n(&s->cpu, __ATOMIC_RELAXED) == cpu;
    }
    if (!stacked || sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
        goto mark;
    away = allowed;
    CPU_CLR(cpu, &away);
    for (i = 0; i < nt && !test; i++) {
        s = &t->slots[i];
        c = i == 0 ? t->caller_cpu : __atomic_load_n(&s->cpu, __ATOMIC_RELAXED);
        if ((i == 0 || __atomic_load_n(&s->cpu_seq, __ATOMIC_RELAXED) == seq)
            && c >= 0 && c < CPU_SETSIZE)
            CPU_CLR(c, &away);
    }
    if (CPU_COUNT(&away) > 0 && sched_setaffinity(0, sizeof(away), &away) == 0) {
        if (sched_setaffinity(0, sizeof(allowed), &allowed) != 0) {
            /* the cpuset shrank meanwhile: every CPU, which the kernel
             * narrows to the cpuset, rather than stay narrowed */
            CPU_ZERO(&away);
            for (c = 0; c < CPU_SETSIZE; c++) CPU_SET(c, &away);
            sched_setaffinity(0, sizeof(away), &away);
        }
        __atomic_add_fetch(&seer_spread_moves, 1, __ATOMIC_RELAXED);
        cpu = sched_getcpu();
    }
mark:
    s = &t->slots[tid];
    __atomic_store_n(&s->cpu, cpu, __ATOMIC_RELAXED);
    __atomic_store_n(&s->cpu_seq, seq, __ATOMIC_RELAXED);
}
#else
static inline int seer_cpu_now(void) { return -1; }
static inline int seer_allowed_cpus(void) { return 0; }
static inline void seer_spread(seer_team_t *t, int tid, int nt, uint32_t seq, int woke) {
    (void)t; (void)tid; (void)nt; (void)seq; (void)woke;
}
#endif

static void *seer_worker_main(void *p) {
    seer_slot *s = (seer_slot *)p;
    seer_team_t *t = (seer_team_t *)s->team;
    uint32_t g, seen = 0;
    uint64_t v, old;
    int tid = s->tid, nt, live, kind;
    for (;;) {
        /* g before the gate: a phase opened after this load changes g */
        g = __atomic_load_n(&t->phase_gen.word, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&s->quit, __ATOMIC_ACQUIRE))
            break;
        if (__atomic_load_n(&seer_test_join_delay_ns, __ATOMIC_RELAXED) > 0)
            seer_sleep_ns(__atomic_load_n(&seer_test_join_delay_ns, __ATOMIC_RELAXED));
        v = __atomic_load_n(&t->gate, __ATOMIC_ACQUIRE);
        while (!(v & SEER_GATE_CLOSED) && (uint32_t)(v >> 32) != seen
               && tid < (int)((v >> SEER_GATE_NT_SHIFT) & SEER_GATE_NT_MASK)) {
            /* acquire on success: pairs with the release of the gate's
             * opening store, so fn and arg are this phase's. */
            if (__atomic_compare_exchange_n(&t->gate, &v, v + 1, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                seen = (uint32_t)(v >> 32);
                nt = (int)((v >> SEER_GATE_NT_SHIFT) & SEER_GATE_NT_MASK);
                if (seer_spread_get())
                    seer_spread(t, tid, nt, seen, seer_woke);
                t->fn(t->arg, t, tid, nt);
                /* release: publishes this member's work to the caller's
                 * acquire of the gate after its close */
                old = __atomic_fetch_sub(&t->gate, 1, __ATOMIC_SEQ_CST);
                if (v & SEER_GATE_JOB) {
                    if (__atomic_sub_fetch(&t->left.word, 1, __ATOMIC_SEQ_CST) == 0)
                        seer_unpark(&t->left);
                } else if ((old & SEER_GATE_CLOSED) && (old & SEER_GATE_INSIDE) == 1) {
                    __atomic_add_fetch(&t->left_gen.word, 1, __ATOMIC_SEQ_CST);
                    seer_unpark(&t->left_gen);
                }
                break;
            }
        }
        live = __atomic_load_n(&t->live, __ATOMIC_RELAXED);
        kind = live ? SEER_WAIT_PHASE : SEER_WAIT_DOCK;
        seer_wait_change(&t->phase_gen, g, kind,
                         seer_yields_get(live == SEER_LIVE_GROUPS ? SEER_YIELDS_GROUPS : kind));
    }
    return NULL;
}

static void seer_team_free(seer_team_t *t, int join) {
    int i;
    if (t == NULL) return;
    if (join && t->size > 1) {
        for (i = 1; i < t->size; i++)
            __atomic_store_n(&t->slots[i].quit, 1, __ATOMIC_RELEASE);
        __atomic_add_fetch(&t->phase_gen.word, 1, __ATOMIC_SEQ_CST);
        seer_unpark(&t->phase_gen);
        for (i = 1; i < t->size; i++)
            pthread_join(t->slots[i].thread, NULL);
    }
    if (join) {
        seer_wword_destroy(&t->phase_gen);
        seer_wword_destroy(&t->left_gen);
        seer_wword_destroy(&t->left);
    }
    free(t->slots);
    free(t);
}

/* Thread exit: join this thread's workers. */
static void seer_team_key_dtor(void *p) { seer_team_free((seer_team_t *)p, 1); }

/* In a forked child only the forking thread exists: its team's workers are
 * gone, so the next job builds a new team (the old one is dropped). */
static void seer_atfork_child(void) { seer_fork_gen++; }

static void seer_team_global_init(void) {
    pthread_key_create(&seer_team_key, seer_team_key_dtor);
    pthread_atfork(NULL, NULL, seer_atfork_child);
}

/* The calling thread's team, grown to at least nt threads; NULL when the
 * threads cannot be made. */
static seer_team_t *seer_team_get(int nt) {
    seer_team_t *t;
    sigset_t all, old;
    int i, rc;
    pthread_once(&seer_team_once, seer_team_global_init);
    t = seer_tls_team;
    if (t != NULL && t->fork_gen != seer_fork_gen) {
        /* After fork: the workers do not exist; free the memory only. */
        seer_team_free(t, 0);
        t = seer_tls_team = NULL;
        pthread_setspecific(seer_team_key, NULL);
    }
    if (t == NULL) {
        t = (seer_team_t *)calloc(1, sizeof(seer_team_t));
        if (t == NULL) return NULL;
        seer_wword_init(&t->phase_gen, 0);
        seer_wword_init(&t->left_gen, 0);
        seer_wword_init(&t->left, 0);
        t->gate = SEER_GATE_CLOSED;
        /* Slots never move: workers keep pointers to theirs. */
        t->slots = (seer_slot *)aligned_alloc(128, SEER_TEAM_MAX * sizeof(seer_slot));
        if (t->slots == NULL) { free(t); return NULL; }
        memset(t->slots, 0, SEER_TEAM_MAX * sizeof(seer_slot));
        t->size = 1;
        t->ncpus = seer_allowed_cpus();
        t->fork_gen = seer_fork_gen;
        seer_tls_team = t;
        pthread_setspecific(seer_team_key, t);
    }
    if (nt <= t->size) return t;
    if (nt > SEER_TEAM_MAX) return NULL;
    /* Workers take no signals: Ctrl-C goes to the Python thread. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (i = t->size; i < nt; i++) {
        seer_slot *s = &t->slots[i];
        memset(s, 0, sizeof(*s));
        s->team = t;
        s->tid = i;
        rc = pthread_create(&s->thread, NULL, seer_worker_main, s);
        if (rc != 0) break;
        t->size = i + 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return t->size >= nt ? t : NULL;
}

/* Open the gate for fn/arg (members tid < nt may join); wake parked
 * members when asked. */
static inline void seer_gate_open(seer_team_t *t, int nt, seer_team_fn fn, void *arg,
                                  uint64_t flags, int wake) {
    t->fn = fn;
    t->arg = arg;
    if (++t->seq == 0) t->seq = 1;      /* members start with seen == 0 */
    if (seer_spread_get())
        t->caller_cpu = seer_cpu_now();
    __atomic_store_n(&t->gate, ((uint64_t)t->seq << 32) | flags
                     | ((uint64_t)nt << SEER_GATE_NT_SHIFT), __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&t->phase_gen.word, 1, __ATOMIC_SEQ_CST);
    if (wake) seer_unpark(&t->phase_gen);
}

/* Run one elastic phase of fn on the caller (tid 0) and on any member
 * tid < nt that joins while it is open; return once every member that
 * joined has left.  Returns the nanoseconds the caller waited for them.
 * team NULL or nt <= 1: the caller alone. */
static inline int64_t seer_team_phase(void *team, int nt, seer_team_fn fn, void *arg, int wake) {
    seer_team_t *t = (seer_team_t *)team;
    uint32_t g;
    uint64_t old;
    int64_t t0;
    if (t == NULL || nt <= 1) {
        fn(arg, t, 0, nt);
        return 0;
    }
    seer_gate_open(t, nt, fn, arg, 0, wake);
    fn(arg, t, 0, nt);
    g = __atomic_load_n(&t->left_gen.word, __ATOMIC_SEQ_CST);
    old = __atomic_fetch_or(&t->gate, SEER_GATE_CLOSED, __ATOMIC_SEQ_CST);
    if ((old & SEER_GATE_INSIDE) == 0)
        return 0;
    t0 = seer_clock_ns();
    /* g is read before the check: the last leaver's bump comes after it */
    while ((__atomic_load_n(&t->gate, __ATOMIC_ACQUIRE) & SEER_GATE_INSIDE) != 0) {
        seer_wait_change(&t->left_gen, g, SEER_WAIT_JOIN, seer_yields_get(SEER_WAIT_JOIN));
        g = __atomic_load_n(&t->left_gen.word, __ATOMIC_SEQ_CST);
    }
    return seer_clock_ns() - t0;
}

/* The calling thread's team for phases of up to nt threads (grown as
 * needed); NULL when it cannot be made (phases then run on the caller). */
static inline void *seer_team_acquire(int nt) {
    return nt > 1 ? (void *)seer_team_get(nt) : NULL;
}

/* A run starts or ends (live: SEER_LIVE_*): inside a run members wait for
 * phases with their phase spin budget; wake=1 also wakes parked members (a
 * run long enough that their wake-up pays for itself). */
static inline void seer_team_live(void *team, int live, int wake) {
    seer_team_t *t = (seer_team_t *)team;
    if (t == NULL) return;
    __atomic_store_n(&t->live, live, __ATOMIC_RELAXED);
    if (wake && __atomic_load_n(&t->phase_gen.sleepers, __ATOMIC_SEQ_CST) > 0) {
        __atomic_add_fetch(&t->phase_gen.word, 1, __ATOMIC_SEQ_CST);
        seer_unpark(&t->phase_gen);
    }
}

/* Run fn(arg, team, tid, nt) on nt threads (the caller is tid 0), all at
 * once, and return when all are done.  Returns nt, or -1 when the threads
 * cannot be made. */
static int seer_team_run(int nt, seer_team_fn fn, void *arg) {
    seer_team_t *t;
    uint32_t v;
    if (nt <= 1) {
        fn(arg, NULL, 0, 1);
        return 1;
    }
    t = seer_team_get(nt);
    if (t == NULL) return -1;
    __atomic_store_n(&t->left.word, (uint32_t)(nt - 1), __ATOMIC_SEQ_CST);
    seer_gate_open(t, nt, fn, arg, SEER_GATE_JOB, 1);
    fn(arg, t, 0, nt);
    while ((v = __atomic_load_n(&t->left.word, __ATOMIC_ACQUIRE)) != 0)
        seer_wait_change(&t->left, v, SEER_WAIT_JOIN, seer_yields_get(SEER_WAIT_JOIN));
    __atomic_fetch_or(&t->gate, SEER_GATE_CLOSED, __ATOMIC_SEQ_CST);
    return nt;
}

static inline int seer_team_parallel(void) { return 1; }

#else  /* serial build: every job runs on the caller */

static inline int seer_team_run(int nt, seer_team_fn fn, void *arg) {
    (void)nt;
    fn(arg, NULL, 0, 1);
    return 1;
}
static inline int64_t seer_team_phase(void *team, int nt, seer_team_fn fn, void *arg, int wake) {
    (void)wake;
    fn(arg, team, 0, nt);
    return 0;
}
static inline void *seer_team_acquire(int nt) { (void)nt; return NULL; }
static int64_t seer_test_join_delay_ns = 0;
static inline void seer_team_live(void *team, int live, int wake) {
    (void)team; (void)live; (void)wake;
}
static inline int seer_team_parallel(void) { return 0; }

#endif

#endif
