# SPDX-License-Identifier: BSD-3-Clause
"""PCS — cellular channel management (``seer_envs.pcs_v0``)
========================================================

The Personal Communication Service model of the PDES literature (ROSS's
``pcs``) as a multi-agent task: each cell's base station chooses how many of
its channels to hold back for handoffs.  Time unit: minutes.  The simulation
runs on the SEER runtime, one LP per cell; every output is bit-identical at
any ``num_threads``.

=====================  =====================================================
Agents                 ``cell_{x}_{y}`` for every cell of a
                       ``grid_width x grid_height`` torus
Action space           ``Discrete(channels_per_cell // 2 + 1)``: guard
                       channels for the next step (0 = no guard)
Observation space      ``Box(0, inf, (11,), float32)``: own busy fraction,
                       guard / channels, this step's call attempts, channel
                       blocks, handoffs in and handoff blocks (each divided
                       by ``portables_per_cell``), the 4 neighbours' busy
                       fractions (E, W, S, N) at the boundary, and the
                       power-control estimate
State                  all observations, flattened (``state_space``)
Reward                 ``-(channel blocks + handoff_penalty * handoff
                       blocks)`` of the cell in the step, mixed with the
                       mean over all cells by ``team_reward_share``
Termination            none; truncation after ``max_cycles`` steps
Infos                  ``{}`` per step; at an agent's last step its
                       cumulative counters and ``"episode": {"r", "l"}``
                       (every step with ``full_infos=True``);
                       ``env.summary()`` has the scenario-wide totals and
                       blocking probability
=====================  =====================================================

Parameters (all keyword; see :class:`~seer_envs.pcs.config.PCSConfig` for
units and bounds): ``grid_width`` (16), ``grid_height`` (16),
``portables_per_cell`` (16), ``channels_per_cell`` (10),
``call_interarrival_mean`` (360), ``call_duration_mean`` (180),
``move_interval_mean`` (4500; ``inf`` switches moves off),
``handoff_latency`` (1.0, the lookahead), ``power_control_iters`` (0),
``dt`` (60), ``handoff_penalty`` (5.0), ``max_cycles`` (240),
``team_reward_share`` (0.0); plus
``num_threads`` (``"auto"`` or an int >= 1), ``full_infos`` (False) and ``render_mode``
(``None``, ``"rgb_array"``: an H x W x 3 heat map of cell load,
``"human"``: the same map printed as text).

Fast path: ``reset_arrays(seed)`` and ``step_arrays(actions)`` take and
return NumPy arrays in ``possible_agents`` order, with no per-agent dicts.
The dict API costs well under 1 us per agent on top of it (docs/guide.md).

Version history: v0 — first release.
"""


import numpy as np
from gymnasium import spaces

from seer_envs._config import build
from seer_envs._parallel import SeerParallelEnv
from seer_envs.pcs.config import PCSConfig
from seer_envs.pcs.handlers import ACTION_KIND, COUNTERS, OBS_LAYOUT, PcsModel, boundary
from seer_envs.pcs.rewards import mix_team_reward
from seer_envs.pcs.handlers import OBS_SIZE_PY as OBS_SIZE


class PcsEnv(SeerParallelEnv):
    """The PCS ParallelEnv.  Build it with ``seer_envs.pcs_v0.parallel_env(**kwargs)``.

    The episode lifecycle, both APIs, copying and interrupt safety come from
    :class:`~seer_envs._parallel.SeerParallelEnv`; this class writes the
    guards, runs the boundary and renders."""

    metadata = {"render_modes": ["human", "rgb_array"], "name": "pcs_v0",
                "is_parallelizable": True, "render_fps": 4}

    #: Where each part of the observation lives (from the handlers' enums).
    obs_layout = OBS_LAYOUT

    _scenario_id = "pcs_v0"
    _model_cls = PcsModel

    def __init__(self, render_mode=None, num_threads="auto", full_infos=False, **params):
        self.config = build(PCSConfig, params)
        cfg = self.config
        self.max_cycles = cfg.max_cycles
        self.possible_agents = [f"cell_{x}_{y}" for y in range(cfg.grid_height)
                                for x in range(cfg.grid_width)]
        n = cfg.num_cells
        self._n_actions = cfg.num_guard_actions
        self._action_spec = ("discrete", self._n_actions)
        self._init_common(render_mode, num_threads, params, full_infos)
        obs_space = spaces.Box(0.0, np.inf, (OBS_SIZE,), np.float32)
        act_space = spaces.Discrete(self._n_actions)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self.state_space = spaces.Box(0.0, np.inf, (n * OBS_SIZE,), np.float32)
        self._obs = np.zeros((n, OBS_SIZE), np.float32)
        self._rew = np.zeros(n, np.float32)
        self._prev = np.zeros((n, len(COUNTERS)), np.int64)
        self._delta = np.zeros((n, len(COUNTERS)), np.int64)
        self._no_term = np.zeros(n, bool)

    def state(self):
        """The global state: every cell's observation, flattened."""
        self._check_started()
        return self._obs.reshape(-1).copy()

    # --- the scenario's part of the template ---------------------------------

    def _episode_started(self):
        self._prev[:] = 0

    def _write_actions(self, a):
        self._model.actions[:] = a

    def _inject_actions(self, t0):
        self._engine.inject(t0, ACTION_KIND, execute=True)

    def _boundary(self, t):
        boundary(self._model, self._obs, self._rew, self._prev, self._delta,
                 self.config.handoff_penalty, self.num_threads)
        mix_team_reward(self._rew, self.config.team_reward_share)
        return self._no_term

    def _agent_infos(self, rows):
        """Each cell's cumulative counters."""
        counters = self._model.counters[rows].tolist()
        return [dict(zip(COUNTERS, c)) for c in counters]

    # --- extras ------------------------------------------------------------

    def summary(self):
        """Scenario-wide totals since reset: every counter, events, steps and
        the blocking probability (channel + handoff blocks over attempts
        that were not busy lines)."""
        self._check_started()
        return summarize(self._model.counters, self._engine)

    def _image(self):
        from seer_envs.pcs.render import image
        return image(self)

    def _print_map(self):
        from seer_envs.pcs.render import print_map
        print_map(self)


def summarize(counters, engine=None):
    """Totals of a (cells x 6) counter array (or of its 6 column sums) and
    the blocking probability."""
    tot = counters.sum(axis=0) if counters.ndim == 2 else counters
    out = dict(zip(COUNTERS, (int(v) for v in tot)))
    out["handoffs"] = out["handoffs_out"]
    denom = out["call_attempts"] - out["busy_lines"]
    out["blocking_probability"] = ((out["channel_blocks"] + out["handoff_blocks"]) / denom
                                   if denom > 0 else 0.0)
    if engine is not None:
        out["events"] = engine.stats()["events"]
    return out
