# SPDX-License-Identifier: BSD-3-Clause
"""Aircraft's entry in the scenario registry."""

from seer_envs.aircraft.config import AircraftConfig
from seer_envs.aircraft.copies import AircraftCopies
from seer_envs.aircraft.env import AircraftEnv
from seer_envs.aircraft.handlers import AircraftModel
from seer_envs.aircraft.heuristic import heuristic
from seer_runtime.spec import ScenarioSpec, register

SPEC = register(ScenarioSpec(
    id="aircraft_v0",
    description="Aircraft: UAV swarm control (compute-heavy events)",
    config=AircraftConfig,
    model=AircraftModel,
    env=AircraftEnv,
    copies=AircraftCopies,
    heuristic=heuristic,
    test_params={"num_uavs": 6, "num_targets": 3, "max_cycles": 6},
    # small batteries: every UAV runs flat within 50 s, at a step its thrust decides
    test_params_stopping={"num_uavs": 6, "num_targets": 3, "battery_capacity": 25.0,
                          "arena_size": 500.0, "max_cycles": 200},
    workload_codes={"env": 3},
))
