# SPDX-License-Identifier: BSD-3-Clause
# Included by loop.pyx (one extension module: the engine's hot paths inline
# across these files); the round core: executing an LP's events, dispatching what
# they emit, draining inboxes, planning the next window, init hooks.

# --- phases (all nogil) ---------------------------------------------------------

# LPs are split into P contiguous partitions (P = the engine's num_threads).
# A partition is a unit of the drain and plan phases, and its executive list
# a segment of the exec phase; member k takes partition k first, so an LP's
# state stays in one core's cache while the team is all there, but any
# member may take any unit (see "Phases" in the module docstring).
cdef inline int64_t _part_lo(int64_t n, int nt, int k) noexcept nogil:
    return n * k // nt

cdef inline void _partition(int64_t n, int nt, int tid, int64_t* lo, int64_t* hi) noexcept nogil:
    lo[0] = n * tid // nt
    hi[0] = n * (tid + 1) // nt

# The k with _part_lo(k) <= lp < _part_lo(k + 1).
cdef inline int _owner(int64_t lp, int nt, int64_t n) noexcept nogil:
    return <int>(((lp + 1) * nt - 1) // n)


# Errors.  Serial order decides which one is raised: every error is recorded
# with the key of the event being handled when it happened (init hooks: the
# start time and the LP), and each thread keeps its smallest.  Within a window
# LPs do not interact, so an LP's first failing event does not depend on the
# schedule; after an error the other threads still run every event that could
# fail earlier (events at or before the smallest error time recorded so far),
# and the smallest key over all threads is the failing event a one-thread,
# one-event-at-a-time run meets first.  Class 1 (delivery into a full queue)
# sorts after class 0: its messages are at least a lookahead later.
cdef inline bint _key_before(int32_t cls, const Event* key, ThreadState* me) noexcept nogil:
    if cls != me.err_class:
        return cls < me.err_class
    if key.time != me.key_time:
        return key.time < me.key_time
    if key.src != me.key_src:
        return key.src < me.key_src
    if key.seq != me.key_seq:
        return key.seq < me.key_seq
    return key.target < me.key_lp


cdef void _record_error(EngineCore* c, ThreadState* me, int code, int32_t cls, const Event* key,
                        double now, double time, lp_id_t src, lp_id_t target,
                        int32_t kind) noexcept nogil:
    cdef int64_t bits
    me.nerr += 1
    if me.err_code == 0 or _key_before(cls, key, me):
        me.err_code = code
        me.err_class = cls
        me.err_now = now
        me.err_time = time
        me.err_src = src
        me.err_target = target
        me.err_kind = kind
        # the LP being handled (or drained): this thread owns its heap now
        me.err_count = c.heaps[key.target].size
        me.key_time = key.time
        me.key_src = key.src
        me.key_seq = key.seq
        me.key_lp = key.target
        me.err_cross = 0
    if cls == 0:
        me.err_last = key.time
        # Lower the shared bound: events later than it cannot fail first.
        memcpy(&bits, &key.time, sizeof(double))
        seer_fetch_min_i64_relaxed(&c.sh.err_bound, bits)
    seer_store_i32_relaxed(&c.sh.abort, 1)


# The events a thread may still skip after an error: later than every error
# recorded so far (INFINITY while there is none).
cdef inline double _error_bound(EngineCore* c) noexcept nogil:
    cdef int64_t bits
    cdef double t
    if seer_load_i32_relaxed(&c.sh.abort) == 0:
        return INFINITY
    bits = seer_load_i64_relaxed(&c.sh.err_bound)
    memcpy(&t, &bits, sizeof(double))
    return t


cdef inline void _make_ctx(EngineCore* c, ThreadState* me, Ctx* ctx, lp_id_t lp, int tid) noexcept nogil:
    ctx.lp = lp
    ctx.thread = tid
    ctx.rng_key = c.rng_key[lp]
    ctx.rng_ctr = &c.rng_ctr[lp]
    ctx.out.events = me.outbox
    ctx.out.count = 0
    ctx.out.dropped = 0


# Validate and deliver what one hook call emitted while handling `key` (for
# init hooks, a stand-in event at the start time).  Runs on the thread that
# owns ctx.lp for this round.
cdef int _dispatch(EngineCore* c, ThreadState* me, Ctx* ctx, const Event* key) noexcept nogil:
    cdef int32_t i
    cdef int rc, k
    cdef Event* e
    cdef InboxNode* node
    cdef bint was_empty = False
    cdef lp_id_t lp = ctx.lp
    for i in range(ctx.out.count):
        e = &ctx.out.events[i]
        if not (e.time >= ctx.now):
            _record_error(c, me, SEER_E_PAST, 0, key, ctx.now, e.time, lp, e.target, e.kind)
            return SEER_E_PAST
        if e.target >= c.n:
            _record_error(c, me, SEER_E_BAD_TARGET, 0, key, ctx.now, e.time, lp, e.target, e.kind)
            return SEER_E_BAD_TARGET
        e.src = lp
        e.seq = c.emit_seq[lp]
        c.emit_seq[lp] += 1
        if e.target == lp:
            rc = heap_push(&c.heaps[lp], e, c.max_pending_per_lp)
            if rc != SEER_OK:
                _record_error(c, me, rc, 0, key, ctx.now, e.time, lp, e.target, e.kind)
                return rc
        else:
            if not (e.time >= ctx.now + c.lookahead):
                _record_error(c, me, SEER_E_LOOKAHEAD, 0, key, ctx.now, e.time, lp, e.target, e.kind)
                return SEER_E_LOOKAHEAD
            if me.cg_copy != 0 and not _in_copy(c, e.target, me.cg_copy - 1):
                _record_cross(c, me, key, ctx.now, e)
                return SEER_E_BAD_TARGET
            me.round_msgs += 1
            node = arena_alloc(&me.arena)
            if node == NULL:
                if me.arena.oom:
                    _record_error(c, me, SEER_E_NO_MEMORY, 0, key, ctx.now, e.time, lp,
                                  e.target, e.kind)
                    return SEER_E_NO_MEMORY
                # Over max_messages_per_round: drop it and keep counting; the
                # plan raises messages_full from the round's total, which does
                # not depend on how the LPs were spread over threads.
                continue
            node.ev = e[0]
            me.cas_retries += inbox_push(&c.inbox[e.target], node, &was_empty)
            me.pushes += 1
            if was_empty:
                k = _owner(e.target, me.team, c.n)
                me.dirty[_part_lo(c.n, me.team, k) + me.ndirty[k]] = e.target
                me.ndirty[k] += 1
    return SEER_OK


# Handle one event of ctx.lp: its hook, then what the hook emitted.
# Returns 0 or an error code (recorded with the event's key).
cdef inline int _handle(EngineCore* c, ThreadState* me, Ctx* ctx, const Event* ev) noexcept nogil:
    cdef int rc
    ctx.now = ev.time
    ctx.out.count = 0
    rc = c.lptype.on_event(c.model, ctx, ev)
    if rc == SEER_OK and ctx.out.dropped != 0:
        rc = SEER_E_OUTBOX_FULL
    if rc != SEER_OK:
        _record_error(c, me, rc, 0, ev, ev.time, ev.time, ev.src, ctx.lp, ev.kind)
        return rc
    if ctx.out.count > 0:
        return _dispatch(c, me, ctx, ev)
    return SEER_OK


# The event the environment injects into `lp` (Engine.inject): source
# SEER_ENV_SOURCE, payload word i[0] = index.
cdef inline void _env_event(Event* ev, double time, int32_t kind, uint64_t seq, lp_id_t lp,
                            int64_t index) noexcept nogil:
    memset(ev, 0, sizeof(Event))
    ev.time = time
    ev.seq = seq
    ev.src = SEER_ENV_SOURCE
    ev.target = lp
    ev.kind = kind
    ev.data.i[0] = index


# Run every event of `lp` with time < W, except those later than `limit` (an
# error's time: they cannot fail first).  Returns 0 or an error code.
cdef int _exec_lp(EngineCore* c, ThreadState* me, lp_id_t lp, double W, double limit, int tid,
                  int64_t* nevents) noexcept nogil:
    cdef LocalHeap* h = &c.heaps[lp]
    cdef Ctx ctx
    cdef Event ev
    cdef int rc
    cdef int64_t count = 0, budget = c.sh.max_events
    _make_ctx(c, me, &ctx, lp, tid)
    while h.size > 0 and h.data[0].time < W and not (h.data[0].time > limit):
        heap_pop(h, &ev)
        rc = _handle(c, me, &ctx, &ev)
        if rc != SEER_OK:
            return rc
        nevents[0] += 1
        count += 1
        # An event storm inside one window (zero-delay self events, say)
        # never reaches the plan's budget check: stop it here.
        if budget >= 0 and count > budget:
            _record_error(c, me, SEER_E_EVENT_BUDGET, 0, &ev, ev.time, ev.time, ev.src, lp, ev.kind)
            return SEER_E_EVENT_BUDGET
    c.next_time[lp] = heap_top_time(h, INFINITY)
    return SEER_OK


# Claim the next chunk [start, end) of a counter over [0, total); False when
# none is left.  Relaxed: what the chunks cover was published before the
# phase opened.
cdef inline bint _claim(int64_t* cursor, int64_t chunk, int64_t total, int64_t* start,
                        int64_t* end) noexcept nogil:
    start[0] = seer_fetch_add_i64_relaxed(cursor, chunk)
    if start[0] >= total:
        return False
    end[0] = start[0] + chunk if start[0] + chunk < total else total
    return True


# Claim the next chunk of [0, total) split into P segments (segment k:
# [_part_lo(total, P, k), _part_lo(total, P, k + 1)), through cursors[LINE_I64 * k]):
# the claimer's own segment first, then the others in ring order.  Entries
# in LP order then mostly go to the member whose partition holds their LPs
# (whose cache holds their state), as the exec phase's do, rather than
# alternating between members chunk by chunk.  seg: the segments tried so far
# (start at 0).
cdef inline bint _claim_own_first(int64_t* cursors, int P, int tid, int64_t total, int64_t chunk,
                                  int* seg, int64_t* start, int64_t* end) noexcept nogil:
    cdef int k
    cdef int64_t lo
    while seg[0] < P:
        k = (tid + seg[0]) % P
        lo = _part_lo(total, P, k)
        if _claim(&cursors[LINE_I64 * k], chunk, _part_lo(total, P, k + 1) - lo, start, end):
            start[0] += lo
            end[0] += lo
            return True
        seg[0] += 1
    return False


# Claim chunks of one segment of the executive list.  After an error the
# claims go on (see _record_error), but only events up to the error bound run.
cdef void _exec_segment(EngineCore* c, ThreadState* me, int seg, int64_t chunk, double W,
                        int tid, int64_t* nevents) noexcept nogil:
    cdef ThreadState* owner = &c.ts[seg]
    cdef int64_t total = owner.nready, start, end, idx
    cdef int64_t* cursor = &c.sh.cursor[LINE_I64 * seg]
    cdef lp_id_t lp
    while _claim(cursor, chunk, total, &start, &end):
        for idx in range(start, end):
            lp = owner.ready[idx]
            if idx + 1 < end:
                seer_prefetch(c.heaps[owner.ready[idx + 1]].data)
            # A plan candidate (see _plan_part) without work in this window.
            if not (c.next_time[lp] < W):
                continue
            _exec_lp(c, me, lp, W, _error_bound(c), tid, nevents)
            me.lps_executed += 1


cdef void _exec_units(EngineCore* c, ThreadState* me, double W, int tid, int P,
                      int64_t chunk) noexcept nogil:
    cdef int64_t nevents = 0
    cdef int k
    # Own segment first, then the others in ring order.
    for k in range(P):
        _exec_segment(c, me, (tid + k) % P, chunk, W, tid, &nevents)
    me.events += nevents


# Drain the inboxes of partition k that any producer announced this round,
# and clear those announcements.  The cap on pending events is checked once
# an LP has all its messages, and an overflow names the LP's latest pending
# event, so the error does not depend on the order the messages arrived in.
# Returns the messages drained.
cdef int64_t _drain_part(EngineCore* c, ThreadState* me, int k, int P) noexcept nogil:
    cdef int64_t j, base = _part_lo(c.n, P, k), msgs = 0
    cdef int p
    cdef ThreadState* prod
    for p in range(P):
        prod = &c.ts[p]
        for j in range(prod.ndirty[k]):
            msgs += _drain_lp(c, me, prod.dirty[base + j])
        prod.ndirty[k] = 0
    return msgs


# Move LP lp's inbox into its heap, then check the cap on its pending events
# (see _drain_part).  Returns the messages moved; errors are recorded (class 1).
cdef inline int64_t _drain_lp(EngineCore* c, ThreadState* me, lp_id_t lp) noexcept nogil:
    cdef int64_t i, msgs = 0
    cdef int rc
    cdef LocalHeap* h = &c.heaps[lp]
    cdef InboxNode* node = inbox_take_all_lifo(&c.inbox[lp])
    cdef Event* last
    while node != NULL:
        msgs += 1
        rc = heap_push(h, &node.ev, _UNCAPPED)
        if rc != SEER_OK:
            _record_error(c, me, rc, 1, &node.ev, node.ev.time, node.ev.time,
                          node.ev.src, lp, node.ev.kind)
            break
        node = node.next
    if h.size > c.max_pending_per_lp:
        last = &h.data[0]
        for i in range(1, h.size):
            if event_before(last, &h.data[i]):
                last = &h.data[i]
        _record_error(c, me, SEER_E_QUEUE_FULL, 1, last, last.time, last.time,
                      last.src, lp, last.kind)
    c.next_time[lp] = heap_top_time(h, INFINITY)
    return msgs


# The smallest of nt[lo:hi] (INFINITY when empty), from four running
# minima: one chain waits a min's latency per LP, four overlap (times are
# never NaN, and a min does not depend on the order it is taken in).
cdef inline double _min_time(const double* nt, int64_t lo, int64_t hi) noexcept nogil:
    cdef int64_t lp = lo
    cdef double m = INFINITY, m1 = INFINITY, m2 = INFINITY, m3 = INFINITY
    while lp + 4 <= hi:
        m = nt[lp] if nt[lp] < m else m
        m1 = nt[lp + 1] if nt[lp + 1] < m1 else m1
        m2 = nt[lp + 2] if nt[lp + 2] < m2 else m2
        m3 = nt[lp + 3] if nt[lp + 3] < m3 else m3
        lp += 4
    while lp < hi:
        m = nt[lp] if nt[lp] < m else m
        lp += 1
    m = m1 if m1 < m else m
    m2 = m3 if m3 < m2 else m2
    return m2 if m2 < m else m


# The LPs of [lo, hi) with nt[lp] < lim, in LP order, into out[0:]; returns
# how many.  Branch-free: which LPs have work is not predictable.
cdef inline int64_t _gather_before(const double* nt, int64_t lo, int64_t hi, double lim,
                                   lp_id_t* out) noexcept nogil:
    cdef int64_t lp, n = 0
    for lp in range(lo, hi):
        out[n] = <lp_id_t>lp
        n += nt[lp] < lim
    return n


# Plan partition k for the next window: its earliest pending time m and, as
# its segment of the next executive list, every LP earlier than m +
# lookahead.  The global T is at most m, so the candidates hold every LP with
# work before W = min(T + lookahead, t_end); exec skips those with nothing
# before W (one read of next_time), which saves a separate filter phase.
# Two plain passes (a min, then a branch-free gather) beat one pass with a
# running min: no unpredictable branch, and fewer candidates.
cdef void _plan_part(EngineCore* c, int k, int P) noexcept nogil:
    cdef ThreadState* part = &c.ts[k]
    cdef int64_t lo, hi
    cdef double m
    _partition(c.n, P, k, &lo, &hi)
    m = _min_time(c.next_time, lo, hi)
    part.local_min = m
    part.nready = _gather_before(c.next_time, lo, hi, m + c.lookahead, part.ready)


# Thread 0, after every exec and drain of a round: the limits that count over
# the whole round or run, so that they trip in the same round at every thread
# count.  Returns whether one tripped.
cdef bint _check_round_limits(EngineCore* c) noexcept nogil:
    cdef int64_t msgs = 0, events = 0
    cdef int k
    cdef bint hit = False
    for k in range(c.max_threads):
        msgs += c.ts[k].round_msgs
        events += c.ts[k].events
    if msgs > c.sh.max_msgs:
        c.sh.msgs_over = msgs
        hit = True
        seer_store_i32_relaxed(&c.sh.abort, 1)
    if c.sh.max_events >= 0 and events - c.sh.events_base > c.sh.max_events:
        c.sh.budget_hit = 1
        hit = True
        seer_store_i32_relaxed(&c.sh.abort, 1)
    return hit


cdef void _test_sleep(EngineCore* c, int tid) noexcept nogil:
    if tid == c.sh.test_sleep_tid:
        seer_sleep_ns(c.sh.test_sleep_ns)


# Init partition k's LPs in order up to the partition's first error (no early
# stop on another partition's error): the smallest failing LP is then found
# at every thread count.
cdef void _init_part(EngineCore* c, ThreadState* me, int k, int P, int tid,
                     double t0) noexcept nogil:
    cdef int64_t lo, hi, lp
    _partition(c.n, P, k, &lo, &hi)
    for lp in range(lo, hi):
        if _init_lp(c, me, <lp_id_t>lp, t0, tid, 0, c.n, False) != SEER_OK:
            return


# Run LP lp's on_init at t0 and deliver what it emitted; errors are recorded
# with the key (t0, lp).  confine (a restart of [lo, hi)): every emitted
# event is first checked, in emission order, as a serial restart checked it
# (not before t0, inside [lo, hi), a lookahead ahead when for another LP),
# so that nothing is delivered from an LP whose events break a rule.
# Returns 0 or the error code.
cdef int _init_lp(EngineCore* c, ThreadState* me, lp_id_t lp, double t0, int tid,
                  int64_t lo, int64_t hi, bint confine) noexcept nogil:
    cdef Ctx ctx
    cdef Event key
    cdef Event* e
    cdef int32_t i
    cdef int rc
    memset(&key, 0, sizeof(Event))
    key.time = t0
    key.src = lp
    key.target = lp
    _make_ctx(c, me, &ctx, lp, tid)
    ctx.now = t0
    rc = c.lptype.on_init(c.model, &ctx)
    if rc == SEER_OK and ctx.out.dropped != 0:
        rc = SEER_E_OUTBOX_FULL
    if rc != SEER_OK:
        _record_error(c, me, rc, 0, &key, t0, t0, lp, lp, -1)
        return rc
    if confine:
        for i in range(ctx.out.count):
            e = &ctx.out.events[i]
            if not (e.time >= t0):
                rc = SEER_E_PAST
            elif e.target < lo or e.target >= hi:
                rc = SEER_E_BAD_TARGET
            elif e.target != lp and not (e.time >= t0 + c.lookahead):
                rc = SEER_E_LOOKAHEAD
            if rc != SEER_OK:
                _record_error(c, me, rc, 0, &key, t0, e.time, lp, e.target, e.kind)
                return rc
    if ctx.out.count > 0:
        return _dispatch(c, me, &ctx, &key)
    return SEER_OK
