# SPDX-License-Identifier: BSD-3-Clause
"""Aircraft's per-copy parameters: copy ``c`` of a batch whose copies have
different values of a ``per_copy`` field gives, bit for bit, what the single
env built with copy ``c``'s values and seed gives, at 1, 2 and 4 threads,
round by round and in copy groups, with UAVs running out of energy; a
copy's grid capped by the batch's gives the same neighbours."""

import dataclasses

import numpy as np
import pytest

from seer_envs import aircraft_v0
from seer_envs._batch import Batch
from seer_envs.aircraft.config import AircraftConfig
from seer_envs.aircraft.copies import AircraftCopies

pytestmark = pytest.mark.filterwarnings("ignore:num_threads=.*exceeds:RuntimeWarning")

# Small battery: UAVs stop within the run.  Ranges below the arena's side,
# so the snapshot grid has several cells.
BASE = dict(num_uavs=6, num_targets=3, dynamics_substeps=2, battery_capacity=6.0,
            comm_range=100.0, sensor_range=80.0, max_cycles=1000)

#: field -> (copy 0's, copy 2's) values; copy 1 keeps the base config's.
VALUES = {
    "arena_size": (200.0, 2000.0),          # 2000: its own grid (8) above the batch's (6)
    "control_period": (0.3, 0.1),           # 0.3: a shorter last interval
    "dynamics_substeps": (1, 5),
    "sense_period": (0.3, 1.0),
    "sensor_range": (30.0, 300.0),
    "comm_range": (40.0, 400.0),
    "max_messages": (0, 10),
    "collision_radius": (50.0, 150.0),
    "max_speed": (10.0, 60.0),
    "max_accel": (0.0, 12.0),
    "drag": (0.0, 0.1),
    "wind_sigma": (0.0, 5.0),
    "wind_tau": (0.5, 10.0),
    "battery_capacity": (3.0, 60.0),
    "idle_power": (0.0, 2.0),
    "thrust_power": (0.0, 0.5),
    "target_speed": (0.0, 20.0),
}

#: field -> base changes (every copy) that let the field show within the run
EXTRA = {"max_messages": dict(sensor_range=400.0, comm_range=400.0)}

STEPS = 12
SEED = 5


def test_every_per_copy_field_is_tried():
    assert set(VALUES) == set(AircraftCopies.per_copy)
    fields = {f.name for f in dataclasses.fields(AircraftConfig)}
    assert set(AircraftCopies.per_copy) <= fields
    assert not {"num_uavs", "num_targets", "dt", "comm_latency", "continuous_actions",
                "max_cycles"} & set(AircraftCopies.per_copy)


def _copy_kws(field_values, extra):
    """Each copy's keywords: copy 1 the base, copies 0 and 2 the values."""
    kws = [dict(BASE, **extra) for _ in range(3)]
    for field, (v0, v2) in field_values.items():
        kws[0][field] = v0
        kws[2][field] = v2
    return kws


def _actions(rng, continuous, E, U):
    if continuous:
        return rng.uniform(-1, 1, (E, U, 2)).astype(np.float32)
    return rng.integers(0, 9, (E, U))


def _compare(field_values, threads, continuous=True, copy_groups=False, steps=STEPS, extra={}):
    kws = [dict(kw, continuous_actions=continuous) for kw in _copy_kws(field_values, extra)]
    base = AircraftConfig(**dict(BASE, continuous_actions=continuous, **extra))
    E, U = len(kws), base.num_uavs
    b = Batch(AircraftCopies, base, E, base.max_cycles, threads, lambda: None,
              copy_groups=copy_groups)
    for c, kw in enumerate(kws):
        b.copies.configure(c, AircraftConfig(**kw))
    b.seed([SEED + c for c in range(E)])        # as reset(seed=SEED) seeds copy c
    obs = b.start()
    singles = [aircraft_v0.parallel_env(num_threads=1, **kw) for kw in kws]
    for c, s in enumerate(singles):
        np.testing.assert_array_equal(obs[c], s.reset_arrays(seed=SEED + c), err_msg=f"copy {c}")
    rng = np.random.default_rng(threads)
    stopped = np.zeros(E, np.int64)
    for k in range(steps):
        a = _actions(rng, continuous, E, U)
        obs, rew, term, trunc, _ = b.advance(a)
        for c, s in enumerate(singles):
            if not s.agents:            # every UAV of the copy stopped (the batch steps on)
                continue
            o, r, t, tr = s.step_arrays(a[c])
            msg = f"{field_values} step {k} copy {c}"
            np.testing.assert_array_equal(obs[c], o, err_msg=msg)
            np.testing.assert_array_equal(rew[c], r, err_msg=msg)
            np.testing.assert_array_equal(term[c], t, err_msg=msg)
            stopped[c] += int(np.sum(t))
    for c, s in enumerate(singles):     # the state beyond the outputs, too
        if not s.agents:
            continue
        rows = b.copies.agent_rows(c)
        np.testing.assert_array_equal(b.copies.model.energy[rows], s._model.energy)
        np.testing.assert_array_equal(b.copies.model.counters[rows], s._model.counters)
        np.testing.assert_array_equal(b.copies.state(c), s.state())
    return stopped


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("field", sorted(VALUES))
def test_per_copy_field_equals_single_envs(field, threads):
    stopped = _compare({field: VALUES[field]}, threads, extra=EXTRA.get(field, {}))
    if field not in ("battery_capacity", "idle_power"):
        assert stopped.all(), stopped           # UAVs ran out of energy in every copy
    else:
        assert stopped.any(), stopped


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("copy_groups", [False, True])
@pytest.mark.parametrize("continuous", [True, False])
def test_all_fields_at_once(threads, copy_groups, continuous):
    # dependent bounds: wind_sigma <= max_speed / (8.6 substep) with copy 0's
    # max_speed 10 and control_period 0.3 / 1 substep: 0 there
    stopped = _compare(VALUES, threads, continuous, copy_groups)
    assert stopped.any()


def test_discrete_max_accel_per_copy():
    _compare({"max_accel": (1.0, 12.0)}, 2, continuous=False)


def test_configure_checks_its_copy_and_keeps_the_grid():
    base = AircraftConfig(**BASE)
    cp = AircraftCopies(base, 2)
    with pytest.raises(ValueError, match="copy 2 out of range"):
        cp.model.configure(2, base)
    big = AircraftConfig(**dict(BASE, arena_size=2000.0))
    assert big.grid_side > base.grid_side
    cp.configure(1, big)
    assert cp.configs == [base, big]
    assert cp.model.grid == base.grid_side          # copy 0's, unchanged
    assert len(cp.model.ucell_start) == 2 * (base.grid_side ** 2 + 1)


def test_reconfigure_before_restart_equals_a_fresh_single_env():
    # A copy configured again and restarted on the running engine equals a
    # single env built with the new values (the batch's own seeds).
    base = AircraftConfig(**BASE)
    new = AircraftConfig(**dict(BASE, wind_sigma=4.0, battery_capacity=20.0, arena_size=900.0))
    b = Batch(AircraftCopies, base, 2, base.max_cycles, 2, lambda: None)
    b.seed([10, 11])
    b.start()
    rng = np.random.default_rng(0)
    for _ in range(3):
        b.advance(_actions(rng, True, 2, 6))
    b.copies.configure(1, new)
    b.seed_copies([None, 77])       # its next episode seed: reset(seed=77)'s
    b.restart([1])
    seed = 77
    s = aircraft_v0.parallel_env(num_threads=1, **dict(BASE, wind_sigma=4.0, battery_capacity=20.0,
                                                         arena_size=900.0))
    o0 = s.reset_arrays(seed=seed)
    for k in range(5):
        a = _actions(rng, True, 2, 6)
        obs, rew, term, _, _ = b.advance(a[1:], active=np.array([1]))
        o, r, t, _ = s.step_arrays(a[1])
        np.testing.assert_array_equal(obs[1], o, err_msg=f"step {k}")
        np.testing.assert_array_equal(rew[1], r)
    assert o0.shape == o.shape
