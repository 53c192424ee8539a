# SPDX-License-Identifier: BSD-3-Clause
# THE contract between the runtime and a scenario (docs/runtime.md, "The contract a model keeps").
#
# A scenario cimports this file, writes `noexcept nogil` hooks with the
# signatures below, and fills an LPType in its Scenario subclass.  Hooks run
# on worker threads without the GIL.  A hook may write only the state of
# `ctx.lp` and the outbox, reads time from `ctx.now`, and draws randomness
# only through the seer_uniform / seer_exponential / seer_integer helpers
# here, which advance the LP's own counter-based stream.
#
# Return codes: SEER_OK (0) on success; a negative code aborts the run and is
# raised as seer_runtime.ContractViolation after the parallel region ends.
# Scenario-specific errors use codes <= SEER_E_MODEL.

from libc.stdint cimport uint32_t, uint64_t, int32_t, int64_t
from libc.string cimport memset

cdef extern from "src/rng.h" nogil:
    uint64_t seer_rng_bits(uint64_t key, uint64_t ctr)
    uint64_t seer_rng_key(uint64_t seed, uint64_t entity)
    double seer_bits_to_u01(uint64_t bits)
    uint64_t seer_rng_bounded(uint64_t key, uint64_t* ctr, uint64_t n)

cdef extern from "<math.h>" nogil:
    double log1p(double x)

ctypedef double sim_time_t      # simulated time, in the scenario's unit
ctypedef uint32_t lp_id_t       # entity (LP) id, 0 .. num_lps-1
ctypedef uint64_t seq_t         # per-source emission counter

cdef enum:
    SEER_OK = 0
    SEER_E_PAST = -1            # event scheduled before ctx.now (or NaN time)
    SEER_E_LOOKAHEAD = -2       # cross-LP event earlier than now + lookahead
    SEER_E_BAD_TARGET = -3      # target id >= num_lps
    SEER_E_OUTBOX_FULL = -4     # more than SEER_OUTBOX_CAPACITY emits in one hook call
    SEER_E_QUEUE_FULL = -5      # an LP's pending events exceed max_pending_per_lp
    SEER_E_ARENA_FULL = -6      # one round's cross-LP messages exceed max_messages_per_round
    SEER_E_NO_MEMORY = -7       # the C allocator refused to grow a queue or arena
    SEER_E_EVENT_BUDGET = -8    # one run_until call's events exceed max_events_per_run
    SEER_E_STUCK = -9           # a window cannot advance: T + lookahead == T in floating point
    SEER_E_MODEL = -100         # first scenario-defined code; <= this is the model's own error

cdef enum:
    SEER_OUTBOX_CAPACITY = 256  # events one hook call may emit
    SEER_PAYLOAD_WORDS = 6

# Source id of events injected by the environment (actions): they sort after
# any LP-emitted event at the same time.
# (A cdef enum is an int, which cannot hold 2**32 - 1.)
cdef extern from *:
    """
    #define SEER_ENV_SOURCE ((uint32_t)0xFFFFFFFFu)
    """
    const uint32_t SEER_ENV_SOURCE

ctypedef union Payload:
    double f[6]                 # scenario-defined, e.g. timestamps (time units)
    int64_t i[6]                # scenario-defined integers
    uint64_t u[6]

ctypedef struct Event:
    sim_time_t time             # when the event happens (time units)
    seq_t seq                   # source's emission counter; (time, src, seq) is the total order
    lp_id_t src                 # emitting LP, or SEER_ENV_SOURCE for injected events
    lp_id_t target              # receiving LP
    int32_t kind                # scenario-defined event kind
    int32_t _reserved           # keeps the payload 8-byte aligned
    Payload data                # zeroed by seer_emit; the handler fills what it needs

# Where a hook puts new events.  Owned by the worker thread; the runtime
# validates and dispatches its contents after the hook returns.
ctypedef struct Outbox:
    Event* events               # SEER_OUTBOX_CAPACITY slots, owned by the runtime
    int32_t count               # events emitted by the current hook call
    int32_t dropped             # emits refused because the outbox was full: the runtime
                                #   raises outbox_full even if the hook ignored the NULL

# Per-call context passed to every hook.  Owned by the worker thread.
ctypedef struct Ctx:
    sim_time_t now              # time of the event being handled (init: start time)
    lp_id_t lp                  # the LP whose state the hook may write
    int32_t thread              # worker thread id (statistics only: results must not depend on it)
    uint64_t rng_key            # this LP's stream key
    uint64_t* rng_ctr           # this LP's stream counter (runtime-owned)
    Outbox out

# Hook types.  All run on a worker thread without the GIL; `model` is the
# scenario's own pointer (Scenario.model), owned by the scenario object.
# on_init: once per LP before the first run; schedules the LP's first events.
ctypedef int (*init_fn)(void* model, Ctx* ctx) noexcept nogil
# on_event: one event for ctx.lp; `ev` is valid only during the call.
ctypedef int (*event_fn)(void* model, Ctx* ctx, const Event* ev) noexcept nogil

ctypedef struct LPType:
    init_fn on_init             # never NULL: the runtime installs no-op defaults
    event_fn on_event


# --- the scheduling call ---------------------------------------------------

# Emit an event from the current hook call.  Returns a pointer to the event
# whose payload the hook may fill before it returns, or NULL when the outbox is
# full (the hook should return SEER_E_OUTBOX_FULL; the runtime raises it
# anyway, so an ignored NULL never drops an event silently).  Validity (time,
# target, lookahead) is checked by the runtime after the hook returns.
cdef inline Event* seer_emit(Ctx* ctx, sim_time_t time, lp_id_t target,
                             int32_t kind) noexcept nogil:
    cdef Event* e
    if ctx.out.count >= SEER_OUTBOX_CAPACITY:
        ctx.out.dropped += 1
        return NULL
    e = &ctx.out.events[ctx.out.count]
    ctx.out.count += 1
    memset(&e.data, 0, sizeof(Payload))
    e.time = time
    e.target = target
    e.kind = kind
    e.src = ctx.lp
    e.seq = 0
    e._reserved = 0
    return e


# --- per-LP random numbers -------------------------------------------------

cdef inline uint64_t seer_next_u64(Ctx* ctx) noexcept nogil:
    ctx.rng_ctr[0] += 1
    return seer_rng_bits(ctx.rng_key, ctx.rng_ctr[0])

# Uniform in [0, 1).
cdef inline double seer_uniform(Ctx* ctx) noexcept nogil:
    return seer_bits_to_u01(seer_next_u64(ctx))

# Exponential with the given mean (mean 0 gives 0, still consuming a draw).
cdef inline double seer_exponential(Ctx* ctx, double mean) noexcept nogil:
    return -mean * log1p(-seer_uniform(ctx))

# Uniform integer in [0, n), unbiased.
cdef inline uint64_t seer_integer(Ctx* ctx, uint64_t n) noexcept nogil:
    return seer_rng_bounded(ctx.rng_key, ctx.rng_ctr, n)
