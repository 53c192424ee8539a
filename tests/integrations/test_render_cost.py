# SPDX-License-Identifier: BSD-3-Clause
"""A frame's cost does not grow with parameter values (issue 28, Why 2):
sensor discs far larger than the arena were drawn at full size, and Agg
spent minutes on each frame."""

import time

import numpy as np
import pytest

import seer_envs

pytest.importorskip("matplotlib.pyplot")


def test_huge_sensor_discs_render_fast_and_not_blank():
    env = seer_envs.make("aircraft_v0", num_uavs=367, arena_size=1.0, sensor_range=1e9,
                                   render_mode="rgb_array", num_threads=1)
    env.reset(seed=0)
    env.render()                         # matplotlib's first figure pays its imports
    t0 = time.perf_counter()
    img = env.render()
    took = time.perf_counter() - t0
    assert took < 10.0, f"render took {took:.1f} s"      # ~0.2 s; minutes before the fix
    assert img.ndim == 3 and img.shape[2] == 3 and img.dtype == np.uint8
    # Not blank: the discs tint the frame and the UAVs, targets and text are drawn.
    assert img.std() > 10 and len(np.unique(img.reshape(-1, 3), axis=0)) > 8

