# SPDX-License-Identifier: BSD-3-Clause
"""PCS in plain Python: one global event heap, one event at a time.

Simple and slow on purpose: it is the oracle the compiled env is tested
against (same model, same counter-based RNG draws in the same order, same
event keys), and the "what a user would write instead" baseline in the
benchmarks.  It processes events in global (time, target, source, seq)
order; the runtime's windows give each cell the same event sequence, so the
two agree exactly.
"""

import heapq
import math

import numpy as np

from seer_runtime.pyrng import Stream

NEXTCALL, COMPLETIONCALL, MOVECALLOUT, MOVECALLIN, ACTION = range(5)
ENV_SOURCE = 0xFFFFFFFF
INF = math.inf


class PcsReference:
    """The PCS model with ``reset(seed)`` / ``step(actions) -> (obs, rewards,
    truncated)`` over NumPy arrays in cell order, like ``PcsEnv.step_arrays``."""

    def __init__(self, cfg):
        self.cfg = cfg

    def reset(self, seed):
        cfg = self.cfg
        n = cfg.num_cells
        self.w, self.h = cfg.grid_width, cfg.grid_height
        self.rng = [Stream(seed, c) for c in range(n)]
        self.free = [cfg.channels_per_cell] * n
        self.guard = [0] * n
        self.actions = [0] * n
        self.counters = [[0] * 6 for _ in range(n)]
        self.prev = [[0] * 6 for _ in range(n)]
        self.power = [0.0] * n
        self.emit_seq = [0] * n
        self.heap = []
        self.inject_seq = 0
        self.cycle = 0
        self.events = 0
        for c in range(n):
            for k in range(cfg.portables_per_cell):
                nc = 0.0 + self.rng[c].exponential(cfg.call_interarrival_mean)
                mv = self._next_move(c, 0.0)
                self._schedule_idle(c, 0.0, nc, mv, c * cfg.portables_per_cell + k)
        obs, _ = self._boundary()
        return obs

    def step(self, actions):
        cfg = self.cfg
        t0 = self.cycle * cfg.dt
        self.actions = [int(a) for a in actions]
        for c in range(cfg.num_cells):
            heapq.heappush(self.heap, (t0, c, ENV_SOURCE, self.inject_seq, ACTION, None))
        self.inject_seq += 1
        self.run_until(t0 + cfg.dt)
        self.cycle += 1
        obs, rew = self._boundary()
        return obs, rew, self.cycle >= cfg.max_cycles

    def run_until(self, t_end):
        while self.heap and self.heap[0][0] < t_end:
            time, cell, _src, _seq, kind, payload = heapq.heappop(self.heap)
            self._handle(cell, time, kind, payload)
            self.events += 1

    # --- the model ----------------------------------------------------------

    def _emit(self, src, now, time, target, kind, payload):
        assert time >= now and (target == src or time >= now + self.cfg.handoff_latency)
        heapq.heappush(self.heap, (time, target, src, self.emit_seq[src], kind, payload))
        self.emit_seq[src] += 1

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

    def _next_move(self, c, t):
        if math.isinf(self.cfg.move_interval_mean):
            return INF
        return t + self.rng[c].exponential(self.cfg.move_interval_mean)

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
            cnt[0] += 1
            if not math.isinf(comp):
                cnt[1] += 1
            elif self.free[c] <= self.guard[c]:
                cnt[2] += 1
            else:
                self.free[c] -= 1
                comp = now + self.rng[c].exponential(cfg.call_duration_mean)
                self._power_control(c)
            nc = now + self.rng[c].exponential(cfg.call_interarrival_mean)
            if math.isinf(comp):
                self._schedule_idle(c, now, nc, mv, pid)
            else:
                self._schedule_in_call(c, now, nc, comp, mv, pid)
        elif kind == COMPLETIONCALL:
            self.free[c] += 1
            self._schedule_idle(c, now, nc, mv, pid)
        elif kind == MOVECALLOUT:
            self.free[c] += 1
            cnt[5] += 1
            dest = self._neighbour(c, self.rng[c].integer(4))
            mv = self._next_move(c, now)
            self._emit(c, now, now + cfg.handoff_latency, dest, MOVECALLIN, (nc, comp, mv, pid))
        elif kind == MOVECALLIN:
            if self.free[c] > 0:
                self.free[c] -= 1
                cnt[4] += 1
                self._power_control(c)
                self._schedule_in_call(c, now, nc, comp, mv, pid)
            else:
                cnt[3] += 1
                self._schedule_idle(c, now, nc, mv, pid)

    def _boundary(self):
        cfg = self.cfg
        n = cfg.num_cells
        ch = float(cfg.channels_per_cell)
        scale = float(cfg.portables_per_cell or 1)
        obs = np.zeros((n, 11), np.float32)
        rew = np.zeros(n, np.float32)
        for c in range(n):
            d = [a - b for a, b in zip(self.counters[c], self.prev[c])]
            self.prev[c] = list(self.counters[c])
            row = [(ch - self.free[c]) / ch, self.guard[c] / ch, d[0] / scale, d[2] / scale,
                   d[4] / scale, d[3] / scale]
            row += [(ch - self.free[self._neighbour(c, k)]) / ch for k in range(4)]
            row.append(self.power[c])
            obs[c] = np.array(row, dtype=np.float64).astype(np.float32)
            rew[c] = np.float32(-(float(d[2]) + cfg.handoff_penalty * float(d[3])))
        return obs, rew
