# SPDX-License-Identifier: BSD-3-Clause
# Included by loop.pyx (one extension module: the engine's hot paths inline
# across these files); the phases of a round and who runs them: the phase kinds
# (exec, drain and plan, init, inject, restart), the phase policy (grain and
# wake), the straggler rule and the round driver.

# --- the phases of a round, and who runs them ----------------------------------

cdef enum:
    PH_EXEC = 0         # units: chunks of the executive list's segments
    PH_DRAIN = 1        # units: partitions (drain, then refresh and/or plan)
    PH_INIT = 2         # units: partitions (on_init hooks)
    PH_INJECT = 3       # units: chunks of an LP range
    PH_RESET = 4        # units: chunks of an LP range (Engine.reset_lps)
    PH_GROUPS = 5       # units: whole copies (copy groups)

# One phase, as every member that joins it reads it.
ctypedef struct _Phase:
    EngineCore* c
    int kind
    int P               # partitions (the engine's num_threads)
    double W            # exec: the window's end
    int64_t chunk       # exec, inject: entries per claim
    int refresh         # drain: recompute next_time of every LP of the partition
    int plan            # drain: then plan the partition
    double t            # init, inject: the time
    int32_t ev_kind     # inject
    uint64_t seq        # inject
    int64_t lo          # inject: the LP range (starts NULL) ...
    const int64_t* starts   # ... or blocks [starts[b], starts[b] + cnt)
    int64_t cnt
    int64_t total       # inject: entries
    int execute         # inject: run the event at once where it is the LP's next (see inject_blocks)
    # inject: the first failing entry (what a serial loop meets first), times
    # 2, plus 1 when the failure was the allocator's (INT64_MAX: none); an
    # atomic min, so no failure is lost whichever member met it
    int64_t failed


# Claim whole partitions (own first) through the partition claim counters.
cdef inline bint _claim_part(EngineCore* c, int k) noexcept nogil:
    return seer_fetch_add_i64_relaxed(&c.sh.pclaim[LINE_I64 * k], 1) == 0


# An injected event that is its LP's next (before every pending event, and
# no message can arrive before it: the caller checked time < now + lookahead)
# runs now instead of going through the LP's queue: the LP would run it
# first in the next window anyway, from the same state.  What it emits is
# delivered as in a round (self events to the queue, messages to inboxes,
# drained after the phase).  Errors are recorded with the event's key.
cdef void _execute_one(EngineCore* c, ThreadState* me, lp_id_t lp, _Phase* ph, int64_t index,
                       int tid) noexcept nogil:
    cdef Event ev
    cdef Ctx ctx
    _env_event(&ev, ph.t, ph.ev_kind, ph.seq, lp, index)
    _make_ctx(c, me, &ctx, lp, tid)
    if _handle(c, me, &ctx, &ev) != SEER_OK:
        return
    me.events += 1
    if ctx.out.count > 0:
        c.next_time[lp] = heap_top_time(&c.heaps[lp], INFINITY)


# Inject units: chunks of ph.total entries; entry idx is LP
# starts[idx // cnt] + idx % cnt (blocks), or lo + idx (a range: starts NULL),
# with payload word idx % cnt (or idx).  A failure lowers ph.failed to
# 2 * idx (+ 1 for the allocator's), so the first failing entry is reported.
cdef void _inject_units(EngineCore* c, ThreadState* me, _Phase* ph, int tid) noexcept nogil:
    cdef int64_t start, end, idx, b, off, lp, cnt = ph.cnt
    cdef int rc, seg = 0
    while _claim_own_first(c.sh.cursor, ph.P, tid, ph.total, ph.chunk, &seg, &start, &end):
        if ph.starts == NULL:
            b = 0
            off = start
        else:
            b = start // cnt
            off = start % cnt
        for idx in range(start, end):
            lp = ph.lo + off if ph.starts == NULL else ph.starts[b] + off
            if ph.execute and ph.t < c.next_time[lp]:
                _execute_one(c, me, <lp_id_t>lp, ph, off, tid)
                rc = SEER_OK
            else:
                if idx + 1 < end:
                    seer_prefetch(c.heaps[lp + 1 if lp + 1 < c.n else lp].data)
                rc = _inject_one(c, <lp_id_t>lp, ph.t, ph.ev_kind, ph.seq, off)
            if rc != SEER_OK:
                seer_fetch_min_i64_relaxed(&ph.failed, 2 * idx + (rc == SEER_E_NO_MEMORY))
            off += 1
            if ph.starts != NULL and off == cnt:
                off = 0
                b += 1


# Restart units (Engine.reset_lps): chunks of the range [ph.lo, ph.lo +
# ph.total).  Each LP's queue and counters start over, then its on_init runs
# with its events confined to the range (_init_lp), delivered as in a round
# (messages drained after the phase).  An LP that fails records the error
# with the key (t0, LP): the smallest failing LP, the one a serial restart
# stops at, is reported at any thread count.
cdef void _reset_units(EngineCore* c, ThreadState* me, _Phase* ph, int tid) noexcept nogil:
    cdef int64_t start, end, idx, lo = ph.lo, hi = ph.lo + ph.total
    cdef lp_id_t lp
    cdef int seg = 0
    while _claim_own_first(c.sh.cursor, ph.P, tid, ph.total, ph.chunk, &seg, &start, &end):
        for idx in range(start, end):
            lp = <lp_id_t>(lo + idx)
            c.heaps[lp].size = 0
            c.rng_ctr[lp] = 0
            c.emit_seq[lp] = 0
            if _init_lp(c, me, lp, ph.t, tid, lo, hi, True) == SEER_OK:
                c.next_time[lp] = heap_top_time(&c.heaps[lp], INFINITY)


cdef void _phase_main(void* arg, void* team, int tid, int nt) noexcept nogil:
    cdef _Phase* ph = <_Phase*>arg
    cdef EngineCore* c = ph.c
    cdef ThreadState* me = &c.ts[tid]
    cdef int64_t t0 = seer_clock_ns(), start, end, idx, items = 0, lo, hi, lp
    cdef int i, k, rc, P = ph.P
    if ph.kind == PH_EXEC:
        _exec_units(c, me, ph.W, tid, P, ph.chunk)
        if c.sh.test_sleep_ns > 0:
            _test_sleep(c, tid)
    elif ph.kind == PH_DRAIN:
        for i in range(P):
            k = (tid + i) % P
            if not _claim_part(c, k):
                continue
            items += _drain_part(c, me, k, P)
            _partition(c.n, P, k, &lo, &hi)
            if ph.refresh:
                for lp in range(lo, hi):
                    c.next_time[lp] = heap_top_time(&c.heaps[lp], INFINITY)
            if ph.plan:
                _plan_part(c, k, P)
            items += hi - lo
    elif ph.kind == PH_INIT:
        for i in range(P):
            k = (tid + i) % P
            if _claim_part(c, k):
                _init_part(c, me, k, P, tid, ph.t)
    elif ph.kind == PH_GROUPS:
        _groups_units(c, me, ph.P, tid)
    elif ph.kind == PH_RESET:
        _reset_units(c, me, ph, tid)
        if c.sh.test_sleep_ns > 0:
            _test_sleep(c, tid)
    else:
        _inject_units(c, me, ph, tid)
        if c.sh.test_sleep_ns > 0:
            _test_sleep(c, tid)
    me.drained += items
    me.phases += 1
    me.phase_ns = seer_clock_ns() - t0
    me.busy_ns += me.phase_ns


# Granularity (see "Phases" in the module docstring): a phase estimated
# under _grain_ns runs on the caller alone (opening it costs more than a
# second thread saves), a larger one opens to one member per half grain of
# its estimate (up to the team); one over _wake_ns also wakes parked members
# (a futex wake and a thread's wake-up cost tens of microseconds).
#: The shipped (grain_ns, wake_ns), before any environment variable.
DEFAULT_PHASE_POLICY = (2000.0, 100000.0)
cdef double _grain_ns = DEFAULT_PHASE_POLICY[0]
cdef double _wake_ns = DEFAULT_PHASE_POLICY[1]


# (phase_policy and wait_policy, which set them: _hooks.pxi)




# Stragglers.  A member preempted while it holds units makes the caller wait
# for the OS to run it again: a time slice, milliseconds, against phases of
# microseconds.  A wait over STRAGGLE_NS that is also longer than the phase's
# own work is taken for one (an interrupt or a page fault costs tens of
# microseconds); phases then open to half the threads for straggle_mult
# times the wait (8, doubling while straggles recur as soon as the team is
# whole again, up to 64; at most STRAGGLE_MAX_NS), so on a machine whose
# other processes take cores the team shrinks to what it gets, and grows
# back when they leave.  Results do not depend on who joins a phase.
DEF STRAGGLE_NS = 200000
DEF STRAGGLE_MAX_NS = 100000000


cdef inline int _open_width(EngineCore* c, int P) noexcept nogil:
    """Threads a phase may open to now (P, or fewer after a straggle)."""
    if c.sh.width == 0:
        return P
    if seer_clock_ns() < c.sh.width_until_ns:
        return c.sh.width if c.sh.width < P else P
    c.sh.width = 0
    return P


cdef void _straggled(EngineCore* c, int nt, int64_t waited, int64_t now) noexcept nogil:
    cdef int64_t span
    c.sh.straggles += 1
    # a straggle within one narrowing's length of the last one's end: the
    # load is still there
    if c.sh.straggle_mult == 0 or now > c.sh.width_until_ns + c.sh.straggle_span_ns:
        c.sh.straggle_mult = 8
    elif c.sh.straggle_mult < 64:
        c.sh.straggle_mult *= 2
    span = waited * c.sh.straggle_mult
    if span > STRAGGLE_MAX_NS:
        span = STRAGGLE_MAX_NS
    c.sh.width = nt // 2 if nt > 2 else 1
    c.sh.width_until_ns = now + span
    c.sh.straggle_span_ns = span


# Members a phase of estimate est_ns opens to, of nt: at least half a grain
# of work each, so a phase just over the grain opens to two threads, not to
# the whole team (each member adds a join and moves the phase's cache
# lines).  Under the grain: 1 (the caller alone).
cdef inline int _phase_width(double est_ns, int nt) noexcept nogil:
    if _grain_ns > 0 and est_ns < nt * 0.5 * _grain_ns:
        return <int>(est_ns / (0.5 * _grain_ns))
    return nt


def _phase_width_for(est_ns, nt):
    """Test hook: the members a phase estimated at ``est_ns`` opens to, of a
    team of ``nt``, under the current :func:`phase_policy` (no straggler)."""
    return max(1, _phase_width(est_ns, nt))


# Run one phase: alone when its estimate is under the grain, else open to the
# team (or the part of it a recent straggler left open).  The test hook's
# sleep can open and wake every phase (it exists to test a member stalled
# inside one).
cdef void _run_phase(EngineCore* c, void* team, _Phase* ph, double est_ns) noexcept nogil:
    cdef ThreadState* me = &c.ts[0]
    cdef bint force = c.sh.test_sleep_force and c.sh.test_sleep_ns > 0
    cdef int nt = ph.P
    cdef int64_t waited
    if est_ns >= _wake_ns or force:
        c.sh.wanted += 1
    if est_ns >= _grain_ns or force:
        c.sh.sized += 1
    if not force and nt > 1:
        nt = _phase_width(est_ns, _open_width(c, nt))      # 1 under the grain
    if team == NULL or nt <= 1:
        _phase_main(ph, team, 0, ph.P)
    else:
        c.sh.opened += 1
        waited = seer_team_phase(team, nt, _phase_main, ph, force or est_ns >= _wake_ns)
        me.idle_ns += waited
        # me.phase_ns: the caller's own work in the phase (_phase_main)
        if waited > STRAGGLE_NS and waited > me.phase_ns and not force:
            _straggled(c, nt, waited, seer_clock_ns())


# The caller's cost per unit of work, an average over its recent phases.
cdef inline void _learn(double* rate, int64_t ns, int64_t items) noexcept nogil:
    cdef double r
    if items <= 0:
        return
    r = <double>ns / <double>items
    if rate[0] <= 0:
        rate[0] = r
    else:
        rate[0] += (r - rate[0]) * 0.125


# A phase over whole partitions: init hooks (PH_INIT), or drain and then
# refresh and/or plan (PH_DRAIN).
cdef void _partition_phase(EngineCore* c, void* team, _Phase* ph, int kind, int refresh,
                           int plan, double est_ns) noexcept nogil:
    cdef int k
    for k in range(ph.P):
        c.sh.pclaim[LINE_I64 * k] = 0
    ph.kind = kind
    ph.refresh = refresh
    ph.plan = plan
    _run_phase(c, team, ph, est_ns)


# Drain and plan (one phase), then end the round on the caller: errors,
# limits and the next window.  Returns 1 when the run must stop.
cdef int _plan_round(EngineCore* c, void* team, _Phase* ph, int check_deadline,
                     double* W_out) noexcept nogil:
    cdef ThreadState* me = &c.ts[0]
    cdef int P = ph.P, k
    cdef int64_t msgs = 0, total, drained0 = me.drained
    cdef double T, W
    cdef int stop, failed = 0
    cdef bint stuck
    for k in range(P):
        msgs += c.ts[k].round_msgs
    _partition_phase(c, team, ph, PH_DRAIN, 0, 1, (c.n + msgs) * c.sh.ns_drain)
    _learn(&c.sh.ns_drain, me.phase_ns, me.drained - drained0)
    # Every member that joined has left: their errors and counters are in.
    for k in range(P):
        if c.ts[k].err_code != 0:
            failed = 1
    c.sh.deadline_hit = check_deadline and seer_clock_ns() >= c.sh.deadline_ns
    total = 0
    for k in range(P):
        total += c.ts[k].events
    if total - c.sh.last_events > c.sh.max_round_events:
        c.sh.max_round_events = total - c.sh.last_events
    c.sh.last_events = total
    total = 0
    for k in range(P):
        total += c.ts[k].lps_executed
    c.sh.ready_total += total - c.sh.last_lps
    c.sh.last_lps = total
    if _check_round_limits(c):
        failed = 1
    # Every drain of the round is done: messages start over.
    for k in range(P):
        arena_reset(&c.ts[k].arena)
        c.ts[k].round_msgs = 0
    T = INFINITY
    for k in range(P):
        if c.ts[k].local_min < T:
            T = c.ts[k].local_min
    W = T + c.lookahead
    if W > c.sh.t_end:
        W = c.sh.t_end
    # A window that cannot advance (T + lookahead rounds back to T) would
    # spin for ever: stop.
    stuck = T < c.sh.t_end and not (W > T)
    stop = (not (T < c.sh.t_end)) or failed != 0 or c.sh.deadline_hit != 0 or stuck
    c.sh.finished = not (T < c.sh.t_end)
    if stuck:
        c.sh.stuck = 1
        c.sh.stuck_T = T
    if not stop:
        c.sh.rounds += 1
    W_out[0] = W
    return stop


cdef inline void _set_partitions(EngineCore* c, _Phase* ph, int P) noexcept nogil:
    cdef int k
    ph.P = P
    for k in range(c.max_threads):
        c.ts[k].team = P


# One slice of run_until on the caller: rounds of exec, then drain and plan.
# narrow: start on one partition (see _team_call); a round whose exec phase
# is worth waking members for widens to P partitions first (between rounds
# no message is in flight, so the partition count may change; only the
# plan is redone).
cdef void _run_rounds(EngineCore* c, void* team, int P, bint narrow) noexcept nogil:
    cdef ThreadState* me = &c.ts[0]
    cdef _Phase ph
    cdef double W, est
    cdef int stop, k
    cdef int64_t total, chunk, lps0
    memset(&ph, 0, sizeof(_Phase))
    ph.c = c
    _set_partitions(c, &ph, 1 if narrow else P)
    # The first plan (the inboxes are empty: its drain finds nothing).
    stop = _plan_round(c, team, &ph, 0, &W)
    while not stop:
        total = 0
        for k in range(ph.P):
            total += c.ts[k].nready
        est = total * c.sh.ns_exec
        if ph.P < P and est >= _wake_ns:
            _set_partitions(c, &ph, P)
            _partition_phase(c, team, &ph, PH_DRAIN, 0, 1, c.n * c.sh.ns_drain)
            total = 0
            for k in range(P):
                total += c.ts[k].nready
        for k in range(ph.P):
            c.sh.cursor[LINE_I64 * k] = 0
        # Chunks small enough to balance, large enough that a claim counter
        # is not touched per LP.
        chunk = total // (8 * ph.P)
        if chunk < 1:
            chunk = 1
        elif chunk > 64:
            chunk = 64
        ph.kind = PH_EXEC
        ph.W = W
        ph.chunk = chunk
        lps0 = me.lps_executed
        _run_phase(c, team, &ph, est)
        _learn(&c.sh.ns_exec, me.phase_ns, me.lps_executed - lps0)
        stop = _plan_round(c, team, &ph, 1, &W)


# After a phase that ran hooks outside a round (an inject that executed
# events, a restart): drain the messages they sent (as a round's drain does,
# with the same partitions), check the round's message cap, and start the
# arenas over.
cdef void _deliver_messages(EngineCore* c, void* team, _Phase* ph) noexcept nogil:
    cdef int64_t msgs = 0
    cdef int k
    for k in range(ph.P):
        msgs += c.ts[k].round_msgs
    if msgs > 0:
        _partition_phase(c, team, ph, PH_DRAIN, 0, 0, msgs * c.sh.ns_drain)
    if msgs > c.sh.max_msgs:
        c.sh.msgs_over = msgs
        seer_store_i32_relaxed(&c.sh.abort, 1)
    for k in range(ph.P):
        arena_reset(&c.ts[k].arena)
        c.ts[k].round_msgs = 0


cdef void _init_rounds(EngineCore* c, void* team, int P, double t0) noexcept nogil:
    cdef _Phase ph
    cdef int k
    memset(&ph, 0, sizeof(_Phase))
    ph.c = c
    ph.P = P
    ph.t = t0
    # once per engine: open both to whoever is there (an estimate that opens
    # to the whole team without waking parked members)
    _partition_phase(c, team, &ph, PH_INIT, 0, 0, 0.5 * _grain_ns * P)
    _partition_phase(c, team, &ph, PH_DRAIN, 1, 0, 0.5 * _grain_ns * P)
    for k in range(P):
        arena_reset(&c.ts[k].arena)


# A phase over ph.total entries of an LP range (inject, reset), claimed in
# chunks, own segment first (_claim_own_first); est_ns: the estimated cost
# of one entry.
cdef void _range_phase(EngineCore* c, void* team, _Phase* ph, int P, int kind,
                       double est_ns) noexcept nogil:
    cdef int k
    ph.c = c
    ph.P = P
    ph.kind = kind
    ph.chunk = ph.total // (8 * P)
    if ph.chunk < 1:
        ph.chunk = 1
    for k in range(P):
        c.sh.cursor[LINE_I64 * k] = 0
    _run_phase(c, team, ph, ph.total * est_ns)
