# SPDX-License-Identifier: BSD-3-Clause
# Included by loop.pyx (one extension module: the engine's hot paths inline
# across these files); team calls: the parallel loop scenarios use
# (seer_parallel_for) and the call that runs an engine operation on the
# calling thread's team.

# --- team calls -----------------------------------------------------------------

cdef enum:
    JOB_INIT = 0
    JOB_RUN = 1
    JOB_INJECT = 2
    JOB_RESET = 3
    JOB_GROUPS = 4


# Segments of a parallel loop (one per member up to this many; members
# beyond share them): a member takes its own segment's chunks first.
DEF _FOR_SEGS = 16

ctypedef struct _ForJob:
    seer_range_fn body
    void* arg
    int64_t n
    int64_t chunk
    int segs
    int64_t cursors[LINE_I64 * _FOR_SEGS]      # one per segment, 64 bytes apart


cdef void _for_main(void* arg, void* team, int tid, int nt) noexcept nogil:
    cdef _ForJob* j = <_ForJob*>arg
    cdef int64_t a, b
    cdef int seg = 0
    while _claim_own_first(j.cursors, j.segs, tid % j.segs, j.n, j.chunk, &seg, &a, &b):
        j.body(j.arg, a, b)


# Loops shorter than this run on the caller; from _FOR_WAKE iterations on
# the loop also wakes parked workers (boundary loops cost 0.1-1 us an item).
cdef int64_t _FOR_GRAIN = 256
cdef int64_t _FOR_WAKE = 2048


cdef void _parallel_for(int num_threads, int64_t n, seer_range_fn body,
                        void* arg) noexcept nogil:
    # scenario.pxd's seer_parallel_for, on this module's teams (installed below)
    cdef _ForJob j
    cdef void* team
    cdef int k
    if n <= 0:
        return
    if num_threads > n:
        num_threads = <int>n
    if num_threads > MAX_THREADS:
        num_threads = MAX_THREADS
    if num_threads <= 1 or (n < _FOR_GRAIN and _grain_ns > 0):
        body(arg, 0, n)
        return
    team = seer_team_acquire(num_threads)
    if team == NULL:
        body(arg, 0, n)     # no threads to be had: same result, serially
        return
    j.body = body
    j.arg = arg
    j.n = n
    j.segs = num_threads if num_threads < _FOR_SEGS else _FOR_SEGS
    for k in range(j.segs):
        j.cursors[LINE_I64 * k] = 0
    j.chunk = n // (4 * num_threads)
    if j.chunk < 1:
        j.chunk = 1
    seer_team_phase(team, num_threads, _for_main, &j,
                    n >= _FOR_WAKE or _wake_ns == 0)


seer_install_parallel_for(_parallel_for)


# Run init, a slice of a run, or an inject on the calling thread's team.
cdef int _team_call(Engine eng, int op, _Phase* ph) except -1:
    cdef int P = eng._num_threads, k
    cdef EngineCore* c = &eng.core
    cdef void* team = NULL
    cdef int64_t t0, joined, rounds0
    cdef bint wake
    # Every caller holds the one-caller guard (Engine._enter): the GIL is
    # released below, and a second Python thread must be refused before it
    # changes anything, not race this call.
    if not eng._busy:
        raise RuntimeError("internal error: a team call without the engine's one-caller guard")
    for k in range(P):
        c.ts[k].team = P         # init and inject: P partitions
    if P > 1:
        with nogil:
            team = seer_team_acquire(P)
        if team == NULL and seer_team_parallel():
            raise RuntimeError(f"could not start {P} worker threads (pthread_create failed); "
                               "use fewer num_threads")
    # A run as long as a wake-up is worth one (judged by the last run),
    # unless it will run alone.
    wake = c.sh.last_run_ns >= _wake_ns and not (op == JOB_RUN and c.sh.narrow)
    with nogil:
        # an engine in copy groups: its members wait without yielding (src/team.h)
        seer_team_live(team, SEER_LIVE_GROUPS if c.cg_copies > 0 else SEER_LIVE_ROUNDS, wake)
        t0 = seer_clock_ns()
        if op == JOB_RUN:
            # The next slice runs on one partition (results are the same for
            # any partition count, and per-partition claims and scans are
            # pure cost there) when this one had no member join the caller
            # and no phase worth a wake-up, and either had no phase over the
            # grain or was too short to wake members at its start: then the
            # next would run alone anyway.  A narrow slice still estimates
            # every phase, and widens for one worth a wake-up.  A slice
            # without a round says nothing: the mode stays.
            c.sh.wanted = 0
            c.sh.sized = 0
            joined = 0
            rounds0 = c.sh.rounds
            for k in range(1, P):
                joined -= c.ts[k].phases
            _run_rounds(c, team, P, c.sh.narrow)
            for k in range(1, P):
                joined += c.ts[k].phases
            c.sh.last_run_ns = seer_clock_ns() - t0
            if c.sh.rounds > rounds0:
                c.sh.narrow = (P > 1 and joined == 0 and c.sh.wanted == 0
                               and (c.sh.sized == 0 or c.sh.last_run_ns < _wake_ns))
        elif op == JOB_GROUPS:
            _groups_run(c, team, P)
            c.sh.last_run_ns = seer_clock_ns() - t0
        elif op == JOB_INIT:
            _init_rounds(c, team, P, ph.t)
        elif op == JOB_RESET:
            # an on_init schedules an LP's first events: a microsecond or so
            _range_phase(c, team, ph, P, PH_RESET, 1000.0)
            _deliver_messages(c, team, ph)
        else:
            # a heap push is a cache miss or two
            _range_phase(c, team, ph, P, PH_INJECT, 50.0)
            if ph.execute:
                _deliver_messages(c, team, ph)
        seer_team_live(team, SEER_LIVE_OFF, 0)
    return 0
