# SPDX-License-Identifier: BSD-3-Clause
"""PCS handlers on the SEER runtime (nogil), its state, and the step boundary.

One LP per cell.  A portable (phone) lives in the payload of its single
pending event: ``f[0]`` next call, ``f[1]`` call completion (inf when idle),
``f[2]`` next move, ``i[3]`` portable id.  Its event is the earliest of the
three; ties go completion, then move, then call.

Event kinds and what they do at cell c (all write only c's state):

NEXTCALL        an attempt: busy line if the phone is in a call; else blocked
                if free channels <= guard; else take a channel and draw the
                completion.  Then draw the next call.
COMPLETIONCALL  free the channel.
MOVECALLOUT     a move during a call: free the channel, send MOVECALLIN to a
                uniform neighbour handoff_latency later.
MOVECALLIN      take any free channel (guard channels serve handoffs) or
                count a handoff block (the call drops).
ACTION          copy the agent's guard for this step from the action array.

An idle phone's moves are walked inside the handler up to its next call, and
one NEXTCALL goes to the cell it will be in; when that is another cell the
call is delayed to at least now + handoff_latency (the lookahead).  Self
events are never earlier than now.  Random draws come from the handling
cell's stream, in the order written here; the pure-Python reference
(``seer_envs.pcs.reference``) makes the same draws in the same order.

Varying load (off at ``pcs_v0``'s defaults, where every draw is the plain
one): a phone's next call is drawn at the cell handling it with mean
``call_interarrival_mean / load(cell, now)``, where ``load`` is a pure
function of the cell and the time: the diurnal factor ``1 + a sin(2 pi t /
period)`` times ``1 + amplitude * sum_k exp(-d_k**2 / (2 r**2))`` over the
hot spots, ``d_k`` the torus distance from the cell to hot spot k, which
moves in a straight line at constant speed (``PCSConfig.hotspot_tracks``).
No state, no draws: it reads only the cell's own coordinates and the clock.

Rush hours (off at ``pcs_v0``'s defaults): in one window a
``rush_period``, ``rush_fraction`` of it long and centred a quarter period
in (where the daily swing of the load peaks when the periods are equal),
phones move every
``rush_move_interval_mean`` on average instead of ``move_interval_mean``.
A move time is one unit exponential draw of hazard spent window by window
(``_next_move_rush``), so a phone still makes one draw a move.
"""

from libc.math cimport INFINITY, exp, floor, fmod, isinf, sin
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free

from seer_envs.scenario.per_copy cimport PerCopy
from seer_runtime.contract cimport *
from seer_runtime.scenario cimport CopyEnd, Scenario, seer_parallel_for
from seer_runtime.scenario import enum_names

cdef enum:
    NEXTCALL = 0
    COMPLETIONCALL = 1
    MOVECALLOUT = 2
    MOVECALLIN = 3
    ACTION = 4

# Observation slots of a cell's row: the single source of the layout (the
# env's ``obs_layout``, the reference and the docs read these).
cdef enum:
    OBS_BUSY = 0                # own busy fraction
    OBS_GUARD = 1               # guard / channels
    OBS_ATTEMPTS = 2            # this step's call attempts / portables
    OBS_CHANNEL_BLOCKS = 3      # this step's channel blocks / portables
    OBS_HANDOFFS_IN = 4         # this step's handoffs in / portables
    OBS_HANDOFF_BLOCKS = 5      # this step's handoff blocks / portables
    OBS_NEIGHBOURS = 6          # 4 slots: neighbours' busy fractions E, W, S, N
    OBS_POWER = 10              # power-control estimate
    OBS_SIZE = 11

# Per-cell cumulative counters (columns of ``counters``).
cdef enum:
    C_CALL_ATTEMPTS = 0
    C_BUSY_LINES = 1
    C_CHANNEL_BLOCKS = 2
    C_HANDOFF_BLOCKS = 3
    C_HANDOFFS_IN = 4
    C_HANDOFFS_OUT = 5
    N_COUNTERS = 6


ACTION_KIND = ACTION
OBS_SIZE_PY = OBS_SIZE
OUTBOX_CAPACITY_PY = SEER_OUTBOX_CAPACITY
COUNTERS = enum_names({"call_attempts": C_CALL_ATTEMPTS, "busy_lines": C_BUSY_LINES,
                   "channel_blocks": C_CHANNEL_BLOCKS, "handoff_blocks": C_HANDOFF_BLOCKS,
                   "handoffs_in": C_HANDOFFS_IN, "handoffs_out": C_HANDOFFS_OUT}, N_COUNTERS)
#: Counter name -> column.
COUNTER_INDEX = {name: i for i, name in enumerate(COUNTERS)}
#: Observation part -> index or slice of the row.
OBS_LAYOUT = {"busy": OBS_BUSY, "guard": OBS_GUARD, "call_attempts": OBS_ATTEMPTS,
              "channel_blocks": OBS_CHANNEL_BLOCKS, "handoffs_in": OBS_HANDOFFS_IN,
              "handoff_blocks": OBS_HANDOFF_BLOCKS,
              "neighbours": slice(OBS_NEIGHBOURS, OBS_NEIGHBOURS + 4), "power": OBS_POWER}
# Every slot is covered exactly once.
enum_names({k: v for k, v in OBS_LAYOUT.items() if k != "neighbours"}
       | {f"neighbour_{d}": OBS_NEIGHBOURS + d for d in range(4)}, OBS_SIZE)

# One copy's values of the per-copy fields (PcsCopies.per_copy), read by
# its cells' handlers through the per-cell copy index.
ctypedef struct PcsParams:
    double interarrival         # mean time between call attempts (min)
    double duration             # mean call length (min)
    double move_mean            # mean time between moves (min); inf: no moves
    int64_t pc_iters            # power-control iterations per admission
    bint load_varies            # any hot spot or diurnal term: draws use _call_mean
    int64_t hot_count           # hot spots
    const double* hot           # hot_count x 4: x0, y0 (cells), vx, vy (cells/min)
    double hot_amp              # peak extra load of one hot spot (x the base rate)
    double hot_inv2r2           # 1 / (2 r**2), r the hot spots' radius (cells)
    double diurnal_amp          # a of the diurnal factor
    double diurnal_omega        # 2 pi / diurnal_period (1/min)
    double penalty              # handoff_penalty (the boundary's reward)
    bint rush                   # rush hours: moves at rush_mean inside the rush windows
    double rush_mean            # mean time between moves in rush hours (min); inf: none
    double rush_period            # the windows' spacing: rush_period (min)
    double rush_h               # rush_fraction / 2: a window's half width over rush_period


ctypedef struct PcsState:
    int64_t width               # cells across
    int64_t height              # cells down
    int64_t cells               # width * height: LPs of one copy
    int64_t copies              # copies of the grid in one engine (vector env); copy k is
                                #   LPs [k * cells, (k + 1) * cells), never touching another
    int64_t channels            # channels per cell
    int64_t portables           # phones per cell at start
    double latency              # handoff latency = lookahead (min)
    const PcsParams* params     # per copy
    const int32_t* copy_of      # per cell: its copy (a load, not a division, per event)
    int32_t* free_ch            # per cell: free channels
    int32_t* guard              # per cell: guard channels in force
    const int32_t* actions      # per cell: this step's action (read-only during a run)
    int64_t* counters           # per cell x N_COUNTERS, cumulative, order of COUNTERS
    double* power               # per cell: power-control estimate


cdef inline const PcsParams* _params(const PcsState* s, lp_id_t cell) noexcept nogil:
    return &s.params[s.copy_of[cell]]


# The four neighbours of `cell` on its own copy of the torus (a single env is
# copy 0), in the observation's order E, W, S, N: x + 1, x - 1, y + 1, y - 1.
# The cell's position is worked out once: the boundary reads all four.
cdef inline void _neighbours(const PcsState* s, lp_id_t cell, lp_id_t* out) noexcept nogil:
    cdef int64_t local = cell % s.cells
    cdef int64_t base = cell - local
    cdef int64_t x = local % s.width, y = local // s.width
    cdef int64_t row = base + y * s.width
    out[0] = <lp_id_t>(row + (x + 1 if x + 1 < s.width else 0))
    out[1] = <lp_id_t>(row + (x - 1 if x > 0 else s.width - 1))
    out[2] = <lp_id_t>(base + (y + 1 if y + 1 < s.height else 0) * s.width + x)
    out[3] = <lp_id_t>(base + (y - 1 if y > 0 else s.height - 1) * s.width + x)


cdef inline lp_id_t _neighbour(const PcsState* s, lp_id_t cell, uint64_t d) noexcept nogil:
    cdef lp_id_t nb[4]
    _neighbours(s, cell, nb)
    return nb[d]


# Distance on a ring of n cells between position a and b (both in [0, n)).
cdef inline double _ring(double a, double b, double n) noexcept nogil:
    cdef double d = a - b
    if d < 0:
        d = -d
    if n - d < d:
        d = n - d
    return d


# The load factor of `cell` at time t (module docstring); 1 when nothing varies.
cdef inline double _load(const PcsState* s, const PcsParams* p, lp_id_t cell, double t) noexcept nogil:
    cdef int64_t local = cell % s.cells
    cdef double x = <double>(local % s.width), y = <double>(local // s.width)
    cdef double w = <double>s.width, h = <double>s.height
    cdef double f = 1.0 + p.diurnal_amp * sin(p.diurnal_omega * t)
    cdef double sum_ = 0.0, cx, cy, dx, dy
    cdef int64_t k
    for k in range(p.hot_count):
        cx = fmod(p.hot[4 * k] + p.hot[4 * k + 2] * t, w)
        if cx < 0:
            cx = cx + w
        cy = fmod(p.hot[4 * k + 1] + p.hot[4 * k + 3] * t, h)
        if cy < 0:
            cy = cy + h
        dx = _ring(x, cx, w)
        dy = _ring(y, cy, h)
        sum_ = sum_ + exp(-(dx * dx + dy * dy) * p.hot_inv2r2)
    return f * (1.0 + p.hot_amp * sum_)


# The next call attempt's delay for a phone handled at ctx.lp (whose copy's
# parameters are p: the handlers look them up once per call) at time t.
cdef inline double _call_delay(const PcsState* s, const PcsParams* p, Ctx* ctx, double t) noexcept nogil:
    if not p.load_varies:
        return seer_exponential(ctx, p.interarrival)
    return seer_exponential(ctx, p.interarrival / _load(s, p, ctx.lp, t))


cdef inline double _next_move(const PcsParams* p, Ctx* ctx, double t) noexcept nogil:
    if p.rush:
        return _next_move_rush(p, ctx, t)
    if isinf(p.move_mean):
        return INFINITY
    return t + seer_exponential(ctx, p.move_mean)


# The next move after t when the rate changes in rush hours: one unit
# exponential of hazard, spent window by window at each window's rate (exact
# for a piecewise-constant rate, one draw a move).  Rush window k spans
# [(k + 1/4 - h) H, (k + 1/4 + h) H]; the quiet window after it ends at
# (k + 5/4 - h) H.
cdef double _next_move_rush(const PcsParams* p, Ctx* ctx, double t) noexcept nogil:
    cdef double H = p.rush_period, h = p.rush_h
    cdef double e = seer_exponential(ctx, 1.0)
    cdef double u = t / H - 0.25
    cdef double k = floor(u)
    cdef double r = u - k, end, mean
    cdef bint rush = True        # p.rush: the two means differ, so one is finite
    if r >= 1.0 - h:
        k = k + 1.0
    elif r >= h:
        rush = False
    while True:
        if rush:
            end, mean = (k + 0.25 + h) * H, p.rush_mean
        else:
            end, mean = (k + 1.25 - h) * H, p.move_mean
        if not isinf(mean):
            if t + e * mean <= end:
                return t + e * mean
            e = e - (end - t) / mean
        if end > t:
            t = end
        if rush:
            rush = False
        else:
            rush = True
            k = k + 1.0


# A fixed point p = 0.1 + 0.5 * load * p / (1 + 0.01 p), iterated from the
# cell's last estimate: deterministic work that scales with pc_iters.
cdef inline void _power_control(PcsState* s, const PcsParams* p, lp_id_t c) noexcept nogil:
    cdef double load = <double>(s.channels - s.free_ch[c]) / <double>s.channels
    cdef double x = s.power[c]
    cdef int64_t k
    for k in range(p.pc_iters):
        x = 0.1 + 0.5 * load * x / (1.0 + 0.01 * x)
    s.power[c] = x


cdef inline int _send(Ctx* ctx, double t, lp_id_t cell, int32_t kind, double nc, double comp,
                      double mv, int64_t pid) noexcept nogil:
    cdef Event* e = seer_emit(ctx, t, cell, kind)
    if e == NULL:
        return SEER_E_OUTBOX_FULL
    e.data.f[0] = nc
    e.data.f[1] = comp
    e.data.f[2] = mv
    e.data.i[3] = pid
    return SEER_OK


# Idle phone at ctx.lp: walk its moves before the next call, send the call.
cdef int _schedule_idle(PcsState* s, const PcsParams* p, Ctx* ctx, double nc, double mv,
                        int64_t pid) noexcept nogil:
    cdef lp_id_t cell = ctx.lp
    cdef double t
    while mv < nc:
        cell = _neighbour(s, cell, seer_integer(ctx, 4))
        mv = _next_move(p, ctx, mv)
    t = nc
    if cell != ctx.lp:
        if t < ctx.now + s.latency:
            t = ctx.now + s.latency
    elif t < ctx.now:
        t = ctx.now
    return _send(ctx, t, cell, NEXTCALL, t, INFINITY, mv, pid)


# Phone in a call at ctx.lp: its next event here.
cdef int _schedule_in_call(PcsState* s, Ctx* ctx, double nc, double comp, double mv,
                           int64_t pid) noexcept nogil:
    cdef double t
    cdef int32_t kind
    if comp <= mv and comp <= nc:
        t, kind = comp, COMPLETIONCALL
    elif mv <= nc:
        t, kind = mv, MOVECALLOUT
    else:
        t, kind = nc, NEXTCALL
    if t < ctx.now:
        t = ctx.now
    return _send(ctx, t, ctx.lp, kind, nc, comp, mv, pid)


cdef int on_init(void* model, Ctx* ctx) noexcept nogil:
    cdef PcsState* s = <PcsState*>model
    cdef const PcsParams* p = _params(s, ctx.lp)
    cdef int64_t k, pid
    cdef double nc, mv
    cdef int rc
    for k in range(s.portables):
        pid = (<int64_t>ctx.lp % s.cells) * s.portables + k
        nc = ctx.now + _call_delay(s, p, ctx, ctx.now)
        mv = _next_move(p, ctx, ctx.now)
        rc = _schedule_idle(s, p, ctx, nc, mv, pid)
        if rc != SEER_OK:
            return rc
    return SEER_OK


cdef int on_event(void* model, Ctx* ctx, const Event* ev) noexcept nogil:
    cdef PcsState* s = <PcsState*>model
    cdef lp_id_t c = ctx.lp
    cdef const PcsParams* p = _params(s, c)
    cdef int64_t* cnt = &s.counters[<int64_t>c * N_COUNTERS]
    cdef double nc = ev.data.f[0], comp = ev.data.f[1], mv = ev.data.f[2]
    cdef int64_t pid = ev.data.i[3]
    cdef lp_id_t dest
    if ev.kind == NEXTCALL:
        cnt[C_CALL_ATTEMPTS] += 1
        if not isinf(comp):
            cnt[C_BUSY_LINES] += 1
        elif s.free_ch[c] <= s.guard[c]:
            cnt[C_CHANNEL_BLOCKS] += 1
        else:
            s.free_ch[c] -= 1
            comp = ctx.now + seer_exponential(ctx, p.duration)
            _power_control(s, p, c)
        nc = ctx.now + _call_delay(s, p, ctx, ctx.now)
        if isinf(comp):
            return _schedule_idle(s, p, ctx, nc, mv, pid)
        return _schedule_in_call(s, ctx, nc, comp, mv, pid)
    elif ev.kind == COMPLETIONCALL:
        s.free_ch[c] += 1
        return _schedule_idle(s, p, ctx, nc, mv, pid)
    elif ev.kind == MOVECALLOUT:
        s.free_ch[c] += 1
        cnt[C_HANDOFFS_OUT] += 1
        dest = _neighbour(s, c, seer_integer(ctx, 4))
        mv = _next_move(p, ctx, ctx.now)
        return _send(ctx, ctx.now + s.latency, dest, MOVECALLIN, nc, comp, mv, pid)
    elif ev.kind == MOVECALLIN:
        if s.free_ch[c] > 0:
            s.free_ch[c] -= 1
            cnt[C_HANDOFFS_IN] += 1
            _power_control(s, p, c)
            return _schedule_in_call(s, ctx, nc, comp, mv, pid)
        cnt[C_HANDOFF_BLOCKS] += 1
        return _schedule_idle(s, p, ctx, nc, mv, pid)
    elif ev.kind == ACTION:
        s.guard[c] = s.actions[c]
        return SEER_OK
    return SEER_E_MODEL


cdef class PcsModel(Scenario):
    """PCS state (struct of arrays over cells) and hooks.

    ``actions`` is the int32 array the env writes guards into before each
    step; ``counters`` (cells x 6, cumulative, columns ``COUNTERS``),
    ``free_channels``, ``guard`` and ``power`` are NumPy views of the state.

    ``num_copies`` (default 1) lays that many independent copies of the grid
    in one model for :func:`seer_envs.vector_env`: copy k is cells
    ``[k * cells, (k + 1) * cells)`` and its phones only ever reach its own
    cells.  A single env is ``num_copies=1``, the same code path.
    """

    cdef PcsState s
    cdef object _arrays     # keeps the NumPy buffers behind the pointers alive
    cdef readonly object actions, counters, free_channels, guard, power
    # Per copy: its parameters and hot spots' (x0, y0, vx, vy) tracks; per cell:
    # its copy.  Config, not state: no snapshot reads them (the batch's worlds
    # hold each copy's values, and configure() writes them here).
    cdef object _hot_tracks
    cdef PerCopy _per_copy
    cdef int64_t _hot_max
    cdef readonly int64_t cells_per_copy
    cdef int64_t _channels

    def __cinit__(self, *args, **kwargs):
        self.set_hooks(on_init, on_event, &self.s)

    def __init__(self, cfg, num_copies=1):
        import numpy as np
        Scenario.__init__(self, cfg.grid_width * cfg.grid_height, cfg.handoff_latency, num_copies)
        n = self.num_lps
        if cfg.portables_per_cell > SEER_OUTBOX_CAPACITY:
            # on_init emits one event per phone in one hook call
            raise ValueError(f"portables_per_cell must be <= {SEER_OUTBOX_CAPACITY} (the runtime's "
                             f"events per hook call), got {cfg.portables_per_cell}")
        # Before anything is allocated: a grid larger than the machine's free
        # memory is a clear MemoryError now, not one after a minute of on_init.
        cfg.check_memory(num_copies)
        self.s.width = cfg.grid_width
        self.s.height = cfg.grid_height
        self.s.cells = cfg.grid_width * cfg.grid_height
        self.s.copies = num_copies
        self.cells_per_copy = self.s.cells
        self.s.channels = cfg.channels_per_cell
        self.s.portables = cfg.portables_per_cell
        self.s.latency = cfg.handoff_latency
        self._hot_max = cfg.hotspot_count
        self._hot_tracks = np.zeros((num_copies, max(1, self._hot_max), 4), np.float64)
        self._per_copy = PerCopy(sizeof(PcsParams), num_copies, [self.s.cells])
        self.s.params = <const PcsParams*>self._per_copy.params
        self.s.copy_of = self._per_copy.copy_of
        for c in range(num_copies):
            self.configure(c, cfg)
        self.free_channels = np.full(n, cfg.channels_per_cell, dtype=np.int32)
        self.guard = np.zeros(n, dtype=np.int32)
        self.actions = np.zeros(n, dtype=np.int32)
        self.counters = np.zeros((n, N_COUNTERS), dtype=np.int64)
        self.power = np.zeros(n, dtype=np.float64)
        cdef int32_t[::1] fc = self.free_channels
        cdef int32_t[::1] g = self.guard
        cdef int32_t[::1] a = self.actions
        cdef int64_t[:, ::1] cn = self.counters
        cdef double[::1] pw = self.power
        self.s.free_ch = &fc[0]
        self.s.guard = &g[0]
        self.s.actions = &a[0]
        self.s.counters = &cn[0, 0]
        self.s.power = &pw[0]
        self._channels = cfg.channels_per_cell

    def configure(self, int64_t c, cfg):
        """Copy ``c``'s values of the per-copy fields from ``cfg`` (its
        next restart reads them; ``PcsCopies.configure``)."""
        import numpy as np
        cdef PcsParams* p = <PcsParams*>self._per_copy.entry(c)
        cdef double[:, :, ::1] hv = self._hot_tracks
        tracks = np.asarray(cfg.hotspot_tracks(), np.float64).reshape(-1, 4)
        if len(tracks) > self._hot_max:
            raise ValueError(f"configure: {len(tracks)} hot spots, the model holds {self._hot_max}")
        self._hot_tracks[c, :len(tracks)] = tracks
        p.interarrival = cfg.call_interarrival_mean
        p.duration = cfg.call_duration_mean
        p.move_mean = cfg.move_interval_mean
        p.pc_iters = cfg.power_control_iters
        p.load_varies = cfg.load_varies
        p.hot_count = len(tracks)
        p.hot = &hv[c, 0, 0]
        p.hot_amp = cfg.hotspot_amplitude
        p.hot_inv2r2 = 1.0 / (2.0 * cfg.hotspot_radius * cfg.hotspot_radius)
        p.diurnal_amp = cfg.diurnal_amplitude
        p.diurnal_omega = cfg.diurnal_omega
        p.penalty = cfg.handoff_penalty
        p.rush = cfg.rush_hours
        p.rush_mean = cfg.rush_move_interval_mean
        p.rush_period = cfg.rush_period
        p.rush_h = cfg.rush_fraction / 2.0

    def load(self, cells, double t):
        """The load factor of each of ``cells`` (global LP ids) at time ``t``
        (minutes): the multiplier of the call rate the handlers use."""
        import numpy as np
        out = np.empty(len(cells), np.float64)
        for i, c in enumerate(cells):
            if not 0 <= c < self.s.cells * self.s.copies:
                raise ValueError(f"load: cell {c} out of range")
            out[i] = _load(&self.s, _params(&self.s, <lp_id_t>c), <lp_id_t>c, t)
        return out

    def reset_cells(self, lo, hi):
        """Restore cells ``[lo, hi)`` to their state at construction (a
        vector env restarting one copy; the engine restarts its LPs)."""
        self.free_channels[lo:hi] = self._channels
        self.guard[lo:hi] = 0
        self.actions[lo:hi] = 0
        self.counters[lo:hi] = 0
        self.power[lo:hi] = 0.0


cdef inline void _obs_row(const PcsState* s, lp_id_t c, const int64_t* delta, float* row,
                          double scale) noexcept nogil:
    cdef double ch = <double>s.channels
    cdef uint64_t d
    cdef lp_id_t nb[4]
    row[OBS_BUSY] = <float>((ch - s.free_ch[c]) / ch)
    row[OBS_GUARD] = <float>(s.guard[c] / ch)
    row[OBS_ATTEMPTS] = <float>(delta[C_CALL_ATTEMPTS] / scale)
    row[OBS_CHANNEL_BLOCKS] = <float>(delta[C_CHANNEL_BLOCKS] / scale)
    row[OBS_HANDOFFS_IN] = <float>(delta[C_HANDOFFS_IN] / scale)
    row[OBS_HANDOFF_BLOCKS] = <float>(delta[C_HANDOFF_BLOCKS] / scale)
    _neighbours(s, c, nb)
    for d in range(4):
        row[OBS_NEIGHBOURS + d] = <float>((ch - s.free_ch[nb[d]]) / ch)
    row[OBS_POWER] = <float>s.power[c]


cdef inline void _boundary_cell(const PcsState* s, lp_id_t c, int64_t* prev, int64_t* delta_out,
                                float* row, float* reward, double scale) noexcept nogil:
    cdef const int64_t* cur = &s.counters[<int64_t>c * N_COUNTERS]
    cdef double penalty = _params(s, c).penalty
    cdef int k
    for k in range(N_COUNTERS):
        delta_out[k] = cur[k] - prev[k]
        prev[k] = cur[k]
    _obs_row(s, c, delta_out, row, scale)
    reward[0] = <float>(-(<double>delta_out[C_CHANNEL_BLOCKS] + penalty * <double>delta_out[C_HANDOFF_BLOCKS]))


def boundary(PcsModel m, float[:, ::1] obs, float[::1] rewards, int64_t[:, ::1] prev,
             int64_t[:, ::1] delta, int num_threads, int64_t lo=0, int64_t hi=-1):
    """Step boundary, in parallel over cells: per-step counter deltas (from
    ``prev``, which is advanced), observations and rewards.  Each cell reads
    its own state and its neighbours' free channels as they stand at the
    boundary; nothing is reduced across cells, so the result does not depend
    on the thread count.  ``[lo, hi)`` limits it to those cells (default:
    all cells of every copy); the arrays are indexed by global cell."""
    cdef int64_t n = m.s.cells * m.s.copies
    cdef _BoundaryArgs a
    if hi < 0:
        hi = n
    if not (0 <= lo <= hi <= n):
        raise ValueError(f"boundary: bad cell range [{lo}, {hi}) for {n} cells")
    _boundary_args(&a, m, obs, rewards, prev, delta)
    if hi == lo:
        return
    a.base = lo
    # On the engine's worker team (no OpenMP pool: fork-safe, and its waits
    # block rather than spin).
    with nogil:
        seer_parallel_for(num_threads, hi - lo, _boundary_range, &a)


ctypedef struct _BoundaryArgs:
    const PcsState* s
    int64_t base                # first cell of the range
    int64_t* prev
    int64_t* delta
    float* obs
    float* rewards
    int64_t prev_stride
    int64_t delta_stride
    int64_t obs_stride
    double scale


cdef void _boundary_range(void* arg, int64_t lo, int64_t hi) noexcept nogil:
    cdef _BoundaryArgs* a = <_BoundaryArgs*>arg
    cdef int64_t c
    for c in range(a.base + lo, a.base + hi):
        _boundary_cell(a.s, <lp_id_t>c, &a.prev[c * a.prev_stride], &a.delta[c * a.delta_stride],
                       &a.obs[c * a.obs_stride], &a.rewards[c], a.scale)


cdef class _BoundaryAtCopyEnd(CopyEnd):
    # boundary() of one copy at a time, run by the engine inside a run in copy
    # groups (Engine.run_until(copy_end=...)) as each copy reaches its end.
    cdef _BoundaryArgs a
    cdef object arrays          # what a's pointers point into


cdef void _boundary_copies(void* arg, int64_t c0, int64_t c1) noexcept nogil:
    cdef _BoundaryArgs* a = <_BoundaryArgs*>arg
    _boundary_range(a, c0 * a.s.cells, c1 * a.s.cells)


def boundary_at_copy_end(PcsModel m, float[:, ::1] obs, float[::1] rewards, int64_t[:, ::1] prev,
                         int64_t[:, ::1] delta):
    """:func:`boundary` over each copy's cells, as a ``CopyEnd`` for
    ``Engine.run_until(copy_end=...)``: the engine runs it for each copy
    right after the copy reaches the run's end (copy groups only).  The
    arrays are those :func:`boundary` takes; they are kept alive with it."""
    cdef _BoundaryAtCopyEnd end = _BoundaryAtCopyEnd()
    _boundary_args(&end.a, m, obs, rewards, prev, delta)
    end.a.base = 0
    end.arrays = (m, obs, rewards, prev, delta)
    end.fn = _boundary_copies
    end.arg = &end.a
    return end


cdef int _boundary_args(_BoundaryArgs* a, PcsModel m, float[:, ::1] obs, float[::1] rewards,
                        int64_t[:, ::1] prev, int64_t[:, ::1] delta) except -1:
    # boundary()'s arguments checked and laid out for _boundary_range (a.base: 0)
    cdef int64_t n = m.s.cells * m.s.copies
    if obs.shape[0] < n or rewards.shape[0] < n or prev.shape[0] < n or delta.shape[0] < n:
        raise ValueError(f"boundary: arrays shorter than {n} cells")
    a.s = &m.s
    a.base = 0
    if n == 0:
        return 0
    a.prev = &prev[0, 0]
    a.delta = &delta[0, 0]
    a.obs = &obs[0, 0]
    a.rewards = &rewards[0]
    a.prev_stride = prev.shape[1]
    a.delta_stride = delta.shape[1]
    a.obs_stride = obs.shape[1]
    a.scale = <double>(m.s.portables if m.s.portables > 0 else 1)
    return 0
