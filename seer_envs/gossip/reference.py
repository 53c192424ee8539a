# SPDX-License-Identifier: BSD-3-Clause
"""Gossip in plain Python: the oracle of ``tests/envs/test_gossip.py``.

The engine skeleton (heap, event keys, injection, step loop) is
:class:`seer_envs.scenario.reference.ReferenceEngine`; this module keeps the
handlers, written as in ``model.pyx`` with the same draws in the same order.
"""

import numpy as np

from seer_envs.scenario.reference import ReferenceEngine
from seer_envs.gossip.copies import observe
from seer_envs.gossip.model import ACTION_KIND, COUNTERS

NEWS, GOSSIP, ACTION = range(3)
assert ACTION == ACTION_KIND
C_LEARNED, C_RECEIVED, C_SENT, C_NEWS = (COUNTERS.index(k)
                                         for k in ("learned", "received", "sent", "news"))


class GossipReference(ReferenceEngine):
    """The gossip model with ``reset(seed)`` / ``step(actions)`` like the
    env's ``reset_arrays`` / ``step_arrays``."""

    action_kind = ACTION

    def _n_lps(self):
        return self.cfg.num_agents

    _n_agents = _n_lps

    def _lookahead(self):
        return self.cfg.latency

    def _init_state(self, seed):
        n = self.cfg.num_agents
        self.known = [0] * n
        self.counters = np.zeros((n, len(COUNTERS)), np.int64)
        self.prev = self.counters.copy()
        self.actions = [0] * n
        self.done = [False] * n
        for a in range(n):
            self._next_news(a, 0.0)

    def _write_actions(self, actions):
        self.actions = [0 if d else int(x) for x, d in zip(actions, self.done)]

    def _next_news(self, a, now):
        self._emit(a, now, now + self.rng[a].exponential(self.cfg.news_interval), a, NEWS, None)

    def _learn(self, a, bits):
        new = bits & ~self.known[a]
        self.known[a] |= new
        self.counters[a, C_LEARNED] += bin(new).count("1")

    def _handle(self, a, now, kind, payload):
        cfg = self.cfg
        if kind == NEWS:
            self.counters[a, C_NEWS] += 1
            self._learn(a, 1 << self.rng[a].integer(cfg.num_rumours))
            self._next_news(a, now)
        elif kind == GOSSIP:
            self.counters[a, C_RECEIVED] += 1
            self._learn(a, payload)
        elif kind == ACTION and self.actions[a] != 0:
            act = self.actions[a]
            off = act if act <= cfg.reach else -(act - cfg.reach)
            t = now + (cfg.latency + cfg.jitter * self.rng[a].uniform())
            self._emit(a, now, t, (a + off) % cfg.num_agents, GOSSIP, self.known[a])
            self.counters[a, C_SENT] += 1

    def _boundary(self, now):
        delta = self.counters - self.prev
        self.prev = self.counters.copy()
        n_known = np.array([bin(k).count("1") for k in self.known], np.int32)
        obs, rew, term = observe(self.cfg, n_known, delta)
        self.done = term.tolist()
        return obs, rew, term
