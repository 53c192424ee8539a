# SPDX-License-Identifier: BSD-3-Clause
"""Aircraft — UAV swarm control (``seer_envs.make("aircraft_v0")``)
=========================================================

A swarm of point-mass UAVs searches a square arena for moving ground
targets, shares what it sees over a short-range radio and must not collide
or run its batteries flat.  Each UAV's flight is integrated with RK4 inside
its own DYNAMICS events (compute-heavy events: ``dynamics_substeps`` is the
granularity knob).  The simulation runs on the SEER runtime, one LP per UAV
and per target; every output is bit-identical at any ``num_threads``.

=====================  =====================================================
Agents                 ``uav_0 .. uav_{num_uavs-1}``; targets are
                       non-agent entities
Action space           ``Box(-1, 1, (2,), float32)``: commanded
                       acceleration in units of ``max_accel`` (clipped to
                       ``max_accel`` in magnitude); with
                       ``continuous_actions=False``: ``Discrete(9)``, 0 =
                       no thrust, 1..8 = ``max_accel`` towards E, NE, N,
                       NW, W, SW, S, SE
Observation space      ``Box(float32, (25,))``: own position / arena_size
                       (2), velocity / max_speed (2), energy /
                       battery_capacity (1); the 4 nearest UAVs within
                       ``comm_range`` (by distance, ties by id): relative
                       position / comm_range and relative velocity /
                       max_speed (4 x 4, zero-padded); the freshest known
                       target: relative position / arena_size and age in
                       steps (3; ``(0, 0, -1)`` when none is known);
                       messages received this step (1).  All from the
                       boundary snapshot at the step end.
State                  every UAV's (x, y) / arena_size, velocity /
                       max_speed, energy / battery_capacity, alive; then
                       every target's (x, y) / arena_size, velocity /
                       max_speed (``state_space``), at the last boundary
Reward                 ``+1`` per target within ``sensor_range`` at the
                       step end (live UAVs), ``-10`` per collision counted
                       this step, ``-0.1 x`` energy used this step
Termination            a UAV whose energy reaches 0 stops, terminates and
                       leaves ``agents``; all truncate at ``max_cycles``
Infos                  ``{}`` per step; at a UAV's last step (and every
                       step with ``full_infos=True``) ``energy``, ``alive``, ``targets_in_range``,
                       ``belief_age`` (s, -1 when none) and the UAV's
                       cumulative counters: ``collisions``,
                       ``messages_received``, ``messages_sent``,
                       ``detections`` (SENSE events that saw a target),
                       ``belief_updates`` (fresher estimates taken from a
                       MSG), ``dynamics_events``; at the last step also
                       ``"episode": {"r": return, "l": length}``;
                       ``env.summary()`` has the swarm-wide totals since
                       reset: every counter, UAVs alive, mean energy,
                       targets within sensor range, steps and events
=====================  =====================================================

Dynamics (one step = ``dt``; see ``seer_envs.aircraft.handlers`` for the
event-level detail): ``dv/dt = u + w - drag |v| v``, ``dx/dt = v``, the
wind gust ``w`` an Ornstein-Uhlenbeck process (std ``wind_sigma``,
correlation time ``wind_tau``) driven by one normal pair per RK4 substep
from the UAV's own random stream, energy ``dE/dt = -(idle_power +
thrust_power (|u| + drag |v|^2))``; after each substep the speed is clipped
to ``max_speed`` and the UAV reflects off the arena walls.  SENSE every
``sense_period``: a collision is counted for each other UAV closer than
``collision_radius``, the nearest target within ``sensor_range`` becomes
the UAV's belief, and the belief is sent (``comm_latency`` later) to the
``max_messages`` nearest UAVs within ``comm_range``, who keep it if it is
fresher than theirs.  Other UAVs and targets are seen as they were at the
start of the step (the boundary snapshot); a UAV's own position is live.
Targets move at ``target_speed`` between uniformly drawn waypoints.  UAVs
launch at rest with full energy from a jittered grid in id order (UAV ``i``
at a uniform point of cell ``(i mod c, i div c)``, ``c = ceil(sqrt(num_uavs))``),
so the swarm starts evenly spread and nearby ids are nearby in space;
targets start at uniform points.

Parameters (all keyword; see :class:`~seer_envs.aircraft.config.AircraftConfig`
for units and bounds): ``num_uavs`` (64), ``num_targets`` (``max(1,
num_uavs // 8)``), ``arena_size`` (``250 sqrt(num_uavs)`` m), ``dt`` (1.0),
``control_period`` (0.25), ``dynamics_substeps`` (8), ``sense_period``
(0.5), ``sensor_range`` (150), ``comm_range`` (300), ``max_messages`` (4),
``comm_latency`` (0.05, the lookahead), ``collision_radius`` (5),
``max_speed`` (30), ``max_accel`` (5), ``drag`` (0.02), ``wind_sigma``
(1.0), ``continuous_actions`` (True), ``max_cycles`` (500), and beyond
the scenario spec's table ``wind_tau`` (2.0 s), ``battery_capacity`` (600),
``idle_power`` (0.5 /s), ``thrust_power`` (0.1 /s per m/s^2),
``target_speed`` (5 m/s); plus ``num_threads`` (``"auto"`` or an int >= 1),
``full_infos`` (False) and ``render_mode`` (``None``, ``"rgb_array"``: a top-down H x W x 3 image
of UAVs with headings and sensor ranges and the targets, ``"human"``: a
text map printed to stdout).

Fast path: ``reset_arrays(seed)`` and ``step_arrays(actions)`` take and
return NumPy arrays in ``possible_agents`` order, with no per-agent dicts:
actions are a float array ``(num_uavs, 2)`` (continuous) or an int array
``(num_uavs,)`` (discrete), one row per UAV including finished ones (their
rows are checked but ignored).

Version history: v0 — first release.
"""


from seer_envs.views.parallel import SeerParallelEnv
from seer_envs.aircraft.handlers import OBS_LAYOUT


class AircraftEnv(SeerParallelEnv):
    """The Aircraft ParallelEnv.  Build it with ``seer_envs.make("aircraft_v0", **kwargs)``.

    The episode lifecycle, both APIs, copying and interrupt safety come from
    :class:`~seer_envs.views.parallel.SeerParallelEnv`, the agents, spaces,
    commands and boundary from :class:`~seer_envs.aircraft.copies.AircraftCopies`;
    this class adds its docs and the observation layout."""

    #: Where each part of the observation lives (from the handlers' enums).
    obs_layout = OBS_LAYOUT

    metadata = {"render_modes": ["human", "rgb_array"], "name": "aircraft_v0",
                "is_parallelizable": True, "render_fps": 4}

    _scenario_id = "aircraft_v0"
