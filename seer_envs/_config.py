# SPDX-License-Identifier: BSD-3-Clause
"""Kept for imports written before the config helpers moved to
:mod:`seer_runtime.config`."""

from seer_runtime.config import build, describe, param, validate  # noqa: F401
