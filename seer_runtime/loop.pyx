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
taking whole copies and running each copy's own windows
(``_copy_groups.pxi``; docs/runtime.md, "Copies in groups").

Files (included textually: one C module):

- ``_round.pxi``: the round core (an LP's events, dispatch, drain, plan, init);
- ``_phases.pxi``: the phases and who runs them (phase policy, stragglers,
  the round driver, the inject and restart units of the copies API);
- ``_copy_groups.pxi``: a run slice as one phase of whole copies;
- ``_team.pxi``: team calls and ``seer_parallel_for``;
- ``_hooks.pxi``: the tuning and test hooks (phase and wait policies, the
  team's spreading and yields, the test hooks);
- ``_state.pxi``: state export and import, each imported event checked;
- this file: the Python ``Engine`` (runs, the copies API, statistics).
"""

from cpython.exc cimport PyErr_CheckSignals
from libc.math cimport INFINITY, isnan, isinf
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, INT64_MAX
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memcpy, memset

from seer_runtime._omp cimport seer_openmp_enabled, seer_omp_get_max_threads
from seer_runtime.atomics cimport (seer_fetch_add_i64_relaxed, seer_fetch_min_i64_relaxed,
                                   seer_load_i64_relaxed, seer_load_i32_relaxed,
                                   seer_store_i32_relaxed, seer_prefetch, seer_prefetch_w,
                                   seer_claim_front, seer_claim_back)
from seer_runtime.contract cimport (Ctx, Event, sim_time_t, lp_id_t, seer_rng_key,
                                    seer_uniform, seer_exponential, seer_integer,
                                    seer_next_u64, SEER_ENV_SOURCE, SEER_OUTBOX_CAPACITY,
                                    SEER_OK, SEER_E_PAST, SEER_E_LOOKAHEAD,
                                    SEER_E_BAD_TARGET, SEER_E_OUTBOX_FULL, SEER_E_QUEUE_FULL,
                                    SEER_E_ARENA_FULL, SEER_E_NO_MEMORY, SEER_E_EVENT_BUDGET,
                                    SEER_E_STUCK)
from seer_runtime.scenario cimport (CopyEnd, Scenario, seer_range_fn, seer_install_parallel_for)
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
    enum:
        SEER_LIVE_OFF
        SEER_LIVE_ROUNDS
        SEER_LIVE_GROUPS
    int seer_team_parallel()
    int64_t seer_test_join_delay_ns
    void seer_sleep_ns(int64_t d)
    void seer_spin_set_max(int kind, int64_t ns)
    int64_t seer_spin_get_max(int kind)
    void seer_spread_set(int on)
    int seer_spread_get()
    int64_t seer_spread_moves
    void seer_yields_set(int which, int n)
    int seer_yields_get(int which)

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


# The engine in files by concern (textual includes: one C module, so nothing
# changes but the layout):
include "_round.pxi"
include "_phases.pxi"
include "_copy_groups.pxi"
include "_team.pxi"
include "_hooks.pxi"


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
        if c.spare != NULL:
            for i in range(c.n):
                heap_free(&c.spare[i])
        free(c.spare)
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
        """Test hook (``_hooks.pxi``, ``_engine_test_sleep``): worker ``tid``
        sleeps ``sleep_s`` seconds in the phases it joins."""
        _engine_test_sleep(self, tid, sleep_s, open_all)

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

    def run_until(self, t_end, copy_end=None):
        """Run every event with ``time < t_end``; later events stay pending.

        Returns the number of events executed by this call.  Raises
        :class:`ContractViolation` when a hook breaks the contract and
        ``KeyboardInterrupt`` promptly on Ctrl-C (the queues stay
        consistent, so the run can be continued).  Raises ``RuntimeError``
        when another thread is using this engine.

        ``copy_end`` (copy groups only, :meth:`set_copy_groups`): a
        scenario's :class:`~seer_runtime.scenario.CopyEnd`, run once for
        each copy that reaches ``t_end`` in this call, right after it does,
        by the thread that ran the copy (a vector env's step boundary: no
        phase of its own, on the copy's state while it is in cache).  A copy
        stopped by an error does not get it.
        """
        self._enter()
        try:
            return self._run_until_locked(t_end, copy_end)
        finally:
            self._busy = False

    def _run_until_locked(self, t_end, copy_end=None):
        cdef double t = self._check_time(t_end, "t_end")
        cdef EngineCore* c = &self.core
        cdef int64_t before = self._total_events(), t_start
        cdef CopyEnd end
        self._check_usable()
        if copy_end is not None:
            if not isinstance(copy_end, CopyEnd) or (<CopyEnd>copy_end).fn == NULL:
                raise TypeError(f"copy_end must be a scenario's CopyEnd (with its C function), "
                                f"got {copy_end!r}")
            if c.cg_copies == 0:
                raise ValueError("copy_end needs an engine in copy groups (set_copy_groups)")
        if not self._initialized:
            self._init_locked(self._now)
        if t < self._now:
            raise ValueError(f"t_end={t!r} is before the engine's current time {self._now!r}")
        c.sh.t_end = t
        c.sh.events_base = self._team_events()
        t_start = seer_clock_ns()
        if c.cg_copies > 0:
            if copy_end is not None:
                end = <CopyEnd>copy_end
                c.cg_end_fn = end.fn
                c.cg_end_arg = end.arg
            try:
                self._run_groups_locked()
            finally:
                c.cg_end_fn = NULL
                c.cg_end_arg = NULL
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

    # --- copies of one model in one engine (seer_envs.layout.batch) ------------
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
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ValueError(f"seed must be an int in [0, 2**64), got {seed!r}")
        a, b = self._check_range(lo, hi)
        if isinstance(first_entity, bool) or not isinstance(first_entity, int) \
                or not 0 <= first_entity < SEER_ENV_SOURCE:
            raise ValueError(f"first_entity must be an int in [0, {SEER_ENV_SOURCE}), got {first_entity!r}")
        return self.set_stream_keys_at([a], b - a, [seed], [first_entity])

    def set_stream_keys_at(self, starts, count, seeds, firsts):
        """Key many LP blocks at once, as :meth:`set_stream_keys` of each
        would: LP ``starts[i] + j`` (``j < count``) by ``(seeds[i], firsts[i]
        + j)``.  ``starts``, ``seeds`` (ints in ``[0, 2**64)``) and ``firsts``
        are integer arrays of one length (the copies of a vector env that
        start episodes together); everything is checked before any key
        changes."""
        import numpy as np
        self._check_idle()
        if not _is_int(count) or not 0 <= count <= self.core.n:
            raise ValueError(f"count must be an int in [0, {self.core.n}], got {count!r}")
        arrs = []
        for name, v in (("starts", starts), ("seeds", seeds), ("firsts", firsts)):
            a = np.asarray(v)
            if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
                raise ValueError(f"{name} must be a 1-d array of ints, got {a.dtype} {a.shape}")
            arrs.append(a)
        st, sd, fs = arrs
        if not len(st) == len(sd) == len(fs):
            raise ValueError(f"starts, seeds and firsts differ in length: {len(st)}, {len(sd)}, {len(fs)}")
        if len(st) and (st.min() < 0 or st.max() > self.core.n - count):
            raise ValueError(f"an LP block [start, start + {count}) lies outside the {self.core.n} LPs")
        if len(sd) and sd.dtype.kind == "i" and sd.min() < 0:
            raise ValueError("seeds must be ints in [0, 2**64)")
        if len(fs) and (fs.min() < 0 or fs.max() >= SEER_ENV_SOURCE):
            raise ValueError(f"firsts must be ints in [0, {SEER_ENV_SOURCE})")
        cdef int64_t[::1] s64 = np.ascontiguousarray(st, np.int64)
        cdef uint64_t[::1] k64 = np.ascontiguousarray(sd, np.uint64)
        cdef int64_t[::1] f64 = np.ascontiguousarray(fs, np.int64)
        cdef EngineCore* c = &self.core
        cdef int64_t i, j, m = len(s64), k = count
        with nogil:
            for i in range(m):
                for j in range(k):
                    c.rng_key[s64[i] + j] = seer_rng_key(k64[i], <uint64_t>(f64[i] + j))
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
        # (at most 2**31 - 1: a share's claim word packs two 32-bit counts)
        top = min(c.n, 2**31 - 1)
        if not _is_int(num_copies) or not 1 <= num_copies <= top:
            raise ValueError(f"num_copies must be an int in [1, {top}], got {num_copies!r}")
        C = int(num_copies)
        bl = []
        try:
            for bs, sz in blocks:
                if not (_is_int(bs) and _is_int(sz)):
                    raise TypeError
                bl.append((int(bs), int(sz)))
        except (TypeError, ValueError):
            raise ValueError(f"blocks must be a sequence of (base, size) int pairs, got {blocks!r}") from None
        bl = [(bs, sz) for bs, sz in bl if sz != 0]     # an empty block (no LPs of that kind) holds nothing
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

    def export_state(self, out=None):
        """Everything a continuation depends on, as NumPy arrays (a dict):
        every LP's pending events (``events``: the heaps' raw bytes, LP by
        LP, ``counts`` per LP), RNG stream keys and counters, emission
        counters and next times, and the clock (``now``; ``tallies``: the
        injection counter and the events executed).  Between runs only: no
        message is then in flight, and no LP may be frozen.
        :meth:`import_state` puts it into an engine of the same model size,
        at any thread count.

        ``out``: name -> a writable C-contiguous array of the right dtype and
        shape (:meth:`pending` gives the events' count) to write that part
        into instead of a new array (a snapshot writes straight into its
        bytes); the parts it names are checked before anything is written."""
        return _export_state(self, out)

    def import_state(self, state, min_time=None):
        """Replace this engine's state with ``state`` from :meth:`export_state`
        of an engine of the same model size (any thread count).  The engine
        must be initialised and idle.  Everything is checked before anything
        changes, ``ValueError`` naming the array (and the event) that does
        not fit: every array's dtype and shape, the counts against the
        event bytes, and every event: in its own LP's queue, from an LP or
        the environment, at a finite time no earlier than its LP's clock,
        each queue in heap order.  ``min_time``: the LPs' clocks (a number,
        or one per LP; default the state's ``now``): copies of a vector env
        keep their own.  The events go into spare heaps, checked as they are
        copied, and are swapped in only once all pass; the heaps swapped out
        are kept as the next import's spares (so the engine then holds its
        events' memory twice).  ``next_time`` is recomputed from the queues.
        The statistics' event count becomes the state's."""
        return _import_state(self, state, min_time)

    # --- per-LP state (snapshots of single copies: seer_envs.snapshot.copies) ---
    # Separate from export_state/import_state: a vector env saves and
    # restores some copies' LPs while the other copies stay as they are.

    def export_lps(self, lps):
        """The state of LPs ``lps`` (LP ids, in that order) as NumPy arrays:
        ``counts``, ``events`` (their pending events' raw bytes, LP by LP,
        in heap order), ``rng_key``, ``rng_ctr`` and ``emit_seq``, one entry
        per listed LP, and the engine's injection counter ``inject_seq``.
        Between runs, nothing frozen (as :meth:`export_state`)."""
        return _export_lps(self, lps)

    def import_lps(self, lps, state, now=None, inject_seq=0, min_time=None):
        """Replace the state of LPs ``lps`` with ``state`` (the arrays of
        :meth:`export_lps`, one entry per listed LP; events already in heap
        order, with this engine's LP ids).  Everything is checked, and room
        made, before anything changes (``ValueError`` naming what does not
        fit, as :meth:`import_state` checks it; ``MemoryError``).  ``now``:
        the imported LPs' time (no later than their events); the engine's
        time becomes the earlier of its own and ``now`` (exactly ``now`` when
        ``lps`` is every LP), so the next run starts no later than their
        events.  ``min_time``: the LPs' clocks (a number or one per listed
        LP; default ``now``), no event earlier.  The injection counter
        becomes at least ``inject_seq``, so events injected later still sort
        after the imported ones.  Other LPs are untouched.  Between runs
        only."""
        return _import_lps(self, lps, state, now, inject_seq, min_time)

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


# State export and import (the Engine's export_state, import_state,
# export_lps and import_lps).
include "_state.pxi"
