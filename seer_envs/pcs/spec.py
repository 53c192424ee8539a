# SPDX-License-Identifier: BSD-3-Clause
"""PCS's entry in the scenario registry."""

from seer_envs import env_run
from seer_envs.pcs.config import PCSConfig
from seer_envs.pcs.copies import PcsCopies
from seer_envs.pcs.env import PcsEnv
from seer_envs.pcs.handlers import PcsModel
from seer_envs.pcs.headless import ENV_ONLY, run_headless
from seer_envs.pcs.heuristic import heuristic
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
