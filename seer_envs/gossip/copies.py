# SPDX-License-Identifier: BSD-3-Clause
"""Gossip's copies (:class:`seer_envs.scenario.copies.Copies`): ``num_copies``
rings, copy ``c``'s agent ``i`` at LP ``c * num_agents + i``."""

import types

import numpy as np
from gymnasium import spaces

from seer_envs.scenario.copies import Copies
from seer_envs.gossip.model import ACTION_KIND, COUNTERS, GossipModel

#: Observation slots (the reference reads the same names).
OBS_LAYOUT = {"known": 0, "learned": 1, "received": 2, "left": 3, "right": 4}
OBS_SIZE = len(OBS_LAYOUT)
C_LEARNED, C_RECEIVED, C_SENT = (COUNTERS.index(k) for k in ("learned", "received", "sent"))


def observe(cfg, n_known, delta, num_rumours=None, message_cost=None):
    """Observations, rewards and terminations from the rumour counts
    ``(..., agents)`` of one ring (or of several, stacked) and this step's
    counter deltas ``(..., agents, 4)`` (float64 arithmetic, one cast to
    float32: the reference calls this too, so both round the same way).
    ``num_rumours`` and ``message_cost``, when given, replace ``cfg``'s
    with one value per ring (arrays ``(rings, 1)``)."""
    if num_rumours is None:
        num_rumours, message_cost = cfg.num_rumours, cfg.message_cost
    k = np.asarray(num_rumours, np.float64)
    share = n_known / k
    obs = np.empty(share.shape + (OBS_SIZE,), np.float64)
    obs[..., OBS_LAYOUT["known"]] = share
    obs[..., OBS_LAYOUT["learned"]] = delta[..., C_LEARNED] / k
    obs[..., OBS_LAYOUT["received"]] = delta[..., C_RECEIVED] / (2.0 * cfg.reach)
    obs[..., OBS_LAYOUT["left"]] = np.roll(share, 1, axis=-1)       # agent i-1 on its ring
    obs[..., OBS_LAYOUT["right"]] = np.roll(share, -1, axis=-1)     # agent i+1
    rew = delta[..., C_LEARNED] - message_cost * delta[..., C_SENT]
    return obs.astype(np.float32), rew.astype(np.float32), n_known == num_rumours


class GossipCopies(Copies):
    """Copies of the gossip ring."""

    action_kind = ACTION_KIND
    agent_arrays = ("_prev",)          # the counters at the last boundary
    model_cls = GossipModel
    #: Fields that may differ per copy: read per copy by the handlers
    #: (``num_rumours``, ``news_interval``, ``jitter``) and by the boundary
    #: (``num_rumours``, ``message_cost``).  Not per copy: ``num_agents``
    #: (shapes), ``reach`` (the action space), ``latency`` (the lookahead),
    #: ``dt`` (the step).
    per_copy = ("num_rumours", "news_interval", "jitter", "message_cost")

    @classmethod
    def agent_names(cls, config):
        return [f"agent_{i}" for i in range(config.num_agents)]

    @classmethod
    def spaces(cls, config):
        return (spaces.Box(0.0, np.inf, (OBS_SIZE,), np.float32),
                spaces.Discrete(config.num_actions))

    @classmethod
    def state_space(cls, config):
        return spaces.Box(0.0, 1.0, (config.num_agents,), np.float32)

    def __init__(self, config, num_copies=1):
        super().__init__(config, num_copies)
        self._prev = np.zeros((len(self.rew), len(COUNTERS)), np.int64)
        # each copy's num_rumours and message_cost, (copies, 1); a namespace,
        # not array attributes: snapshots carry the configs
        C = self.num_copies
        self._pc = types.SimpleNamespace(rumours=np.full((C, 1), config.num_rumours, np.int64),
                                         cost=np.full((C, 1), config.message_cost, np.float64))

    def configure(self, c, config):
        """Copy ``c``'s parameters: the model's, and the boundary's
        ``num_rumours`` and ``message_cost``."""
        super().configure(c, config)
        self._pc.rumours[c] = config.num_rumours
        self._pc.cost[c] = config.message_cost

    def write_actions(self, a, done):
        # a finished agent's row is ignored: it stays quiet
        np.multiply(a, ~done, out=self.model.actions, casting="unsafe")

    def restart(self, c0, c1):
        self.model.reset_copies(c0, c1)
        n = self.num_agents
        self._prev[c0 * n:c1 * n] = 0

    def boundary(self, c0, c1, times, num_threads):
        n, m = self.num_agents, self.model
        lo, hi = c0 * n, c1 * n
        counters = m.counters[lo:hi]
        delta = counters - self._prev[lo:hi]
        self._prev[lo:hi] = counters
        obs, rew, term = observe(self.config, m.n_known[lo:hi].reshape(c1 - c0, n),
                                 delta.reshape(c1 - c0, n, -1), self._pc.rumours[c0:c1],
                                 self._pc.cost[c0:c1])
        self.obs[lo:hi] = obs.reshape(hi - lo, OBS_SIZE)
        self.rew[lo:hi] = rew.reshape(-1)
        self.term[lo:hi] = term.reshape(-1)

    def agent_infos(self, c, rows, now):
        """Each agent's cumulative counters and rumours known."""
        m, rows = self.model, c * self.num_agents + np.asarray(rows)
        return [dict(zip(COUNTERS, v), known=k)
                for v, k in zip(m.counters[rows].tolist(), m.n_known[rows].tolist())]

    def summary(self, c, engine, steps):
        m, u = self.model, self.agent_rows(c)
        out = dict(zip(COUNTERS, (int(v) for v in m.counters[u].sum(axis=0))))
        out.update(steps=steps, events=engine.stats()["events"],
                   mean_known=float(m.n_known[u].mean()) / self.configs[c].num_rumours)
        return out

    def state(self, c):
        """Every agent's share of the rumours, around the ring."""
        return (self.model.n_known[self.agent_rows(c)] / self.configs[c].num_rumours).astype(np.float32)

    def states(self, c0, c1):
        A = self.num_agents
        known = self.model.n_known[c0 * A:c1 * A].reshape(c1 - c0, A)
        return (known / self._pc.rumours[c0:c1]).astype(np.float32)

    @staticmethod
    def image(view):
        from seer_envs.gossip.render import image
        return image(view)

    def copy_model(self, c):
        return types.SimpleNamespace(n_known=self.model.n_known[self.agent_rows(c)])
