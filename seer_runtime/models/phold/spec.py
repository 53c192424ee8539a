# SPDX-License-Identifier: BSD-3-Clause
"""PHOLD's entry in the scenario registry."""

from seer_runtime.models.phold import PholdConfig, PholdModel, model_from_config, run
from seer_runtime.spec import ScenarioSpec, register

SPEC = register(ScenarioSpec(
    id="phold",
    description="PHOLD, the standard PDES benchmark, to end_time",
    config=PholdConfig,
    model=PholdModel,
    headless=run,
    test_params={"num_lps": 64, "remote_fraction": 0.5, "work_iters": 10},
    new_model=model_from_config,
    unit_time=lambda cfg: 1.0,
    workload_codes={"headless": 0},
))
