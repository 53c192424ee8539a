# SPDX-License-Identifier: BSD-3-Clause
"""Adapters to RL libraries (imported on demand; each needs its extra)."""
