# SPDX-License-Identifier: BSD-3-Clause
"""PCS's entries in the scenario registry: ``pcs_v0`` and the ``pcs_hotspot_v0`` and
``pcs_hotspot_v1`` tasks."""

from seer_envs.pcs.config import PCSConfig, PCSHotspotConfig, PCSHotspotV1Config
from seer_envs.pcs.copies import PcsCopies
from seer_envs.pcs.env import PcsEnv, PcsHotspotEnv, PcsHotspotV1Env
from seer_envs.pcs.handlers import PcsModel
from seer_envs.pcs.headless import ENV_ONLY, run_headless
from seer_envs.pcs.heuristic import adaptive_guard, heuristic, rush_guard
from seer_runtime.spec import ScenarioSpec, register

SPEC = register(ScenarioSpec(
    id="pcs_v0",
    description="PCS: cellular channel management (communication-heavy events); "
                "headless: a PDES run with no agents, guard 0, to end_time",
    config=PCSConfig,
    model=PcsModel,
    env=PcsEnv,
    copies=PcsCopies,
    headless=run_headless,
    heuristic=heuristic,
    test_params={"grid_width": 4, "grid_height": 3, "max_cycles": 6, "dt": 30.0},
    workload_codes={"headless": 1, "env": 2},
    headless_ignores=ENV_ONLY,
))

#: What the hot-spot tasks share: pcs_v0's model and copies, no headless run.
_TASK = dict(model=PcsModel, copies=PcsCopies, headless=None, workload_codes={"env": 3},
             test_params={"grid_width": 4, "grid_height": 3, "max_cycles": 6, "dt": 30.0})

HOTSPOT_SPEC = register(ScenarioSpec(
    id="pcs_hotspot_v0",
    description="PCS with hot spots of load moving over the cells, a daily swing and neighbours' "
                "drops in each cell's own reward: a social dilemma (selfish low guards are an "
                "equilibrium below the team's best); the learning task is pcs_hotspot_v1",
    config=PCSHotspotConfig,
    env=PcsHotspotEnv,
    heuristic=adaptive_guard,
    **_TASK,
))

HOTSPOT_V1_SPEC = register(ScenarioSpec(
    id="pcs_hotspot_v1",
    description="PCS learning task: hot spots of load, a daily swing, rush hours of fast-moving phones "
                "and the team's reward: guard channels that follow the hour and the cell",
    config=PCSHotspotV1Config,
    env=PcsHotspotV1Env,
    heuristic=rush_guard,
    **_TASK,
))
