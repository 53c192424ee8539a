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
"""

import sys

import numpy as np
from gymnasium import spaces

from seer_envs._parallel import SeerParallelEnv
from seer_envs.gossip.config import GossipConfig
from seer_envs.gossip.model import ACTION_KIND, COUNTERS, GossipModel
from seer_runtime.config import build

#: Observation slots (the reference reads the same names).
OBS_LAYOUT = {"known": 0, "learned": 1, "received": 2, "left": 3, "right": 4}
OBS_SIZE = len(OBS_LAYOUT)
C_LEARNED, C_RECEIVED, C_SENT = (COUNTERS.index(k) for k in ("learned", "received", "sent"))


def observe(cfg, n_known, delta):
    """Observations and rewards from the per-agent rumour counts and this
    step's counter deltas (float64 arithmetic, one cast to float32: the
    reference calls this too, so both round the same way)."""
    k = float(cfg.num_rumours)
    share = n_known / k
    obs = np.empty((len(n_known), OBS_SIZE), np.float64)
    obs[:, OBS_LAYOUT["known"]] = share
    obs[:, OBS_LAYOUT["learned"]] = delta[:, C_LEARNED] / k
    obs[:, OBS_LAYOUT["received"]] = delta[:, C_RECEIVED] / (2.0 * cfg.reach)
    obs[:, OBS_LAYOUT["left"]] = np.roll(share, 1)       # agent i-1
    obs[:, OBS_LAYOUT["right"]] = np.roll(share, -1)     # agent i+1
    rew = delta[:, C_LEARNED] - cfg.message_cost * delta[:, C_SENT]
    return obs.astype(np.float32), rew.astype(np.float32), n_known == cfg.num_rumours


class GossipEnv(SeerParallelEnv):
    """The gossip ParallelEnv; the template supplies the lifecycle, both
    APIs, copies and interrupt safety."""

    metadata = {"render_modes": ["human", "rgb_array"], "name": "gossip_v0",
                "is_parallelizable": True, "render_fps": 4}
    obs_layout = OBS_LAYOUT
    _scenario_id = "gossip_v0"
    _model_cls = GossipModel

    def __init__(self, render_mode=None, num_threads="auto", full_infos=False, **params):
        self.config = cfg = build(GossipConfig, params)
        self.max_cycles = cfg.max_cycles
        self.possible_agents = [f"agent_{i}" for i in range(cfg.num_agents)]
        self._action_spec = ("discrete", cfg.num_actions)
        self._init_common(render_mode, num_threads, params, full_infos)
        obs_space = spaces.Box(0.0, np.inf, (OBS_SIZE,), np.float32)
        act_space = spaces.Discrete(cfg.num_actions)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self._obs = np.zeros((cfg.num_agents, OBS_SIZE), np.float32)
        self._rew = np.zeros(cfg.num_agents, np.float32)
        self._prev = np.zeros((cfg.num_agents, len(COUNTERS)), np.int64)

    # --- the scenario's part of the template ---------------------------------

    def _episode_started(self):
        self._prev[:] = 0

    def _write_actions(self, a):
        # a finished agent's row is ignored: it stays quiet
        np.multiply(a, ~self._done, out=self._model.actions, casting="unsafe")

    def _inject_actions(self, t0):
        self._engine.inject(t0, ACTION_KIND, execute=True)

    def _boundary(self, t):
        counters = self._model.counters
        delta = counters - self._prev
        self._prev[:] = counters
        self._obs[:], self._rew[:], term = observe(self.config, self._model.n_known, delta)
        return term

    def _agent_infos(self, rows):
        """Each agent's cumulative counters and rumours known."""
        m = self._model
        return [dict(zip(COUNTERS, c), known=k)
                for c, k in zip(m.counters[rows].tolist(), m.n_known[rows].tolist())]

    def _image(self):
        share = self._model.n_known / self.config.num_rumours
        row = (255 * (1.0 - share)).astype(np.uint8)          # dark = knows more
        img = np.stack([row, row, np.full_like(row, 255)], axis=-1)[None]
        return np.repeat(np.repeat(img, 16, axis=0), 16, axis=1)

    def _print_map(self):
        shades = " .:-=+*#%@"
        share = self._model.n_known / self.config.num_rumours
        print(f"gossip t={self._cycle * self.config.dt:g} s  "
              + "".join(shades[min(9, int(v * 10))] for v in share[:120]), file=sys.stdout)
