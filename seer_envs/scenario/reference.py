# SPDX-License-Identifier: BSD-3-Clause
"""The pure-Python reference engine shared by the scenarios' oracles.

A reference is the scenario written the slow, obvious way: one global event
heap, one event at a time, in global ``(time, target, source, seq)`` order.
The runtime's windows give each LP the same event sequence, so a reference
that makes the same random draws in the same order (``seer_runtime.pyrng``)
agrees with the compiled env exactly.  It is the oracle of the equivalence
tests and the "what a user would write instead" baseline of the benchmarks.

This module is the engine skeleton (heap, event keys, injection, the step
loop over ``k * dt`` boundaries); a scenario's reference subclasses
:class:`ReferenceEngine` and keeps only its handlers and boundary.
"""

import heapq

import numpy as np

from seer_runtime.pyrng import Stream

#: Source id of events injected by the env (sorts after every LP at a time).
ENV_SOURCE = 0xFFFFFFFF


class ReferenceEngine:
    """Skeleton of a reference: ``reset(seed)`` / ``step(actions) -> (obs,
    rewards, terminations, truncations)`` over NumPy arrays in
    ``possible_agents`` order, like the env's ``reset_arrays`` /
    ``step_arrays`` (``seed`` is the episode seed, ``env.seed_used``).

    A subclass sets ``action_kind`` (the event kind injected at each step
    start) and implements ``_n_lps()``, ``_n_agents()``, ``_lookahead()``,
    ``_init_state(seed)`` (build the state, emit the first events),
    ``_write_actions(actions)``, ``_handle(lp, now, kind, payload)`` and
    ``_boundary(now) -> (obs, rewards, terminations)``.
    """

    action_kind = None

    def __init__(self, cfg):
        self.cfg = cfg

    # --- the engine -----------------------------------------------------------

    def reset(self, seed):
        n = self._n_lps()
        self.rng = [Stream(seed, lp) for lp in range(n)]
        self.emit_seq = [0] * n
        self.heap = []
        self.inject_seq = 0
        self.cycle = 0
        self.events = 0
        self._init_state(seed)
        obs, _, _ = self._boundary(0.0)
        self.stopped = np.zeros(len(obs), bool)
        return obs

    def step(self, actions):
        """One env step: the actions are injected at ``k * dt`` to every
        agent LP and the heap runs to ``(k + 1) * dt``; boundary times are
        computed from the step count, never accumulated.  Each agent's end
        is reported once (the episode core's rule): agents stopped before
        get reward 0 and no flags."""
        dt = self.cfg.dt
        self._write_actions(actions)
        self.inject(self.cycle * dt, range(self._n_agents()), self.action_kind)
        self.cycle += 1
        t1 = self.cycle * dt
        self.run_until(t1)
        obs, rew, term = self._boundary(t1)
        live = ~self.stopped
        rew = np.where(live, rew, np.float32(0.0)).astype(rew.dtype)
        term = term & live
        trunc = np.full(len(rew), self.cycle >= self.cfg.max_cycles) & live & ~term
        self.stopped = self.stopped | term | trunc
        return obs, rew, term, trunc

    def inject(self, time, lps, kind):
        """Inject one event of ``kind`` at ``time`` to each of ``lps`` (one
        injection: one sequence number, like ``Engine.inject``)."""
        for lp in lps:
            heapq.heappush(self.heap, (time, lp, ENV_SOURCE, self.inject_seq, kind, None))
        self.inject_seq += 1

    def run_until(self, t_end):
        """Handle every event with time < ``t_end`` in global key order."""
        while self.heap and self.heap[0][0] < t_end:
            time, lp, _src, _seq, kind, payload = heapq.heappop(self.heap)
            self._handle(lp, time, kind, payload)
            self.events += 1

    def _emit(self, src, now, time, target, kind, payload):
        """Schedule an event; checks the runtime's contract (never in the
        past, cross-LP events at least the lookahead ahead)."""
        assert time >= now and (target == src or time >= now + self._lookahead())
        heapq.heappush(self.heap, (time, target, src, self.emit_seq[src], kind, payload))
        self.emit_seq[src] += 1

    # --- the scenario (subclass) ---------------------------------------------

    def _n_lps(self):
        raise NotImplementedError

    def _n_agents(self):
        raise NotImplementedError

    def _lookahead(self):
        raise NotImplementedError

    def _init_state(self, seed):
        raise NotImplementedError

    def _write_actions(self, actions):
        raise NotImplementedError

    def _handle(self, lp, now, kind, payload):
        raise NotImplementedError

    def _boundary(self, now):
        raise NotImplementedError
