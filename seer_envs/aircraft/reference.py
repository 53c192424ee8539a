# SPDX-License-Identifier: BSD-3-Clause
"""Aircraft in plain Python/NumPy: one global event heap, one event at a time.

Simple and slow on purpose: it is the oracle the compiled env is tested
against (same model, same counter-based RNG draws in the same order, same
floating-point operations in the same order, same event keys), and the
"what a user would write instead" baseline in the benchmarks.  It processes
events in global (time, target, source, seq) order; the runtime's windows
give each entity the same event sequence, so the two agree exactly.  Neighbour
and target queries are brute force over the snapshot (the compiled model's
grid returns the same sets; every choice among them is by (distance, id)).
The engine skeleton (heap, keys, step loop) is
:class:`seer_envs.scenario.reference.ReferenceEngine`; this module keeps the
handlers and the boundary.  Counter columns and observation slots come from
the handlers' enums.
"""

import math

import numpy as np

from seer_envs.scenario.reference import ReferenceEngine
from seer_envs.aircraft.handlers import ACTION_KIND, COUNTER_INDEX, COUNTERS
from seer_envs.aircraft.handlers import N_NEIGHBOURS_PY as N_NEIGHBOURS
from seer_envs.aircraft.handlers import OBS_LAYOUT as LAYOUT
from seer_envs.aircraft.handlers import OBS_SIZE_PY as OBS_SIZE

ACTION, DYNAMICS, SENSE, MSG, TARGET_MOVE = range(5)
assert ACTION == ACTION_KIND
N_COUNTERS = len(COUNTERS)
C_COLL, C_RECV, C_SENT, C_DET, C_BEL, C_DYN = (
    COUNTER_INDEX[k] for k in ("collisions", "messages_received", "messages_sent", "detections",
                               "belief_updates", "dynamics_events"))
NB0 = LAYOUT["neighbours"].start
TGT = LAYOUT["target_rel"].start
AGE = LAYOUT["target_age"]
MSGS = LAYOUT["messages"]
TWO_PI = 6.283185307179586


class AircraftReference(ReferenceEngine):
    """The Aircraft model with ``reset(seed)`` / ``step(actions) -> (obs,
    rewards, terminations, truncations)`` over NumPy arrays in UAV order,
    like ``AircraftEnv.reset_arrays`` / ``step_arrays`` (``seed`` is the
    episode seed, ``AircraftEnv.seed_used``; ``actions`` float (num_uavs, 2)
    in [-1, 1] or int (num_uavs,))."""

    action_kind = ACTION

    def _n_lps(self):
        return self.cfg.num_uavs + self.cfg.num_targets

    def _n_agents(self):
        return self.cfg.num_uavs

    def _lookahead(self):
        return self.cfg.comm_latency

    def _write_actions(self, actions):
        cfg = self.cfg
        a = np.asarray(actions)
        if cfg.continuous_actions:
            self.actions = a.astype(np.float64) * cfg.max_accel
        else:
            self.actions = cfg.action_table[a]

    def _init_state(self, seed):
        cfg = self.cfg
        nu, nt = cfg.num_uavs, cfg.num_targets
        self.nu, self.nt = nu, nt
        self.L = cfg.arena_size
        self.n_ctrl = cfg.control_intervals
        self.integ = [cfg.integration(False), cfg.integration(True)]
        z = [0.0] * nu
        self.px, self.py, self.vx, self.vy, self.wx, self.wy = (z[:] for _ in range(6))
        self.energy = [cfg.battery_capacity] * nu
        self.cmd = [(0.0, 0.0)] * nu
        self.step_start = z[:]
        self.alive = [True] * nu
        self.bel = [None] * nu              # (x, y, t, target index)
        self.counters = [[0] * N_COUNTERS for _ in range(nu)]
        self.prev_counters = [[0] * N_COUNTERS for _ in range(nu)]
        self.prev_energy = [cfg.battery_capacity] * nu
        self.actions = np.zeros((nu, 2))
        self.tx, self.ty, self.tvx, self.tvy, self.twx, self.twy = ([0.0] * nt for _ in range(6))
        for e in range(nu + nt):
            if e < nu:
                cols, w, h = cfg.launch_grid
                self.px[e] = (float(e % cols) + self.rng[e].uniform()) * w
                self.py[e] = (float(e // cols) + self.rng[e].uniform()) * h
                self._emit(e, 0.0, 0.0, e, SENSE, (0,))
            else:
                t = e - nu
                self.tx[t] = self.L * self.rng[e].uniform()
                self.ty[t] = self.L * self.rng[e].uniform()
                self.twx[t] = self.L * self.rng[e].uniform()
                self.twy[t] = self.L * self.rng[e].uniform()
                self._emit(e, 0.0, 0.0, e, TARGET_MOVE, (0,))

    # --- handlers --------------------------------------------------------------

    def _handle(self, lp, now, kind, payload):
        if lp >= self.nu:
            assert kind == TARGET_MOVE
            self._target_move(lp, lp - self.nu, payload[0])
            return
        if not self.alive[lp]:
            return
        if kind == ACTION:
            self.cmd[lp] = (float(self.actions[lp, 0]), float(self.actions[lp, 1]))
            self.step_start[lp] = now
            self._emit(lp, now, now, lp, DYNAMICS, (0,))
        elif kind == DYNAMICS:
            self._dynamics(lp, payload[0])
        elif kind == SENSE:
            self._sense(lp, now, payload[0])
        elif kind == MSG:
            self.counters[lp][C_RECV] += 1
            bx, by, bt, bid = payload
            if self.bel[lp] is None or bt > self.bel[lp][2]:
                self.bel[lp] = (bx, by, bt, bid)
                self.counters[lp][C_BEL] += 1

    def _deriv(self, vx, vy, wx, wy, ux, uy, umag, fx, fy):
        cfg = self.cfg
        sp2 = vx * vx + vy * vy
        sp = math.sqrt(sp2)
        return (vx, vy,
                ux + wx - cfg.drag * sp * vx,
                uy + wy - cfg.drag * sp * vy,
                fx - wx * (1.0 / cfg.wind_tau),
                fy - wy * (1.0 / cfg.wind_tau),
                -(cfg.idle_power + cfg.thrust_power * (umag + cfg.drag * sp2)))

    @staticmethod
    def _reflect(p, v, L):
        if p < 0.0:
            p, v = -p, -v
        elif p > L:
            p, v = 2.0 * L - p, -v
        return min(max(p, 0.0), L), v

    def _dynamics(self, i, j):
        cfg = self.cfg
        h, hh, h6, gust = self.integ[1 if j == self.n_ctrl - 1 else 0]
        x, y, vx, vy = self.px[i], self.py[i], self.vx[i], self.vy[i]
        wx, wy, en = self.wx[i], self.wy[i], self.energy[i]
        ux, uy = self.cmd[i]
        umag = math.sqrt(ux * ux + uy * uy)
        if umag > cfg.max_accel:
            f = cfg.max_accel / umag
            ux, uy, umag = ux * f, uy * f, cfg.max_accel
        self.counters[i][C_DYN] += 1
        rng = self.rng[i]
        for _ in range(cfg.dynamics_substeps):
            r = math.sqrt(2.0 * rng.exponential(1.0))
            th = TWO_PI * rng.uniform()
            fx, fy = gust * (r * math.cos(th)), gust * (r * math.sin(th))
            k1 = self._deriv(vx, vy, wx, wy, ux, uy, umag, fx, fy)
            k2 = self._deriv(vx + hh * k1[2], vy + hh * k1[3], wx + hh * k1[4], wy + hh * k1[5],
                             ux, uy, umag, fx, fy)
            k3 = self._deriv(vx + hh * k2[2], vy + hh * k2[3], wx + hh * k2[4], wy + hh * k2[5],
                             ux, uy, umag, fx, fy)
            k4 = self._deriv(vx + h * k3[2], vy + h * k3[3], wx + h * k3[4], wy + h * k3[5],
                             ux, uy, umag, fx, fy)
            inc = [h6 * (k1[c] + 2.0 * k2[c] + 2.0 * k3[c] + k4[c]) for c in range(7)]
            x, y, vx, vy = x + inc[0], y + inc[1], vx + inc[2], vy + inc[3]
            wx, wy, en = wx + inc[4], wy + inc[5], en + inc[6]
            sp2 = vx * vx + vy * vy
            if sp2 > cfg.max_speed * cfg.max_speed:
                f = cfg.max_speed / math.sqrt(sp2)
                vx, vy = vx * f, vy * f
            x, vx = self._reflect(x, vx, self.L)
            y, vy = self._reflect(y, vy, self.L)
            if en <= 0.0:
                en, vx, vy = 0.0, 0.0, 0.0
                self.alive[i] = False
                break
        self.px[i], self.py[i], self.vx[i], self.vy[i] = x, y, vx, vy
        self.wx[i], self.wy[i], self.energy[i] = wx, wy, en
        if self.alive[i] and j + 1 < self.n_ctrl:
            now = self.step_start[i] + j * cfg.control_period
            self._emit(i, now, self.step_start[i] + (j + 1) * cfg.control_period, i, DYNAMICS, (j + 1,))

    def _others(self, me, x, y):
        """(d2, id) of every other UAV alive in the snapshot, from (x, y)."""
        ids = np.flatnonzero(self.salive)
        ids = ids[ids != me]
        dx = self.sx[ids] - x
        dy = self.sy[ids] - y
        return dx * dx + dy * dy, ids

    def _targets(self, x, y):
        """(d2, index) of every target within sensor_range of (x, y), nearest first."""
        dx = self.sx[self.nu:] - x
        dy = self.sy[self.nu:] - y
        d2 = dx * dx + dy * dy
        r2 = self.cfg.sensor_range * self.cfg.sensor_range
        return sorted((float(d2[t]), t) for t in np.flatnonzero(d2 <= r2))

    def _nearest(self, d2, ids, r2, k):
        inside = np.flatnonzero(d2 <= r2)
        return [int(o) for _, o in sorted((float(d2[j]), int(ids[j])) for j in inside)[:k]]

    def _sense(self, i, now, j):
        cfg = self.cfg
        x, y = self.px[i], self.py[i]
        near = self._targets(x, y)
        if near:
            self.counters[i][C_DET] += 1
            t = near[0][1]
            if self.bel[i] is None or self.snap_time >= self.bel[i][2]:
                self.bel[i] = (float(self.sx[self.nu + t]), float(self.sy[self.nu + t]), self.snap_time, t)
        d2, ids = self._others(i, x, y)
        self.counters[i][C_COLL] += int((d2 < cfg.collision_radius * cfg.collision_radius).sum())
        if self.bel[i] is not None:
            dest = self._nearest(d2, ids, cfg.comm_range * cfg.comm_range, cfg.max_messages)
            for o in dest:
                self._emit(i, now, now + cfg.comm_latency, o, MSG, self.bel[i])
            self.counters[i][C_SENT] += len(dest)
        self._emit(i, now, (j + 1) * cfg.sense_period, i, SENSE, (j + 1,))

    def _target_move(self, lp, t, j):
        cfg = self.cfg
        step = cfg.target_speed * cfg.control_period
        x, y = self.tx[t], self.ty[t]
        dx, dy = self.twx[t] - x, self.twy[t] - y
        dist = math.sqrt(dx * dx + dy * dy)
        if dist <= step:
            nx, ny = self.twx[t], self.twy[t]
            self.twx[t] = self.L * self.rng[lp].uniform()
            self.twy[t] = self.L * self.rng[lp].uniform()
        else:
            f = step / dist
            nx, ny = x + dx * f, y + dy * f
        self.tvx[t] = (nx - x) / cfg.control_period
        self.tvy[t] = (ny - y) / cfg.control_period
        self.tx[t], self.ty[t] = nx, ny
        now = j * cfg.control_period
        self._emit(lp, now, (j + 1) * cfg.control_period, lp, TARGET_MOVE, (j + 1,))

    # --- boundary ------------------------------------------------------------

    def _boundary(self, now):
        cfg = self.cfg
        nu, L = self.nu, self.L
        self.snap_time = now
        self.sx = np.array(self.px + self.tx, np.float64)
        self.sy = np.array(self.py + self.ty, np.float64)
        self.svx = np.array(self.vx + self.tvx, np.float64)
        self.svy = np.array(self.vy + self.tvy, np.float64)
        self.salive = np.array(self.alive, bool)
        obs = np.zeros((nu, OBS_SIZE), np.float32)
        rew = np.zeros(nu, np.float32)
        term = ~self.salive
        self.in_range = [0] * nu
        for i in range(nu):
            x, y, vx, vy = self.sx[i], self.sy[i], self.svx[i], self.svy[i]
            row = [0.0] * OBS_SIZE
            row[LAYOUT["position"]] = [x / L, y / L]
            row[LAYOUT["velocity"]] = [vx / cfg.max_speed, vy / cfg.max_speed]
            row[LAYOUT["energy"]] = self.energy[i] / cfg.battery_capacity
            ntg = 0
            if self.alive[i]:
                d2, ids = self._others(i, x, y)
                near = self._nearest(d2, ids, cfg.comm_range * cfg.comm_range, N_NEIGHBOURS)
                for m, o in enumerate(near):
                    row[NB0 + 4 * m:NB0 + 4 * m + 4] = [(self.sx[o] - x) / cfg.comm_range,
                                                (self.sy[o] - y) / cfg.comm_range,
                                                (self.svx[o] - vx) / cfg.max_speed,
                                                (self.svy[o] - vy) / cfg.max_speed]
                ntg = len(self._targets(x, y))
            if self.bel[i] is not None:
                bx, by, bt, _ = self.bel[i]
                row[TGT:TGT + 2] = [(bx - x) / L, (by - y) / L]
                row[AGE] = (now - bt) / cfg.dt
            else:
                row[AGE] = -1.0
            cnt, prev = self.counters[i], self.prev_counters[i]
            row[MSGS] = float(cnt[C_RECV] - prev[C_RECV])
            used = self.prev_energy[i] - self.energy[i]
            rew[i] = np.float32(float(ntg) - 10.0 * float(cnt[C_COLL] - prev[C_COLL]) - 0.1 * used)
            obs[i] = np.array(row, np.float64).astype(np.float32)
            self.in_range[i] = ntg
            self.prev_energy[i] = self.energy[i]
            self.prev_counters[i] = list(cnt)
        return obs, rew, term
