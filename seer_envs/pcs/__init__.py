# SPDX-License-Identifier: BSD-3-Clause
"""PCS scenario: config, handlers, env, headless run, pure-Python reference."""

from seer_envs.pcs.config import PCSConfig
from seer_envs.pcs.env import PcsEnv
from seer_envs.pcs.headless import run_headless

__all__ = ["PCSConfig", "PcsEnv", "run_headless"]
