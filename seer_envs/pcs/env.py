# SPDX-License-Identifier: BSD-3-Clause
"""PCS — cellular channel management (``seer_envs.make("pcs_v0")``)
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
Observation space      ``Box(0, high, (11,), float32)``: own busy fraction,
                       guard / channels, this step's call attempts, channel
                       blocks, handoffs in and handoff blocks (each divided
                       by ``portables_per_cell``), the 4 neighbours' busy
                       fractions (E, W, S, N) at the boundary, and the
                       power-control estimate; ``high`` is 1 for the
                       busy fractions and the power estimate, 0.5 for the
                       guard, ``inf`` for the four counts (their scale:
                       about ``dt / call_interarrival_mean`` per phone and
                       step, times the load factor; docs/pcs.md)
State                  all observations, flattened (``state_space``)
Reward                 ``-(channel blocks + handoff_penalty * handoff
                       blocks)`` of the cell in the step, mixed with the
                       mean over all cells by ``team_reward_share``
Termination            none; truncation after ``max_cycles`` steps
Infos                  ``{}`` per step; at an agent's last step its
                       cumulative counters and ``"episode": {"r", "l"}``
                       (every step with ``full_infos=True``);
                       ``env.summary()`` has the scenario-wide totals
                       since reset (every counter and ``events``) and the
                       blocking probability (channel + handoff blocks over
                       attempts that were not busy lines)
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

Version history: v0 — first release.  ``pcs_hotspot_v0`` (:class:`PcsHotspotEnv`)
and ``pcs_hotspot_v1`` (:class:`PcsHotspotV1Env`) are separate tasks on the
same model: the same parameters, other defaults.
"""


from seer_envs.views.parallel import SeerParallelEnv
from seer_envs.pcs.handlers import OBS_LAYOUT


class PcsEnv(SeerParallelEnv):
    """The PCS ParallelEnv.  Build it with ``seer_envs.make("pcs_v0", **kwargs)``.

    The episode lifecycle, both APIs, copying and interrupt safety come from
    :class:`~seer_envs.views.parallel.SeerParallelEnv`, the agents, spaces,
    actions and boundary from :class:`~seer_envs.pcs.copies.PcsCopies`;
    this class adds its docs and the observation layout."""

    metadata = {"render_modes": ["human", "rgb_array"], "name": "pcs_v0",
                "is_parallelizable": True, "render_fps": 4}

    #: Where each part of the observation lives (from the handlers' enums).
    obs_layout = OBS_LAYOUT

    _scenario_id = "pcs_v0"


class PcsHotspotEnv(PcsEnv):
    """The ``pcs_hotspot_v0`` task: :class:`PcsEnv` with the defaults of
    :class:`~seer_envs.pcs.config.PCSHotspotConfig` (moving hot spots, a
    daily swing, neighbours' drops in the reward; docs/pcs.md).  Every
    ``pcs_v0`` parameter is accepted; only the defaults differ."""

    metadata = dict(PcsEnv.metadata, name="pcs_hotspot_v0")
    _scenario_id = "pcs_hotspot_v0"



class PcsHotspotV1Env(PcsEnv):
    """The ``pcs_hotspot_v1`` learning task: :class:`PcsEnv` with the
    defaults of :class:`~seer_envs.pcs.config.PCSHotspotV1Config` (moving
    hot spots, a daily swing, rush hours of fast-moving phones, the team's
    reward; docs/pcs.md).  Every ``pcs_v0`` parameter is accepted; only the
    defaults differ."""

    metadata = dict(PcsEnv.metadata, name="pcs_hotspot_v1")
    _scenario_id = "pcs_hotspot_v1"
