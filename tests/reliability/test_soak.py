# SPDX-License-Identifier: BSD-3-Clause
"""Soak: a million PCS steps on a small grid with the resident set sampled;
memory must not grow.  Slow: ``pytest -m slow tests/reliability/test_soak.py``."""

import os

import numpy as np
import pytest

import seer_envs

STEPS = int(os.environ.get("SEER_SOAK_STEPS", "1000000"))


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_rss_is_flat_over_a_million_steps():
    env = seer_envs.make("pcs_v0", grid_width=4, grid_height=4, max_cycles=240, num_threads=2)
    env.reset_arrays(seed=0)
    acts = np.zeros(16, np.int64)
    samples = []
    episode = 0
    for k in range(STEPS):
        if not env.agents:
            episode += 1
            env.reset_arrays(seed=episode)
        env.step_arrays(acts)
        if k % (STEPS // 20) == 0:
            samples.append(rss_bytes())
    warm = samples[2]                 # after the first tenth: allocator pools are sized
    assert max(samples[2:]) <= warm * 1.01, [s // 1024 for s in samples]
