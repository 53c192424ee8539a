# SPDX-License-Identifier: BSD-3-Clause
"""Gossip — rumours spreading on a ring (``gossip_v0``), the worked example
of docs/new_scenario.md.

Agents ``agent_0 .. agent_{n-1}`` sit on a ring.  Each hears random rumours
by itself now and then; at every step each agent picks whom to message
(``Discrete(2 * reach + 1)``: 0 = quiet, ``k`` in 1..reach = the agent k
places clockwise, ``reach + k`` = k places anticlockwise).  A message
carries every rumour the sender knows and arrives ``latency`` plus a
uniform ``[0, jitter)`` later.  Observation (``Box(0, inf, (5,))``): own
share of rumours known, rumours learned and messages received this step,
and the two ring neighbours' shares.  Reward: rumours learned in the step
minus ``message_cost`` per message sent.  An agent terminates when it knows
every rumour; truncation after ``max_cycles`` steps.

The copies (:class:`seer_envs.scenario.copies.Copies`): ``num_copies``
rings, copy ``c``'s agent ``i`` at LP ``c * num_agents + i``; its
``heuristic`` (the baseline for learned policies) and its frames.
"""

import sys
import types

import numpy as np
from gymnasium import spaces

from seer_envs.scenario.copies import Copies
from seer_envs.scenario.render import figure, figure_rgb
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
    obs_layout = OBS_LAYOUT
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
        return ring_image(view)

    @staticmethod
    def print_map(env):
        shades = " .:-=+*#%@"
        share = env.model.n_known / env.config.num_rumours
        print(f"gossip t={env._cycle * env.config.dt:g} s  "
              + "".join(shades[min(9, int(v * 10))] for v in share[:120]), file=sys.stdout)

    def copy_model(self, c):
        return types.SimpleNamespace(n_known=self.model.n_known[self.agent_rows(c)])


def heuristic(env, obs):
    """A hand-written policy, the baseline for learned ones: message the
    ring neighbour that knows less, if it knows less than this agent; else
    stay quiet."""
    me, left, right = (obs[:, OBS_LAYOUT[k]] for k in ("known", "left", "right"))
    reach = env.config.reach
    act = np.where(right <= left, 1, reach + 1)           # 1: clockwise, reach + 1: anticlockwise
    return np.where(np.minimum(left, right) < me, act, 0).astype(np.int64)


def ring_image(view):
    """H x W x 3 uint8 frame of ``view`` (``config``, ``model`` with
    ``n_known``, ``_cycle``, ``max_cycles``); the same size every step."""
    cfg = view.config
    share = np.asarray(view.model.n_known, np.float64) / cfg.num_rumours
    fig = figure((6.4, 5.6), 80)
    if fig is None:            # no matplotlib: a strip of squares, dark = knows more
        row = (255 * (1.0 - share)).astype(np.uint8)
        img = np.stack([row, row, np.full_like(row, 255)], axis=-1)[None]
        return np.repeat(np.repeat(img, 16, axis=0), 16, axis=1)
    ax = fig.add_subplot()
    n = len(share)
    angle = np.pi / 2 - 2 * np.pi * np.arange(n) / n          # agent 0 at the top, clockwise
    x, y = np.cos(angle), np.sin(angle)
    ax.plot(np.append(x, x[0]), np.append(y, y[0]), color="0.8", linewidth=0.8, zorder=1)
    size = max(8.0, min(400.0, 12000.0 / n))
    pts = ax.scatter(x, y, c=share, cmap="viridis", vmin=0.0, vmax=1.0, s=size, zorder=2,
                     edgecolors="0.3", linewidths=0.4)
    if n <= 32:
        for i in range(n):
            ax.annotate(str(i), (1.13 * x[i], 1.13 * y[i]), ha="center", va="center", fontsize=7)
    ax.set_aspect("equal")
    ax.set_xlim(-1.3, 1.3)
    ax.set_ylim(-1.3, 1.3)
    ax.axis("off")
    cb = fig.colorbar(pts, ax=ax, fraction=0.046, pad=0.04)
    cb.set_label(f"share of the {cfg.num_rumours} rumours known")
    t = view._cycle * cfg.dt
    ax.set_title(f"gossip  {n} agents on a ring (agent 0 at the top, clockwise)\n"
                 f"step {view._cycle}/{view.max_cycles}  t = {t:g} s  "
                 f"mean known {share.mean():.0%}", fontsize=10)
    fig.tight_layout()
    return figure_rgb(fig)
