# SPDX-License-Identifier: BSD-3-Clause
"""PCS's rush hours (``rush_fraction``, ``rush_move_interval_mean``,
``rush_period``): off by default and bit for bit the old model, validated,
moves at the rush rate inside the windows only.  The reference, thread
counts and the vector env are covered with the other hot-spot fields in
test_pcs_hotspot.py."""

import math

import numpy as np
import pytest

import seer_envs
from seer_envs.pcs.config import HOTSPOT_V1_DEFAULTS, PCSConfig, PCSHotspotConfig, PCSHotspotV1Config
from seer_envs.pcs.reference import PcsReference


def test_off_by_default_and_v1_defaults():
    assert PCSConfig().rush_fraction == 0 and not PCSConfig().rush_hours
    assert not PCSHotspotConfig().rush_hours
    cfg = PCSHotspotV1Config()
    for k, v in HOTSPOT_V1_DEFAULTS.items():
        assert getattr(cfg, k) == v
    assert cfg.rush_hours and cfg.team_reward_share == 1.0
    env = seer_envs.make("pcs_hotspot_v1")
    assert env.metadata["name"] == "pcs_hotspot_v1" and env.config == cfg
    assert seer_envs.make("pcs_hotspot_v1").config == cfg


@pytest.mark.parametrize("field, bad", [
    ("rush_fraction", -0.1), ("rush_fraction", 1.0), ("rush_fraction", float("nan")),
    ("rush_move_interval_mean", 0.0), ("rush_move_interval_mean", -1.0),
    ("rush_period", 0.0), ("rush_period", float("inf")),
])
def test_validated(field, bad):
    with pytest.raises(ValueError, match=field):
        PCSConfig(**{field: bad})


def test_bounds_see_the_rush_rate():
    # the fastest moves bound the step's work and an idle phone's walk
    PCSConfig(grid_width=64, grid_height=64, rush_fraction=0.5, rush_move_interval_mean=1.0)
    with pytest.raises(ValueError, match="rush_move_interval_mean"):
        PCSConfig(grid_width=512, grid_height=512, rush_fraction=0.5, rush_move_interval_mean=1e-3)
    with pytest.raises(ValueError, match="rush_period"):
        PCSConfig(rush_fraction=0.5, rush_period=1e-20)
    # equal rates are no rush hours (and draw as the plain model does)
    assert not PCSConfig(rush_fraction=0.5, rush_move_interval_mean=4500.0).rush_hours


def _moves_by_hour(**kw):
    """Handoffs out per step, summed over a few seeds, at guard 0."""
    env = seer_envs.make("pcs_hotspot_v1", num_threads=1, **kw)
    total = None
    for seed in range(3):
        env.reset_arrays(seed=seed)
        prev, out = env.model.counters[:, 5].sum(), []
        while env.agents:
            env.step_arrays(np.zeros(env.config.num_cells, np.int64))
            cur = env.model.counters[:, 5].sum()
            out.append(cur - prev)
            prev = cur
        total = np.array(out) if total is None else total + out
    return total


def test_moves_follow_the_windows():
    """Phones move in calls far more often inside the rush windows (centred a
    quarter period in, rush_fraction of it long) than outside."""
    kw = dict(hotspot_count=0, diurnal_amplitude=0.0, max_cycles=48)
    out = _moves_by_hour(**kw)
    cfg = PCSHotspotV1Config(**kw)
    t = (np.arange(48) + 0.5) * cfg.dt
    phase = np.mod(t / cfg.rush_period - 0.25, 1.0)
    rush = (phase < cfg.rush_fraction / 2) | (phase > 1 - cfg.rush_fraction / 2)
    # skip the step after each switch (calls in flight carry the old rate)
    edge = np.r_[False, rush[1:] != rush[:-1]]
    inside, outside = out[rush & ~edge].mean(), out[~rush & ~edge].mean()
    assert inside > 20 * outside > 0


def test_no_moves_in_rush_hours_when_the_rush_mean_is_inf():
    env = seer_envs.make("pcs_hotspot_v1", num_threads=1, grid_width=4, grid_height=4, max_cycles=24,
                                      rush_move_interval_mean=math.inf, move_interval_mean=20.0,
                                      hotspot_count=0, diurnal_amplitude=0.0)
    ref = PcsReference(env.config)
    assert np.array_equal(env.reset_arrays(seed=1), ref.reset(env.seed_used))
    moves = []
    prev = 0
    while env.agents:
        env.step_arrays(np.zeros(16, np.int64))
        cur = int(env.model.counters[:, 5].sum())
        moves.append(cur - prev)
        prev = cur
    moves = np.array(moves)
    t = (np.arange(24) + 0.5) * 60.0
    phase = np.mod(t / 1440.0 - 0.25, 1.0)
    deep_rush = (phase < 0.2) | (phase > 0.8)          # well inside the window (half width 0.25)
    assert moves[deep_rush].sum() == 0 and moves[~deep_rush].sum() > 0
