# SPDX-License-Identifier: BSD-3-Clause
"""PCS's entries in the scenario registry: ``pcs_v0`` and the ``pcs_hotspot_v0`` task."""

from seer_envs import env_run
from seer_envs.pcs.config import PCSConfig, PCSHotspotConfig
from seer_envs.pcs.copies import PcsCopies
from seer_envs.pcs.env import PcsEnv, PcsHotspotEnv
from seer_envs.pcs.handlers import PcsModel
from seer_envs.pcs.headless import ENV_ONLY, run_headless
from seer_envs.pcs.heuristic import adaptive_guard, heuristic
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
    env_run=env_run,
    workload_codes={"headless": 1, "env": 2},
    headless_ignores=ENV_ONLY,
))

HOTSPOT_SPEC = register(ScenarioSpec(
    id="pcs_hotspot_v0",
    description="PCS with hot spots of load moving over the cells, a daily swing and neighbours' "
                "drops in each cell's reward: guard channels as a state-dependent decision",
    config=PCSHotspotConfig,
    model=PcsModel,
    env=PcsHotspotEnv,
    copies=PcsCopies,
    headless=None,
    heuristic=adaptive_guard,
    test_params={"grid_width": 4, "grid_height": 3, "max_cycles": 6, "dt": 30.0},
    env_run=env_run,
    workload_codes={"env": 3},
))
