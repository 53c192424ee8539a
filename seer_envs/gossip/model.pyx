# SPDX-License-Identifier: BSD-3-Clause
"""Gossip handlers on the SEER runtime (nogil): the guide's worked example
(docs/new_scenario.md).

One LP per agent on a ring.  An agent's state is the bit mask of rumours it
knows.  Event kinds (each writes only the handling agent's state):

NEWS    the agent hears a random rumour by itself; schedules its next NEWS.
GOSSIP  a message from another agent: learn every rumour in ``data.u[0]``.
ACTION  injected at each step start: if ``actions[agent]`` != 0, send one
        GOSSIP carrying everything the agent knows to the chosen neighbour,
        ``latency + jitter * U`` later (latency is the lookahead).

Each copy (ring) has its own ``num_rumours``, ``news_interval`` and ``jitter``
(``GossipCopies.per_copy``): ``params[k]``, written by ``GossipModel.configure``
and read by a handler as ``params[copy_of[agent]]``.

Random draws come from the handling agent's stream, in the order written
here; ``seer_envs.gossip.reference`` makes the same draws in the same order.
"""

from libc.stdint cimport int32_t, int64_t, uint64_t

from seer_envs.scenario.per_copy cimport PerCopy
from seer_runtime.contract cimport *
from seer_runtime.scenario cimport Scenario
from seer_runtime.scenario import enum_names

cdef enum:
    NEWS = 0
    GOSSIP = 1
    ACTION = 2

# Per-agent cumulative counters (columns of ``counters``).
cdef enum:
    C_LEARNED = 0       # rumours learned (by news or by message)
    C_RECEIVED = 1      # messages received
    C_SENT = 2          # messages sent
    C_NEWS = 3          # news events heard
    N_COUNTERS = 4

ACTION_KIND = ACTION
COUNTERS = enum_names({"learned": C_LEARNED, "received": C_RECEIVED, "sent": C_SENT, "news": C_NEWS},
                      N_COUNTERS)

ctypedef struct GossipParams:
    # One copy's parameters (GossipCopies.per_copy); GossipModel.configure writes them.
    uint64_t rumours            # number of rumours (bits in use)
    double news_mean            # mean time between news (s)
    double jitter               # extra uniform delay (s)


ctypedef struct GossipState:
    int64_t n                   # agents of one copy (one ring)
    int64_t reach
    double latency              # minimum message delay = lookahead (s)
    GossipParams* params        # one per copy
    const int32_t* copy_of      # per agent: its copy (ring)
    uint64_t* known             # per agent: rumour bit mask
    int32_t* n_known            # per agent: rumours known
    const int32_t* actions      # per agent: this step's action (read-only during a run)
    int64_t* counters           # per agent x N_COUNTERS, cumulative


cdef inline void _learn(GossipState* s, lp_id_t a, uint64_t bits) noexcept nogil:
    cdef uint64_t new = bits & ~s.known[a]
    cdef int32_t k = 0
    s.known[a] |= new
    while new:                  # popcount
        new &= new - 1
        k += 1
    s.n_known[a] += k
    s.counters[<int64_t>a * N_COUNTERS + C_LEARNED] += k


cdef inline lp_id_t _target(const GossipState* s, lp_id_t a, int32_t act) noexcept nogil:
    # on the sender's own ring: copy k is agents [k * n, (k + 1) * n)
    cdef int64_t off = act if act <= s.reach else -(act - s.reach)
    cdef int64_t base = (<int64_t>a // s.n) * s.n
    return <lp_id_t>(base + (<int64_t>a - base + off + s.n) % s.n)


cdef inline int _next_news(const GossipParams* p, Ctx* ctx) noexcept nogil:
    if seer_emit(ctx, ctx.now + seer_exponential(ctx, p.news_mean), ctx.lp, NEWS) == NULL:
        return SEER_E_OUTBOX_FULL
    return SEER_OK


cdef int on_init(void* model, Ctx* ctx) noexcept nogil:
    cdef GossipState* s = <GossipState*>model
    return _next_news(&s.params[s.copy_of[ctx.lp]], ctx)


cdef int on_event(void* model, Ctx* ctx, const Event* ev) noexcept nogil:
    cdef GossipState* s = <GossipState*>model
    cdef lp_id_t a = ctx.lp
    cdef int64_t* cnt = &s.counters[<int64_t>a * N_COUNTERS]
    cdef const GossipParams* p = &s.params[s.copy_of[a]]
    cdef int32_t act
    cdef Event* e
    if ev.kind == NEWS:
        cnt[C_NEWS] += 1
        _learn(s, a, (<uint64_t>1) << seer_integer(ctx, p.rumours))
        return _next_news(p, ctx)
    elif ev.kind == GOSSIP:
        cnt[C_RECEIVED] += 1
        _learn(s, a, ev.data.u[0])
        return SEER_OK
    elif ev.kind == ACTION:
        act = s.actions[a]
        if act == 0:
            return SEER_OK
        # a cross-agent event: at least now + latency (the lookahead)
        e = seer_emit(ctx, ctx.now + (s.latency + p.jitter * seer_uniform(ctx)),
                      _target(s, a, act), GOSSIP)
        if e == NULL:
            return SEER_E_OUTBOX_FULL
        e.data.u[0] = s.known[a]
        cnt[C_SENT] += 1
        return SEER_OK
    return SEER_E_MODEL


cdef class GossipModel(Scenario):
    """Gossip state (arrays over agents) and hooks.  ``actions`` is the
    int32 array the env writes before each step; ``known`` (uint64 masks),
    ``n_known`` and ``counters`` (agents x 4, columns ``COUNTERS``) are
    NumPy views of the state.  ``num_copies`` independent rings lie one
    after another (copy k is agents ``[k * n, (k + 1) * n)``); a message
    never leaves its ring."""

    cdef GossipState s
    cdef readonly object actions, known, n_known, counters
    # per-copy parameters and each agent's copy (not state: snapshots carry
    # the copies' configs)
    cdef PerCopy _per_copy

    def __cinit__(self, *args, **kwargs):
        self.set_hooks(on_init, on_event, &self.s)

    def __init__(self, cfg, num_copies=1):
        import numpy as np
        # lookahead = the minimum message delay
        Scenario.__init__(self, cfg.num_agents, cfg.latency, num_copies)
        n = self.num_lps
        self.s.n = cfg.num_agents
        self.s.reach = cfg.reach
        self.s.latency = cfg.latency
        self._per_copy = PerCopy(sizeof(GossipParams), num_copies, [cfg.num_agents])
        self.s.params = <GossipParams*>self._per_copy.params
        self.s.copy_of = self._per_copy.copy_of
        for c in range(num_copies):
            self.configure(c, cfg)
        self.actions = np.zeros(n, np.int32)
        self.known = np.zeros(n, np.uint64)
        self.n_known = np.zeros(n, np.int32)
        self.counters = np.zeros((n, N_COUNTERS), np.int64)
        cdef int32_t[::1] act = self.actions
        cdef uint64_t[::1] kn = self.known
        cdef int32_t[::1] nk = self.n_known
        cdef int64_t[:, ::1] cn = self.counters
        self.s.actions = &act[0]
        self.s.known = &kn[0]
        self.s.n_known = &nk[0]
        self.s.counters = &cn[0, 0]

    def configure(self, c, cfg):
        """Copy ``c``'s ``num_rumours``, ``news_interval`` and ``jitter``
        from ``cfg`` (its other fields must equal the model's config), read
        by its handlers from its next restart on."""
        cdef GossipParams* p = <GossipParams*>self._per_copy.entry(c)
        p.rumours = cfg.num_rumours
        p.news_mean = cfg.news_interval
        p.jitter = cfg.jitter

    def reset_copies(self, c0, c1):
        """Restore copies ``[c0, c1)`` to their state at construction (the
        engine restarts their LPs)."""
        lo, hi = c0 * self.s.n, c1 * self.s.n
        self.actions[lo:hi] = 0
        self.known[lo:hi] = 0
        self.n_known[lo:hi] = 0
        self.counters[lo:hi] = 0
