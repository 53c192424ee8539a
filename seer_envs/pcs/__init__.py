# SPDX-License-Identifier: BSD-3-Clause
"""PCS scenario: config, handlers, env, headless run, pure-Python reference;
``pcs_v0`` and the ``pcs_hotspot_v0`` task (the same model, other defaults)."""

from seer_envs.pcs.config import PCSConfig, PCSHotspotConfig
from seer_envs.pcs.env import PcsEnv, PcsHotspotEnv
from seer_envs.pcs.headless import run_headless

__all__ = ["PCSConfig", "PCSHotspotConfig", "PcsEnv", "PcsHotspotEnv", "run_headless"]
