# SPDX-License-Identifier: BSD-3-Clause
"""Rewards without a hidden dilemma (seer_bench.deviation): on every learning
task's default reward, no set of agents gains by leaving the best constant
for the team while the team loses; ``pcs_hotspot_v0``, kept as the
documented social-dilemma task, shows the signature, so the check can fail.
And the headroom of ``pcs_hotspot_v1``: its hand-written rule beats every
constant guard."""

import numpy as np
import pytest

from seer_bench import deviation
from seer_envs.aircraft.heuristic import heuristic as aircraft_heuristic
from seer_envs.pcs.heuristic import rush_guard

SEEDS = range(30_000, 30_012)          # seeds no training or evaluation uses
GUARDS = range(6)


def _best_constant(env_id, actions, **kw):
    means = {a: deviation.episode_returns(env_id, deviation.constant(a), SEEDS, **kw).mean() for a in actions}
    return max(means, key=means.get), means


def _report(devs):
    return "; ".join(f"{d.name}: own {d.own:+.2f} {d.own_ci}, team {d.team:+.2f} {d.team_ci}" for d in devs)


def test_pcs_hotspot_v1_team_best_is_stable():
    best, _ = _best_constant("pcs_hotspot_v1", GUARDS)
    rows = np.arange(0, 64, 4)                      # a quarter of the cells
    _, devs = deviation.check("pcs_hotspot_v1", best, {f"guard {g}": deviation.constant(g) for g in GUARDS},
                              rows, SEEDS)
    assert not any(d.misaligned for d in devs), _report(devs)
    # the team's reward: a deviator's return moves with the team's
    for d in devs:
        assert d.own == pytest.approx(d.team, abs=1e-4)


def test_pcs_hotspot_v0_is_the_documented_dilemma():
    """Every cell at guard 5 (the team's best constant there); a quarter of
    the cells dropping to guard 1 or 2 gain on their own return while the
    team loses."""
    rows = np.arange(0, 64, 4)
    _, devs = deviation.check("pcs_hotspot_v0", 5, {f"guard {g}": deviation.constant(g) for g in (1, 2)},
                              rows, SEEDS)
    assert all(d.misaligned for d in devs), _report(devs)


def test_aircraft_team_best_constant_is_stable():
    kw = dict(num_uavs=32, max_cycles=100, continuous_actions=True)
    zero = np.zeros(2, np.float32)

    def random_policy(env, obs):
        return np.random.default_rng(int(obs[0, 0] * 1e6) % 2**32).uniform(-1, 1, (obs.shape[0], 2)).astype(np.float32)
    devs = {"heuristic": aircraft_heuristic, "random": random_policy,
            "push +x": deviation.constant(np.array([1.0, 0.0], np.float32)),
            "brake": deviation.constant(np.array([-0.3, -0.3], np.float32))}
    _, out = deviation.check("aircraft_v0", zero, devs, np.arange(0, 32, 4), SEEDS, **kw)
    assert not any(d.misaligned for d in out), _report(out)


def test_pcs_hotspot_v1_rule_beats_every_constant():
    """The headroom on a small set (docs/baselines.md has 64 held-out seeds
    and intervals): the rush rule beats the best constant guard by more than
    10% of its return, paired over the same seeds."""
    best, means = _best_constant("pcs_hotspot_v1", GUARDS)
    rule = deviation.episode_returns("pcs_hotspot_v1", rush_guard, SEEDS).mean(1)
    base = deviation.episode_returns("pcs_hotspot_v1", deviation.constant(best), SEEDS).mean(1)
    gain, (lo, _) = deviation.mean_ci(rule - base)
    assert lo > 0.10 * abs(means[best]), (gain, lo, means)
