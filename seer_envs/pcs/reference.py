# SPDX-License-Identifier: BSD-3-Clause
"""PCS in plain Python: one global event heap, one event at a time.

Simple and slow on purpose: it is the oracle the compiled env is tested
against (same model, same counter-based RNG draws in the same order, same
event keys), and the "what a user would write instead" baseline in the
benchmarks.  The engine skeleton (heap, keys, step loop) is
:class:`seer_envs.scenario.reference.ReferenceEngine`; this module keeps the
handlers and the boundary.  Counter columns and observation slots come from
the handlers' enums.
"""

import math

import numpy as np

from seer_envs.scenario.reference import ReferenceEngine
from seer_envs.pcs.handlers import ACTION_KIND, COUNTER_INDEX, COUNTERS
from seer_envs.pcs.handlers import OBS_LAYOUT as L
from seer_envs.pcs.handlers import OBS_SIZE_PY as OBS_SIZE
from seer_envs.pcs.rewards import charge_neighbour_drops, neighbour_table

NEXTCALL, COMPLETIONCALL, MOVECALLOUT, MOVECALLIN, ACTION = range(5)
assert ACTION == ACTION_KIND
N_COUNTERS = len(COUNTERS)
C_CALL_ATTEMPTS, C_BUSY_LINES, C_CHANNEL_BLOCKS, C_HANDOFF_BLOCKS, C_HANDOFFS_IN, C_HANDOFFS_OUT = (
    COUNTER_INDEX[k] for k in ("call_attempts", "busy_lines", "channel_blocks", "handoff_blocks",
                               "handoffs_in", "handoffs_out"))
INF = math.inf


def _ring(a, b, n):
    d = a - b
    if d < 0:
        d = -d
    if n - d < d:
        d = n - d
    return d


class PcsReference(ReferenceEngine):
    """The PCS model with ``reset(seed)`` / ``step(actions) -> (obs, rewards,
    terminations, truncations)`` over NumPy arrays in cell order, like
    ``PcsEnv.reset_arrays`` / ``step_arrays``."""

    action_kind = ACTION

    def _n_lps(self):
        return self.cfg.num_cells

    _n_agents = _n_lps

    def _lookahead(self):
        return self.cfg.handoff_latency

    def _init_state(self, seed):
        cfg = self.cfg
        n = cfg.num_cells
        self.w, self.h = cfg.grid_width, cfg.grid_height
        self.free = [cfg.channels_per_cell] * n
        self.guard = [0] * n
        self.actions = [0] * n
        self.counters = [[0] * N_COUNTERS for _ in range(n)]
        self.prev = [[0] * N_COUNTERS for _ in range(n)]
        self.power = [0.0] * n
        self.tracks = cfg.hotspot_tracks()
        self.inv2r2 = 1.0 / (2.0 * cfg.hotspot_radius * cfg.hotspot_radius)
        self.omega = cfg.diurnal_omega
        for c in range(n):
            for k in range(cfg.portables_per_cell):
                nc = 0.0 + self._call_delay(c, 0.0)
                mv = self._next_move(c, 0.0)
                self._schedule_idle(c, 0.0, nc, mv, c * cfg.portables_per_cell + k)

    def _write_actions(self, actions):
        self.actions = [int(a) for a in actions]

    # --- the model ----------------------------------------------------------

    def _neighbour(self, cell, d):
        x, y = cell % self.w, cell // self.w
        if d == 0:
            x = (x + 1) % self.w
        elif d == 1:
            x = (x - 1) % self.w
        elif d == 2:
            y = (y + 1) % self.h
        else:
            y = (y - 1) % self.h
        return y * self.w + x

    def load(self, c, t):
        """The load factor of cell ``c`` at time ``t`` (the handlers' ``_load``,
        the same operations in the same order)."""
        cfg = self.cfg
        w, h = float(self.w), float(self.h)
        x, y = float(c % self.w), float(c // self.w)
        f = 1.0 + cfg.diurnal_amplitude * math.sin(self.omega * t)
        total = 0.0
        for x0, y0, vx, vy in self.tracks:
            cx = math.fmod(x0 + vx * t, w)
            if cx < 0:
                cx = cx + w
            cy = math.fmod(y0 + vy * t, h)
            if cy < 0:
                cy = cy + h
            dx, dy = _ring(x, cx, w), _ring(y, cy, h)
            total = total + math.exp(-(dx * dx + dy * dy) * self.inv2r2)
        return f * (1.0 + cfg.hotspot_amplitude * total)

    def _call_delay(self, c, t):
        cfg = self.cfg
        if not cfg.load_varies:
            return self.rng[c].exponential(cfg.call_interarrival_mean)
        return self.rng[c].exponential(cfg.call_interarrival_mean / self.load(c, t))

    def _next_move(self, c, t):
        cfg = self.cfg
        if cfg.rush_hours:
            return self._next_move_rush(c, t)
        if math.isinf(cfg.move_interval_mean):
            return INF
        return t + self.rng[c].exponential(cfg.move_interval_mean)

    def _next_move_rush(self, c, t):
        """The handlers' ``_next_move_rush``: one unit exponential of hazard
        spent window by window (rush window k spans ``[(k + 1/4 - h) H,
        (k + 1/4 + h) H]``, ``H = rush_period``, ``h = rush_fraction / 2``), the
        same operations in the same order."""
        cfg = self.cfg
        H, h = cfg.rush_period, cfg.rush_fraction / 2.0
        e = self.rng[c].exponential(1.0)
        u = t / H - 0.25
        k = float(math.floor(u))
        r = u - k
        rush = True
        if r >= 1.0 - h:
            k = k + 1.0
        elif r >= h:
            rush = False
        while True:
            if rush:
                end, mean = (k + 0.25 + h) * H, cfg.rush_move_interval_mean
            else:
                end, mean = (k + 1.25 - h) * H, cfg.move_interval_mean
            if not math.isinf(mean):
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

    def _power_control(self, c):
        cfg = self.cfg
        load = (cfg.channels_per_cell - self.free[c]) / cfg.channels_per_cell
        p = self.power[c]
        for _ in range(cfg.power_control_iters):
            p = 0.1 + 0.5 * load * p / (1.0 + 0.01 * p)
        self.power[c] = p

    def _schedule_idle(self, c, now, nc, mv, pid):
        cell = c
        while mv < nc:
            cell = self._neighbour(cell, self.rng[c].integer(4))
            mv = self._next_move(c, mv)
        t = nc
        if cell != c:
            t = max(t, now + self.cfg.handoff_latency)
        else:
            t = max(t, now)
        self._emit(c, now, t, cell, NEXTCALL, (t, INF, mv, pid))

    def _schedule_in_call(self, c, now, nc, comp, mv, pid):
        if comp <= mv and comp <= nc:
            t, kind = comp, COMPLETIONCALL
        elif mv <= nc:
            t, kind = mv, MOVECALLOUT
        else:
            t, kind = nc, NEXTCALL
        self._emit(c, now, max(t, now), c, kind, (nc, comp, mv, pid))

    def _handle(self, c, now, kind, payload):
        cfg = self.cfg
        cnt = self.counters[c]
        if kind == ACTION:
            self.guard[c] = self.actions[c]
            return
        nc, comp, mv, pid = payload
        if kind == NEXTCALL:
            cnt[C_CALL_ATTEMPTS] += 1
            if not math.isinf(comp):
                cnt[C_BUSY_LINES] += 1
            elif self.free[c] <= self.guard[c]:
                cnt[C_CHANNEL_BLOCKS] += 1
            else:
                self.free[c] -= 1
                comp = now + self.rng[c].exponential(cfg.call_duration_mean)
                self._power_control(c)
            nc = now + self._call_delay(c, now)
            if math.isinf(comp):
                self._schedule_idle(c, now, nc, mv, pid)
            else:
                self._schedule_in_call(c, now, nc, comp, mv, pid)
        elif kind == COMPLETIONCALL:
            self.free[c] += 1
            self._schedule_idle(c, now, nc, mv, pid)
        elif kind == MOVECALLOUT:
            self.free[c] += 1
            cnt[C_HANDOFFS_OUT] += 1
            dest = self._neighbour(c, self.rng[c].integer(4))
            mv = self._next_move(c, now)
            self._emit(c, now, now + cfg.handoff_latency, dest, MOVECALLIN, (nc, comp, mv, pid))
        elif kind == MOVECALLIN:
            if self.free[c] > 0:
                self.free[c] -= 1
                cnt[C_HANDOFFS_IN] += 1
                self._power_control(c)
                self._schedule_in_call(c, now, nc, comp, mv, pid)
            else:
                cnt[C_HANDOFF_BLOCKS] += 1
                self._schedule_idle(c, now, nc, mv, pid)

    def _boundary(self, now):
        cfg = self.cfg
        n = cfg.num_cells
        ch = float(cfg.channels_per_cell)
        scale = float(cfg.portables_per_cell or 1)
        obs = np.zeros((n, OBS_SIZE), np.float32)
        rew = np.zeros(n, np.float32)
        blocks = np.zeros(n, np.int64)
        for c in range(n):
            d = [a - b for a, b in zip(self.counters[c], self.prev[c])]
            self.prev[c] = list(self.counters[c])
            row = [0.0] * OBS_SIZE
            row[L["busy"]] = (ch - self.free[c]) / ch
            row[L["guard"]] = self.guard[c] / ch
            row[L["call_attempts"]] = d[C_CALL_ATTEMPTS] / scale
            row[L["channel_blocks"]] = d[C_CHANNEL_BLOCKS] / scale
            row[L["handoffs_in"]] = d[C_HANDOFFS_IN] / scale
            row[L["handoff_blocks"]] = d[C_HANDOFF_BLOCKS] / scale
            row[L["neighbours"]] = [(ch - self.free[self._neighbour(c, k)]) / ch for k in range(4)]
            row[L["power"]] = self.power[c]
            obs[c] = np.array(row, dtype=np.float64).astype(np.float32)
            rew[c] = np.float32(-(float(d[C_CHANNEL_BLOCKS]) + cfg.handoff_penalty * float(d[C_HANDOFF_BLOCKS])))
            blocks[c] = d[C_HANDOFF_BLOCKS]
        charge_neighbour_drops(rew[None], blocks[None], neighbour_table(self.w, self.h),
                               cfg.neighbour_drop_share / 4 * cfg.handoff_penalty)
        return obs, rew, np.zeros(n, bool)
