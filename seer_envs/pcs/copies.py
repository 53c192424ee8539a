# SPDX-License-Identifier: BSD-3-Clause
"""PCS's copies (:class:`seer_envs.scenario.copies.Copies`): copy ``c``'s cell
``j`` is LP ``c * cells + j``, and a copy's phones only reach its own cells."""

import types

import numpy as np
from gymnasium import spaces

from seer_envs.scenario.copies import Copies
from seer_envs.pcs.handlers import (ACTION_KIND, COUNTER_INDEX, COUNTERS, OBS_LAYOUT, OBS_SIZE_PY,
                                    PcsModel, boundary, boundary_at_copy_end)
from seer_envs.pcs.rewards import charge_neighbour_drops, mix_team_reward, neighbour_table


def obs_high():
    """Upper bounds of an observation row where the model bounds it: busy
    fractions 1, the guard 1/2 of the channels, the power-control estimate
    1 (from 0, ``p <- 0.1 + 0.5 load p / (1 + 0.01 p)`` with load <= 1 stays
    below 0.6); the step's counts per phone (attempts, blocks, handoffs in,
    handoff blocks) have no bound (docs/pcs.md, "Observation scale")."""
    high = np.full(OBS_SIZE_PY, np.inf, np.float32)
    for key, value in (("busy", 1.0), ("guard", 0.5), ("neighbours", 1.0), ("power", 1.0)):
        high[OBS_LAYOUT[key]] = value
    return high


class PcsCopies(Copies):
    """Copies of the PCS grid: one agent per cell, no termination."""

    action_kind = ACTION_KIND
    agent_arrays = ("_prev", "_delta")     # the counters at the last boundary, and its deltas (state())
    model_cls = PcsModel
    #: Every field that changes neither the grid, the phones, the channels
    #: (the action space), ``dt`` nor the lookahead ``handoff_latency``.
    per_copy = ("call_interarrival_mean", "call_duration_mean", "move_interval_mean", "power_control_iters",
                "handoff_penalty", "team_reward_share", "hotspot_amplitude", "hotspot_radius",
                "hotspot_speed", "diurnal_amplitude", "diurnal_period", "neighbour_drop_share",
                "rush_fraction", "rush_move_interval_mean", "rush_period")

    @classmethod
    def agent_names(cls, config):
        return [f"cell_{x}_{y}" for y in range(config.grid_height) for x in range(config.grid_width)]

    @classmethod
    def spaces(cls, config):
        return (spaces.Box(0.0, obs_high(), (OBS_SIZE_PY,), np.float32),
                spaces.Discrete(config.num_guard_actions))

    @classmethod
    def state_space(cls, config):
        return spaces.Box(0.0, np.tile(obs_high(), config.num_cells), (config.num_cells * OBS_SIZE_PY,),
                          np.float32)

    def __init__(self, config, num_copies=1):
        super().__init__(config, num_copies)
        total = len(self.rew)
        self._prev = np.zeros((total, len(COUNTERS)), np.int64)
        self._delta = np.zeros((total, len(COUNTERS)), np.int64)
        self._neighbours = neighbour_table(config.grid_width, config.grid_height)
        # each copy's reward shaping (configure): share of the team mean, neighbours' drops' weight
        self._team_share = np.full(num_copies, config.team_reward_share)
        self._drop_weight = np.full(num_copies, config.neighbour_drop_share / 4 * config.handoff_penalty)

    def configure(self, c, config):
        super().configure(c, config)
        self._team_share[c] = config.team_reward_share
        self._drop_weight[c] = config.neighbour_drop_share / 4 * config.handoff_penalty

    def write_actions(self, a, done):
        self.model.actions[:] = a        # every cell is live for the whole episode

    def restart(self, c0, c1):
        n = self.lps_per_copy
        self.model.reset_cells(c0 * n, c1 * n)
        self._prev[c0 * n:c1 * n] = 0

    def boundary(self, c0, c1, times, num_threads):
        n = self.lps_per_copy
        boundary(self.model, self.obs, self.rew, self._prev, self._delta, num_threads, c0 * n, c1 * n)
        self.finish_boundary(c0, c1)

    def copy_end(self, times):
        return boundary_at_copy_end(self.model, self.obs, self.rew, self._prev, self._delta)

    def finish_boundary(self, c0, c1):
        n = self.lps_per_copy
        lo, hi = c0 * n, c1 * n
        weight, share = self._drop_weight[c0:c1], self._team_share[c0:c1]
        if weight.any():
            charge_neighbour_drops(
                self.rew[lo:hi].reshape(c1 - c0, n),
                self._delta[lo:hi, COUNTER_INDEX["handoff_blocks"]].reshape(c1 - c0, n),
                self._neighbours, weight)
        if share.any():
            mix_team_reward(self.rew[lo:hi].reshape(c1 - c0, n), share)
        self._term[lo:hi] = 0

    def agent_infos(self, c, rows, now):
        """Each cell's cumulative counters."""
        counters = self.model.counters[c * self.num_agents + np.asarray(rows)].tolist()
        return [dict(zip(COUNTERS, v)) for v in counters]

    def summary(self, c, engine, steps):
        from seer_envs.pcs.summary import summarize
        return summarize(self.model.counters[self.agent_rows(c)], engine)

    def state(self, c):
        if self.num_copies == 1:     # a single env: its last boundary's rows are all in self.obs
            return self.obs.reshape(-1).copy()
        return self.states(c, c + 1)[0]

    def states(self, c0, c1):
        """Every cell's observation of copies ``[c0, c1)``, recomputed from
        the model and the last boundary's counter deltas: with several
        copies, ``self.obs`` holds only the rows the last call wrote (a
        restart or a step of some copies), the others are in arrays already
        handed out.  Between steps nothing changes the model, so the rows
        are those the last boundary gave, bit for bit."""
        A = self.num_agents
        lo, hi = c0 * A, c1 * A
        prev = np.zeros_like(self._prev)
        prev[lo:hi] = self.model.counters[lo:hi] - self._delta[lo:hi]
        obs = np.empty_like(self.obs)
        boundary(self.model, obs, np.empty_like(self.rew), prev, np.empty_like(self._delta), 1, lo, hi)
        return obs[lo:hi].reshape(c1 - c0, -1)

    @staticmethod
    def image(view):
        from seer_envs.pcs.render import image
        return image(view)

    @staticmethod
    def print_map(env):
        from seer_envs.pcs.render import print_map
        print_map(env)

    def copy_model(self, c):
        return types.SimpleNamespace(free_channels=self.model.free_channels[self.agent_rows(c)])
