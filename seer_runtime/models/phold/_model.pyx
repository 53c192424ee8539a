# SPDX-License-Identifier: BSD-3-Clause
"""PHOLD on the SEER runtime, with ROSS's semantics.

Each LP starts ``start_events`` events.  Handling an event: run the
``work_iters`` arithmetic loop (the event-granularity knob) and fold its
result into the LP's state, then send one new event, to a uniformly drawn LP
with probability ``remote_fraction`` and to itself otherwise, after
``lookahead + Exp(mean_delay - lookahead)``.
"""

from libc.stdint cimport uint64_t, int64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy

from seer_runtime.contract cimport *
from seer_runtime.scenario cimport Scenario

cdef extern from "src/rng.h" nogil:
    uint64_t seer_fmix_a(uint64_t z)
    uint64_t seer_fmix_b(uint64_t z)

cdef enum:
    PHOLD_EVENT = 0

# work_iters bound: about 0.13 s of arithmetic per event at 1.3 ns per
# iteration, so a run stays interruptible (Ctrl-C is checked between windows)
# and a mistyped 10**13 is an error rather than a hang of hours per event.
MAX_WORK_ITERS = 10**8

ctypedef struct PholdState:
    uint64_t num_lps
    uint64_t start_events       # events seeded per LP
    uint64_t work_iters         # arithmetic iterations per event
    double lookahead            # minimum delay (time units)
    double extra_mean           # mean of the exponential part: mean_delay - lookahead
    double remote_fraction      # probability an event goes to a random LP
    uint64_t* count             # per LP: events handled
    uint64_t* acc               # per LP: order-sensitive fold of events and work
    uint64_t* remote_sent       # per LP: events sent to another LP
    double* last_time           # per LP: time of the last event handled


# A dependent multiply-xorshift chain: cannot be vectorised or elided, and
# its cost is linear in iters (about 1.3 ns per iteration on a 3 GHz core).
cdef inline uint64_t _work(uint64_t x, uint64_t iters) noexcept nogil:
    cdef uint64_t i
    for i in range(iters):
        x = x * 6364136223846793005ULL + 1442695040888963407ULL
        x ^= x >> 29
    return x


cdef int on_init(void* model, Ctx* ctx) noexcept nogil:
    cdef PholdState* s = <PholdState*>model
    cdef uint64_t i
    cdef Event* e
    for i in range(s.start_events):
        e = seer_emit(ctx, ctx.now + (s.lookahead + seer_exponential(ctx, s.extra_mean)),
                      ctx.lp, PHOLD_EVENT)
        if e == NULL:
            return SEER_E_OUTBOX_FULL
    return SEER_OK


cdef int on_event(void* model, Ctx* ctx, const Event* ev) noexcept nogil:
    cdef PholdState* s = <PholdState*>model
    cdef lp_id_t lp = ctx.lp
    cdef lp_id_t dest = lp
    cdef uint64_t tbits
    cdef Event* e
    memcpy(&tbits, &ev.time, sizeof(double))
    # Fold (time, src, seq) in handling order: any reordering changes acc.
    s.acc[lp] = seer_fmix_b(s.acc[lp] ^ seer_fmix_a(tbits ^ (<uint64_t>ev.src << 32) ^ ev.seq))
    if s.work_iters > 0:
        s.acc[lp] = _work(s.acc[lp], s.work_iters)
    s.count[lp] += 1
    s.last_time[lp] = ctx.now
    if seer_uniform(ctx) < s.remote_fraction:
        dest = <lp_id_t>seer_integer(ctx, s.num_lps)
        if dest != lp:
            s.remote_sent[lp] += 1
    e = seer_emit(ctx, ctx.now + (s.lookahead + seer_exponential(ctx, s.extra_mean)),
                  dest, PHOLD_EVENT)
    if e == NULL:
        return SEER_E_OUTBOX_FULL
    return SEER_OK


cdef class PholdModel(Scenario):
    """PHOLD's state and hooks; build it with :func:`seer_runtime.models.phold.run`
    or directly with validated parameters."""

    cdef PholdState s

    def __cinit__(self, *args, **kwargs):
        self.set_hooks(on_init, on_event, &self.s)

    def __init__(self, num_lps, lookahead, mean_delay, remote_fraction, start_events, work_iters):
        # The C fields' ranges (make/run validate everything, with the same bounds).
        for name, v, hi in (("start_events", start_events, 255),
                            ("work_iters", work_iters, MAX_WORK_ITERS)):
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= hi:
                raise ValueError(f"{name} must be an int in [0, {hi}], got {v!r}")
        Scenario.__init__(self, num_lps, lookahead)
        self.s.num_lps = num_lps
        self.s.start_events = start_events
        self.s.work_iters = work_iters
        self.s.lookahead = lookahead
        self.s.extra_mean = mean_delay - lookahead
        self.s.remote_fraction = remote_fraction
        self.s.count = <uint64_t*>calloc(num_lps, sizeof(uint64_t))
        self.s.acc = <uint64_t*>calloc(num_lps, sizeof(uint64_t))
        self.s.remote_sent = <uint64_t*>calloc(num_lps, sizeof(uint64_t))
        self.s.last_time = <double*>calloc(num_lps, sizeof(double))
        if self.s.count == NULL or self.s.acc == NULL or self.s.remote_sent == NULL or self.s.last_time == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.s.count)
        free(self.s.acc)
        free(self.s.remote_sent)
        free(self.s.last_time)

    def digest(self, engine):
        """Hash of every LP's final state and counters, and the engine's."""
        cdef uint64_t h = 0x452821e638d01377ULL, tbits
        cdef uint64_t i
        for i in range(self.s.num_lps):
            memcpy(&tbits, &self.s.last_time[i], sizeof(double))
            h = seer_fmix_a(h ^ self.s.count[i]) + i
            h = seer_fmix_b(h ^ self.s.acc[i])
            h = seer_fmix_a(h ^ self.s.remote_sent[i])
            h = seer_fmix_b(h ^ tbits)
        h = seer_fmix_a(h ^ <uint64_t>engine.state_digest())
        return f"{h:016x}"

    def totals(self):
        """(events handled, remote events sent) summed over LPs."""
        cdef uint64_t i, c = 0, r = 0
        for i in range(self.s.num_lps):
            c += self.s.count[i]
            r += self.s.remote_sent[i]
        return c, r


def bench_handler(int64_t n, int64_t num_lps=16384, double remote_fraction=0.25,
                  double lookahead=1.0, double mean_delay=1.0, uint64_t work_iters=0):
    """Seconds for ``n`` calls of PHOLD's event handler alone, outside the
    engine (a fake context and an outbox reset per call, LPs visited in
    order).  Subtracting this from the engine's time per event leaves the
    engine's own cost per event."""
    cdef PholdState s
    cdef Ctx ctx
    cdef Event ev
    cdef Event* outbox = <Event*>calloc(SEER_OUTBOX_CAPACITY, sizeof(Event))
    cdef uint64_t* arrays = <uint64_t*>calloc(5 * num_lps, sizeof(uint64_t))
    cdef uint64_t ctr = 0
    cdef int64_t i
    cdef double t0, t1
    import time
    if outbox == NULL or arrays == NULL:
        free(outbox); free(arrays)
        raise MemoryError()
    s.num_lps = num_lps
    s.start_events = 1
    s.work_iters = work_iters
    s.lookahead = lookahead
    s.extra_mean = mean_delay - lookahead
    s.remote_fraction = remote_fraction
    s.count = arrays
    s.acc = arrays + num_lps
    s.remote_sent = arrays + 2 * num_lps
    s.last_time = <double*>(arrays + 3 * num_lps)
    ctx.rng_key = 12345
    ctx.rng_ctr = &ctr
    ctx.out.events = outbox
    ctx.out.dropped = 0
    ctx.thread = 0
    ev.src = 0
    ev.kind = PHOLD_EVENT
    t0 = time.perf_counter()
    with nogil:
        for i in range(n):
            ctx.lp = <lp_id_t>(i % num_lps)
            ctx.now = <double>(i // num_lps)
            ctx.out.count = 0
            ev.time = ctx.now
            ev.seq = <uint64_t>i
            on_event(&s, &ctx, &ev)
    t1 = time.perf_counter()
    free(outbox)
    free(arrays)
    return t1 - t0
