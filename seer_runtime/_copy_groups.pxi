# SPDX-License-Identifier: BSD-3-Clause
# Included by loop.pyx (one extension module: the engine's hot paths inline
# across these files); copy groups: a run slice as one phase in which each member
# runs whole copies to the slice's end.

# --- copy groups ------------------------------------------------------------------
#
# An engine that holds C copies of one model (Engine.set_copy_groups: every
# copy owns the same-shaped LP ranges, and copies never exchange events) can
# run a run_until slice as ONE phase: each member takes whole copies from a
# shared counter (up to LOCKSTEP of its own share at a time) and runs each
# copy's own conservative windows from its earliest pending time to t_end
# (T over the copy's LPs only, W = min(T + lookahead, t_end), exec of its LPs
# in LP order, then delivery of the window's messages from the member's own
# arena), the copies it holds side by side, one window of each per pass; then
# it takes more copies.  The team path synchronises every copy at every
# round; this one joins once per slice.
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
# Slices: a member stops between two passes once the slice's deadline has
# passed (the caller not before it ran one pass: progress); its copies go on
# from there at the next slice, with the same windows.

cdef extern from "stdlib.h" nogil:
    void* aligned_alloc(size_t alignment, size_t size)

DEF LOCKSTEP = 8        # most copies a member runs side by side (_run_copies)


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


# The copy that LP `lp` belongs to (-1: none).
cdef inline int64_t _copy_of(EngineCore* c, int64_t lp) noexcept nogil:
    cdef int b
    cdef int64_t off
    for b in range(c.cg_nblocks):
        off = lp - c.cg_base[b]
        if 0 <= off < c.cg_copies * c.cg_size[b]:
            return off // c.cg_size[b]
    return -1


# Run copies [ci0, ci1) (at most LOCKSTEP) to t_end, until each one's first
# error or limit, or the slice's deadline (then they stay running: the next
# slice goes on).  Each copy keeps its own windows (T and W over its own LPs,
# as if it ran alone); a pass runs one window of every copy still running:
# exec block by block, each block's LPs in LP order across the copies, then
# delivery of the pass's messages (each within its own copy).  A copy's LPs
# run in its own window's order (exact: in a window an LP's next_time changes
# only when it runs; its messages wait in the arena until the pass ends), so
# what each copy records depends on that copy alone.  Why side by side: run
# one at a time, a copy started its step cold once a thread's copies outgrew
# its core's cache, and cost more than in the team's rounds, which walk every
# copy's LPs in this order (docs/runtime.md, "Copies in groups").
cdef void _run_copies(EngineCore* c, ThreadState* me, int64_t ci0, int64_t ci1,
                      int tid) noexcept nogil:
    cdef CopyRun* cr
    cdef double W[LOCKSTEP]
    cdef double limit[LOCKSTEP]
    cdef int64_t nev[LOCKSTEP]
    cdef int64_t msgs[LOCKSTEP]
    cdef bint failed[LOCKSTEP]
    cdef bint errs[LOCKSTEP]
    cdef bint live[LOCKSTEP]
    cdef int64_t ci, j, k = ci1 - ci0, lo, lp, n, idx, m0, passes = 0, nlive
    cdef int b
    cdef int32_t e0
    cdef double T, t_end = c.sh.t_end
    while True:
        nlive = 0
        for j in range(k):
            ci = ci0 + j
            cr = &c.cg_runs[ci]
            live[j] = False
            if cr.state != 0:
                continue
            T = _copy_min(c, ci)
            if not (T < t_end):
                cr.state = 1
                if c.cg_end_fn != NULL:
                    c.cg_end_fn(c.cg_end_arg, ci, ci + 1)
                continue
            W[j] = T + c.lookahead if T + c.lookahead < t_end else t_end
            if not (W[j] > T):
                cr.stuck = 1
                cr.stuck_T = T
                cr.state = 2
                continue
            live[j] = True
            limit[j] = INFINITY         # after an error: only events up to its time
            failed[j] = errs[j] = False
            nev[j] = msgs[j] = 0
            nlive += 1
        if nlive == 0:
            break
        for b in range(c.cg_nblocks):
            for j in range(k):
                if not live[j]:
                    continue
                ci = ci0 + j
                lo = c.cg_base[b] + ci * c.cg_size[b]
                n = _gather_before(c.next_time, lo, lo + c.cg_size[b], W[j], me.ready)
                me.cg_copy = ci + 1
                m0 = me.round_msgs
                e0 = me.nerr
                for idx in range(n):
                    lp = me.ready[idx]
                    # fetch the next LP's queue while this one runs, as the team's exec does
                    if idx + 1 < n:
                        seer_prefetch(c.heaps[me.ready[idx + 1]].data)
                    if _exec_lp(c, me, <lp_id_t>lp, W[j], limit[j], tid, &nev[j]) != SEER_OK:
                        failed[j] = True
                        limit[j] = me.err_last if me.err_last < limit[j] else limit[j]
                errs[j] = errs[j] or me.nerr != e0
                me.lps_executed += n
                msgs[j] += me.round_msgs - m0
        # deliver the pass's messages; a copy with a delivery error stops too
        for idx in range(me.ndirty[0]):
            lp = me.dirty[idx]
            e0 = me.nerr
            _drain_lp(c, me, <lp_id_t>lp)
            if me.nerr != e0:
                j = _copy_of(c, lp) - ci0
                if 0 <= j < k:
                    errs[j] = True
        me.ndirty[0] = 0
        arena_reset(&me.arena)
        me.round_msgs = 0
        for j in range(k):
            if not live[j]:
                continue
            cr = &c.cg_runs[ci0 + j]
            me.windows += 1
            cr.windows += 1
            me.events += nev[j]
            cr.events += nev[j]
            if msgs[j] > c.sh.max_msgs:
                cr.msgs_over = msgs[j]
                failed[j] = True
            if c.sh.max_events >= 0 and cr.events > c.sh.max_events:
                cr.budget = 1
                failed[j] = True
            if failed[j] or errs[j]:
                cr.state = 2
        # the clock every 8th pass: a window is microseconds
        passes += 1
        if (passes & 7) == 0 and seer_clock_ns() >= c.sh.deadline_ns:
            break
    me.cg_copy = 0


# A member's part of the phase: whole copies, its own share first (copies
# split into P contiguous shares, member k taking share k's, as the team's
# partitions do: from one step to the next a copy mostly runs on the same
# member, whose cache still holds its state) from the front, in pieces of
# half what is left, at most LOCKSTEP (its last copies one by one, so a
# member that finishes early finds some to take: seer_claim_front); then the
# others' shares, one copy at a time from the back (seer_claim_back).
cdef void _groups_units(EngineCore* c, ThreadState* me, int P, int tid) noexcept nogil:
    cdef int64_t ci, k
    cdef int i, v, own = tid % P
    cdef int64_t* words = c.sh.cursor
    cdef bint ran = tid != 0        # the caller runs one pass whatever the clock says
    i = 0
    while i < P:
        if ran and seer_clock_ns() >= c.sh.deadline_ns:
            break
        v = (own + i) % P
        if i == 0:
            k = seer_claim_front(&words[LINE_I64 * v], LOCKSTEP, &ci)
        else:
            k = seer_claim_back(&words[LINE_I64 * v], &ci)
        if k == 0:
            i += 1
            continue
        ci += _part_lo(c.cg_copies, P, v)
        _run_copies(c, me, ci, ci + k, tid)
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
    for k in range(ph.P):           # share k's claim word: [0, its copies) unclaimed
        c.sh.cursor[LINE_I64 * k] = (_part_lo(c.cg_copies, ph.P, k + 1)
                                     - _part_lo(c.cg_copies, ph.P, k)) << 32
    # the last slice's length (a first one: worth waking the team for)
    est = <double>c.sh.last_run_ns if c.sh.last_run_ns > 0 else _wake_ns
    _run_phase(c, team, &ph, est)
    c.sh.finished = 1
    for ci in range(c.cg_copies):
        if c.cg_runs[ci].state == 0:
            c.sh.finished = 0
            break
