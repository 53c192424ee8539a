# SPDX-License-Identifier: BSD-3-Clause
"""The SEER event loop: conservative windows over per-LP queues, run by an
OpenMP team that stays alive across the phases of each round.

One round (all threads, separated by barriers):

1. **exec**: claim chunks of the executive list (ready LPs) with an atomic
   fetch-add and run each LP's events with ``time < W`` in (time, key)
   order.  Self events go straight into the LP's local heap; cross-LP events
   go into the target's CAS inbox, and the producer that makes an inbox
   non-empty records the target in its dirty list.
2. **drain**: each thread moves the inboxes it announced into local heaps.
3. **plan**: each thread reduces the earliest pending time over a static
   partition of LPs; every thread then computes the same
   ``T = min`` and ``W = min(T + lookahead, t_end)`` and collects its
   partition's LPs with pending events before ``W`` as its segment of the
   next executive list.

Why a persistent team with orphaned barriers rather than one ``prange`` per
phase: it keeps the per-round cost at three barriers, with no fork/join.
Why a full O(n) scan in plan rather than a global priority structure over
LPs: a parallel scan of one contiguous double array costs about a
nanosecond per LP and needs no synchronisation; a shared heap of LPs would
serialise every round.

Control returns to Python every ``slice_s`` seconds of wall time (between
rounds, with the queues consistent) so that Ctrl-C raises promptly.
"""

from cpython.exc cimport PyErr_CheckSignals
from cython.parallel cimport parallel, prange, threadid
from libc.math cimport INFINITY, isnan, isinf
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memset

from seer_runtime._omp cimport (seer_openmp_enabled, seer_omp_barrier,
                                seer_omp_get_num_threads,
                                seer_omp_get_max_threads)
from seer_runtime.contract cimport *
from seer_runtime.queue cimport *

from seer_runtime._errors import ContractViolation

cdef extern from "src/clock.h" nogil:
    int64_t seer_clock_ns()

cdef extern from "src/rng.h" nogil:
    uint64_t seer_fmix_a(uint64_t z)
    uint64_t seer_fmix_b(uint64_t z)

cdef enum:
    MAX_THREADS = 1024

DEF_MAX_PENDING_PER_LP = 1 << 22
DEF_MAX_MESSAGES_PER_ROUND = 1 << 24


def openmp_enabled():
    """True when the runtime was compiled with OpenMP."""
    return bool(seer_openmp_enabled())


def omp_max_threads():
    """OpenMP's default team size in this process (1 in a serial build)."""
    return seer_omp_get_max_threads()


# --- default hooks ------------------------------------------------------------

cdef int _noop_init(void* model, Ctx* ctx) noexcept nogil:
    return SEER_OK

cdef int _noop_event(void* model, Ctx* ctx, const Event* ev) noexcept nogil:
    return SEER_OK

cdef int _noop_final(void* model, Ctx* ctx) noexcept nogil:
    return SEER_OK


cdef class Scenario:
    """Base class of models on the runtime.

    A Cython subclass fills ``self.lptype`` with its hooks and points
    ``self.model`` at its state in ``__cinit__``; the hooks it leaves alone
    stay no-ops.  ``num_lps`` and ``lookahead`` (> 0, time units) are fixed
    at construction.
    """

    def __cinit__(self, *args, **kwargs):
        self.lptype.on_init = _noop_init
        self.lptype.on_event = _noop_event
        self.lptype.on_final = _noop_final
        self.model = NULL

    def __init__(self, num_lps, lookahead):
        self._set_shape(num_lps, lookahead)

    def _set_shape(self, num_lps, lookahead):
        if isinstance(num_lps, bool) or not isinstance(num_lps, int) or not 1 <= num_lps < SEER_ENV_SOURCE:
            raise ValueError(f"num_lps must be an int in [1, {SEER_ENV_SOURCE - 1}], got {num_lps!r}")
        lookahead = float(lookahead)
        if not lookahead > 0 or isinf(lookahead):
            raise ValueError(f"lookahead must be a finite number > 0, got {lookahead!r}")
        self.num_lps = num_lps
        self.lookahead = lookahead


def check_num_threads(num_threads):
    """Validate an explicit thread count (an int >= 1) and return it."""
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise ValueError(f"num_threads must be an int >= 1, got {num_threads!r}")
    if num_threads < 1:
        raise ValueError(f"num_threads must be >= 1, got {num_threads}")
    if num_threads > MAX_THREADS:
        raise ValueError(f"num_threads must be <= {MAX_THREADS}, got {num_threads}")
    return num_threads


_REASONS = {
    SEER_E_PAST: ("past", "event scheduled into the past"),
    SEER_E_LOOKAHEAD: ("lookahead", "cross-entity event under the lookahead"),
    SEER_E_BAD_TARGET: ("bad_target", "event for a target id that does not exist"),
    SEER_E_OUTBOX_FULL: ("outbox_full", f"more than {SEER_OUTBOX_CAPACITY} events emitted by one handler call"),
    SEER_E_QUEUE_FULL: ("queue_full", "an entity's pending events exceed max_pending_per_lp"),
    SEER_E_ARENA_FULL: ("messages_full", "one thread's in-flight messages in a round exceed max_messages_per_round"),
}


# --- worker phases (all nogil, all per thread) --------------------------------

# LPs are split into nt contiguous partitions; thread k owns partition k:
# it plans it, drains its inboxes and executes its ready LPs first, so an
# LP's state stays in one core's cache unless another thread steals it.
cdef inline int64_t _part_lo(int64_t n, int nt, int k) noexcept nogil:
    return n * k // nt

cdef inline void _partition(int64_t n, int nt, int tid, int64_t* lo, int64_t* hi) noexcept nogil:
    lo[0] = n * tid // nt
    hi[0] = n * (tid + 1) // nt

# The k with _part_lo(k) <= lp < _part_lo(k + 1).
cdef inline int _owner(int64_t lp, int nt, int64_t n) noexcept nogil:
    return <int>(((lp + 1) * nt - 1) // n)


cdef inline void _barrier(ThreadState* me) noexcept nogil:
    cdef int64_t t0 = seer_clock_ns()
    seer_omp_barrier()
    me.idle_ns += seer_clock_ns() - t0


cdef void _record_error(EngineCore* c, ThreadState* me, int code, double now,
                        double time, lp_id_t src, lp_id_t target, int32_t kind) noexcept nogil:
    if me.err_code == 0:
        me.err_code = code
        me.err_now = now
        me.err_time = time
        me.err_src = src
        me.err_target = target
        me.err_kind = kind
    # release: publishes the error record; pairs with the acquire polls.
    seer_store_i32_release(&c.sh.abort, 1)


cdef inline void _make_ctx(EngineCore* c, ThreadState* me, Ctx* ctx, lp_id_t lp, int tid) noexcept nogil:
    ctx.lp = lp
    ctx.thread = tid
    ctx.rng_key = c.rng_key[lp]
    ctx.rng_ctr = &c.rng_ctr[lp]
    ctx.out.events = me.outbox
    ctx.out.count = 0


# Validate and deliver what one hook call emitted.  Runs on the thread that
# owns ctx.lp for this round.
cdef int _dispatch(EngineCore* c, ThreadState* me, Ctx* ctx) noexcept nogil:
    cdef int32_t i
    cdef int rc, k
    cdef Event* e
    cdef InboxNode* node
    cdef bint was_empty = False
    cdef lp_id_t lp = ctx.lp
    for i in range(ctx.out.count):
        e = &ctx.out.events[i]
        if not (e.time >= ctx.now):
            _record_error(c, me, SEER_E_PAST, ctx.now, e.time, lp, e.target, e.kind)
            return SEER_E_PAST
        if e.target >= c.n:
            _record_error(c, me, SEER_E_BAD_TARGET, ctx.now, e.time, lp, e.target, e.kind)
            return SEER_E_BAD_TARGET
        e.src = lp
        e.seq = c.emit_seq[lp]
        c.emit_seq[lp] += 1
        if e.target == lp:
            rc = heap_push(&c.heaps[lp], e, c.max_pending_per_lp)
            if rc != SEER_OK:
                _record_error(c, me, rc, ctx.now, e.time, lp, e.target, e.kind)
                return rc
        else:
            if not (e.time >= ctx.now + c.lookahead):
                _record_error(c, me, SEER_E_LOOKAHEAD, ctx.now, e.time, lp, e.target, e.kind)
                return SEER_E_LOOKAHEAD
            node = arena_alloc(&me.arena)
            if node == NULL:
                _record_error(c, me, SEER_E_ARENA_FULL, ctx.now, e.time, lp, e.target, e.kind)
                return SEER_E_ARENA_FULL
            node.ev = e[0]
            me.cas_retries += inbox_push(&c.inbox[e.target], node, &was_empty)
            me.pushes += 1
            if was_empty:
                k = _owner(e.target, me.team, c.n)
                me.dirty[_part_lo(c.n, me.team, k) + me.ndirty[k]] = e.target
                me.ndirty[k] += 1
    return SEER_OK


# Run every event of `lp` with time < W.  Returns 0 or an error code.
cdef int _exec_lp(EngineCore* c, ThreadState* me, lp_id_t lp, double W, int tid,
                  int64_t* nevents) noexcept nogil:
    cdef LocalHeap* h = &c.heaps[lp]
    cdef Ctx ctx
    cdef Event ev
    cdef int rc
    _make_ctx(c, me, &ctx, lp, tid)
    while h.size > 0 and h.data[0].time < W:
        heap_pop(h, &ev)
        ctx.now = ev.time
        ctx.out.count = 0
        rc = c.lptype.on_event(c.model, &ctx, &ev)
        if rc != SEER_OK:
            _record_error(c, me, rc, ev.time, ev.time, ev.src, lp, ev.kind)
            return rc
        if ctx.out.count > 0:
            rc = _dispatch(c, me, &ctx)
            if rc != SEER_OK:
                return rc
        nevents[0] += 1
    c.next_time[lp] = heap_top_time(h, INFINITY)
    return SEER_OK


# Claim chunks of one segment of the executive list; returns 1 on error.
cdef int _exec_segment(EngineCore* c, ThreadState* me, int seg, int64_t chunk, double W,
                       int tid, int64_t* nevents) noexcept nogil:
    cdef ThreadState* owner = &c.ts[seg]
    cdef int64_t total = owner.nready, start, end, idx
    cdef int64_t* cursor = &c.sh.cursor[8 * seg]
    while seer_load_i32_relaxed(&c.sh.abort) == 0:
        start = seer_fetch_add_i64_relaxed(cursor, chunk)
        if start >= total:
            return 0
        end = start + chunk
        if end > total:
            end = total
        for idx in range(start, end):
            if _exec_lp(c, me, owner.ready[idx], W, tid, nevents) != SEER_OK:
                return 1
        me.lps_executed += end - start
    return 1


cdef void _exec_phase(EngineCore* c, ThreadState* me, double W, int tid, int nt) noexcept nogil:
    cdef int64_t total = 0, chunk, nevents = 0
    cdef int k
    for k in range(nt):
        total += c.ts[k].nready
    if tid == 0:
        c.sh.ready_total += total
    # Chunks small enough to balance, large enough that a claim counter is
    # not touched per LP.
    chunk = total // (8 * nt)
    if chunk < 1:
        chunk = 1
    elif chunk > 64:
        chunk = 64
    # Own segment first, then steal from the others in ring order.
    for k in range(nt):
        if _exec_segment(c, me, (tid + k) % nt, chunk, W, tid, &nevents):
            break
    me.events += nevents


# Drain the inboxes of this thread's own partition that any producer
# announced this round.
cdef void _drain_phase(EngineCore* c, ThreadState* me, int tid, int nt) noexcept nogil:
    cdef int64_t j, base = _part_lo(c.n, nt, tid)
    cdef int p, rc
    cdef lp_id_t lp
    cdef InboxNode* node
    cdef LocalHeap* h
    cdef ThreadState* prod
    for p in range(nt):
        prod = &c.ts[p]
        for j in range(prod.ndirty[tid]):
            lp = prod.dirty[base + j]
            h = &c.heaps[lp]
            node = inbox_take_all_lifo(&c.inbox[lp])
            while node != NULL:
                rc = heap_push(h, &node.ev, c.max_pending_per_lp)
                if rc != SEER_OK:
                    _record_error(c, me, rc, node.ev.time, node.ev.time, node.ev.src, lp, node.ev.kind)
                    break
                node = node.next
            c.next_time[lp] = heap_top_time(h, INFINITY)


# Plan the next window.  Called right after this thread drained its own
# partition (no barrier needed in between: only this thread writes its
# partition's next_time during the drain).  Returns 1 when the run must stop,
# identically on every thread.
cdef int _plan_phase(EngineCore* c, ThreadState* me, int tid, int nt, int check_deadline,
                     double* W_out) noexcept nogil:
    cdef int64_t lo, hi, lp, j, n, total_events
    cdef double m = INFINITY, t, T, W, L = c.lookahead
    cdef int k
    cdef int stop
    cdef lp_id_t* cand = me.ready
    # One scan: the partition's earliest time, and as candidates every LP
    # earlier than (running min + lookahead).  The running min only falls
    # and the global T is at most the final one, so the candidates hold
    # every LP with work before W = min(T + lookahead, t_end).
    _partition(c.n, nt, tid, &lo, &hi)
    n = 0
    for lp in range(lo, hi):
        t = c.next_time[lp]
        if t < m:
            m = t
        if t < m + L:
            cand[n] = <lp_id_t>lp
            n += 1
    me.local_min = m
    c.sh.cursor[8 * tid] = 0     # every claim of the last exec is done
    if tid == 0:
        c.sh.deadline_hit = check_deadline and seer_clock_ns() >= c.sh.deadline_ns
        total_events = 0
        for k in range(nt):
            total_events += c.ts[k].events
        if total_events - c.sh.last_events > c.sh.max_round_events:
            c.sh.max_round_events = total_events - c.sh.last_events
        c.sh.last_events = total_events
    _barrier(me)
    # Every drain of the round is done: this thread's messages and dirty
    # lists can start over.
    arena_reset(&me.arena)
    for k in range(nt):
        me.ndirty[k] = 0
    T = INFINITY
    for k in range(nt):
        if c.ts[k].local_min < T:
            T = c.ts[k].local_min
    W = T + L
    if W > c.sh.t_end:
        W = c.sh.t_end
    stop = (not (T < c.sh.t_end)) or c.sh.abort != 0 or c.sh.deadline_hit != 0
    me.nready = 0
    if not stop:
        for j in range(n):
            if c.next_time[cand[j]] < W:
                cand[me.nready] = cand[j]
                me.nready += 1
    if tid == 0:
        c.sh.finished = not (T < c.sh.t_end)
        if not stop:
            c.sh.rounds += 1
    _barrier(me)
    W_out[0] = W
    return stop


cdef void _run_worker(EngineCore* c, int tid, int nt) noexcept nogil:
    cdef ThreadState* me = &c.ts[tid]
    cdef int64_t t_start = seer_clock_ns()
    cdef int64_t idle0 = me.idle_ns
    cdef double W
    cdef int stop
    me.team = nt
    stop = _plan_phase(c, me, tid, nt, 0, &W)
    # Three barriers per round: one after exec, two in plan.
    while not stop:
        _exec_phase(c, me, W, tid, nt)
        _barrier(me)
        _drain_phase(c, me, tid, nt)
        stop = _plan_phase(c, me, tid, nt, 1, &W)
    me.busy_ns += (seer_clock_ns() - t_start) - (me.idle_ns - idle0)


cdef void _init_worker(EngineCore* c, int tid, int nt, double t0) noexcept nogil:
    cdef ThreadState* me = &c.ts[tid]
    cdef int64_t lo, hi, lp
    cdef Ctx ctx
    cdef int rc, k
    me.team = nt
    _partition(c.n, nt, tid, &lo, &hi)
    for lp in range(lo, hi):
        if seer_load_i32_relaxed(&c.sh.abort) != 0:
            break
        _make_ctx(c, me, &ctx, <lp_id_t>lp, tid)
        ctx.now = t0
        rc = c.lptype.on_init(c.model, &ctx)
        if rc != SEER_OK:
            _record_error(c, me, rc, t0, t0, <lp_id_t>lp, <lp_id_t>lp, -1)
            break
        if ctx.out.count > 0 and _dispatch(c, me, &ctx) != SEER_OK:
            break
    _barrier(me)
    _drain_phase(c, me, tid, nt)
    _barrier(me)
    for lp in range(lo, hi):
        c.next_time[lp] = heap_top_time(&c.heaps[lp], INFINITY)
    for k in range(nt):
        me.ndirty[k] = 0
    arena_reset(&me.arena)


cdef void _final_worker(EngineCore* c, int tid, int nt, double now) noexcept nogil:
    cdef ThreadState* me = &c.ts[tid]
    cdef int64_t lo, hi, lp
    cdef Ctx ctx
    cdef int rc
    _partition(c.n, nt, tid, &lo, &hi)
    for lp in range(lo, hi):
        _make_ctx(c, me, &ctx, <lp_id_t>lp, tid)
        ctx.now = now
        rc = c.lptype.on_final(c.model, &ctx)
        if rc != SEER_OK:
            _record_error(c, me, rc, now, now, <lp_id_t>lp, <lp_id_t>lp, -1)
            break


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
        Cap on the cross-LP events one thread sends in one round; exceeding
        it raises :class:`ContractViolation` (reason ``"messages_full"``).
    """

    def __cinit__(self, Scenario scenario not None, num_threads=1, seed=0,
                  max_pending_per_lp=DEF_MAX_PENDING_PER_LP,
                  max_messages_per_round=DEF_MAX_MESSAGES_PER_ROUND):
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
            # One cursor per segment, 64 bytes apart (no false sharing).
            c.sh.cursor = <int64_t*>calloc(8 * MAX_THREADS, sizeof(int64_t))
            if c.sh.cursor == NULL:
                raise MemoryError()
        if (c.heaps == NULL or c.inbox == NULL or c.next_time == NULL or c.rng_key == NULL
                or c.rng_ctr == NULL or c.emit_seq == NULL or c.sh == NULL):
            raise MemoryError()
        for i in range(c.n):
            c.next_time[i] = INFINITY
            c.rng_key[i] = seer_rng_key(<uint64_t>seed, i)
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
        # Statistics are per thread: keep the old team's totals.
        old = self._thread_stats()
        self._retired_events += sum(t["events"] for t in old)
        self._retired_pushes += sum(t["inbox_pushes"] for t in old)
        self._retired_retries += sum(t["cas_retries"] for t in old)
        self._free_threads()
        self._alloc_threads(value)

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
    def initialized(self):
        return bool(self._initialized)

    # --- running ------------------------------------------------------------

    def init(self, start_time=0.0):
        """Call every LP's ``on_init`` at ``start_time`` (once per engine)."""
        cdef double t0 = self._check_time(start_time, "start_time")
        cdef EngineCore* c = &self.core
        cdef int P = self._num_threads
        cdef int tid
        if self._initialized:
            raise RuntimeError("Engine.init() was already called; create a new Engine to restart")
        self._check_usable()
        self._initialized = True
        self._now = t0
        with nogil, parallel(num_threads=P):
            tid = threadid()
            _init_worker(c, tid, seer_omp_get_num_threads(), t0)
        self._raise_errors()

    def run_until(self, t_end):
        """Run every event with ``time < t_end``; later events stay pending.

        Returns the number of events executed by this call.  Raises
        :class:`ContractViolation` when a hook breaks the contract and
        ``KeyboardInterrupt`` promptly on Ctrl-C (the queues stay
        consistent, so the run can be continued).
        """
        cdef double t = self._check_time(t_end, "t_end")
        cdef EngineCore* c = &self.core
        cdef int P = self._num_threads
        cdef int tid
        cdef int64_t before = self._total_events(), t_start
        self._check_usable()
        if not self._initialized:
            self.init(self._now)
        if t < self._now:
            raise ValueError(f"t_end={t!r} is before the engine's current time {self._now!r}")
        c.sh.t_end = t
        t_start = seer_clock_ns()
        try:
            while True:
                c.sh.deadline_ns = seer_clock_ns() + <int64_t>(self._slice_s * 1e9)
                c.sh.finished = 0
                with nogil, parallel(num_threads=P):
                    tid = threadid()
                    _run_worker(c, tid, seer_omp_get_num_threads())
                self._raise_errors()
                if c.sh.finished:
                    break
                PyErr_CheckSignals()
        finally:
            self._wall_s += (seer_clock_ns() - t_start) * 1e-9
        self._now = t
        return self._total_events() - before

    def finalize(self):
        """Call every LP's ``on_final`` hook (at the current time)."""
        cdef EngineCore* c = &self.core
        cdef int P = self._num_threads
        cdef int tid
        cdef double now = self._now
        self._check_usable()
        with nogil, parallel(num_threads=P):
            tid = threadid()
            _final_worker(c, tid, seer_omp_get_num_threads(), now)
        self._raise_errors()

    cdef int inject_range(self, sim_time_t time, int32_t kind, lp_id_t lo,
                          lp_id_t hi) except -1:
        cdef EngineCore* c = &self.core
        cdef int P = self._num_threads
        cdef int64_t lp
        cdef int64_t failed = -1
        cdef Event ev
        cdef uint64_t seq
        self._check_usable()
        if not self._initialized:
            self.init(self._now)
        if not (time >= self._now) or isinf(time):
            raise ValueError(f"cannot inject at time {time!r}: the engine is at {self._now!r}")
        if hi > c.n or lo > hi:
            raise ValueError(f"bad LP range [{lo}, {hi}) for {c.n} LPs")
        seq = self._inject_seq
        self._inject_seq += 1
        with nogil:
            for lp in prange(<int64_t>lo, <int64_t>hi, num_threads=P, schedule="static"):
                if _inject_one(c, <lp_id_t>lp, time, kind, seq, lp - lo) != SEER_OK:
                    failed = lp
        if failed >= 0:
            raise ContractViolation(
                "queue_full", f"injecting kind {kind} at t={time!r} into LP {failed}: "
                f"{_REASONS[SEER_E_QUEUE_FULL][1]}", time=time, now=self._now,
                source=None, target=failed, kind=kind)
        return 0

    def inject(self, time, int kind, lo=0, hi=None):
        """Inject one event of ``kind`` at ``time`` into each LP in ``[lo, hi)``.

        Injected events come from the environment (source ``SEER_ENV_SOURCE``),
        carry ``data.i[0] = lp - lo`` and sort after LP-emitted events at the
        same time.  Used for action events at step starts.
        """
        cdef double t = self._check_time(time, "time")
        if hi is None:
            hi = self.core.n
        if not (0 <= lo <= hi <= self.core.n):
            raise ValueError(f"bad LP range [{lo}, {hi}) for {self.core.n} LPs")
        self.inject_range(t, kind, lo, hi)

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
        call their ``on_init`` (in LP order, on this thread).  The model's own
        state of those LPs is the caller's to restore first.  Events emitted
        by these ``on_init`` calls must target LPs inside ``[lo, hi)`` (copies
        never interact): anything else raises :class:`ContractViolation`.
        The engine's time becomes ``min(now, start_time)``; other LPs' events
        are untouched.  Call between runs only."""
        cdef double t0 = self._check_time(start_time, "start_time")
        cdef EngineCore* c = &self.core
        cdef int64_t a, b
        cdef int rc
        cdef lp_id_t bad_src = 0, bad_target = 0
        cdef int32_t bad_kind = -1
        cdef double bad_time = 0.0
        cdef Event* outbox
        self._check_usable()
        if not self._initialized:
            raise RuntimeError("reset_lps() needs an initialised engine: call init() first")
        a, b = self._check_range(lo, hi)
        outbox = <Event*>malloc(SEER_OUTBOX_CAPACITY * sizeof(Event))
        if outbox == NULL:
            raise MemoryError()
        try:
            with nogil:
                rc = _reset_range(c, <lp_id_t>a, <lp_id_t>b, t0, outbox, &bad_src,
                                  &bad_target, &bad_kind, &bad_time)
        finally:
            free(outbox)
        if rc != SEER_OK:
            self._failed = True
            if rc in _REASONS:
                reason, what = _REASONS[rc]
            else:
                reason, what = "model", f"the model's on_init returned error code {rc}"
            msg = (f"{what}: LP {bad_src}, restarted at t={t0!r}, scheduled an event of kind "
                   f"{bad_kind} for target LP {bad_target} at t={bad_time!r}")
            if rc == SEER_E_BAD_TARGET:
                msg += f", but a restarted range [{a}, {b}) may only schedule events inside itself"
            elif rc == SEER_E_LOOKAHEAD:
                msg += f", under the lookahead {c.lookahead!r}"
            raise ContractViolation(reason, msg, time=bad_time, now=t0, source=bad_src,
                                    target=bad_target, kind=bad_kind, code=rc)
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
        cdef double tt = self._check_time(t, "t")
        self._check_usable()
        if tt > self._now:
            raise ValueError(f"rewind: t={tt!r} is after the engine's current time {self._now!r}")
        first = self.next_event_time()
        if first < tt:
            raise ValueError(f"rewind: an event is pending at t={first!r}, before t={tt!r}")
        self._now = tt
        return None

    def inject_blocks(self, time, int kind, starts, count):
        """Inject one event of ``kind`` at ``time`` into each LP of every block
        ``[s, s + count)`` for ``s`` in ``starts``, with payload word
        ``i[0] = lp - s`` and one injection sequence number for the call (the
        per-copy form of :meth:`inject`: within a copy, injected events keep
        their relative order)."""
        cdef double t = self._check_time(time, "time")
        cdef EngineCore* c = &self.core
        cdef int P = self._num_threads
        cdef int64_t nb, cnt, k, idx, total, failed = -1
        cdef uint64_t seq
        cdef int64_t[::1] st
        import numpy as np
        st = np.ascontiguousarray(starts, dtype=np.int64).reshape(-1)
        nb = st.shape[0]
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"count must be an int >= 0, got {count!r}")
        cnt = count
        self._check_usable()
        if not self._initialized:
            self.init(self._now)
        if not (t >= self._now):
            raise ValueError(f"cannot inject at time {t!r}: the engine is at {self._now!r}")
        for k in range(nb):
            if st[k] < 0 or st[k] + cnt > c.n:
                raise ValueError(f"bad LP block [{st[k]}, {st[k] + cnt}) for {c.n} LPs")
        total = nb * cnt
        if total == 0:
            return None
        seq = self._inject_seq
        self._inject_seq += 1
        with nogil:
            for idx in prange(total, num_threads=P, schedule="static"):
                if _inject_one(c, <lp_id_t>(st[idx // cnt] + idx % cnt), t, kind, seq,
                               idx % cnt) != SEER_OK:
                    failed = st[idx // cnt] + idx % cnt
        if failed >= 0:
            raise ContractViolation(
                "queue_full", f"injecting kind {kind} at t={t!r} into LP {failed}: "
                f"{_REASONS[SEER_E_QUEUE_FULL][1]}", time=t, now=self._now,
                source=None, target=failed, kind=kind)
        return None

    def freeze_all_but(self, starts, count):
        """Until :meth:`thaw`: only LPs in the blocks ``[s, s + count)`` for
        ``s`` in ``starts`` run (``count``: an int, or one per block); every other LP's events stay pending,
        untouched, whatever a run's end time.  A vector env runs copies that
        are at different step counts one group at a time with this (each
        group at its own times, after :meth:`rewind`).  The blocks must not
        exchange events with frozen LPs.  Between runs only."""
        cdef EngineCore* c = &self.core
        cdef int64_t lp, k
        cdef unsigned char[::1] keep
        import numpy as np
        st = np.ascontiguousarray(starts, dtype=np.int64).reshape(-1)
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
        return None

    def thaw(self):
        """Undo :meth:`freeze_all_but`: every LP's earliest pending time is
        taken from its queue again.  Idempotent; between runs only."""
        cdef EngineCore* c = &self.core
        cdef int64_t lp
        for lp in range(c.n):
            c.next_time[lp] = heap_top_time(&c.heaps[lp], INFINITY)
        return None

    def _check_range(self, lo, hi):
        for name, v in (("lo", lo), ("hi", hi)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"{name} must be an int, got {v!r}")
        if not 0 <= lo <= hi <= self.core.n:
            raise ValueError(f"bad LP range [{lo}, {hi}) for {self.core.n} LPs")
        return lo, hi

    # --- inspection -----------------------------------------------------------

    def pending(self):
        """Number of pending events over all LPs."""
        cdef int64_t total = 0
        cdef lp_id_t i
        for i in range(self.core.n):
            total += self.core.heaps[i].size
        return total

    def next_event_time(self):
        """Earliest pending event time (inf when none)."""
        cdef double m = INFINITY
        cdef lp_id_t i
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
        for i in range(c.n):
            s = 0
            for j in range(c.heaps[i].size):
                s += _event_hash(&c.heaps[i].data[j])
            lh = seer_fmix_a(s ^ (<uint64_t>c.heaps[i].size << 40) ^ i)
            lh = seer_fmix_b(lh ^ c.rng_ctr[i])
            lh = seer_fmix_a(lh ^ c.emit_seq[i])
            h = seer_fmix_b(h ^ lh) + 0x9e3779b97f4a7c15ULL
        return h

    def lp_counters(self, lp):
        """(rng draws, events emitted, pending) of one LP."""
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
                        "peak_messages": s.arena.peak_nodes})
        return out

    cdef int64_t _total_events(self):
        cdef int64_t total = 0
        cdef int t
        for t in range(self.core.max_threads):
            total += self.core.ts[t].events
        return total + self._retired_events

    def stats(self):
        """Cumulative runtime statistics since construction or reset_stats().

        Keys: ``events``, ``rounds``, ``events_per_round``,
        ``max_events_per_round``, ``ready_per_round`` (mean executive-list
        length: the available parallelism), ``inbox_pushes``,
        ``cas_retries``, ``wall_s`` (time inside run_until), ``threads`` (a
        list of per-thread dicts: events, busy_s, idle_s, inbox_pushes,
        cas_retries, lps_executed, peak_messages), ``busy_s`` and ``idle_s``
        (per-thread lists), ``num_threads``.
        """
        threads = self._thread_stats()
        events = sum(t["events"] for t in threads) + self._retired_events
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
        }

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
        for t in range(self.core.max_threads):
            s = &self.core.ts[t]
            s.events = 0
            s.lps_executed = 0
            s.pushes = 0
            s.cas_retries = 0
            s.busy_ns = 0
            s.idle_ns = 0
            s.arena.peak_nodes = 0
        self.core.sh.rounds = 0
        self.core.sh.ready_total = 0
        self.core.sh.max_round_events = 0
        self.core.sh.last_events = 0
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

    cdef int _raise_errors(self) except -1:
        cdef EngineCore* c = &self.core
        cdef int t, best = -1
        cdef ThreadState* s
        if c.sh.abort == 0:
            return 0
        # Report the earliest error (by time, then source) so the message
        # does not depend on which thread met which error first.
        for t in range(c.max_threads):
            s = &c.ts[t]
            if s.err_code != 0 and (best < 0 or (s.err_now, s.err_src) < (c.ts[best].err_now, c.ts[best].err_src)):
                best = t
        self._failed = True
        s = &c.ts[best]
        code = s.err_code
        if code in _REASONS:
            reason, what = _REASONS[code]
        else:
            reason, what = "model", f"the model's handler returned error code {code}"
        src = "the environment" if s.err_src == SEER_ENV_SOURCE else f"LP {s.err_src}"
        kind = s.err_kind
        msg = (f"{what}: {src}, handling an event at t={s.err_now!r}, scheduled an event of "
               f"kind {kind} for target LP {s.err_target} at t={s.err_time!r}")
        if code == SEER_E_LOOKAHEAD:
            msg += (f", but cross-entity events must be at least lookahead={c.lookahead!r} "
                    f"ahead (t >= {s.err_now + c.lookahead!r})")
        elif code == SEER_E_BAD_TARGET:
            msg += f", but LP ids run from 0 to {c.n - 1}"
        elif code not in _REASONS:
            msg = (f"{what} while LP {s.err_target} handled an event of kind {kind} "
                   f"at t={s.err_time!r} (source {src})")
        raise ContractViolation(reason, msg, time=s.err_time, now=s.err_now,
                                source=None if s.err_src == SEER_ENV_SOURCE else s.err_src,
                                target=s.err_target, kind=kind, code=code)


cdef int _inject_one(EngineCore* c, lp_id_t lp, double time, int32_t kind, uint64_t seq,
                     int64_t index) noexcept nogil:
    cdef Event ev
    cdef int rc
    memset(&ev, 0, sizeof(Event))
    ev.time = time
    ev.seq = seq
    ev.src = SEER_ENV_SOURCE
    ev.target = lp
    ev.kind = kind
    ev.data.i[0] = index
    rc = heap_push(&c.heaps[lp], &ev, c.max_pending_per_lp)
    if rc == SEER_OK and time < c.next_time[lp]:
        c.next_time[lp] = time
    return rc


# Restart LPs [lo, hi) serially (Engine.reset_lps): the same emission
# rules as _dispatch, with every target confined to the range.
cdef int _reset_range(EngineCore* c, lp_id_t lo, lp_id_t hi, double t0, Event* outbox,
                      lp_id_t* bad_src, lp_id_t* bad_target, int32_t* bad_kind,
                      double* bad_time) noexcept nogil:
    cdef lp_id_t lp
    cdef int32_t i
    cdef int rc
    cdef Ctx ctx
    cdef Event* e
    for lp in range(lo, hi):
        c.heaps[lp].size = 0
        c.rng_ctr[lp] = 0
        c.emit_seq[lp] = 0
        c.next_time[lp] = INFINITY
    for lp in range(lo, hi):
        ctx.lp = lp
        ctx.thread = 0
        ctx.rng_key = c.rng_key[lp]
        ctx.rng_ctr = &c.rng_ctr[lp]
        ctx.out.events = outbox
        ctx.out.count = 0
        ctx.now = t0
        bad_src[0] = lp
        bad_target[0] = lp
        bad_time[0] = t0
        rc = c.lptype.on_init(c.model, &ctx)
        if rc != SEER_OK:
            return rc
        for i in range(ctx.out.count):
            e = &outbox[i]
            bad_target[0] = e.target
            bad_kind[0] = e.kind
            bad_time[0] = e.time
            if not (e.time >= t0):
                return SEER_E_PAST
            if e.target < lo or e.target >= hi:
                return SEER_E_BAD_TARGET
            if e.target != lp and not (e.time >= t0 + c.lookahead):
                return SEER_E_LOOKAHEAD
            e.src = lp
            e.seq = c.emit_seq[lp]
            c.emit_seq[lp] += 1
            rc = heap_push(&c.heaps[e.target], e, c.max_pending_per_lp)
            if rc != SEER_OK:
                return rc
            if e.time < c.next_time[e.target]:
                c.next_time[e.target] = e.time
    return SEER_OK


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
