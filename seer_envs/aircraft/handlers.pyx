# SPDX-License-Identifier: BSD-3-Clause
"""Aircraft handlers on the SEER runtime (nogil), their state, and the step
boundary (snapshot, grid, observations, rewards).

LPs ``0 .. U-1`` are UAVs, ``U .. U+T-1`` ground targets.  The only
cross-entity event is MSG, sent ``comm_latency`` ahead: that is the
lookahead.  Handlers read other entities only through the boundary snapshot
(``snap_*`` arrays and the grid), which is written between runs only.

Parameters per copy: copy ``k``'s values of ``AircraftCopies.per_copy`` are
``params[k]`` (an ``AircraftParams``, written by ``AircraftModel.configure``);
a handler reads ``params[copy_of[lp]]``.  A copy may have fewer UAVs or
targets than the model's width: the ones beyond its counts are inactive
(no draws, no events, never in the snapshot's cell lists).

Event kinds (all write only the state of the LP handling them):

ACTION       (UAV, injected at k*dt) copy the commanded acceleration from
             the action array; start this step's DYNAMICS chain at now.
DYNAMICS     (UAV) interval j of the step, ``[start + j*control_period,
             start + (j+1)*control_period]`` (the last one ends at the step end): RK4 over
             ``dynamics_substeps`` substeps of position, velocity, wind gust
             and energy; then clip the speed, reflect at the walls, and stop
             the UAV if its energy is used up.  Schedules interval j+1.
SENSE        (UAV, every sense_period from t=0) from the snapshot grid and
             the UAV's own live position: count UAVs closer than
             collision_radius, take the nearest target within sensor_range
             into the belief, and send the belief to the max_messages
             nearest UAVs within comm_range (ties by id).
MSG          (UAV) fuse a neighbour's estimate if it is fresher.
TARGET_MOVE  (target, every control_period from t=0) random-waypoint move.

Why ACTION starts the DYNAMICS chain instead of a free-running chain: an
injected event sorts after every LP-emitted event at the same time, so a
free-running DYNAMICS at k*dt would integrate the first control interval of
step k with step k-1's command.

Wind gust: the OU equation ``dw = -w/tau dt + sigma sqrt(2/tau) dW`` is
integrated by the same RK4 as the rest of the state, with the white noise
held constant over each substep: two standard normals (Box-Muller from two
uniform draws of the UAV's own stream) per substep, forcing
``sigma * sqrt(2 / (tau h)) * n`` (``AircraftConfig.integration``).

Energy: ``dE/dt = -(idle_power + thrust_power * (|u| + drag |v|^2))`` with
``u`` the commanded acceleration after clipping to max_accel: never
positive, so energy never increases.  It is clamped at 0; a UAV at 0 stops
(velocity 0), its events do nothing further and its agent terminates.

Launch: UAV i starts at rest at a uniform point of cell (i mod c, i div c)
of a jittered c x r launch grid over the arena (c = ceil(sqrt(U)), r =
ceil(U / c)), with full energy.  The swarm starts evenly spread, with no
pile-ups, and neighbouring ids are neighbours in space.  The second point is
also a performance choice: the runtime gives each thread a contiguous range
of LPs, so most MSGs then stay inside one thread's range (at 4096 UAVs the
2-thread speedup was 1.82x with an i.i.d. uniform launch and 1.96x with
this one, and it held at step 400 under random actions).  Targets start at
i.i.d. uniform points.

Random draws, per UAV stream: on_init 2 (position); each DYNAMICS substep 2
(gust).  Per target stream: on_init 4 (position, first waypoint); a
TARGET_MOVE that reaches its waypoint 2 (the next one).  The pure-Python
reference (``seer_envs.aircraft.reference``) makes the same draws in the
same order and the same floating-point operations in the same order.
"""

from libc.math cimport sqrt, cos, sin
from libc.stdint cimport int32_t, int64_t, uint8_t

from seer_envs.scenario.per_copy cimport PerCopy
from seer_runtime.contract cimport *
from seer_runtime.scenario cimport CopyEnd, Scenario, seer_parallel_for
from seer_runtime.scenario import enum_names

cdef enum:
    ACTION = 0
    DYNAMICS = 1
    SENSE = 2
    MSG = 3
    TARGET_MOVE = 4

# Observation slots of a UAV's row: the single source of the layout (the
# env's ``obs_layout`` and ``observation_bounds``, the reference and the docs
# read these).
cdef enum:
    OBS_X = 0                   # own position / arena_size
    OBS_Y = 1
    OBS_VX = 2                  # own velocity / max_speed
    OBS_VY = 3
    OBS_ENERGY = 4              # energy / battery_capacity
    OBS_NEIGHBOURS = 5          # N_NEIGHBOURS x NEIGHBOUR_STRIDE: rel. position / comm_range,
    NEIGHBOUR_STRIDE = 4        #   rel. velocity / max_speed (dx, dy, dvx, dvy)
    N_NEIGHBOURS = 4            # UAVs in the observation
    OBS_TARGET_X = 21           # freshest known target: rel. position / arena_size
    OBS_TARGET_Y = 22
    OBS_TARGET_AGE = 23         # its age in steps; -1 when none
    OBS_MESSAGES = 24           # messages received this step
    OBS_SIZE = 25

# Per-UAV cumulative counters (columns of ``counters``).
cdef enum:
    C_COLLISIONS = 0
    C_MESSAGES_RECEIVED = 1
    C_MESSAGES_SENT = 2
    C_DETECTIONS = 3
    C_BELIEF_UPDATES = 4
    C_DYNAMICS_EVENTS = 5
    N_COUNTERS = 6

cdef enum:
    TOPK_CAP = 64               # the SENSE handler's stack buffer: >= max_messages, N_NEIGHBOURS


ACTION_KIND = ACTION
OBS_SIZE_PY = OBS_SIZE
OUTBOX_CAPACITY_PY = SEER_OUTBOX_CAPACITY
N_NEIGHBOURS_PY = N_NEIGHBOURS
TOPK_CAP_PY = TOPK_CAP
COUNTERS = enum_names({"collisions": C_COLLISIONS, "messages_received": C_MESSAGES_RECEIVED,
                   "messages_sent": C_MESSAGES_SENT, "detections": C_DETECTIONS,
                   "belief_updates": C_BELIEF_UPDATES, "dynamics_events": C_DYNAMICS_EVENTS},
                  N_COUNTERS)
#: Counter name -> column.
COUNTER_INDEX = {name: i for i, name in enumerate(COUNTERS)}
#: Observation part -> index or slice of the row.
OBS_LAYOUT = {"position": slice(OBS_X, OBS_Y + 1), "velocity": slice(OBS_VX, OBS_VY + 1),
              "energy": OBS_ENERGY,
              "neighbours": slice(OBS_NEIGHBOURS, OBS_NEIGHBOURS + N_NEIGHBOURS * NEIGHBOUR_STRIDE),
              "target_rel": slice(OBS_TARGET_X, OBS_TARGET_Y + 1), "target_age": OBS_TARGET_AGE,
              "messages": OBS_MESSAGES}
# Every slot is covered exactly once.
enum_names({"x": OBS_X, "y": OBS_Y, "vx": OBS_VX, "vy": OBS_VY, "energy": OBS_ENERGY,
        "tx": OBS_TARGET_X, "ty": OBS_TARGET_Y, "age": OBS_TARGET_AGE, "msgs": OBS_MESSAGES}
       | {f"n{k}": OBS_NEIGHBOURS + k for k in range(N_NEIGHBOURS * NEIGHBOUR_STRIDE)}, OBS_SIZE)

ctypedef struct AircraftParams:
    # One copy's parameters (AircraftCopies.per_copy and what follows from
    # them), read-only during runs; AircraftModel.configure writes them.
    int64_t n_uav               # the copy's UAVs (<= U1): its first n_uav UAV LPs; the others
    int64_t n_tgt               #   inactive, likewise its targets (<= T1)
    double arena                # arena side (m)
    double control_period       # s
    int64_t n_ctrl              # DYNAMICS intervals per step
    int64_t substeps            # RK4 substeps per DYNAMICS
    double h[2]                 # substep (s): full interval, last interval
    double hh[2]                # h / 2
    double h6[2]                # h / 6
    double gust[2]              # gust forcing scale (m/s^3 per unit normal)
    double sense_period         # (s)
    double sensor_r2            # sensor_range^2 (m^2)
    double comm_r2              # comm_range^2 (m^2)
    double comm_range           # (m)
    double coll_r2              # collision_radius^2 (m^2)
    int64_t max_msgs            # MSGs per SENSE
    double vmax                 # max_speed (m/s)
    double vmax2                # max_speed^2
    double amax                 # max_accel (m/s^2)
    double drag                 # (1/m)
    double inv_tau              # 1 / wind_tau (1/s)
    double idle_power           # (units/s)
    double thrust_power         # (units/s per m/s^2)
    double battery              # initial energy (units)
    double tgt_step             # target_speed * control_period (m)
    int64_t launch_cols         # launch grid: columns
    double launch_w             # launch grid: cell width, height (m)
    double launch_h
    int64_t grid                # snapshot grid: cells per side (<= the model's grid_cap)
    double inv_cell             # grid / arena (1/m)


ctypedef struct AircraftState:
    # --- shape and shared parameters (read-only) ---
    int64_t n_uav               # UAVs (LPs 0 .. n_uav-1), all copies
    int64_t n_tgt               # targets (LPs n_uav ..), all copies
    int64_t U1                  # UAVs of one copy (vector env): copy k's UAVs are
    int64_t T1                  #   [k*U1, (k+1)*U1), its targets [k*T1, (k+1)*T1); a single env is 1 copy
    double dt                   # env step (s)
    double latency              # comm_latency = lookahead (s)
    int64_t grid_cap            # cells per side the cell-list arrays hold per copy
    # --- per-copy parameters ---
    AircraftParams* params      # one per copy
    const int32_t* copy_of      # per LP: its copy (handlers read params[copy_of[lp]])
    # --- UAV live state (per UAV; written only by that UAV's handlers) ---
    double* px                  # position (m)
    double* py
    double* vx                  # velocity (m/s)
    double* vy
    double* wx                  # wind gust acceleration (m/s^2)
    double* wy
    double* energy              # remaining energy (units)
    double* cmd                 # commanded acceleration, 2 per UAV (m/s^2), before clipping
    double* step_start          # time of the last ACTION (s)
    uint8_t* alive              # 0 once the energy is used up
    double* bel_x               # belief: freshest known target position (m)
    double* bel_y
    double* bel_t               # its time (s); < 0: no belief
    int64_t* bel_id             # its target index (0-based among targets); -1: none
    int64_t* counters           # n_uav x N_COUNTERS, cumulative, order of COUNTERS
    const double* actions       # 2 per UAV: this step's command (env-owned, read-only in runs)
    # --- target live state (per target) ---
    double* tx                  # position (m)
    double* ty
    double* tvx                 # velocity over the last move (m/s)
    double* tvy
    double* twx                 # waypoint (m)
    double* twy
    # --- boundary snapshot (read-only during runs) ---
    double* snap_times          # per copy: time of its snapshot (s)
    double* sx                  # per entity (UAVs then targets): position, velocity
    double* sy
    double* svx
    double* svy
    uint8_t* salive             # per UAV
    int64_t* cell               # per entity: cell index in its copy's grid, -1 for a stopped
                                #   UAV and an inactive UAV or target
    int64_t* ucell_start        # per copy k, grid^2 + 1 at k*(grid_cap^2+1): UAV ids of cell c at
    int64_t* ucell_ids          #   ucell_ids[k*U1 + start[c] : k*U1 + start[c+1]]
    int64_t* tcell_start        # the same for targets (target indices)
    int64_t* tcell_ids


# --- helpers ---------------------------------------------------------------

cdef inline int64_t _axis_cell(const AircraftParams* p, double v) noexcept nogil:
    cdef int64_t c = <int64_t>(v * p.inv_cell)
    if c < 0:
        return 0
    if c >= p.grid:
        return p.grid - 1
    return c


# Insert (d2, id) into the sorted top-k (ascending by (d2, id)); returns the new size.
cdef inline int64_t _topk_insert(double* kd, int64_t* kid, int64_t size, int64_t k,
                                 double d2, int64_t idx) noexcept nogil:
    cdef int64_t p
    if k <= 0:
        return size
    if size == k and (d2 > kd[k - 1] or (d2 == kd[k - 1] and idx > kid[k - 1])):
        return size
    p = size if size < k else k - 1
    while p > 0 and (kd[p - 1] > d2 or (kd[p - 1] == d2 and kid[p - 1] > idx)):
        kd[p] = kd[p - 1]
        kid[p] = kid[p - 1]
        p -= 1
    kd[p] = d2
    kid[p] = idx
    return size + 1 if size < k else size


# UAVs (alive in the snapshot, other than `me`) around (x, y): the k nearest
# within comm_range into (kd, kid), and the count closer than
# collision_radius.  Returns the number of nearest found.
cdef int64_t _near_uavs(const AircraftState* s, const AircraftParams* p, int64_t copy_ix,
                        int64_t me, double x, double y, int64_t k,
                        double* kd, int64_t* kid, int64_t* ncoll) noexcept nogil:
    cdef int64_t cx = _axis_cell(p, x), cy = _axis_cell(p, y)
    cdef int64_t gx, gy, c, j, o, size = 0, coll = 0
    cdef const int64_t* start = s.ucell_start + copy_ix * (s.grid_cap * s.grid_cap + 1)
    cdef const int64_t* ids = s.ucell_ids + copy_ix * s.U1
    cdef double dx, dy, d2
    for gy in range(cy - 1 if cy > 0 else 0, (cy + 2) if cy + 2 <= p.grid else p.grid):
        for gx in range(cx - 1 if cx > 0 else 0, (cx + 2) if cx + 2 <= p.grid else p.grid):
            c = gy * p.grid + gx
            for j in range(start[c], start[c + 1]):
                o = ids[j]
                if o == me:
                    continue
                dx = s.sx[o] - x
                dy = s.sy[o] - y
                d2 = dx * dx + dy * dy
                if d2 < p.coll_r2:
                    coll += 1
                if d2 <= p.comm_r2:
                    size = _topk_insert(kd, kid, size, k, d2, o)
    ncoll[0] = coll
    return size


# Targets within sensor_range of (x, y) in the snapshot: their count, and
# the nearest (by (d2, index)) in best[0] (-1 when none).
cdef int64_t _near_targets(const AircraftState* s, const AircraftParams* p, int64_t copy_ix,
                           double x, double y, int64_t* best) noexcept nogil:
    cdef int64_t cx = _axis_cell(p, x), cy = _axis_cell(p, y)
    cdef int64_t gx, gy, c, j, t, e, count = 0, b = -1
    cdef const int64_t* start = s.tcell_start + copy_ix * (s.grid_cap * s.grid_cap + 1)
    cdef const int64_t* ids = s.tcell_ids + copy_ix * s.T1
    cdef double dx, dy, d2, bd = 0.0
    for gy in range(cy - 1 if cy > 0 else 0, (cy + 2) if cy + 2 <= p.grid else p.grid):
        for gx in range(cx - 1 if cx > 0 else 0, (cx + 2) if cx + 2 <= p.grid else p.grid):
            c = gy * p.grid + gx
            for j in range(start[c], start[c + 1]):
                t = ids[j]
                e = s.n_uav + t
                dx = s.sx[e] - x
                dy = s.sy[e] - y
                d2 = dx * dx + dy * dy
                if d2 <= p.sensor_r2:
                    count += 1
                    if b < 0 or d2 < bd or (d2 == bd and t < b):
                        b = t
                        bd = d2
    best[0] = b
    return count


# --- DYNAMICS --------------------------------------------------------------

# Time derivative of (x, y, vx, vy, wx, wy, E) into d[0..6].
cdef inline void _deriv(const AircraftParams* p, double vx, double vy, double wx, double wy,
                        double ux, double uy, double umag, double fx, double fy,
                        double* d) noexcept nogil:
    cdef double sp2 = vx * vx + vy * vy
    cdef double sp = sqrt(sp2)
    d[0] = vx
    d[1] = vy
    d[2] = ux + wx - p.drag * sp * vx
    d[3] = uy + wy - p.drag * sp * vy
    d[4] = fx - wx * p.inv_tau
    d[5] = fy - wy * p.inv_tau
    d[6] = -(p.idle_power + p.thrust_power * (umag + p.drag * sp2))


cdef inline void _reflect(double* p, double* v, double L) noexcept nogil:
    if p[0] < 0.0:
        p[0] = -p[0]
        v[0] = -v[0]
    elif p[0] > L:
        p[0] = 2.0 * L - p[0]
        v[0] = -v[0]
    if p[0] < 0.0:
        p[0] = 0.0
    elif p[0] > L:
        p[0] = L


cdef int _on_dynamics(AircraftState* s, const AircraftParams* p, Ctx* ctx, int64_t i,
                      int64_t j) noexcept nogil:
    cdef int last = 1 if j == p.n_ctrl - 1 else 0
    cdef double h = p.h[last], hh = p.hh[last], h6 = p.h6[last], gust = p.gust[last]
    cdef double x = s.px[i], y = s.py[i], vx = s.vx[i], vy = s.vy[i]
    cdef double wx = s.wx[i], wy = s.wy[i], en = s.energy[i]
    cdef double ux = s.cmd[2 * i], uy = s.cmd[2 * i + 1]
    cdef double umag = sqrt(ux * ux + uy * uy)
    cdef double k1[7]
    cdef double k2[7]
    cdef double k3[7]
    cdef double k4[7]
    cdef double e, r, th, fx, fy, sp2, f
    cdef int64_t n
    cdef Event* ev
    if umag > p.amax:
        f = p.amax / umag
        ux = ux * f
        uy = uy * f
        umag = p.amax
    s.counters[i * N_COUNTERS + C_DYNAMICS_EVENTS] += 1
    for n in range(p.substeps):
        # Gust noise for this substep (Box-Muller), held constant over it.
        e = seer_exponential(ctx, 1.0)
        r = sqrt(2.0 * e)
        th = 6.283185307179586 * seer_uniform(ctx)     # 2 pi (math.tau)
        fx = gust * (r * cos(th))
        fy = gust * (r * sin(th))
        _deriv(p, vx, vy, wx, wy, ux, uy, umag, fx, fy, k1)
        _deriv(p, vx + hh * k1[2], vy + hh * k1[3], wx + hh * k1[4], wy + hh * k1[5],
               ux, uy, umag, fx, fy, k2)
        _deriv(p, vx + hh * k2[2], vy + hh * k2[3], wx + hh * k2[4], wy + hh * k2[5],
               ux, uy, umag, fx, fy, k3)
        _deriv(p, vx + h * k3[2], vy + h * k3[3], wx + h * k3[4], wy + h * k3[5],
               ux, uy, umag, fx, fy, k4)
        x = x + h6 * (k1[0] + 2.0 * k2[0] + 2.0 * k3[0] + k4[0])
        y = y + h6 * (k1[1] + 2.0 * k2[1] + 2.0 * k3[1] + k4[1])
        vx = vx + h6 * (k1[2] + 2.0 * k2[2] + 2.0 * k3[2] + k4[2])
        vy = vy + h6 * (k1[3] + 2.0 * k2[3] + 2.0 * k3[3] + k4[3])
        wx = wx + h6 * (k1[4] + 2.0 * k2[4] + 2.0 * k3[4] + k4[4])
        wy = wy + h6 * (k1[5] + 2.0 * k2[5] + 2.0 * k3[5] + k4[5])
        en = en + h6 * (k1[6] + 2.0 * k2[6] + 2.0 * k3[6] + k4[6])
        sp2 = vx * vx + vy * vy
        if sp2 > p.vmax2:
            f = p.vmax / sqrt(sp2)
            vx = vx * f
            vy = vy * f
        _reflect(&x, &vx, p.arena)
        _reflect(&y, &vy, p.arena)
        if en <= 0.0:
            en = 0.0
            vx = 0.0
            vy = 0.0
            s.alive[i] = 0
            break
    s.px[i] = x
    s.py[i] = y
    s.vx[i] = vx
    s.vy[i] = vy
    s.wx[i] = wx
    s.wy[i] = wy
    s.energy[i] = en
    if s.alive[i] and j + 1 < p.n_ctrl:
        ev = seer_emit(ctx, s.step_start[i] + <double>(j + 1) * p.control_period, ctx.lp, DYNAMICS)
        if ev == NULL:
            return SEER_E_OUTBOX_FULL
        ev.data.i[0] = j + 1
    return SEER_OK


# --- SENSE and MSG ---------------------------------------------------------

cdef int _on_sense(AircraftState* s, const AircraftParams* p, int64_t copy_ix, Ctx* ctx,
                   int64_t i, int64_t j) noexcept nogil:
    cdef double x = s.px[i], y = s.py[i]
    cdef double kd[TOPK_CAP]
    cdef int64_t kid[TOPK_CAP]
    cdef int64_t* cnt = &s.counters[i * N_COUNTERS]
    cdef int64_t best, ncoll, nn, m
    cdef Event* ev
    _near_targets(s, p, copy_ix, x, y, &best)
    if best >= 0:
        cnt[C_DETECTIONS] += 1
        if s.snap_times[copy_ix] >= s.bel_t[i]:
            s.bel_x[i] = s.sx[s.n_uav + best]
            s.bel_y[i] = s.sy[s.n_uav + best]
            s.bel_t[i] = s.snap_times[copy_ix]
            s.bel_id[i] = best - copy_ix * s.T1
    nn = _near_uavs(s, p, copy_ix, i, x, y, p.max_msgs if s.bel_id[i] >= 0 else 0, kd, kid, &ncoll)
    cnt[C_COLLISIONS] += ncoll
    for m in range(nn):
        ev = seer_emit(ctx, ctx.now + s.latency, <lp_id_t>kid[m], MSG)
        if ev == NULL:
            return SEER_E_OUTBOX_FULL
        ev.data.f[0] = s.bel_x[i]
        ev.data.f[1] = s.bel_y[i]
        ev.data.f[2] = s.bel_t[i]
        ev.data.i[3] = s.bel_id[i]
    cnt[C_MESSAGES_SENT] += nn
    ev = seer_emit(ctx, <double>(j + 1) * p.sense_period, ctx.lp, SENSE)
    if ev == NULL:
        return SEER_E_OUTBOX_FULL
    ev.data.i[0] = j + 1
    return SEER_OK


cdef inline void _on_msg(AircraftState* s, int64_t i, const Event* ev) noexcept nogil:
    cdef int64_t* cnt = &s.counters[i * N_COUNTERS]
    cnt[C_MESSAGES_RECEIVED] += 1
    if ev.data.f[2] > s.bel_t[i]:
        s.bel_x[i] = ev.data.f[0]
        s.bel_y[i] = ev.data.f[1]
        s.bel_t[i] = ev.data.f[2]
        s.bel_id[i] = ev.data.i[3]
        cnt[C_BELIEF_UPDATES] += 1


# --- targets ---------------------------------------------------------------

cdef int _on_target_move(AircraftState* s, const AircraftParams* p, Ctx* ctx, int64_t t,
                         int64_t j) noexcept nogil:
    cdef double x = s.tx[t], y = s.ty[t]
    cdef double dx = s.twx[t] - x, dy = s.twy[t] - y
    cdef double dist = sqrt(dx * dx + dy * dy)
    cdef double nx, ny, f
    cdef Event* ev
    if dist <= p.tgt_step:
        nx = s.twx[t]
        ny = s.twy[t]
        s.twx[t] = p.arena * seer_uniform(ctx)
        s.twy[t] = p.arena * seer_uniform(ctx)
    else:
        f = p.tgt_step / dist
        nx = x + dx * f
        ny = y + dy * f
    s.tvx[t] = (nx - x) / p.control_period
    s.tvy[t] = (ny - y) / p.control_period
    s.tx[t] = nx
    s.ty[t] = ny
    ev = seer_emit(ctx, <double>(j + 1) * p.control_period, ctx.lp, TARGET_MOVE)
    if ev == NULL:
        return SEER_E_OUTBOX_FULL
    ev.data.i[0] = j + 1
    return SEER_OK


# --- hooks -------------------------------------------------------------------

cdef int on_init(void* model, Ctx* ctx) noexcept nogil:
    cdef AircraftState* s = <AircraftState*>model
    cdef int64_t lp = ctx.lp, t
    cdef const AircraftParams* p = &s.params[s.copy_of[lp]]
    cdef Event* ev
    if lp < s.n_uav:
        t = lp % s.U1         # the UAV's index in its copy
        if t >= p.n_uav:
            return SEER_OK    # inactive (beyond the copy's count): no draws, no events
        s.px[lp] = (<double>(t % p.launch_cols) + seer_uniform(ctx)) * p.launch_w
        s.py[lp] = (<double>(t // p.launch_cols) + seer_uniform(ctx)) * p.launch_h
        ev = seer_emit(ctx, ctx.now, ctx.lp, SENSE)
    else:
        t = lp - s.n_uav
        if t % s.T1 >= p.n_tgt:
            return SEER_OK    # inactive
        s.tx[t] = p.arena * seer_uniform(ctx)
        s.ty[t] = p.arena * seer_uniform(ctx)
        s.twx[t] = p.arena * seer_uniform(ctx)
        s.twy[t] = p.arena * seer_uniform(ctx)
        ev = seer_emit(ctx, ctx.now, ctx.lp, TARGET_MOVE)
    if ev == NULL:
        return SEER_E_OUTBOX_FULL
    ev.data.i[0] = 0
    return SEER_OK


cdef int on_event(void* model, Ctx* ctx, const Event* ev) noexcept nogil:
    cdef AircraftState* s = <AircraftState*>model
    cdef int64_t i = ctx.lp
    cdef int64_t c
    cdef Event* out
    if i >= s.n_uav:
        if ev.kind == TARGET_MOVE:
            return _on_target_move(s, &s.params[s.copy_of[i]], ctx, i - s.n_uav, ev.data.i[0])
        return SEER_E_MODEL
    if not s.alive[i]:
        # A stopped UAV: its remaining events do nothing and schedule nothing.
        return SEER_OK
    if ev.kind == DYNAMICS:
        return _on_dynamics(s, &s.params[s.copy_of[i]], ctx, i, ev.data.i[0])
    elif ev.kind == SENSE:
        c = s.copy_of[i]
        return _on_sense(s, &s.params[c], c, ctx, i, ev.data.i[0])
    elif ev.kind == MSG:
        _on_msg(s, i, ev)
        return SEER_OK
    elif ev.kind == ACTION:
        s.cmd[2 * i] = s.actions[2 * i]
        s.cmd[2 * i + 1] = s.actions[2 * i + 1]
        s.step_start[i] = ctx.now
        out = seer_emit(ctx, ctx.now, ctx.lp, DYNAMICS)
        if out == NULL:
            return SEER_E_OUTBOX_FULL
        out.data.i[0] = 0
        return SEER_OK
    return SEER_E_MODEL


def _check_messages(cfg):
    if not 0 <= cfg.max_messages <= TOPK_CAP:
        # _on_sense keeps the max_messages nearest in a TOPK_CAP stack buffer
        raise ValueError(f"max_messages must be in [0, {TOPK_CAP}] (the SENSE top-k buffer), "
                         f"got {cfg.max_messages}")
    if cfg.max_messages + 1 > SEER_OUTBOX_CAPACITY:
        raise ValueError(f"max_messages must be < {SEER_OUTBOX_CAPACITY} (the runtime's events "
                         f"per hook call), got {cfg.max_messages}")


cdef class AircraftModel(Scenario):
    """Aircraft state (struct of arrays) and hooks.

    NumPy views of the state: UAVs ``px, py, vx, vy, wx, wy, energy, alive,
    bel_x, bel_y, bel_t, bel_id, counters`` (n_uav x 6, columns
    ``COUNTERS``), targets ``tx, ty, tvx, tvy, twx, twy``; the boundary
    snapshot ``sx, sy, svx, svy, salive``; ``actions`` is the (n_uav, 2)
    float64 array of commanded accelerations the env writes before a step.
    The boundary's per-step bookkeeping lives here too: ``prev_energy``,
    ``prev_counters``, ``in_range`` (targets within sensor_range at the last
    boundary).
    """

    cdef AircraftState s
    cdef readonly object cfg
    cdef readonly object px, py, vx, vy, wx, wy, energy, cmd, step_start, alive
    cdef readonly object bel_x, bel_y, bel_t, bel_id, counters, actions
    cdef readonly object tx, ty, tvx, tvy, twx, twy
    cdef readonly object sx, sy, svx, svy, salive, cell, ucell_start, ucell_ids
    cdef readonly object tcell_start, tcell_ids
    cdef readonly object prev_energy, prev_counters, in_range, snap_times
    # per-copy parameters (AircraftParams bytes), each LP's copy, each copy's
    # battery_capacity (restarts): not state arrays of the snapshots, which
    # carry the copies' configs instead
    cdef object _battery, _active
    cdef PerCopy _per_copy

    def __cinit__(self, *args, **kwargs):
        self.set_hooks(on_init, on_event, &self.s)

    def __init__(self, cfg, num_copies=1):
        import numpy as np
        Scenario.__init__(self, cfg.num_uavs + cfg.num_targets, cfg.comm_latency, num_copies)
        nu, nt = cfg.num_uavs * num_copies, cfg.num_targets * num_copies
        ne = nu + nt
        cdef AircraftState* s = &self.s
        _check_messages(cfg)
        # Before anything is allocated: a swarm larger than the machine's free
        # memory is a clear MemoryError now, not one deep inside a run.
        cfg.check_memory(num_copies)
        self.cfg = cfg
        s.n_uav = nu
        s.n_tgt = nt
        s.U1 = cfg.num_uavs
        s.T1 = cfg.num_targets
        s.dt = cfg.dt
        s.latency = cfg.comm_latency
        s.grid_cap = cfg.grid_side
        self._per_copy = PerCopy(sizeof(AircraftParams), num_copies, [cfg.num_uavs, cfg.num_targets])
        s.params = <AircraftParams*>self._per_copy.params
        s.copy_of = self._per_copy.copy_of
        self._battery = np.full(num_copies, cfg.battery_capacity, np.float64)
        self._active = np.ones(nu, np.uint8)        # per UAV: within its copy's count
        for c in range(num_copies):
            self.configure(c, cfg)

        def f64(n, fill=0.0):
            return np.full(n, fill, np.float64)

        self.px, self.py, self.vx, self.vy, self.wx, self.wy = (f64(nu) for _ in range(6))
        self.energy = f64(nu, cfg.battery_capacity)
        self.cmd = f64(2 * nu)
        self.step_start = f64(nu)
        self.alive = np.ones(nu, np.uint8)
        self.bel_x, self.bel_y = f64(nu), f64(nu)
        self.bel_t = f64(nu, -1.0)
        self.bel_id = np.full(nu, -1, np.int64)
        self.counters = np.zeros((nu, N_COUNTERS), np.int64)
        self.actions = np.zeros((nu, 2), np.float64)
        tn = max(nt, 1)     # keep the pointers valid when there are no targets
        self.tx, self.ty, self.tvx, self.tvy, self.twx, self.twy = (f64(tn) for _ in range(6))
        self.sx, self.sy, self.svx, self.svy = (f64(ne) for _ in range(4))
        self.salive = np.ones(nu, np.uint8)
        g2 = s.grid_cap * s.grid_cap
        self.cell = np.zeros(ne, np.int64)
        self.ucell_start = np.zeros(num_copies * (g2 + 1), np.int64)
        self.ucell_ids = np.zeros(nu, np.int64)
        self.tcell_start = np.zeros(num_copies * (g2 + 1), np.int64)
        self.tcell_ids = np.zeros(tn, np.int64)
        self.prev_energy = f64(nu, cfg.battery_capacity)
        self.prev_counters = np.zeros((nu, N_COUNTERS), np.int64)
        self.in_range = np.zeros(nu, np.int32)
        self.snap_times = np.zeros(num_copies, np.float64)
        self._bind()

    cdef _bind(self):
        cdef double[::1] px = self.px, py = self.py, vx = self.vx, vy = self.vy
        cdef double[::1] wx = self.wx, wy = self.wy, en = self.energy, cmd = self.cmd
        cdef double[::1] st = self.step_start, bx = self.bel_x, by = self.bel_y, bt = self.bel_t
        cdef uint8_t[::1] al = self.alive, sal = self.salive
        cdef int64_t[::1] bid = self.bel_id, cell = self.cell, us = self.ucell_start
        cdef int64_t[::1] ui = self.ucell_ids, ts = self.tcell_start, ti = self.tcell_ids
        cdef double[::1] snt = self.snap_times
        cdef int64_t[:, ::1] cn = self.counters
        cdef double[:, ::1] act = self.actions
        cdef double[::1] tx = self.tx, ty = self.ty, tvx = self.tvx, tvy = self.tvy
        cdef double[::1] twx = self.twx, twy = self.twy
        cdef double[::1] sx = self.sx, sy = self.sy, svx = self.svx, svy = self.svy
        cdef AircraftState* s = &self.s
        s.px, s.py, s.vx, s.vy = &px[0], &py[0], &vx[0], &vy[0]
        s.wx, s.wy, s.energy, s.cmd = &wx[0], &wy[0], &en[0], &cmd[0]
        s.step_start, s.alive = &st[0], &al[0]
        s.bel_x, s.bel_y, s.bel_t, s.bel_id = &bx[0], &by[0], &bt[0], &bid[0]
        s.counters = &cn[0, 0]
        s.actions = &act[0, 0]
        s.tx, s.ty, s.tvx, s.tvy, s.twx, s.twy = &tx[0], &ty[0], &tvx[0], &tvy[0], &twx[0], &twy[0]
        s.sx, s.sy, s.svx, s.svy, s.salive = &sx[0], &sy[0], &svx[0], &svy[0], &sal[0]
        s.cell, s.ucell_start, s.ucell_ids = &cell[0], &us[0], &ui[0]
        s.tcell_start, s.tcell_ids = &ts[0], &ti[0]
        s.snap_times = &snt[0]

    def configure(self, c, cfg):
        """Copy ``c``'s parameters from ``cfg`` (its ``AircraftCopies.per_copy``
        fields; the others must equal the model's config): the copy's
        handlers and boundary read them from its next restart on.  Its
        ``num_uavs`` and ``num_targets`` may be below the model's: the
        copy's first ones are active, the others draw nothing, schedule
        nothing and are never seen.  Its snapshot grid keeps at most the
        model's cells per side (coarser cells find the same neighbours)."""
        import numpy as np
        cdef AircraftParams* p = <AircraftParams*>self._per_copy.entry(c)
        _check_messages(cfg)
        cdef int last
        if not (cfg.num_uavs <= self.s.U1 and cfg.num_targets <= self.s.T1):
            raise ValueError(f"configure: num_uavs={cfg.num_uavs}, num_targets={cfg.num_targets} "
                             f"exceed the model's {self.s.U1}, {self.s.T1}")
        p.n_uav = cfg.num_uavs
        p.n_tgt = cfg.num_targets
        p.arena = cfg.arena_size
        p.control_period = cfg.control_period
        p.n_ctrl = cfg.control_intervals
        p.substeps = cfg.dynamics_substeps
        for last in range(2):
            p.h[last], p.hh[last], p.h6[last], p.gust[last] = cfg.integration(bool(last))
        p.sense_period = cfg.sense_period
        p.sensor_r2 = cfg.sensor_range * cfg.sensor_range
        p.comm_r2 = cfg.comm_range * cfg.comm_range
        p.comm_range = cfg.comm_range
        p.coll_r2 = cfg.collision_radius * cfg.collision_radius
        p.max_msgs = cfg.max_messages
        p.vmax = cfg.max_speed
        p.vmax2 = cfg.max_speed * cfg.max_speed
        p.amax = cfg.max_accel
        p.drag = cfg.drag
        p.inv_tau = 1.0 / cfg.wind_tau
        p.idle_power = cfg.idle_power
        p.thrust_power = cfg.thrust_power
        p.battery = cfg.battery_capacity
        p.tgt_step = cfg.target_speed * cfg.control_period
        p.grid = min(cfg.grid_side, self.s.grid_cap)
        p.launch_cols, p.launch_w, p.launch_h = cfg.launch_grid
        p.inv_cell = p.grid / cfg.arena_size
        self._battery[c] = cfg.battery_capacity
        self._active[c * self.s.U1:(c + 1) * self.s.U1] = np.arange(self.s.U1) < cfg.num_uavs

    @property
    def grid(self):
        """Cells per side of copy 0's snapshot grid."""
        return self.s.params[0].grid

    @property
    def snap_time(self):
        return self.s.snap_times[0]

    def reset_copies(self, c0, c1):
        """Restore copies ``[c0, c1)`` to their state at construction (a
        vector env restarting them; the engine restarts their LPs)."""
        import numpy as np
        U, T = self.s.U1, self.s.T1
        u, t = slice(c0 * U, c1 * U), slice(c0 * T, c1 * T)
        for a in (self.px, self.py, self.vx, self.vy, self.wx, self.wy, self.step_start,
                  self.bel_x, self.bel_y, self.in_range):
            a[u] = 0
        self.cmd[2 * c0 * U:2 * c1 * U] = 0.0
        # each copy's battery_capacity; 0 (and never alive) beyond its count
        full = np.repeat(self._battery[c0:c1], U) * self._active[u]
        self.energy[u] = full
        self.prev_energy[u] = full
        self.alive[u] = self._active[u]
        self.salive[u] = self._active[u]
        self.bel_t[u] = -1.0
        self.bel_id[u] = -1
        self.counters[u] = 0
        self.prev_counters[u] = 0
        self.actions[u] = 0.0
        if T:
            for a in (self.tx, self.ty, self.tvx, self.tvy, self.twx, self.twy):
                a[t] = 0.0
        self.snap_times[c0:c1] = 0.0


# --- step boundary -------------------------------------------------------------

# Copy entity e's public state into the snapshot and compute its grid cell.
cdef inline void _snap_entity(AircraftState* s, int64_t e) noexcept nogil:
    cdef int64_t t
    cdef const AircraftParams* p = &s.params[s.copy_of[e]]
    if e < s.n_uav:
        s.sx[e] = s.px[e]
        s.sy[e] = s.py[e]
        s.svx[e] = s.vx[e]
        s.svy[e] = s.vy[e]
        s.salive[e] = s.alive[e]
    else:
        t = e - s.n_uav
        s.sx[e] = s.tx[t]
        s.sy[e] = s.ty[t]
        s.svx[e] = s.tvx[t]
        s.svy[e] = s.tvy[t]
    if e < s.n_uav and not s.alive[e]:
        s.cell[e] = -1          # stopped, or inactive (never alive)
    elif e >= s.n_uav and p.n_tgt < s.T1 and t % s.T1 >= p.n_tgt:
        s.cell[e] = -1          # an inactive target
    else:
        s.cell[e] = _axis_cell(p, s.sy[e]) * p.grid + _axis_cell(p, s.sx[e])


# Counting sort of entities [lo, hi) into cells, in id order: deterministic.
# No scratch: placing advances start[c] to cell c's end (the next cell's
# start), and a shift puts the starts back.  So copies sort in parallel.
cdef void _bucket(AircraftState* s, int64_t grid, int64_t lo, int64_t hi, int64_t* start,
                  int64_t* ids, int64_t id_base) noexcept nogil:
    cdef int64_t g2 = grid * grid, c, e
    for c in range(g2 + 1):
        start[c] = 0
    for e in range(lo, hi):
        if s.cell[e] >= 0:
            start[s.cell[e] + 1] += 1
    for c in range(g2):
        start[c + 1] += start[c]
    for e in range(lo, hi):
        c = s.cell[e]
        if c >= 0:
            ids[start[c]] = e - id_base
            start[c] += 1
    for c in range(g2 - 1, 0, -1):
        start[c] = start[c - 1]
    start[0] = 0


# Both grids (UAVs, targets) of copies a.base + [lo, hi).
cdef void _bucket_range(void* arg, int64_t lo, int64_t hi) noexcept nogil:
    cdef _SnapArgs* a = <_SnapArgs*>arg
    cdef AircraftState* s = a.s
    cdef int64_t copy_ix, g, U = s.U1, T = s.T1, nu = s.n_uav, g1 = s.grid_cap * s.grid_cap + 1
    for copy_ix in range(a.base + lo, a.base + hi):
        g = s.params[copy_ix].grid
        _bucket(s, g, copy_ix * U, (copy_ix + 1) * U, s.ucell_start + copy_ix * g1, s.ucell_ids + copy_ix * U, 0)
        _bucket(s, g, nu + copy_ix * T, nu + (copy_ix + 1) * T, s.tcell_start + copy_ix * g1, s.tcell_ids + copy_ix * T, nu)


# Observation row, reward and bookkeeping of UAV i at the boundary.  Writes
# only row i of every output and UAV i's prev_* entries.
cdef inline void _boundary_uav(AircraftState* s, int64_t i, double now, float* row,
                               float* reward, uint8_t* term, int64_t* prev_cnt,
                               double* prev_en, int32_t* in_range) noexcept nogil:
    cdef double kd[N_NEIGHBOURS]
    cdef int64_t kid[N_NEIGHBOURS]
    cdef const int64_t* cnt = &s.counters[i * N_COUNTERS]
    cdef int64_t copy_ix = s.copy_of[i]
    cdef const AircraftParams* p = &s.params[copy_ix]
    cdef double x = s.sx[i], y = s.sy[i], vx = s.svx[i], vy = s.svy[i]
    cdef double r = 0.0, used
    cdef int64_t nn, m, o, best, ncoll, ntg = 0, dcoll, dmsg
    cdef int k
    row[OBS_X] = <float>(x / p.arena)
    row[OBS_Y] = <float>(y / p.arena)
    row[OBS_VX] = <float>(vx / p.vmax)
    row[OBS_VY] = <float>(vy / p.vmax)
    row[OBS_ENERGY] = <float>(s.energy[i] / p.battery)
    for k in range(OBS_ENERGY + 1, OBS_SIZE):
        row[k] = 0.0
    if s.salive[i]:
        nn = _near_uavs(s, p, copy_ix, i, x, y, N_NEIGHBOURS, kd, kid, &ncoll)
        for m in range(nn):
            o = kid[m]
            row[OBS_NEIGHBOURS + NEIGHBOUR_STRIDE * m] = <float>((s.sx[o] - x) / p.comm_range)
            row[OBS_NEIGHBOURS + NEIGHBOUR_STRIDE * m + 1] = <float>((s.sy[o] - y) / p.comm_range)
            row[OBS_NEIGHBOURS + NEIGHBOUR_STRIDE * m + 2] = <float>((s.svx[o] - vx) / p.vmax)
            row[OBS_NEIGHBOURS + NEIGHBOUR_STRIDE * m + 3] = <float>((s.svy[o] - vy) / p.vmax)
        ntg = _near_targets(s, p, copy_ix, x, y, &best)
    if s.bel_id[i] >= 0:
        row[OBS_TARGET_X] = <float>((s.bel_x[i] - x) / p.arena)
        row[OBS_TARGET_Y] = <float>((s.bel_y[i] - y) / p.arena)
        row[OBS_TARGET_AGE] = <float>((now - s.bel_t[i]) / s.dt)
    else:
        row[OBS_TARGET_AGE] = -1.0
    dmsg = cnt[C_MESSAGES_RECEIVED] - prev_cnt[C_MESSAGES_RECEIVED]
    dcoll = cnt[C_COLLISIONS] - prev_cnt[C_COLLISIONS]
    row[OBS_MESSAGES] = <float>dmsg
    used = prev_en[0] - s.energy[i]
    reward[0] = <float>(<double>ntg - 10.0 * <double>dcoll - 0.1 * used)
    term[0] = 0 if s.salive[i] else 1
    in_range[0] = <int32_t>ntg
    prev_en[0] = s.energy[i]
    for k in range(N_COUNTERS):
        prev_cnt[k] = cnt[k]


def boundary(AircraftModel m, double now, float[:, ::1] obs, float[::1] rewards,
             uint8_t[::1] terminated, int num_threads, int64_t c0=0, int64_t c1=-1, times=None):
    """Step boundary at time ``now``: take the snapshot of every entity and
    its grid (per-entity copy and cell index in parallel; the bucket fill is
    a counting sort in id order), then observations, rewards and
    terminations in parallel over UAVs.  Nothing is reduced across UAVs, so
    the result does not depend on the thread count.

    With copies (vector env): ``[c0, c1)`` limits it to those copies
    (default all) and ``times`` (one per copy) gives each copy's own
    boundary time in place of ``now``; arrays stay indexed by global UAV."""
    cdef AircraftState* s = &m.s
    cdef int64_t copy_ix, nu = s.n_uav, U = s.U1, T = s.T1
    cdef int64_t ncop = m.num_copies
    cdef _BoundaryArgs a
    cdef _SnapArgs su, st, sb
    if c1 < 0:
        c1 = ncop
    if not 0 <= c0 <= c1 <= ncop:
        raise ValueError(f"boundary: bad copy range [{c0}, {c1}) for {ncop} copies")
    import numpy as np
    tarr = np.full(ncop, now, np.float64) if times is None else np.ascontiguousarray(times, np.float64)
    _boundary_args(&a, m, obs, rewards, terminated, tarr)
    a.base = c0 * U
    su.s = s
    su.base = c0 * U
    st.s = s
    st.base = nu + c0 * T
    sb.s = s
    sb.base = c0
    # On the engine's worker team (no OpenMP pool: fork-safe, and its waits
    # block rather than spin).
    with nogil:
        for copy_ix in range(c0, c1):
            s.snap_times[copy_ix] = a.times[copy_ix]
        seer_parallel_for(num_threads, (c1 - c0) * U, _snap_range, &su)
        seer_parallel_for(num_threads, (c1 - c0) * T, _snap_range, &st)
        seer_parallel_for(num_threads, c1 - c0, _bucket_range, &sb)
        seer_parallel_for(num_threads, (c1 - c0) * U, _uav_range, &a)


cdef int _boundary_args(_BoundaryArgs* a, AircraftModel m, float[:, ::1] obs, float[::1] rewards,
                        uint8_t[::1] terminated, object tarr) except -1:
    # boundary()'s arrays checked and laid out for _uav_range (a.base: 0);
    # tarr (float64, one time per copy) must outlive the use of a
    cdef AircraftState* s = &m.s
    cdef int64_t nu = s.n_uav, ncop = m.num_copies
    cdef int64_t[:, ::1] prev_cnt = m.prev_counters
    cdef double[::1] prev_en = m.prev_energy
    cdef int32_t[::1] in_range = m.in_range
    cdef double[::1] tms = tarr
    if obs.shape[0] != nu or obs.shape[1] != OBS_SIZE or rewards.shape[0] != nu or terminated.shape[0] != nu:
        raise ValueError("boundary: output arrays have the wrong shape")
    if tms.shape[0] != ncop:
        raise ValueError(f"boundary: times must have one entry per copy ({ncop})")
    a.s = s
    a.times = &tms[0] if ncop > 0 else NULL
    a.U = s.U1
    a.base = 0
    a.obs = &obs[0, 0] if nu > 0 else NULL
    a.rewards = &rewards[0] if nu > 0 else NULL
    a.terminated = &terminated[0] if nu > 0 else NULL
    a.prev_cnt = &prev_cnt[0, 0] if nu > 0 else NULL
    a.cnt_stride = prev_cnt.shape[1]
    a.prev_en = &prev_en[0] if nu > 0 else NULL
    a.in_range = &in_range[0] if nu > 0 else NULL
    return 0


ctypedef struct _SnapArgs:
    AircraftState* s
    int64_t base                # first entity (or copy: _bucket_range) of the range


ctypedef struct _BoundaryArgs:
    AircraftState* s
    double* times               # boundary time of each copy
    int64_t U                   # UAVs per copy
    int64_t base                # first UAV of the range
    float* obs
    float* rewards
    uint8_t* terminated
    int64_t* prev_cnt
    int64_t cnt_stride
    double* prev_en
    int32_t* in_range


cdef void _snap_range(void* arg, int64_t lo, int64_t hi) noexcept nogil:
    cdef _SnapArgs* a = <_SnapArgs*>arg
    cdef int64_t e
    for e in range(a.base + lo, a.base + hi):
        _snap_entity(a.s, e)


cdef void _uav_range(void* arg, int64_t lo, int64_t hi) noexcept nogil:
    cdef _BoundaryArgs* a = <_BoundaryArgs*>arg
    cdef int64_t i
    for i in range(a.base + lo, a.base + hi):
        _boundary_uav(a.s, i, a.times[i // a.U], &a.obs[i * OBS_SIZE], &a.rewards[i], &a.terminated[i],
                      &a.prev_cnt[i * a.cnt_stride], &a.prev_en[i], &a.in_range[i])


ctypedef struct _EndArgs:
    _BoundaryArgs a             # base 0
    _SnapArgs snap              # base 0


cdef class _BoundaryAtCopyEnd(CopyEnd):
    # boundary() of one copy at a time, run by the engine inside a run in copy
    # groups (Engine.run_until(copy_end=...)) as each copy reaches its end.
    cdef _EndArgs e
    cdef object arrays          # what e's pointers point into


cdef void _boundary_copies(void* arg, int64_t c0, int64_t c1) noexcept nogil:
    # boundary()'s four passes, over copies [c0, c1) alone: each reads and
    # writes only those copies' entities, cells and rows
    cdef _EndArgs* e = <_EndArgs*>arg
    cdef AircraftState* s = e.a.s
    cdef int64_t copy_ix, U = s.U1, T = s.T1
    for copy_ix in range(c0, c1):
        s.snap_times[copy_ix] = e.a.times[copy_ix]
    _snap_range(&e.snap, c0 * U, c1 * U)
    _snap_range(&e.snap, s.n_uav + c0 * T, s.n_uav + c1 * T)
    _bucket_range(&e.snap, c0, c1)
    _uav_range(&e.a, c0 * U, c1 * U)


def boundary_at_copy_end(AircraftModel m, float[:, ::1] obs, float[::1] rewards,
                         uint8_t[::1] terminated, times):
    """:func:`boundary` over each copy (its boundary time from ``times``, one
    per copy), as a ``CopyEnd`` for ``Engine.run_until(copy_end=...)``: the
    engine runs it for each copy right after the copy reaches the run's end
    (copy groups only).  The arrays are kept alive with it."""
    import numpy as np
    cdef _BoundaryAtCopyEnd end = _BoundaryAtCopyEnd()
    tarr = np.ascontiguousarray(times, np.float64)
    _boundary_args(&end.e.a, m, obs, rewards, terminated, tarr)
    end.e.snap.s = &m.s
    end.e.snap.base = 0
    end.arrays = (m, obs, rewards, terminated, tarr)
    end.fn = _boundary_copies
    end.arg = &end.e
    return end
