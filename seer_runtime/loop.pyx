# SPDX-License-Identifier: BSD-3-Clause
"""The SEER event loop: conservative windows over per-LP queues, run in
elastic phases on SEER's own worker team (src/team.h).

LPs are split into P contiguous partitions (P = num_threads).  One round:

1. **exec** (a phase): members claim chunks of the executive list (ready
   LPs, one segment per partition) with an atomic fetch-add and run each
   LP's events with ``time < W`` in (time, key) order.  Self events go
   straight into the LP's local heap; cross-LP events go into the target's
   CAS inbox, and the producer that makes an inbox non-empty records the
   target in its dirty list for the target's partition.
2. **drain and plan** (a phase): members claim whole partitions; for each
   they move the announced inboxes into local heaps, then scan it for its
   earliest pending time and, as its segment of the next executive list,
   every LP that may have work before the next window's end.  Exec skips
   listed LPs with no event before ``W`` (one read of ``next_time``).
3. **end of round** (the caller alone): errors, round limits, ``T = min``,
   ``W = min(T + lookahead, t_end)`` and the stop decision (past ``t_end``,
   an error, the wall-time slice used up, or a window that cannot advance).

Phases: the caller opens a phase, works on it, closes it and waits only for
the members that joined while it was open, so a member that is descheduled
or parked holds nothing up (docs/runtime.md, "Waiting").  Which member ran
which unit never changes a result.  A phase whose estimated work is under
the grain (see :func:`phase_policy`) runs on the caller alone.

Why a full O(n) scan in plan rather than a global priority structure over
LPs: a parallel scan of one contiguous double array costs about a
nanosecond per LP and needs no synchronisation; a shared heap of LPs would
serialise every round.

Control returns to Python every ``slice_s`` seconds of wall time (between
rounds, with the queues consistent) so that Ctrl-C raises promptly.

An engine of copies that never meet (``Engine.set_copy_groups``, a vector
env's) runs instead in *copy groups*: one phase per slice, each member
taking whole copies and running each copy's own windows (section "copy
groups" below; docs/runtime.md, "Copies in groups").
"""

from cpython.exc cimport PyErr_CheckSignals
from libc.math cimport INFINITY, isnan, isinf
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, INT64_MAX
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memcpy, memset

from seer_runtime._omp cimport seer_openmp_enabled, seer_omp_get_max_threads
from seer_runtime.atomics cimport (seer_fetch_add_i64_relaxed, seer_fetch_min_i64_relaxed,
                                   seer_load_i64_relaxed, seer_load_i32_relaxed,
                                   seer_store_i32_relaxed, seer_prefetch)
from seer_runtime.contract cimport (Ctx, Event, sim_time_t, lp_id_t, seer_rng_key,
                                    seer_uniform, seer_exponential, seer_integer,
                                    seer_next_u64, SEER_ENV_SOURCE, SEER_OUTBOX_CAPACITY,
                                    SEER_OK, SEER_E_PAST, SEER_E_LOOKAHEAD,
                                    SEER_E_BAD_TARGET, SEER_E_OUTBOX_FULL, SEER_E_QUEUE_FULL,
                                    SEER_E_ARENA_FULL, SEER_E_NO_MEMORY, SEER_E_EVENT_BUDGET,
                                    SEER_E_STUCK)
from seer_runtime.scenario cimport (Scenario, seer_range_fn, seer_install_parallel_for)
from seer_runtime.queue cimport (LocalHeap, InboxNode, event_before, heap_push, heap_pop,
                                 seer_heap_realloc,
                                 heap_top_time, heap_free, inbox_push, inbox_take_all_lifo,
                                 arena_alloc, arena_reset, arena_free)

from seer_runtime._errors import ContractViolation, EngineBusyError, OutOfMemory
import numbers

cdef extern from "src/alloc.h" nogil:
    int64_t seer_test_heap_slot_limit

cdef extern from "src/clock.h" nogil:
    int64_t seer_clock_ns()

ctypedef void (*seer_team_fn)(void* arg, void* team, int tid, int nt) noexcept nogil

cdef extern from "src/team.h" nogil:
    void* seer_team_acquire(int nt)
    int64_t seer_team_phase(void* team, int nt, seer_team_fn fn, void* arg, int wake)
    void seer_team_live(void* team, int live, int wake)
    int seer_team_parallel()
    int64_t seer_test_join_delay_ns
    void seer_sleep_ns(int64_t d)

cdef extern from "src/rng.h" nogil:
    uint64_t seer_fmix_a(uint64_t z)
    uint64_t seer_fmix_b(uint64_t z)

cdef enum:
    MAX_THREADS = 1024
    # int64 slots per 64-byte cache line: per-member counters sit this far
    # apart so that members never write the same line
    LINE_I64 = 8

#: The most threads an engine takes (``check_num_threads``'s bound), for Python.
MAX_THREADS_PY = MAX_THREADS

# Events one hook call may emit (contract.pxd), for Python-side bounds.
OUTBOX_CAPACITY = SEER_OUTBOX_CAPACITY

DEF_MAX_PENDING_PER_LP = 1 << 22
DEF_MAX_MESSAGES_PER_ROUND = 1 << 24
# For seer_runtime.memory's up-front estimate: bytes of one queued event, and
# of the engine's own arrays per LP (queue header, inbox pointer, next time,
# RNG key and counter, emission counter).
EVENT_BYTES = sizeof(Event)
ENGINE_LP_BYTES = sizeof(LocalHeap) + sizeof(void*) + sizeof(sim_time_t) + 3 * sizeof(uint64_t)
# Heap capacity the delivery of messages may use: the cap on pending events is
# checked once an LP's messages of the round are all in (so which message is
# "over" does not depend on the order threads delivered them).
cdef int64_t _UNCAPPED = 1 << 62


def _set_test_heap_slot_limit(slots):
    """Test hook: make any per-LP heap growth beyond ``slots`` fail as if the
    allocator had refused it (0 turns it off).  Call only between runs."""
    global seer_test_heap_slot_limit
    seer_test_heap_slot_limit = slots


def _set_test_join_delay(seconds):
    """Test hook: every worker of this module's teams sleeps ``seconds``
    before each attempt to join a phase, as if the OS had descheduled it
    (0 turns it off)."""
    global seer_test_join_delay_ns
    seer_test_join_delay_ns = <int64_t>(float(seconds) * 1e9)


def openmp_enabled():
    """True in a parallel build (compiled with the OpenMP flags).  The
    engine's workers are SEER's own threads (src/team.h), but the build's
    OpenMP switch still decides whether they exist: without it every run
    uses one thread."""
    return bool(seer_openmp_enabled() and seer_team_parallel())


def omp_max_threads():
    """OpenMP's default team size in this process (1 in a serial build)."""
    return seer_omp_get_max_threads()


def check_num_threads(num_threads):
    """Validate an explicit thread count (an int >= 1) and return it."""
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise ValueError(f"num_threads must be an int >= 1, got {num_threads!r}")
    if num_threads < 1:
        raise ValueError(f"num_threads must be >= 1, got {num_threads}")
    if num_threads > MAX_THREADS:
        raise ValueError(f"num_threads must be <= {MAX_THREADS}, got {num_threads}")
    return num_threads


# Typed checks of the Engine's public arguments: a clear ValueError naming
# the argument and its range, not Cython's bare OverflowError or TypeError.
cdef inline bint _is_int(v):
    # Python and NumPy integers (NumPy's bool is not Integral), not bools.
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


cdef int32_t _check_kind(kind) except -1:
    """An event kind: the scenario's, stored as int32 (-1 is the hooks')."""
    if not _is_int(kind) or not 0 <= kind < 2**31:
        raise ValueError(f"kind must be an int in [0, 2**31), got {kind!r}")
    return <int32_t>int(kind)


def _int_blocks(starts, name):
    """``starts`` as a 1-D int64 array of integers (no silent float
    truncation or wrap-around)."""
    import numpy as np
    if type(starts) is np.ndarray and starts.dtype == np.int64:     # every caller's, each step
        return np.ascontiguousarray(starts.reshape(-1))
    try:
        a = np.asarray(starts)
    except Exception:
        raise ValueError(f"{name} must be a sequence of ints, got {starts!r}") from None
    if a.size == 0:
        return np.zeros(0, np.int64)
    if a.dtype.kind == "O":
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in a.reshape(-1).tolist()):
            raise ValueError(f"{name} must be a sequence of ints, got {starts!r}")
    elif a.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a sequence of ints, got an array of dtype {a.dtype}")
    lo, hi = int(a.min()), int(a.max())
    if lo < -2**63 or hi >= 2**63:
        raise ValueError(f"{name} must be ints in [0, 2**63), got {lo if lo < 0 else hi}")
    return np.ascontiguousarray(a.astype(np.int64).reshape(-1))


_REASONS = {
    SEER_E_PAST: ("past", "event scheduled into the past"),
    SEER_E_LOOKAHEAD: ("lookahead", "cross-entity event under the lookahead"),
    SEER_E_BAD_TARGET: ("bad_target", "event for a target id that does not exist"),
    SEER_E_OUTBOX_FULL: ("outbox_full", f"more than {SEER_OUTBOX_CAPACITY} events emitted by one handler call"),
    SEER_E_QUEUE_FULL: ("queue_full", "an entity's pending events exceed max_pending_per_lp"),
    SEER_E_ARENA_FULL: ("messages_full", "one round's cross-entity messages exceed max_messages_per_round"),
    SEER_E_NO_MEMORY: ("out_of_memory", "out of memory"),
    SEER_E_EVENT_BUDGET: ("event_budget", "one run_until call's events exceed max_events_per_run"),
    SEER_E_STUCK: ("stuck_window", "the window cannot advance"),
}


def _reason_of(code, hook):
    """(reason, description) of an error code; a model's own code names the
    hook that returned it."""
    if code in _REASONS:
        return _REASONS[code]
    return "model", f"the model's {hook} returned error code {code}"


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


# Plan partition k for the next window: its earliest pending time m and, as
# its segment of the next executive list, every LP earlier than m +
# lookahead.  The global T is at most m, so the candidates hold every LP with
# work before W = min(T + lookahead, t_end); exec skips those with nothing
# before W (one read of next_time), which saves a separate filter phase.
# Two plain passes (a min, then a branch-free gather) beat one pass with a
# running min: no unpredictable branch, and fewer candidates.  The min keeps
# four running minima: one chain waits a min's latency per LP, four overlap
# (times are never NaN, and a min does not depend on the order it is taken in).
cdef void _plan_part(EngineCore* c, int k, int P) noexcept nogil:
    cdef ThreadState* part = &c.ts[k]
    cdef int64_t lo, hi, lp, n = 0
    cdef double m = INFINITY, m1 = INFINITY, m2 = INFINITY, m3 = INFINITY, t, lim
    cdef const double* nt = c.next_time
    cdef lp_id_t* cand = part.ready
    _partition(c.n, P, k, &lo, &hi)
    lp = lo
    while lp + 4 <= hi:
        m = nt[lp] if nt[lp] < m else m
        m1 = nt[lp + 1] if nt[lp + 1] < m1 else m1
        m2 = nt[lp + 2] if nt[lp + 2] < m2 else m2
        m3 = nt[lp + 3] if nt[lp + 3] < m3 else m3
        lp += 4
    while lp < hi:
        t = nt[lp]
        m = t if t < m else m
        lp += 1
    m = m1 if m1 < m else m
    m2 = m3 if m3 < m2 else m2
    m = m2 if m2 < m else m
    lim = m + c.lookahead
    for lp in range(lo, hi):
        cand[n] = <lp_id_t>lp
        n += nt[lp] < lim
    part.local_min = m
    part.nready = n


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
        _groups_units(c, me, tid)
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


def phase_policy(grain_ns=None, wake_ns=None):
    """Get, or set, the engine's granularity thresholds (nanoseconds of
    estimated work in one phase of a round): below ``grain_ns`` a phase runs
    on the calling thread alone, above it opens to one worker per
    ``grain_ns / 2`` of its estimate (up to the team), from ``wake_ns`` on it
    also wakes parked workers.  Results never depend on them.  Returns the
    previous ``(grain_ns, wake_ns)``.  The environment variables
    ``SEER_PHASE_GRAIN_NS`` and ``SEER_PHASE_WAKE_NS`` set them at import;
    ``phase_policy(0, 0)`` opens every phase to every worker (what the
    equivalence tests use)."""
    global _grain_ns, _wake_ns
    old = (_grain_ns, _wake_ns)
    for name, v in (("grain_ns", grain_ns), ("wake_ns", wake_ns)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                              or not v >= 0):
            raise ValueError(f"{name} must be a number >= 0, got {v!r}")
    if grain_ns is not None:
        _grain_ns = float(grain_ns)
    if wake_ns is not None:
        _wake_ns = float(wake_ns)
    return old


def _policy_from_environ():
    import os
    for name, key in (("grain_ns", "SEER_PHASE_GRAIN_NS"), ("wake_ns", "SEER_PHASE_WAKE_NS")):
        raw = os.environ.get(key)
        if raw:
            try:
                phase_policy(**{name: float(raw)})
            except ValueError:
                raise ValueError(f"{key} must be a number >= 0 (nanoseconds), got {raw!r}") from None


_policy_from_environ()


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
    cdef int64_t lp, lo, hi
    cdef double T = INFINITY
    cdef const double* nt = c.next_time
    for b in range(c.cg_nblocks):
        lo = c.cg_base[b] + ci * c.cg_size[b]
        hi = lo + c.cg_size[b]
        for lp in range(lo, hi):
            T = nt[lp] if nt[lp] < T else T
    return T


# Run copy ci's windows up to t_end, until its first error or limit, or the
# slice's deadline (then it stays running: the next slice goes on).
cdef void _run_copy(EngineCore* c, ThreadState* me, int64_t ci, int tid) noexcept nogil:
    cdef CopyRun* cr = &c.cg_runs[ci]
    cdef int b
    cdef int64_t lp, lo, hi, j, nev, msgs
    cdef double T, W, limit, t_end = c.sh.t_end
    cdef bint failed
    cdef int32_t nerr0
    me.cg_copy = ci + 1
    while True:
        T = _copy_min(c, ci)
        if not (T < t_end):
            cr.state = 1
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
        for b in range(c.cg_nblocks):
            lo = c.cg_base[b] + ci * c.cg_size[b]
            hi = lo + c.cg_size[b]
            for lp in range(lo, hi):
                if not (c.next_time[lp] < W):
                    continue
                if _exec_lp(c, me, <lp_id_t>lp, W, limit, tid, &nev) != SEER_OK:
                    failed = True
                    limit = me.err_last if me.err_last < limit else limit
                me.lps_executed += 1
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
        if seer_clock_ns() >= c.sh.deadline_ns:
            break
    me.cg_copy = 0


# A member's part of the phase: whole copies from the shared counter.
cdef void _groups_units(EngineCore* c, ThreadState* me, int tid) noexcept nogil:
    cdef int64_t ci
    cdef bint ran = tid != 0        # the caller runs one window whatever the clock says
    while True:
        if ran and seer_clock_ns() >= c.sh.deadline_ns:
            break
        ci = seer_fetch_add_i64_relaxed(&c.sh.cursor[0], 1)
        if ci >= c.cg_copies:
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
    c.sh.cursor[0] = 0
    # the last slice's length (a first one: worth waking the team for)
    est = <double>c.sh.last_run_ns if c.sh.last_run_ns > 0 else _wake_ns
    _run_phase(c, team, &ph, est)
    c.sh.finished = 1
    for ci in range(c.cg_copies):
        if c.cg_runs[ci].state == 0:
            c.sh.finished = 0
            break


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
        seer_team_live(team, 1, wake)
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
        seer_team_live(team, 0, 0)
    return 0


cdef inline uint64_t _event_hash(const Event* e) noexcept nogil:
    cdef uint64_t h = seer_fmix_a((<uint64_t*>&e.time)[0] ^ 0x9e3779b97f4a7c15ULL)
    h = seer_fmix_b(h ^ e.seq)
    h = seer_fmix_a(h ^ ((<uint64_t>e.src << 32) | <uint32_t>e.kind))
    h = seer_fmix_b(h ^ e.data.u[0] ^ seer_fmix_a(e.data.u[1] ^ e.data.u[2]))
    return seer_fmix_a(h ^ e.data.u[3] ^ seer_fmix_b(e.data.u[4] ^ e.data.u[5]))


cdef class Engine:
    """Runs a :class:`Scenario`'s events on ``num_threads`` worker threads.

    Parameters
    ----------
    scenario : Scenario
        The model (its hooks, state, number of LPs and lookahead).
    num_threads : int or "auto"
        Worker threads (>= 1), or ``"auto"``: the hard caps (affinity mask,
        OMP_NUM_THREADS; see :func:`seer_runtime.resolve_threads`).  Every
        count gives bit-identical results; 1 is the serial reference.
        Changeable between runs.
    seed : int
        Run seed (0 <= seed < 2**64); LP ``i``'s random stream is keyed by
        ``(seed, i)`` only.
    max_pending_per_lp : int
        Cap on one LP's pending events; exceeding it raises
        :class:`ContractViolation` (reason ``"queue_full"``).
    max_messages_per_round : int
        Cap on the cross-LP events sent in one round (all threads together);
        exceeding it raises :class:`ContractViolation` (reason
        ``"messages_full"``).
    max_events_per_run : int or None
        Event budget of one :meth:`run_until` call (an env step): a call
        whose events exceed it raises :class:`ContractViolation` (reason
        ``"event_budget"``) instead of running on.  ``None`` (the default):
        no budget, because a long headless run legitimately executes any
        number of events and stays interruptible; envs set one from their
        model.  Settable between runs.

    Errors are deterministic: when several events fail in one window, the one
    raised is the one a serial run meets first (smallest time, then source,
    then sequence), at every thread count.
    """

    def __cinit__(self, Scenario scenario not None, num_threads=1, seed=0,
                  max_pending_per_lp=DEF_MAX_PENDING_PER_LP,
                  max_messages_per_round=DEF_MAX_MESSAGES_PER_ROUND,
                  max_events_per_run=None):
        cdef lp_id_t i
        cdef EngineCore* c = &self.core
        from seer_runtime._threads import resolve_threads
        num_threads = resolve_threads(num_threads)[0]
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ValueError(f"seed must be an int in [0, 2**64), got {seed!r}")
        for name, v in (("max_pending_per_lp", max_pending_per_lp),
                        ("max_messages_per_round", max_messages_per_round)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        if scenario.num_lps < 1:
            raise ValueError("scenario has no LPs (was Scenario.__init__ called?)")
        self.scenario = scenario
        self.seed = seed
        self._slice_s = 0.05
        memset(c, 0, sizeof(EngineCore))
        c.lptype = scenario.lptype
        c.model = scenario.model
        c.n = scenario.num_lps
        c.lookahead = scenario.lookahead
        c.max_pending_per_lp = max_pending_per_lp
        self.max_messages_per_round = max_messages_per_round
        c.heaps = <LocalHeap*>calloc(c.n, sizeof(LocalHeap))
        c.inbox = <void**>calloc(c.n, sizeof(void*))
        c.next_time = <sim_time_t*>malloc(c.n * sizeof(sim_time_t))
        c.rng_key = <uint64_t*>malloc(c.n * sizeof(uint64_t))
        c.rng_ctr = <uint64_t*>calloc(c.n, sizeof(uint64_t))
        c.emit_seq = <uint64_t*>calloc(c.n, sizeof(uint64_t))
        c.sh = <RunShared*>calloc(1, sizeof(RunShared))
        if c.sh != NULL:
            c.sh.max_msgs = max_messages_per_round
            c.sh.max_events = -1
            c.sh.err_bound = 0x7ff0000000000000     # the bits of +inf
            # One cursor per segment, 64 bytes apart (no false sharing).
            c.sh.cursor = <int64_t*>calloc(2 * LINE_I64 * MAX_THREADS, sizeof(int64_t))
            if c.sh.cursor == NULL:
                raise MemoryError()
            c.sh.pclaim = c.sh.cursor + LINE_I64 * MAX_THREADS
        if (c.heaps == NULL or c.inbox == NULL or c.next_time == NULL or c.rng_key == NULL
                or c.rng_ctr == NULL or c.emit_seq == NULL or c.sh == NULL):
            raise MemoryError()
        for i in range(c.n):
            c.next_time[i] = INFINITY
            c.rng_key[i] = seer_rng_key(<uint64_t>seed, i)
        self.max_events_per_run = max_events_per_run
        self._alloc_threads(num_threads)

    def __dealloc__(self):
        cdef EngineCore* c = &self.core
        cdef lp_id_t i
        self._free_threads()
        if c.heaps != NULL:
            for i in range(c.n):
                heap_free(&c.heaps[i])
        free(c.heaps)
        free(c.inbox)
        free(c.next_time)
        free(c.rng_key)
        free(c.rng_ctr)
        free(c.emit_seq)
        if c.sh != NULL:
            free(c.sh.cursor)
        free(c.sh)
        free(c.cg_base)
        free(c.cg_size)
        free(c.cg_runs)
        memset(c, 0, sizeof(EngineCore))

    cdef int _alloc_threads(self, int32_t nthreads) except -1:
        cdef EngineCore* c = &self.core
        cdef int32_t t
        cdef ThreadState* s
        c.ts = <ThreadState*>calloc(nthreads, sizeof(ThreadState))
        if c.ts == NULL:
            raise MemoryError()
        c.max_threads = nthreads
        for t in range(nthreads):
            s = &c.ts[t]
            s.dirty = <lp_id_t*>malloc(c.n * sizeof(lp_id_t))
            s.ready = <lp_id_t*>malloc(c.n * sizeof(lp_id_t))
            s.ndirty = <int64_t*>calloc(nthreads, sizeof(int64_t))
            s.outbox = <Event*>malloc(SEER_OUTBOX_CAPACITY * sizeof(Event))
            s.arena.max_nodes = self.max_messages_per_round
            if s.dirty == NULL or s.ready == NULL or s.ndirty == NULL or s.outbox == NULL:
                raise MemoryError()
        self._num_threads = nthreads
        return 0

    cdef void _free_threads(self) noexcept:
        cdef EngineCore* c = &self.core
        cdef int32_t t
        if c.ts == NULL:
            return
        for t in range(c.max_threads):
            free(c.ts[t].dirty)
            free(c.ts[t].ready)
            free(c.ts[t].ndirty)
            free(c.ts[t].outbox)
            arena_free(&c.ts[t].arena)
        free(c.ts)
        c.ts = NULL
        c.max_threads = 0

    # --- properties -------------------------------------------------------

    @property
    def num_threads(self):
        """Worker threads used by the next run (settable between runs)."""
        return self._num_threads

    @num_threads.setter
    def num_threads(self, value):
        check_num_threads(value)
        if value == self._num_threads:
            return
        self._enter()
        try:
            # Statistics are per thread: keep the old team's totals.
            old = self._thread_stats()
            self._retired_events += sum(t["events"] for t in old)
            self._retired_pushes += sum(t["inbox_pushes"] for t in old)
            self._retired_retries += sum(t["cas_retries"] for t in old)
            self._free_threads()
            self._alloc_threads(value)
            # the new team's counters start at zero
            self.core.sh.last_events = 0
            self.core.sh.last_lps = 0
        finally:
            self._busy = False

    @property
    def now(self):
        """Simulated time up to which all events have run (exclusive)."""
        return self._now

    @property
    def num_lps(self):
        return self.core.n

    @property
    def lookahead(self):
        return self.core.lookahead

    @property
    def max_events_per_run(self):
        """Event budget of one run_until call (None: no budget)."""
        return self._max_events_per_run

    @max_events_per_run.setter
    def max_events_per_run(self, value):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not 1 <= value < 2**63):
            raise ValueError(f"max_events_per_run must be None or an int in [1, 2**63), got {value!r}")
        self._max_events_per_run = value
        self.core.sh.max_events = -1 if value is None else value

    @property
    def initialized(self):
        return bool(self._initialized)

    # --- running ------------------------------------------------------------

    # --- one caller at a time ------------------------------------------------

    cdef int _enter(self) except -1:
        # Checked and set with the GIL held, so two Python threads cannot
        # both pass; released in a finally by the caller.  Every method that
        # runs the team (and so releases the GIL) takes it first, before it
        # changes any state; _team_call checks that it is held.
        if self._busy:
            raise EngineBusyError(
                "this Engine is in use by another thread (a run, inject, init or "
                "num_threads change is in progress); an Engine, and the env that owns it, "
                "can be used by one thread at a time: give each thread its own env or engine")
        self._busy = True
        return 0

    cdef int _check_idle(self) except -1:
        if self._busy:
            self._enter()   # raises the same RuntimeError
        return 0

    def _set_test_sleep(self, tid, sleep_s, open_all=True):
        """Test hook: worker ``tid`` sleeps ``sleep_s`` seconds in every
        exec phase it joins, holding its units (as a preempted member
        does), and in every inject and reset_lps phase (worker 0, the
        caller, is in each: a call made long, to test a second thread
        against it); 0 turns it off.  ``open_all``: every phase is also opened
        and wakes the team, and the straggler rule is off (else the phase
        policy and the straggler rule apply).  Costs one branch per phase
        when off."""
        self._check_idle()
        self.core.sh.test_sleep_tid = int(tid)
        self.core.sh.test_sleep_ns = <int64_t>(float(sleep_s) * 1e9)
        self.core.sh.test_sleep_force = bool(open_all)

    # --- running ------------------------------------------------------------

    def init(self, start_time=0.0):
        """Call every LP's ``on_init`` at ``start_time`` (once per engine)."""
        self._enter()
        try:
            self._init_locked(start_time)
        finally:
            self._busy = False

    def _init_locked(self, start_time):
        cdef double t0 = self._check_time(start_time, "start_time")
        cdef EngineCore* c = &self.core
        cdef _Phase ph
        cdef int k
        if self._initialized:
            raise RuntimeError("Engine.init() was already called; create a new Engine to restart")
        self._check_usable()
        self._initialized = True
        self._now = t0
        c.sh.events_base = self._team_events()
        ph.t = t0
        _team_call(self, JOB_INIT, &ph)
        _check_round_limits(c)
        for k in range(c.max_threads):
            c.ts[k].round_msgs = 0
        self._raise_errors()

    def run_until(self, t_end):
        """Run every event with ``time < t_end``; later events stay pending.

        Returns the number of events executed by this call.  Raises
        :class:`ContractViolation` when a hook breaks the contract and
        ``KeyboardInterrupt`` promptly on Ctrl-C (the queues stay
        consistent, so the run can be continued).  Raises ``RuntimeError``
        when another thread is using this engine.
        """
        self._enter()
        try:
            return self._run_until_locked(t_end)
        finally:
            self._busy = False

    def _run_until_locked(self, t_end):
        cdef double t = self._check_time(t_end, "t_end")
        cdef EngineCore* c = &self.core
        cdef int64_t before = self._total_events(), t_start
        self._check_usable()
        if not self._initialized:
            self._init_locked(self._now)
        if t < self._now:
            raise ValueError(f"t_end={t!r} is before the engine's current time {self._now!r}")
        c.sh.t_end = t
        c.sh.events_base = self._team_events()
        t_start = seer_clock_ns()
        if c.cg_copies > 0:
            try:
                self._run_groups_locked()
            finally:
                self._wall_s += (seer_clock_ns() - t_start) * 1e-9
            self._now = t
            return self._total_events() - before
        try:
            while True:
                c.sh.deadline_ns = seer_clock_ns() + <int64_t>(self._slice_s * 1e9)
                c.sh.finished = 0
                _team_call(self, JOB_RUN, NULL)
                self._raise_errors()
                if c.sh.finished:
                    break
                PyErr_CheckSignals()
        finally:
            self._wall_s += (seer_clock_ns() - t_start) * 1e-9
        self._now = t
        return self._total_events() - before

    cdef int inject_range(self, sim_time_t time, int32_t kind, lp_id_t lo,
                          lp_id_t hi, bint execute=False) except -1:
        self._enter()
        try:
            return self._inject_range_locked(time, kind, lo, hi, execute)
        finally:
            self._busy = False

    cdef bint _can_execute(self, double time):
        # No message of a later run can reach an LP before now + lookahead,
        # and a frozen LP's next_time is not its queue's.
        return not self._frozen and time < self._now + self.core.lookahead

    cdef int _inject_range_locked(self, sim_time_t time, int32_t kind, lp_id_t lo,
                                  lp_id_t hi, bint execute) except -1:
        cdef EngineCore* c = &self.core
        cdef int64_t failed
        cdef _Phase ph
        cdef uint64_t seq
        self._check_usable()
        if not self._initialized:
            self._init_locked(self._now)
        if not (time >= self._now) or isinf(time):
            raise ValueError(f"cannot inject at time {time!r}: the engine is at {self._now!r}")
        if hi > c.n or lo > hi:
            raise ValueError(f"bad LP range [{lo}, {hi}) for {c.n} LPs")
        seq = self._inject_seq
        self._inject_seq += 1
        memset(&ph, 0, sizeof(_Phase))
        ph.t = time
        ph.ev_kind = kind
        ph.seq = seq
        ph.lo = lo
        ph.starts = NULL
        ph.total = hi - lo
        ph.failed = INT64_MAX
        ph.execute = execute and self._can_execute(time)
        _team_call(self, JOB_INJECT, &ph)
        if ph.execute:
            self._raise_errors()
        failed = ph.failed
        if failed != INT64_MAX:
            self._raise_inject_failure(lo + failed // 2,
                                       SEER_E_NO_MEMORY if failed % 2 else SEER_E_QUEUE_FULL,
                                       kind, time)
        return 0

    def _raise_inject_failure(self, lp, code, kind, time):
        # Some LPs got the event and some did not: the state is no longer a
        # serial one.
        self._failed = True
        reason, what = _REASONS[code]
        if code == SEER_E_NO_MEMORY:
            what = f"out of memory: {self.core.heaps[lp].size} pending events on LP {lp}"
        else:
            what += f" ({self.core.max_pending_per_lp})"
        exc = OutOfMemory if code == SEER_E_NO_MEMORY else ContractViolation
        raise exc(reason, f"injecting kind {kind} at t={time!r} into LP {lp}: {what}",
                  time=time, now=self._now, source=None, target=lp, kind=kind, code=code)

    def inject(self, time, kind, lo=0, hi=None, execute=False):
        """Inject one event of ``kind`` at ``time`` into each LP in ``[lo, hi)``.

        Injected events come from the environment (source ``SEER_ENV_SOURCE``),
        carry ``data.i[0] = lp - lo`` and sort after LP-emitted events at the
        same time.  Used for action events at step starts.

        ``execute=True`` is for a caller that runs past ``time`` next (an
        env's step): where the event is its LP's next one (before everything
        pending there, with ``time < now + lookahead`` so that no message can
        come first) it is handled at once rather than queued, which saves a
        queue push and pop and a visit in the first window.  Once the engine
        has run past ``time`` the results are those of ``execute=False`` at
        any thread count; before that, state readers see those events
        handled.  Errors of the handlers are raised here.  While LPs are
        frozen (:meth:`freeze_all_but`) every event is queued.
        """
        cdef double t = self._check_time(time, "time")
        cdef int32_t k = _check_kind(kind)
        if hi is None:
            hi = self.core.n
        lo, hi = self._check_range(lo, hi)
        self.inject_range(t, k, lo, hi, bool(execute))

    # --- copies of one model in one engine (seer_envs.vector) ------------------
    # A vector env lays copy c's LP j at c * n + j.  These methods let each
    # copy behave exactly as a single engine would: its own random streams,
    # its own restart, its own step times.

    def set_stream_keys(self, lo, hi, seed, first_entity=0):
        """Key the random streams of LPs ``[lo, hi)`` by ``(seed, first_entity
        + lp - lo)``: LP ``lo + j`` then draws exactly what LP
        ``first_entity + j`` of an engine built with ``seed`` draws.  Call
        before :meth:`init` or :meth:`reset_lps` (counters are not touched
        here)."""
        self._check_idle()
        cdef EngineCore* c = &self.core
        cdef int64_t lp, a, b, f
        cdef uint64_t sd
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ValueError(f"seed must be an int in [0, 2**64), got {seed!r}")
        a, b = self._check_range(lo, hi)
        if isinstance(first_entity, bool) or not isinstance(first_entity, int) \
                or not 0 <= first_entity < SEER_ENV_SOURCE:
            raise ValueError(f"first_entity must be an int in [0, {SEER_ENV_SOURCE}), got {first_entity!r}")
        sd = <uint64_t>seed
        f = first_entity
        for lp in range(a, b):
            c.rng_key[lp] = seer_rng_key(sd, <uint64_t>(f + lp - a))
        return None

    def reset_lps(self, lo, hi, start_time=0.0):
        """Restart LPs ``[lo, hi)`` as a fresh engine would at ``start_time``:
        drop their pending events, zero their RNG and emission counters and
        call their ``on_init`` (on the engine's threads; an error names the
        first failing LP, as a serial restart in LP order would).  The model's own
        state of those LPs is the caller's to restore first.  Events emitted
        by these ``on_init`` calls must target LPs inside ``[lo, hi)`` (copies
        never interact): anything else raises :class:`ContractViolation`.
        The engine's time becomes ``min(now, start_time)``; other LPs' events
        are untouched.  Call between runs only."""
        self._enter()
        try:
            return self._reset_lps_locked(lo, hi, start_time)
        finally:
            self._busy = False

    def _reset_lps_locked(self, lo, hi, start_time):
        cdef double t0 = self._check_time(start_time, "start_time")
        cdef EngineCore* c = &self.core
        cdef int64_t a, b
        cdef int best
        cdef _Phase ph
        cdef ThreadState* e
        self._check_usable()
        if not self._initialized:
            raise RuntimeError("reset_lps() needs an initialised engine: call init() first")
        a, b = self._check_range(lo, hi)
        if b > a:
            memset(&ph, 0, sizeof(_Phase))
            ph.t = t0
            ph.lo = a
            ph.total = b - a
            _team_call(self, JOB_RESET, &ph)
            best = self._first_error()
            if best >= 0 and c.ts[best].err_class == 0:
                self._failed = True
                e = &c.ts[best]
                rc = e.err_code
                reason, what = _reason_of(rc, "on_init")
                msg = (f"{what}: LP {e.err_src}, restarted at t={t0!r}, scheduled an event of kind "
                       f"{e.err_kind} for target LP {e.err_target} at t={e.err_time!r}")
                if rc == SEER_E_BAD_TARGET:
                    msg += f", but a restarted range [{a}, {b}) may only schedule events inside itself"
                elif rc == SEER_E_LOOKAHEAD:
                    msg += f", under the lookahead {c.lookahead!r}"
                raise ContractViolation(reason, msg, time=e.err_time, now=t0, source=e.err_src,
                                        target=e.err_target, kind=e.err_kind, code=rc)
            self._raise_errors()        # delivery errors, the message cap
        if t0 < self._now:
            self._now = t0
        return None

    def rewind(self, t):
        """Move the engine's time back to ``t`` (<= now), allowed only when no
        pending event is earlier than ``t``.  A vector env whose copies are at
        different step counts runs them one group at a time: this lets the
        group that is behind inject and run at its own times.  Nothing but
        the time checks of :meth:`inject` and :meth:`run_until` depends on
        the engine's time, so results are unchanged."""
        self._check_idle()
        cdef double tt = self._check_time(t, "t")
        self._check_usable()
        if tt > self._now:
            raise ValueError(f"rewind: t={tt!r} is after the engine's current time {self._now!r}")
        first = self.next_event_time()
        if first < tt:
            raise ValueError(f"rewind: an event is pending at t={first!r}, before t={tt!r}")
        self._now = tt
        return None

    def inject_blocks(self, time, kind, starts, count, execute=False):
        """Inject one event of ``kind`` at ``time`` into each LP of every block
        ``[s, s + count)`` for ``s`` in ``starts``, with payload word
        ``i[0] = lp - s`` and one injection sequence number for the call (the
        per-copy form of :meth:`inject`: within a copy, injected events keep
        their relative order; ``execute`` as there).  Blocks must not overlap
        (ValueError)."""
        self._enter()
        try:
            return self._inject_blocks_locked(time, kind, starts, count, execute)
        finally:
            self._busy = False

    def _inject_blocks_locked(self, time, kind_, starts, count, execute):
        cdef double t = self._check_time(time, "time")
        cdef int32_t kind = _check_kind(kind_)
        cdef EngineCore* c = &self.core
        cdef int64_t nb, cnt, k, idx, total
        cdef int64_t[::1] st
        import numpy as np
        st = _int_blocks(starts, "starts")
        nb = st.shape[0]
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count < 2**63:
            raise ValueError(f"count must be an int in [0, 2**63), got {count!r}")
        cnt = count
        self._check_usable()
        if not self._initialized:
            self._init_locked(self._now)
        if not (t >= self._now):
            raise ValueError(f"cannot inject at time {t!r}: the engine is at {self._now!r}")
        for k in range(nb):
            if st[k] < 0 or st[k] > c.n - cnt:
                raise ValueError(f"bad LP block [{st[k]}, {st[k] + cnt}) for {c.n} LPs")
        # Overlapping blocks would give an LP two events with one key (time,
        # source, sequence number), whose order nothing defines, and let two
        # threads push to its queue at once.  Blocks in increasing order
        # (every caller's) are checked in one pass.
        for k in range(1, nb):
            if cnt > 0 and st[k] < st[k - 1] + cnt:
                srt = np.sort(np.asarray(st))
                hit = np.flatnonzero(np.diff(srt) < cnt)
                if hit.size:
                    a, b = int(srt[hit[0]]), int(srt[hit[0] + 1])
                    raise ValueError(f"LP blocks [{a}, {a + cnt}) and [{b}, {b + cnt}) overlap: "
                                     f"an LP takes at most one event per inject_blocks call")
                break
        total = nb * cnt
        if total == 0:
            return None
        cdef _Phase ph
        memset(&ph, 0, sizeof(_Phase))
        ph.t = t
        ph.ev_kind = kind
        ph.seq = self._inject_seq
        self._inject_seq += 1
        ph.starts = &st[0]
        ph.cnt = cnt
        ph.total = total
        ph.failed = INT64_MAX
        ph.execute = bool(execute) and self._can_execute(t)
        _team_call(self, JOB_INJECT, &ph)
        if ph.execute:
            self._raise_errors()
        if ph.failed != INT64_MAX:
            idx = ph.failed // 2
            self._raise_inject_failure(st[idx // cnt] + idx % cnt,
                                       SEER_E_NO_MEMORY if ph.failed % 2 else SEER_E_QUEUE_FULL,
                                       kind, t)
        return None

    def freeze_all_but(self, starts, count):
        """Until :meth:`thaw`: only LPs in the blocks ``[s, s + count)`` for
        ``s`` in ``starts`` run (``count``: an int, or one per block); every other LP's events stay pending,
        untouched, whatever a run's end time.  A vector env runs copies that
        are at different step counts one group at a time with this (each
        group at its own times, after :meth:`rewind`).  The blocks must not
        exchange events with frozen LPs.  Between runs only."""
        self._enter()
        try:
            return self._freeze_locked(starts, count)
        finally:
            self._busy = False

    def _freeze_locked(self, starts, count):
        cdef EngineCore* c = &self.core
        cdef int64_t lp, k
        cdef unsigned char[::1] keep
        import numpy as np
        st = np.asarray(_int_blocks(starts, "starts"))
        if isinstance(count, int) and not isinstance(count, bool):
            counts = np.full(st.shape[0], count, np.int64)
        else:
            counts = np.asarray(count)
            if counts.shape != st.shape or counts.dtype.kind not in "iu":
                raise ValueError(f"count must be an int or one int per block, got {count!r}")
        mask = np.zeros(c.n, np.uint8)
        for k in range(st.shape[0]):
            if counts[k] < 0 or st[k] < 0 or st[k] + counts[k] > c.n:
                raise ValueError(f"bad LP block [{st[k]}, {st[k] + counts[k]}) for {c.n} LPs")
            mask[st[k]:st[k] + counts[k]] = 1
        keep = mask
        # The planner picks ready LPs from next_time only: an LP whose
        # next_time is inf is never scheduled, and nothing sends to it.
        for lp in range(c.n):
            if not keep[lp]:
                c.next_time[lp] = INFINITY
        self._frozen = True
        return None

    def thaw(self):
        """Undo :meth:`freeze_all_but`: every LP's earliest pending time is
        taken from its queue again.  Idempotent; between runs only."""
        self._check_idle()
        cdef EngineCore* c = &self.core
        cdef int64_t lp
        for lp in range(c.n):
            c.next_time[lp] = heap_top_time(&c.heaps[lp], INFINITY)
        self._frozen = False
        return None

    # --- copy groups (see "copy groups" above _team_call) ----------------------

    def set_copy_groups(self, blocks, num_copies=None):
        """Run every later :meth:`run_until` in copy groups: the LPs are
        ``num_copies`` copies of one model that never exchange events, and
        copy ``c`` owns, for each ``(base, size)`` in ``blocks``, the LPs
        ``[base + c * size, base + (c + 1) * size)``; the blocks' regions
        ``[base, base + num_copies * size)`` must cover the engine's LPs
        exactly.  A run is then one phase in which each thread takes whole
        copies from a shared counter and runs each copy's own windows to the
        run's end (docs/runtime.md, "Copy groups"); results are bit-identical
        to the round-by-round team's.  A copy's event for another copy's LP
        raises :class:`ContractViolation` (reason ``"bad_target"``).
        ``blocks=None`` turns it off.  Between runs only."""
        cdef EngineCore* c = &self.core
        cdef int64_t C, b
        self._check_idle()
        if blocks is None:
            free(c.cg_base)
            free(c.cg_size)
            free(c.cg_runs)
            c.cg_base = c.cg_size = NULL
            c.cg_runs = NULL
            c.cg_copies = 0
            c.cg_nblocks = 0
            return None
        if not _is_int(num_copies) or not 1 <= num_copies <= c.n:
            raise ValueError(f"num_copies must be an int in [1, {c.n}], got {num_copies!r}")
        C = int(num_copies)
        bl = []
        try:
            for bs, sz in blocks:
                if not (_is_int(bs) and _is_int(sz)):
                    raise TypeError
                bl.append((int(bs), int(sz)))
        except (TypeError, ValueError):
            raise ValueError(f"blocks must be a sequence of (base, size) int pairs, got {blocks!r}") from None
        if not bl or len(bl) > 64:
            raise ValueError(f"blocks must hold 1 to 64 (base, size) pairs, got {len(bl)}")
        end = 0
        for bs, sz in sorted(bl):
            if sz < 1 or bs != end:
                raise ValueError(f"blocks: the regions [base, base + num_copies * size) must be "
                                 f"non-empty and cover the {c.n} LPs exactly, got {bl!r} for "
                                 f"{C} copies")
            end = bs + C * sz
        if end != c.n:
            raise ValueError(f"blocks: the regions [base, base + num_copies * size) must cover "
                             f"the {c.n} LPs exactly, got {bl!r} for {C} copies (they end at {end})")
        self.set_copy_groups(None)
        c.cg_base = <int64_t*>malloc(len(bl) * sizeof(int64_t))
        c.cg_size = <int64_t*>malloc(len(bl) * sizeof(int64_t))
        c.cg_runs = <CopyRun*>aligned_alloc(64, C * sizeof(CopyRun))
        if c.cg_base == NULL or c.cg_size == NULL or c.cg_runs == NULL:
            self.set_copy_groups(None)
            raise MemoryError()
        for b in range(len(bl)):
            c.cg_base[b] = bl[b][0]
            c.cg_size[b] = bl[b][1]
        c.cg_nblocks = len(bl)
        c.cg_copies = C
        self._cg_layout = (tuple(bl), C)
        return None

    @property
    def copy_groups(self):
        """``(blocks, num_copies)`` when runs go in copy groups
        (:meth:`set_copy_groups`), else None."""
        return self._cg_layout if self.core.cg_copies > 0 else None

    def _run_groups_locked(self):
        # Slices of one phase each until every copy has finished or stopped,
        # then the errors (each copy's own first; see "copy groups").
        cdef EngineCore* c = &self.core
        cdef int64_t ci, total = 0, windows = 0
        cdef CopyRun* cr
        memset(c.cg_runs, 0, c.cg_copies * sizeof(CopyRun))
        while True:
            c.sh.deadline_ns = seer_clock_ns() + <int64_t>(self._slice_s * 1e9)
            c.sh.finished = 0
            _team_call(self, JOB_GROUPS, NULL)
            if c.sh.finished:
                break
            PyErr_CheckSignals()
        for ci in range(c.cg_copies):
            cr = &c.cg_runs[ci]
            total += cr.events
            windows += cr.windows
            if cr.msgs_over and not c.sh.msgs_over:
                c.sh.msgs_over = cr.msgs_over
            if cr.stuck and not (c.sh.stuck and c.sh.stuck_T <= cr.stuck_T):
                c.sh.stuck = 1
                c.sh.stuck_T = cr.stuck_T
            if cr.budget:
                c.sh.budget_hit = 1
        if c.sh.max_events >= 0 and total > c.sh.max_events:
            c.sh.budget_hit = 1
        if c.sh.msgs_over or c.sh.budget_hit:
            c.sh.abort = 1
        c.sh.rounds += windows
        self._raise_errors()

    def _check_range(self, lo, hi):
        for name, v in (("lo", lo), ("hi", hi)):
            if not _is_int(v):
                raise ValueError(f"{name} must be an int, got {v!r}")
        lo, hi = int(lo), int(hi)
        if not 0 <= lo <= hi <= self.core.n:
            raise ValueError(f"bad LP range [{lo}, {hi}) for {self.core.n} LPs")
        return lo, hi

    # --- inspection -----------------------------------------------------------

    def pending(self):
        """Number of pending events over all LPs."""
        cdef int64_t total = 0
        cdef lp_id_t i
        self._check_idle()
        for i in range(self.core.n):
            total += self.core.heaps[i].size
        return total

    def next_event_time(self):
        """Earliest pending event time (inf when none)."""
        cdef double m = INFINITY
        cdef lp_id_t i
        self._check_idle()
        for i in range(self.core.n):
            if self.core.next_time[i] < m:
                m = self.core.next_time[i]
        return m

    def state_digest(self):
        """A 64-bit hash of the engine's per-LP state: pending events (as a
        set, so heap layout does not matter), RNG counters and emission
        counters.  Equal for serially equivalent runs."""
        cdef EngineCore* c = &self.core
        cdef uint64_t h = 0x243f6a8885a308d3ULL, lh, s
        cdef lp_id_t i
        cdef int64_t j
        self._check_idle()
        for i in range(c.n):
            s = 0
            for j in range(c.heaps[i].size):
                s += _event_hash(&c.heaps[i].data[j])
            lh = seer_fmix_a(s ^ (<uint64_t>c.heaps[i].size << 40) ^ i)
            lh = seer_fmix_b(lh ^ c.rng_ctr[i])
            lh = seer_fmix_a(lh ^ c.emit_seq[i])
            h = seer_fmix_b(h ^ lh) + 0x9e3779b97f4a7c15ULL
        return h

    def export_state(self):
        """Everything a continuation depends on, as NumPy arrays (a dict):
        every LP's pending events (``events``: the heaps' raw bytes, LP by
        LP, ``counts`` per LP), RNG stream keys and counters, emission
        counters and next times, and the clock (``now``; ``tallies``: the
        injection counter and the events executed).  Between runs only: no message
        is then in flight, and no LP may be frozen.  :meth:`import_state`
        puts it into an engine of the same model size, at any thread count."""
        import numpy as np
        cdef EngineCore* c = &self.core
        cdef lp_id_t i
        cdef int64_t total = 0, off = 0
        cdef char* out
        self._check_idle()
        if not self._initialized:
            raise RuntimeError("export_state() before init(): there is no state yet")
        if self._frozen:
            raise RuntimeError("export_state() while LPs are frozen (between freeze_all_but and thaw)")
        for i in range(c.n):
            if c.inbox[i] != NULL:
                raise RuntimeError(f"export_state(): LP {i} has messages in flight (call it between runs)")
        counts = np.empty(c.n, np.int64)
        cdef int64_t[::1] cnt = counts
        for i in range(c.n):
            cnt[i] = c.heaps[i].size
            total += c.heaps[i].size
        events = np.empty(total * sizeof(Event), np.uint8)
        if total:
            out = <char*><size_t>events.ctypes.data
            for i in range(c.n):
                if c.heaps[i].size:
                    memcpy(out + off, c.heaps[i].data, c.heaps[i].size * sizeof(Event))
                    off += c.heaps[i].size * sizeof(Event)
        rng_key = np.empty(c.n, np.uint64)
        rng_ctr = np.empty(c.n, np.uint64)
        emit_seq = np.empty(c.n, np.uint64)
        next_time = np.empty(c.n, np.float64)
        if c.n:
            memcpy(<char*><size_t>rng_key.ctypes.data, c.rng_key, c.n * sizeof(uint64_t))
            memcpy(<char*><size_t>rng_ctr.ctypes.data, c.rng_ctr, c.n * sizeof(uint64_t))
            memcpy(<char*><size_t>emit_seq.ctypes.data, c.emit_seq, c.n * sizeof(uint64_t))
            memcpy(<char*><size_t>next_time.ctypes.data, c.next_time, c.n * sizeof(double))
        return {"counts": counts, "events": events, "rng_key": rng_key, "rng_ctr": rng_ctr,
                "emit_seq": emit_seq, "next_time": next_time,
                "now": np.array([self._now], np.float64),
                "tallies": np.array([self._inject_seq, self._total_events()], np.uint64),
                "event_size": np.array([sizeof(Event)], np.int64)}

    def import_state(self, state):
        """Replace this engine's state with ``state`` from :meth:`export_state`
        of an engine of the same model size (any thread count).  The engine
        must be initialised and idle; the arrays are checked before anything
        changes (``ValueError`` naming what does not fit)."""
        import numpy as np
        cdef EngineCore* c = &self.core
        cdef lp_id_t i
        cdef int64_t off = 0, k, need, total = 0
        cdef const char* src
        cdef Event* grown
        self._check_idle()
        if not self._initialized:
            raise RuntimeError("import_state() before init()")
        if self._frozen:
            raise RuntimeError("import_state() while LPs are frozen")
        try:
            counts = np.ascontiguousarray(state["counts"], np.int64)
            events = np.ascontiguousarray(state["events"], np.uint8)
            arrays = {k2: np.ascontiguousarray(state[k2], dt) for k2, dt in
                      (("rng_key", np.uint64), ("rng_ctr", np.uint64), ("emit_seq", np.uint64),
                       ("next_time", np.float64))}
            now = np.asarray(state["now"], np.float64).reshape(-1)
            tallies = np.asarray(state["tallies"], np.uint64).reshape(-1)
            size = int(np.asarray(state["event_size"]).reshape(-1)[0])
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise ValueError(f"import_state(): not an engine state ({type(e).__name__}: {e})") from None
        if size != sizeof(Event):
            raise ValueError(f"import_state(): events of {size} bytes, this build's are {sizeof(Event)}")
        if counts.shape != (c.n,) or any(a.shape != (c.n,) for a in arrays.values()):
            raise ValueError(f"import_state(): a state of {counts.shape[0] if counts.ndim else 0} LPs, "
                             f"this engine has {c.n}")
        if (counts < 0).any() or (counts > c.max_pending_per_lp).any():
            raise ValueError("import_state(): pending-event counts out of range")
        total = int(counts.sum())
        if events.shape != (total * sizeof(Event),) or now.shape != (1,) or tallies.shape != (2,):
            raise ValueError("import_state(): the event bytes or the clock do not match the counts")
        for i in range(c.n):
            if c.inbox[i] != NULL:
                raise RuntimeError(f"import_state(): LP {i} has messages in flight")
        # Room first (nothing changes if memory runs out), then the copy.
        cdef const int64_t[::1] cnt = counts
        for i in range(c.n):
            need = cnt[i]
            if need > c.heaps[i].cap:
                grown = <Event*>seer_heap_realloc(c.heaps[i].data, need, sizeof(Event))
                if grown == NULL:
                    raise MemoryError(f"import_state(): no memory for LP {i}'s {need} events")
                c.heaps[i].data = grown
                c.heaps[i].cap = need
        src = <const char*><size_t>events.ctypes.data
        for i in range(c.n):
            k = cnt[i]
            if k:
                memcpy(c.heaps[i].data, src + off, k * sizeof(Event))
                off += k * sizeof(Event)
            c.heaps[i].size = k
        if c.n:
            memcpy(c.rng_key, <const char*><size_t>arrays["rng_key"].ctypes.data, c.n * sizeof(uint64_t))
            memcpy(c.rng_ctr, <const char*><size_t>arrays["rng_ctr"].ctypes.data, c.n * sizeof(uint64_t))
            memcpy(c.emit_seq, <const char*><size_t>arrays["emit_seq"].ctypes.data, c.n * sizeof(uint64_t))
            memcpy(c.next_time, <const char*><size_t>arrays["next_time"].ctypes.data, c.n * sizeof(double))
        self._now = now[0]
        self._inject_seq = <uint64_t>tallies[0]
        for k in range(c.max_threads):
            c.ts[k].events = 0
        c.ts[0].events = <int64_t>tallies[1]
        return None

    # --- per-LP state (snapshots of single copies: seer_envs._snapshot) ---------
    # Separate from export_state/import_state: a vector env saves and
    # restores some copies' LPs while the other copies stay as they are.

    def _lp_list(self, lps, what):
        import numpy as np
        a = np.asarray(lps)
        if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
            raise ValueError(f"{what}: lps must be a 1-d array of LP ids, got {lps!r}")
        a = a.astype(np.int64)
        if a.size and (a.min() < 0 or a.max() >= self.core.n):
            raise ValueError(f"{what}: LP ids must be in [0, {self.core.n}), got {a.min()}..{a.max()}")
        if np.unique(a).size != a.size:
            raise ValueError(f"{what}: LP ids repeat")
        return np.ascontiguousarray(a)

    def export_lps(self, lps):
        """The state of LPs ``lps`` (LP ids, in that order) as NumPy arrays:
        ``counts``, ``events`` (their pending events' raw bytes, LP by LP,
        in heap order), ``rng_key``, ``rng_ctr`` and ``emit_seq``, one entry
        per listed LP, and the engine's injection counter ``inject_seq``.  Between runs, nothing frozen (as :meth:`export_state`)."""
        import numpy as np
        cdef EngineCore* c = &self.core
        cdef int64_t j, k, total = 0, off = 0, m
        cdef lp_id_t i
        cdef char* out
        self._check_idle()
        if not self._initialized:
            raise RuntimeError("export_lps() before init(): there is no state yet")
        if self._frozen:
            raise RuntimeError("export_lps() while LPs are frozen (between freeze_all_but and thaw)")
        ids = self._lp_list(lps, "export_lps()")
        cdef const int64_t[::1] lp = ids
        m = ids.shape[0]
        counts = np.empty(m, np.int64)
        rng_key = np.empty(m, np.uint64)
        rng_ctr = np.empty(m, np.uint64)
        emit_seq = np.empty(m, np.uint64)
        cdef int64_t[::1] cnt = counts
        cdef uint64_t[::1] rk = rng_key, rc = rng_ctr, es = emit_seq
        for j in range(m):
            i = <lp_id_t>lp[j]
            if c.inbox[i] != NULL:
                raise RuntimeError(f"export_lps(): LP {i} has messages in flight (call it between runs)")
            cnt[j] = c.heaps[i].size
            total += c.heaps[i].size
            rk[j] = c.rng_key[i]
            rc[j] = c.rng_ctr[i]
            es[j] = c.emit_seq[i]
        events = np.empty(total * sizeof(Event), np.uint8)
        if total:
            out = <char*><size_t>events.ctypes.data
            for j in range(m):
                k = cnt[j]
                if k:
                    memcpy(out + off, c.heaps[lp[j]].data, k * sizeof(Event))
                    off += k * sizeof(Event)
        return {"counts": counts, "events": events, "rng_key": rng_key, "rng_ctr": rng_ctr,
                "emit_seq": emit_seq, "inject_seq": np.array([self._inject_seq], np.uint64)}

    def import_lps(self, lps, state, now=None, inject_seq=0):
        """Replace the state of LPs ``lps`` with ``state`` (the arrays of
        :meth:`export_lps`, one entry per listed LP; events already in heap
        order, with this engine's LP ids).  Everything is checked, and room
        made, before anything changes (``ValueError`` naming what does not
        fit, ``MemoryError``).  ``now``: the imported LPs' time (no later
        than their events); the engine's time becomes the earlier of its
        own and ``now`` (exactly ``now`` when ``lps`` is every LP), so the
        next run starts no later than their events.  The injection counter
        becomes at least ``inject_seq``, so events injected later still sort
        after the imported ones.  Other LPs are untouched.  Between runs only."""
        import numpy as np
        cdef EngineCore* c = &self.core
        cdef int64_t j, k, m, need, off = 0
        cdef lp_id_t i
        cdef const char* src
        cdef Event* grown
        self._check_idle()
        if not self._initialized:
            raise RuntimeError("import_lps() before init()")
        if self._frozen:
            raise RuntimeError("import_lps() while LPs are frozen")
        ids = self._lp_list(lps, "import_lps()")
        m = ids.shape[0]
        try:
            counts = np.ascontiguousarray(state["counts"], np.int64)
            events = np.ascontiguousarray(state["events"], np.uint8)
            arrays = [np.ascontiguousarray(state[k2], np.uint64) for k2 in ("rng_key", "rng_ctr", "emit_seq")]
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"import_lps(): not an LP state ({type(e).__name__}: {e})") from None
        if counts.shape != (m,) or any(a.shape != (m,) for a in arrays):
            raise ValueError(f"import_lps(): a state of {counts.shape[0] if counts.ndim else 0} LPs "
                             f"for {m} LP ids")
        if m and ((counts < 0).any() or (counts > c.max_pending_per_lp).any()):
            raise ValueError("import_lps(): pending-event counts out of range")
        if events.shape != (int(counts.sum()) * sizeof(Event),):
            raise ValueError("import_lps(): the event bytes do not match the counts")
        t_now = self._now if now is None else float(now)
        if isnan(t_now):
            raise ValueError("import_lps(): now is NaN")
        cdef const int64_t[::1] lp = ids
        cdef const int64_t[::1] cnt = counts
        for j in range(m):
            if c.inbox[lp[j]] != NULL:
                raise RuntimeError(f"import_lps(): LP {lp[j]} has messages in flight")
        for j in range(m):                  # room first: nothing changes if memory runs out
            i = <lp_id_t>lp[j]
            need = cnt[j]
            if need > c.heaps[i].cap:
                grown = <Event*>seer_heap_realloc(c.heaps[i].data, need, sizeof(Event))
                if grown == NULL:
                    raise MemoryError(f"import_lps(): no memory for LP {i}'s {need} events")
                c.heaps[i].data = grown
                c.heaps[i].cap = need
        src = <const char*><size_t>events.ctypes.data
        cdef const uint64_t[::1] rk = arrays[0], rc = arrays[1], es = arrays[2]
        for j in range(m):
            i = <lp_id_t>lp[j]
            k = cnt[j]
            if k:
                memcpy(c.heaps[i].data, src + off, k * sizeof(Event))
                off += k * sizeof(Event)
            c.heaps[i].size = k
            c.next_time[i] = heap_top_time(&c.heaps[i], INFINITY)
            c.rng_key[i] = rk[j]
            c.rng_ctr[i] = rc[j]
            c.emit_seq[i] = es[j]
        if m == c.n or t_now < self._now:
            self._now = t_now
        if <uint64_t>inject_seq > self._inject_seq:
            self._inject_seq = <uint64_t>inject_seq
        return None

    def lp_counters(self, lp):
        """(rng draws, events emitted, pending) of one LP."""
        self._check_idle()
        if isinstance(lp, bool) or not isinstance(lp, int):
            raise ValueError(f"lp must be an int, got {lp!r}")
        if not 0 <= lp < self.core.n:
            raise IndexError(lp)
        return (self.core.rng_ctr[lp], self.core.emit_seq[lp], self.core.heaps[lp].size)

    def _thread_stats(self):
        cdef EngineCore* c = &self.core
        cdef int t
        out = []
        for t in range(c.max_threads):
            s = &c.ts[t]
            out.append({"events": s.events, "lps_executed": s.lps_executed,
                        "inbox_pushes": s.pushes, "cas_retries": s.cas_retries,
                        "busy_s": s.busy_ns * 1e-9, "idle_s": s.idle_ns * 1e-9,
                        "peak_messages": s.arena.peak_nodes, "phases": s.phases})
        return out

    def _team_events(self):
        cdef int64_t total = 0
        cdef int t
        for t in range(self.core.max_threads):
            total += self.core.ts[t].events
        return total

    cdef int64_t _total_events(self):
        cdef int64_t total = 0
        cdef int t
        for t in range(self.core.max_threads):
            total += self.core.ts[t].events
        return total + self._retired_events

    def stats(self):
        """Cumulative runtime statistics since construction or reset_stats().

        Keys: ``events``, ``rounds`` (windows; in copy groups, every copy's
        windows summed), ``events_per_round``,
        ``max_events_per_round``, ``ready_per_round`` (mean executive-list
        length: the available parallelism), ``inbox_pushes``,
        ``cas_retries``, ``wall_s`` (time inside run_until), ``threads`` (a
        list of per-thread dicts: events, busy_s, idle_s, inbox_pushes,
        cas_retries, lps_executed, peak_messages, phases: the phases it
        worked in), ``busy_s`` and ``idle_s`` (per-thread lists),
        ``num_threads``, ``phases_opened`` (phases the caller opened to
        the team rather than ran alone), ``straggles`` (phases whose caller
        waited long for a member holding units, each followed by phases
        open to half the team for a while) and ``phase_cost_ns`` (the caller's
        running estimates: ns per executive-list entry, ``exec``, and per
        LP or message drained and planned, ``drain``; see
        :func:`phase_policy`).
        """
        threads = self._thread_stats()
        events = self._total_events()
        rounds = self.core.sh.rounds
        return {
            "events": events,
            "rounds": rounds,
            "events_per_round": events / rounds if rounds else 0.0,
            "max_events_per_round": self.core.sh.max_round_events,
            "ready_per_round": self.core.sh.ready_total / rounds if rounds else 0.0,
            "inbox_pushes": sum(t["inbox_pushes"] for t in threads) + self._retired_pushes,
            "cas_retries": sum(t["cas_retries"] for t in threads) + self._retired_retries,
            "wall_s": self._wall_s,
            "num_threads": self._num_threads,
            "busy_s": [t["busy_s"] for t in threads],
            "idle_s": [t["idle_s"] for t in threads],
            "threads": threads,
            "phases_opened": self.core.sh.opened,
            "straggles": self.core.sh.straggles,
            "phase_cost_ns": {"exec": self.core.sh.ns_exec, "drain": self.core.sh.ns_drain},
        }

    def counters(self):
        """(wall seconds inside run_until, events) since construction or
        reset_stats(): what ``stats()`` reports under ``wall_s`` and
        ``events``, without building its dicts (cheap enough to call every
        step)."""
        return self._wall_s, self._total_events()

    def thread_times(self):
        """(busy seconds, idle seconds) summed over the current team; cheap
        enough to call every step."""
        cdef int64_t busy = 0, idle = 0
        cdef int t
        for t in range(self.core.max_threads):
            busy += self.core.ts[t].busy_ns
            idle += self.core.ts[t].idle_ns
        return busy * 1e-9, idle * 1e-9

    def reset_stats(self):
        """Zero the statistics (not the simulation state)."""
        cdef int t
        cdef ThreadState* s
        self._check_idle()
        for t in range(self.core.max_threads):
            s = &self.core.ts[t]
            s.events = 0
            s.lps_executed = 0
            s.pushes = 0
            s.cas_retries = 0
            s.busy_ns = 0
            s.idle_ns = 0
            s.phases = 0
            s.arena.peak_nodes = 0
        self.core.sh.opened = 0
        self.core.sh.straggles = 0
        self.core.sh.rounds = 0
        self.core.sh.ready_total = 0
        self.core.sh.max_round_events = 0
        self.core.sh.last_events = 0
        self.core.sh.last_lps = 0
        self._retired_events = 0
        self._retired_pushes = 0
        self._retired_retries = 0
        self._wall_s = 0.0

    # --- helpers ------------------------------------------------------------

    def _check_time(self, value, name):
        try:
            t = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a number, got {value!r}") from None
        if isnan(t) or t < 0 or (isinf(t) and name != "t_end"):
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        return t

    def _check_usable(self):
        if self._failed:
            raise RuntimeError("this Engine stopped on a ContractViolation; its state is "
                               "undefined, create a new one")

    cdef int _first_error(self):
        # The error a serial run meets first (see _record_error): the
        # smallest key over the threads' records; -1 when none.
        cdef EngineCore* c = &self.core
        cdef int t, best = -1
        cdef ThreadState* s
        cdef ThreadState* b
        for t in range(c.max_threads):
            s = &c.ts[t]
            if s.err_code == 0:
                continue
            if best >= 0:
                b = &c.ts[best]
                if (s.err_class, s.key_time, s.key_src, s.key_seq, s.key_lp) >= \
                        (b.err_class, b.key_time, b.key_src, b.key_seq, b.key_lp):
                    continue
            best = t
        return best

    cdef int _raise_errors(self) except -1:
        cdef EngineCore* c = &self.core
        cdef int best
        cdef ThreadState* s
        if c.sh.abort == 0 and c.sh.stuck == 0:
            return 0
        self._failed = True
        # The error a serial run meets first, except that a round's limits
        # come between handling errors (class 0) and delivery errors (class
        # 1, whose messages were sent within the round).
        best = self._first_error()
        if best < 0 or c.ts[best].err_class == 1:
            if c.sh.msgs_over:
                raise ContractViolation(
                    "messages_full", f"{_REASONS[SEER_E_ARENA_FULL][1]}: the round sent "
                    f"{c.sh.msgs_over} cross-entity events, the cap is {c.sh.max_msgs}",
                    code=SEER_E_ARENA_FULL)
        if best < 0:
            if c.sh.stuck:
                T = c.sh.stuck_T
                raise ContractViolation(
                    "stuck_window", f"{_REASONS[SEER_E_STUCK][1]}: the earliest pending event "
                    f"is at t={T!r} and t + lookahead ({c.lookahead!r}) rounds back to t in "
                    f"floating point; the lookahead must exceed the time resolution at the "
                    f"horizon (about t * 2**-52)", time=T, now=T, code=SEER_E_STUCK)
            if c.sh.budget_hit:
                raise ContractViolation(
                    "event_budget", f"{_REASONS[SEER_E_EVENT_BUDGET][1]} "
                    f"({self._max_events_per_run}) before t_end={c.sh.t_end!r}: an event "
                    f"storm, or raise the budget", code=SEER_E_EVENT_BUDGET)
            raise AssertionError("the engine stopped with no error recorded")
        s = &c.ts[best]
        code = s.err_code
        reason, what = _reason_of(code, "handler")
        src = "the environment" if s.err_src == SEER_ENV_SOURCE else f"LP {s.err_src}"
        kind = s.err_kind
        msg = (f"{what}: {src}, handling an event at t={s.err_now!r}, scheduled an event of "
               f"kind {kind} for target LP {s.err_target} at t={s.err_time!r}")
        now = s.err_now
        if code == SEER_E_LOOKAHEAD:
            msg += (f", but cross-entity events must be at least lookahead={c.lookahead!r} "
                    f"ahead (t >= {s.err_now + c.lookahead!r})")
        elif code == SEER_E_BAD_TARGET and s.err_cross:
            msg += (f", but in copy groups (Engine.set_copy_groups) a copy's LPs may only "
                    f"send to LPs of their own copy")
        elif code == SEER_E_BAD_TARGET:
            msg += f", but LP ids run from 0 to {c.n - 1}"
        elif code == SEER_E_QUEUE_FULL and s.err_class == 1:
            now = None
            msg = (f"{what}: LP {s.err_target} would hold {s.err_count} pending events "
                   f"(max_pending_per_lp={c.max_pending_per_lp}) once this round's messages "
                   f"are delivered; the latest is an event of kind {kind} from {src} "
                   f"at t={s.err_time!r}")
        elif code == SEER_E_QUEUE_FULL:
            msg += f", but LP {s.err_target} already holds {c.max_pending_per_lp} (max_pending_per_lp)"
        elif code == SEER_E_NO_MEMORY:
            msg = (f"out of memory: {s.err_count} pending events on LP {s.key_lp} "
                   f"(the allocator refused to grow its queue or this thread's message arena; "
                   f"{src} was handling an event at t={s.err_now!r})")
        elif code == SEER_E_EVENT_BUDGET:
            msg = (f"{what} ({self._max_events_per_run}): LP {s.err_target} alone handled "
                   f"more within one window, the last at t={s.err_time!r} (an event storm: "
                   f"events that schedule others with no delay?)")
        elif code not in _REASONS:
            msg = (f"{what} while LP {s.err_target} handled an event of kind {kind} "
                   f"at t={s.err_time!r} (source {src})")
        exc = OutOfMemory if code == SEER_E_NO_MEMORY else ContractViolation
        raise exc(reason, msg, time=s.err_time, now=now,
                  source=None if s.err_src == SEER_ENV_SOURCE else s.err_src,
                  target=s.err_target, kind=kind, code=code)


cdef int _inject_one(EngineCore* c, lp_id_t lp, double time, int32_t kind, uint64_t seq,
                     int64_t index) noexcept nogil:
    cdef Event ev
    cdef int rc
    _env_event(&ev, time, kind, seq, lp, index)
    rc = heap_push(&c.heaps[lp], &ev, c.max_pending_per_lp)
    if rc == SEER_OK and time < c.next_time[lp]:
        c.next_time[lp] = time
    return rc


def rng_draws(seed, entity, count, dist="uniform", param=1.0):
    """Draw ``count`` numbers from entity ``entity``'s stream under ``seed``,
    exactly as a hook would (for tests and for reference implementations).

    ``dist`` is ``"uniform"`` ([0, 1)), ``"exponential"`` (mean ``param``),
    ``"integer"`` ([0, param)) or ``"bits"`` (raw 64-bit words).
    """
    cdef Ctx ctx
    cdef uint64_t ctr = 0
    cdef int64_t i
    if dist not in ("uniform", "exponential", "integer", "bits"):
        raise ValueError(f"unknown dist {dist!r}")
    ctx.rng_key = seer_rng_key(<uint64_t>seed, <uint64_t>entity)
    ctx.rng_ctr = &ctr
    out = []
    for i in range(count):
        if dist == "uniform":
            out.append(seer_uniform(&ctx))
        elif dist == "exponential":
            out.append(seer_exponential(&ctx, param))
        elif dist == "integer":
            out.append(seer_integer(&ctx, <uint64_t>param))
        else:
            out.append(seer_next_u64(&ctx))
    return out
