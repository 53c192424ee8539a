# SPDX-License-Identifier: BSD-3-Clause
# Included by loop.pyx (one extension module: the engine's hot paths inline
# across these files); copy groups: a run slice as one phase in which each member
# runs whole copies to the slice's end.

# --- copy groups ------------------------------------------------------------------
#
# An engine that holds C copies of one model (Engine.set_copy_groups: every
# copy owns the same-shaped LP ranges, and copies never exchange events) can
# run a run_until slice as ONE phase: each member takes a whole copy from a
# shared counter and runs that copy's own conservative windows, serially,
# from its earliest pending time to t_end (T over the copy's LPs only,
# W = min(T + lookahead, t_end), exec of its LPs in LP order, then delivery
# of the window's messages from the member's own arena), then takes the next
# copy.  The team path synchronises every copy at every round; this one joins
# once per slice.
#
# Results: an LP's events run in (time, src, seq) order under any windows
# (no event can arrive below W once a window starts), so every LP's state is
# the team path's, at any thread count.
#
# Errors and limits (docs/runtime.md, "Copy groups"): each copy runs until its
# own first error or limit, whatever the other copies do (no bound shared
# across copies: which copies a member ran must not change what is
# recorded), so each copy's record depends on that copy alone.  The caller
# then raises, as _raise_errors orders them, the smallest handling error
# (class 0) over every copy; else a window's message cap (the first copy in
# copy order), a stuck window (the earliest T) or the event budget (one copy's
# events over it, or the sum over copies at the end of the call); else the
# smallest delivery error (class 1).  Handling errors are those of the team
# path; limits count per copy window, since a round over every copy no
# longer exists.
#
# Slices: a member stops between two of its copy's windows once the slice's
# deadline has passed (the caller not before it ran one window: progress);
# the copy goes on from there at the next slice, with the same windows.

cdef extern from "stdlib.h" nogil:
    void* aligned_alloc(size_t alignment, size_t size)


# Whether `lp` belongs to copy ci.
cdef inline bint _in_copy(EngineCore* c, int64_t lp, int64_t ci) noexcept nogil:
    cdef int b
    cdef int64_t lo
    for b in range(c.cg_nblocks):
        lo = c.cg_base[b] + ci * c.cg_size[b]
        if lo <= lp < lo + c.cg_size[b]:
            return True
    return False


# A message from copy me.cg_copy - 1 to another copy's LP: a bad target in
# this mode (the member running the other copy owns that LP's queue).
cdef void _record_cross(EngineCore* c, ThreadState* me, const Event* key, double now,
                        const Event* e) noexcept nogil:
    cdef bint first = me.err_code == 0 or _key_before(0, key, me)
    _record_error(c, me, SEER_E_BAD_TARGET, 0, key, now, e.time, e.src, e.target, e.kind)
    if first:
        me.err_cross = 1


# The earliest pending time over copy ci's LPs.
cdef inline double _copy_min(EngineCore* c, int64_t ci) noexcept nogil:
    cdef int b
    cdef int64_t lo
    cdef double T = INFINITY, m
    for b in range(c.cg_nblocks):
        lo = c.cg_base[b] + ci * c.cg_size[b]
        m = _min_time(c.next_time, lo, lo + c.cg_size[b])
        T = m if m < T else T
    return T


# Copy ci's LPs with an event before W, in LP order, into ready.  Exact: in a
# window an LP's next_time changes only when it runs (its messages wait in
# the arena until the window ends).
cdef inline int64_t _copy_ready(EngineCore* c, int64_t ci, double W, lp_id_t* ready) noexcept nogil:
    cdef int b
    cdef int64_t lo, n = 0
    for b in range(c.cg_nblocks):
        lo = c.cg_base[b] + ci * c.cg_size[b]
        n += _gather_before(c.next_time, lo, lo + c.cg_size[b], W, ready + n)
    return n


# Run copy ci's windows up to t_end, until its first error or limit, or the
# slice's deadline (then it stays running: the next slice goes on).
cdef void _run_copy(EngineCore* c, ThreadState* me, int64_t ci, int tid) noexcept nogil:
    cdef CopyRun* cr = &c.cg_runs[ci]
    cdef int64_t lp, j, nev, msgs, nready
    cdef double T, W, limit, t_end = c.sh.t_end
    cdef bint failed
    cdef int32_t nerr0
    me.cg_copy = ci + 1
    while True:
        T = _copy_min(c, ci)
        if not (T < t_end):
            cr.state = 1
            if c.cg_end_fn != NULL:
                c.cg_end_fn(c.cg_end_arg, ci, ci + 1)
            break
        W = T + c.lookahead
        if W > t_end:
            W = t_end
        if not (W > T):
            cr.stuck = 1
            cr.stuck_T = T
            cr.state = 2
            break
        # exec: the copy's LPs with work before W, in LP order; after an
        # error, only events up to its time (they could fail first)
        limit = INFINITY
        failed = False
        nerr0 = me.nerr
        nev = 0
        nready = _copy_ready(c, ci, W, me.ready)
        for j in range(nready):
            lp = me.ready[j]
            # fetch the next LP's queue while this one runs, as the team's exec does
            if j + 1 < nready:
                seer_prefetch(c.heaps[me.ready[j + 1]].data)
            if _exec_lp(c, me, <lp_id_t>lp, W, limit, tid, &nev) != SEER_OK:
                failed = True
                limit = me.err_last if me.err_last < limit else limit
        me.lps_executed += nready
        me.events += nev
        cr.events += nev
        # deliver the window's messages (all to this copy's LPs)
        msgs = me.round_msgs
        for j in range(me.ndirty[0]):
            _drain_lp(c, me, me.dirty[j])
        me.ndirty[0] = 0
        arena_reset(&me.arena)
        me.round_msgs = 0
        me.windows += 1
        cr.windows += 1
        if msgs > c.sh.max_msgs:
            cr.msgs_over = msgs
            failed = True
        if c.sh.max_events >= 0 and cr.events > c.sh.max_events:
            cr.budget = 1
            failed = True
        if failed or me.nerr != nerr0:      # nerr0: a delivery error of this window too
            cr.state = 2
            break
        # the clock every 8th window: a window is microseconds
        if (cr.windows & 7) == 0 and seer_clock_ns() >= c.sh.deadline_ns:
            break
    me.cg_copy = 0


# A member's part of the phase: whole copies, its own share first (copies
# split into P contiguous segments, member k taking segment k's first, as the
# team's partitions do), then the others': from one step to the next a copy
# mostly runs on the same member, whose cache still holds its state.
cdef void _groups_units(EngineCore* c, ThreadState* me, int P, int tid) noexcept nogil:
    cdef int64_t ci, end
    cdef int seg = 0
    cdef bint ran = tid != 0        # the caller runs one window whatever the clock says
    while True:
        if ran and seer_clock_ns() >= c.sh.deadline_ns:
            break
        if not _claim_own_first(c.sh.cursor, P, tid, c.cg_copies, 1, &seg, &ci, &end):
            break
        if c.cg_runs[ci].state != 0:
            continue
        _run_copy(c, me, ci, tid)
        ran = True
        if c.sh.test_sleep_ns > 0:
            _test_sleep(c, tid)


# One slice of a run in copy groups: one phase, then (the caller) whether
# every copy is done.
cdef void _groups_run(EngineCore* c, void* team, int P) noexcept nogil:
    cdef _Phase ph
    cdef int k
    cdef int64_t ci
    cdef double est
    memset(&ph, 0, sizeof(_Phase))
    ph.c = c
    ph.kind = PH_GROUPS
    ph.P = P if P < c.cg_copies else <int>c.cg_copies
    for k in range(c.max_threads):
        c.ts[k].team = 1            # _dispatch: one dirty list per member
    for k in range(ph.P):
        c.sh.cursor[LINE_I64 * k] = 0
    # the last slice's length (a first one: worth waking the team for)
    est = <double>c.sh.last_run_ns if c.sh.last_run_ns > 0 else _wake_ns
    _run_phase(c, team, &ph, est)
    c.sh.finished = 1
    for ci in range(c.cg_copies):
        if c.cg_runs[ci].state == 0:
            c.sh.finished = 0
            break
