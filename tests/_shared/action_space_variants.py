# SPDX-License-Identifier: BSD-3-Clause
"""Two scenarios whose action spaces use what ``Copies.action_spec`` keeps,
registered on import: ``gossip_start_v0`` (Gossip, actions numbered from 1:
``Discrete(n, start=1)``) and ``aircraft_bounds_v0`` (Aircraft's continuous
commands, the turn rate within [-0.5, 0.5]: a Box with bounds per
element).  tests/envs/test_action_spec.py steps them against the originals;
tests/envs/test_minimal_scenario.py runs the generic tests on them
(``pytest -p action_space_variants``)."""

import dataclasses

import numpy as np
from gymnasium import spaces

import seer_envs
from seer_envs.aircraft.copies import AircraftCopies
from seer_envs.gossip.copies import GossipCopies
from seer_runtime.spec import register

LOW, HIGH = np.array([-1.0, -0.5], np.float32), np.array([1.0, 0.5], np.float32)


class ShiftedGossipCopies(GossipCopies):
    """Gossip with its actions numbered from 1 (``Discrete(n, start=1)``)."""

    @classmethod
    def spaces(cls, config):
        obs, act = super().spaces(config)
        return obs, spaces.Discrete(act.n, start=1)

    def write_actions(self, a, done):
        super().write_actions(np.asarray(a) - 1, done)


class NarrowAircraftCopies(AircraftCopies):
    """Aircraft's continuous commands, the turn rate within [-0.5, 0.5]."""

    @classmethod
    def spaces(cls, config):
        obs, _ = super().spaces(config)
        return obs, spaces.Box(LOW, HIGH)


def _variant(base_id, sid, copies_cls, **test_params):
    base = seer_envs.get(base_id)
    env_cls = type(f"{copies_cls.__name__}Env", (base.env,), {"_scenario_id": sid})
    over = {}
    if test_params:
        over["test_params"] = dict(base.test_params, **test_params)
        if base.test_params_stopping is not None:
            over["test_params_stopping"] = dict(base.test_params_stopping, **test_params)
    return register(dataclasses.replace(base, id=sid, copies=copies_cls, env=env_cls, heuristic=None,
                                        description=f"{base.description} ({copies_cls.__doc__})", **over))


GOSSIP = _variant("gossip_v0", "gossip_start_v0", ShiftedGossipCopies)
AIRCRAFT = _variant("aircraft_v0", "aircraft_bounds_v0", NarrowAircraftCopies, continuous_actions=True)
seer_envs.register_gymnasium()
