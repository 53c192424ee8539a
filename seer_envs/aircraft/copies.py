# SPDX-License-Identifier: BSD-3-Clause
"""Aircraft's copies (:class:`seer_envs.scenario.copies.Copies`).  LPs: every
copy's UAVs first (copy ``c``'s at ``[c*U, (c+1)*U)``), then every copy's
targets (copy ``c``'s at ``[C*U + c*T, C*U + (c+1)*T)``): UAV arrays stay
indexed by UAV LP, and within a copy the sources keep their order (event
keys unchanged)."""

import types

import numpy as np
from gymnasium import spaces

from seer_envs.scenario.copies import Copies
from seer_envs.aircraft.handlers import (ACTION_KIND, COUNTERS, N_NEIGHBOURS_PY, OBS_LAYOUT,
                                         OBS_SIZE_PY, AircraftModel, boundary, boundary_at_copy_end)

N_DISCRETE = 9


def observation_bounds():
    """(low, high) of the observation vector (see :mod:`seer_envs.aircraft.env`),
    from the handlers' slot enums."""
    low = np.full(OBS_SIZE_PY, -1.0, np.float32)
    high = np.full(OBS_SIZE_PY, 1.0, np.float32)
    low[OBS_LAYOUT["position"]] = 0.0
    low[OBS_LAYOUT["energy"]] = 0.0
    nb = OBS_LAYOUT["neighbours"]
    for m in range(N_NEIGHBOURS_PY):
        rel_v = slice(nb.start + 4 * m + 2, nb.start + 4 * m + 4)     # (dvx, dvy): up to 2 max_speed
        low[rel_v], high[rel_v] = -2.0, 2.0
    high[OBS_LAYOUT["target_age"]] = np.inf
    low[OBS_LAYOUT["messages"]], high[OBS_LAYOUT["messages"]] = 0.0, np.inf
    return low, high


class AircraftCopies(Copies):
    """Copies of the UAV swarm: one agent per UAV; targets are entities."""

    action_kind = ACTION_KIND
    model_cls = AircraftModel
    #: Fields that may differ per copy (docs/aircraft.md, "Per-copy
    #: fields"): read by the handlers and the boundary from the model's
    #: per-copy parameters, and here from ``_pc``.  Not per copy: ``dt``
    #: (the step), ``comm_latency`` (the engine's lookahead),
    #: ``continuous_actions`` (the action space).
    per_copy = ("num_uavs", "num_targets", "arena_size", "control_period", "dynamics_substeps",
                "sense_period", "sensor_range", "comm_range", "max_messages", "collision_radius",
                "max_speed", "max_accel", "drag", "wind_sigma", "wind_tau", "battery_capacity",
                "idle_power", "thrust_power", "target_speed")
    #: The batch is built for the largest of each; a copy with fewer UAVs or
    #: targets has inactive ones (its rows beyond its count are never in play).
    per_copy_counts = ("num_uavs", "num_targets")

    def agent_count(self, config):
        return config.num_uavs

    def key_blocks(self, members):
        """As the base's, but the target block's first entity is each copy's
        own ``num_uavs`` (a single env's target ``j`` draws from entity
        ``num_uavs + j``)."""
        uavs, (starts, n, _) = super().key_blocks(members)
        firsts = np.array([self.configs[c].num_uavs for c in np.asarray(members).tolist()], np.int64)
        return [uavs, (starts, n, firsts)]

    @classmethod
    def agent_names(cls, config):
        return [f"uav_{i}" for i in range(config.num_uavs)]

    @classmethod
    def spaces(cls, config):
        low, high = observation_bounds()
        obs = spaces.Box(low, high, (OBS_SIZE_PY,), np.float32)
        if config.continuous_actions:
            return obs, spaces.Box(-1.0, 1.0, (2,), np.float32)
        return obs, spaces.Discrete(N_DISCRETE)

    @classmethod
    def state_space(cls, config):
        return spaces.Box(-np.inf, np.inf, (6 * config.num_uavs + 4 * config.num_targets,), np.float32)

    @classmethod
    def blocks(cls, config):
        return [(config.num_uavs, 0), (config.num_targets, config.num_uavs)]

    #: UAV ids (block 0) and target indices (block 1) of the boundary's cell lists
    index_arrays = {"ucell_ids": 0, "tcell_ids": 1}
    _PER_UAV = frozenset(("px", "py", "vx", "vy", "wx", "wy", "energy", "step_start", "alive",
                          "bel_x", "bel_y", "bel_t", "bel_id", "counters", "actions", "salive",
                          "ucell_ids", "prev_energy", "prev_counters", "in_range"))
    _PER_TARGET = frozenset(("tx", "ty", "tvx", "tvy", "twx", "twy", "tcell_ids"))
    _PER_ENTITY = frozenset(("sx", "sy", "svx", "svy", "cell"))

    def array_layout(self, name, shape, num_copies):
        """UAV arrays by UAV, target arrays by target (a model without
        targets keeps one unused row), entity arrays both, the cell lists'
        starts and the snapshot times by copy."""
        U, T = self.config.num_uavs, self.config.num_targets
        if name in self._PER_UAV:
            return [(0, U)]
        if name in self._PER_TARGET:
            return [(0, T)]
        if name in self._PER_ENTITY:
            return [(0, U), (num_copies * U, T)]
        if name == "cmd":
            return [(0, 2 * U)]
        if name in ("ucell_start", "tcell_start", "snap_times"):
            return [(0, shape[0] // num_copies)]
        return super().array_layout(name, shape, num_copies)

    def __init__(self, config, num_copies=1):
        super().__init__(config, num_copies)
        # Each copy's max_accel, and (Discrete) its action table at rows
        # [k*9, (k+1)*9); ``uniform`` while every copy has the base config's.
        # A namespace, not array attributes: snapshots carry the configs.
        C = self.num_copies
        self._pc = types.SimpleNamespace(amax=np.full((C, 1, 1), config.max_accel), uniform=True,
                                         tables=None, offsets=None)
        if not config.continuous_actions:
            self._table = config.action_table

    def configure(self, c, config):
        """Copy ``c``'s parameters (the model's per-copy arrays) and its
        max_accel, which scales its actions here."""
        super().configure(c, config)
        pc = self._pc
        pc.amax[c] = config.max_accel
        pc.uniform = bool(np.all(pc.amax == self.config.max_accel))
        if not self.config.continuous_actions:
            if pc.tables is None:
                pc.tables = np.tile(self._table, (self.num_copies, 1))
                pc.offsets = np.repeat(N_DISCRETE * np.arange(self.num_copies, dtype=np.int64),
                                       self.num_agents)
            pc.tables[c * N_DISCRETE:(c + 1) * N_DISCRETE] = config.action_table

    def write_actions(self, a, done):
        m, pc = self.model, self._pc     # a stopped UAV's command is never read
        if self.config.continuous_actions:
            if pc.uniform:
                np.multiply(a.reshape(-1, 2), self.config.max_accel, out=m.actions, dtype=np.float64)
            else:
                np.multiply(a.reshape(self.num_copies, -1, 2), pc.amax,
                            out=m.actions.reshape(self.num_copies, -1, 2), dtype=np.float64)
        elif pc.uniform:
            np.take(self._table, a.reshape(-1), axis=0, out=m.actions)
        else:
            np.take(pc.tables, a.reshape(-1) + pc.offsets, axis=0, out=m.actions)

    def restart(self, c0, c1):
        self.model.reset_copies(c0, c1)

    def boundary(self, c0, c1, times, num_threads):
        boundary(self.model, 0.0, self.obs, self.rew, self._term, num_threads, c0, c1,
                 np.asarray(times, np.float64))

    def copy_end(self, times):
        return boundary_at_copy_end(self.model, self.obs, self.rew, self._term, times)

    def finish_boundary(self, c0, c1):
        pass                            # copy_end did all of it

    def agent_infos(self, c, rows, now):
        """Each UAV's energy, alive flag, targets in range, belief age (s,
        -1 when none) and cumulative counters."""
        m = self.model
        rows = c * self.num_agents + np.asarray(rows)
        counters = m.counters[rows].tolist()
        energy = m.energy[rows].tolist()
        alive = m.alive[rows].astype(bool).tolist()
        in_range = m.in_range[rows].tolist()
        bel_t = m.bel_t[rows].tolist()
        out = []
        for k in range(len(counters)):
            d = dict(zip(COUNTERS, counters[k]))
            d.update(energy=energy[k], alive=alive[k], targets_in_range=in_range[k],
                     belief_age=(now - bel_t[k]) if bel_t[k] >= 0 else -1.0)
            out.append(d)
        return out

    def summary(self, c, engine, steps):
        m = self.model
        u = slice(c * self.num_agents, c * self.num_agents + self.configs[c].num_uavs)
        out = dict(zip(COUNTERS, (int(v) for v in m.counters[u].sum(axis=0))))
        out.update({"alive": int(m.alive[u].sum()), "mean_energy": float(m.energy[u].mean()),
                    "targets_in_range": int(m.in_range[u].sum()), "steps": steps,
                    "events": engine.stats()["events"]})
        return out

    def state(self, c):
        """Copy ``c``'s UAVs (6 values each), then its targets (4 each), in
        the batch's width: a copy with fewer UAVs or targets has zeros in
        the slots beyond its counts."""
        cfg, m = self.configs[c], self.model
        U, T = self.config.num_uavs, self.config.num_targets         # the width
        nu = U * self.num_copies
        u = slice(c * U, (c + 1) * U)
        t = slice(nu + c * T, nu + (c + 1) * T)
        L, v = cfg.arena_size, cfg.max_speed
        us = np.stack([m.sx[u] / L, m.sy[u] / L, m.svx[u] / v, m.svy[u] / v,
                       m.energy[u] / cfg.battery_capacity, m.salive[u].astype(np.float64)], axis=1)
        ts = np.stack([m.sx[t] / L, m.sy[t] / L, m.svx[t] / v, m.svy[t] / v], axis=1)
        return np.concatenate([us.reshape(-1), ts.reshape(-1)]).astype(np.float32)

    @staticmethod
    def image(view):
        from seer_envs.aircraft.render import image
        return image(view)

    @staticmethod
    def print_map(env):
        from seer_envs.aircraft.render import print_map
        print_map(env)

    def copy_model(self, c):
        """Copy ``c``'s snapshot: its UAVs, then its targets (the single
        env's entity order)."""
        m, U, T = self.model, self.config.num_uavs, self.config.num_targets
        nu = U * self.num_copies
        u = slice(c * U, c * U + self.configs[c].num_uavs)
        t = slice(nu + c * T, nu + c * T + self.configs[c].num_targets)
        ent = {k: np.concatenate([getattr(m, k)[u], getattr(m, k)[t]]) for k in ("sx", "sy", "svx", "svy")}
        return types.SimpleNamespace(salive=m.salive[u], **ent)
