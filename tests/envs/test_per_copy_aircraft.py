# SPDX-License-Identifier: BSD-3-Clause
"""Aircraft's per-copy parameters beyond tests/envs/test_per_copy.py's
(which runs every per-copy field, one at a time and all at once, against
single envs): Discrete actions read each copy's max_accel, ``configure``
keeps the batch's grid, ``set_params`` with UAVs running out of energy,
and per-copy agent counts, across episodes, ``set_params`` and
snapshots."""

import numpy as np
import pytest

import seer_envs
from seer_envs.aircraft.config import AircraftConfig
from seer_envs.aircraft.copies import AircraftCopies
from seer_test_helpers import per_copy_equals_singles

pytestmark = pytest.mark.filterwarnings("ignore:num_threads=.*exceeds:RuntimeWarning")

# Small battery: UAVs stop within the run.  Ranges below the arena's side,
# so the snapshot grid has several cells.
BASE = dict(num_uavs=6, num_targets=3, dynamics_substeps=2, battery_capacity=6.0,
            comm_range=100.0, sensor_range=80.0, max_cycles=9)
SEED = 5


def _actions(rng, continuous, E, U):
    if continuous:
        return rng.uniform(-1, 1, (E, U, 2)).astype(np.float32)
    return rng.integers(0, 9, (E, U))


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("layout", [{}, {"copy_parallel": True}, {"batch_size": 2}])
def test_discrete_actions_take_each_copys_max_accel(threads, layout):
    """Discrete actions (each copy's action table, scaled by its max_accel,
    0 included) equal single envs, with UAVs running out of energy; the
    generic tests run the registered (Box) action space."""
    kw = dict(BASE, continuous_actions=False)
    stopped = per_copy_equals_singles("aircraft_v0", kw, {"max_accel": [0.0, 5.0, 12.0]}, threads, 12,
                                      lambda rng: _actions(rng, False, 3, BASE["num_uavs"]), SEED, **layout)
    assert stopped.any(), stopped


def test_configure_keeps_the_grid():
    """(``configure``'s range check: tests/envs/test_per_copy.py.)"""
    base = AircraftConfig(**BASE)
    cp = AircraftCopies(base, 2)
    big = AircraftConfig(**dict(BASE, arena_size=2000.0))
    assert big.grid_side > base.grid_side
    cp.configure(1, big)
    assert cp.configs == [base, big]
    assert cp.model.grid == base.grid_side          # copy 0's, unchanged
    assert len(cp.model.ucell_start) == 2 * (base.grid_side ** 2 + 1)


@pytest.mark.parametrize("threads", [1, 3])
def test_set_params_at_the_next_reset_equals_single_envs(threads):
    new = dict(wind_sigma=4.0, battery_capacity=20.0, arena_size=900.0, max_accel=9.0)
    E = 3
    v = seer_envs.vector_env("aircraft_v0", E, num_threads=threads, **BASE)
    singles = [seer_envs.make("aircraft_v0", num_threads=1, **BASE) for _ in range(E)]
    v.reset(seed=[1, 2, 3])
    for c, s in enumerate(singles):
        s.reset_arrays(seed=c + 1)
    rng = np.random.default_rng(0)
    changed = 0
    for k in range(30):
        if k == 2:
            v.set_params(copies=[1, 2], **new)
            assert v.params["wind_sigma"][1] == BASE.get("wind_sigma", 1.0)     # not yet
        a = _actions(rng, True, E, BASE["num_uavs"])
        obs, rew, *_, infos = v.step(a)
        for c, s in enumerate(singles):
            if not s.agents:            # NEXT_STEP: this step is the copy's reset
                fresh = k >= 2 and c in (1, 2) and s.params["wind_sigma"] != 4.0
                changed += fresh
                o = s.reset_arrays(options={"params": new} if fresh else None)
            else:
                o, r, *_ = s.step_arrays(a[c])
                np.testing.assert_array_equal(rew[c], r, err_msg=f"step {k} copy {c}")
            np.testing.assert_array_equal(obs[c], o, err_msg=f"step {k} copy {c}")
    assert changed == 2
    assert v.params["battery_capacity"].tolist() == [BASE["battery_capacity"], 20.0, 20.0]


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("layout", [{}, {"copy_parallel": True}, {"batch_size": 2}])
@pytest.mark.parametrize("mode", ["same_step", "next_step"])
def test_agent_counts_per_copy_equal_single_envs(threads, layout, mode):
    """Copies with 6, 4 and 5 UAVs (3, 0 and 2 targets) in a batch 6 wide:
    each copy's UAVs equal a single env built with its counts, across
    episodes; the rows beyond a copy's count are never in play (reward 0,
    no flags) and its state has zeros there."""
    E = 3
    nu, nt = [6, 4, 5], [3, 0, 2]
    kw = dict(BASE, arena_size=600.0, battery_capacity=8.0)
    v = seer_envs.vector_env("aircraft_v0", E, num_threads=threads, autoreset_mode=mode,
                             **dict(kw, num_uavs=nu, num_targets=nt), **layout)
    assert v.num_agents == 6
    singles = [seer_envs.make("aircraft_v0", num_threads=1, **dict(kw, num_uavs=nu[c], num_targets=nt[c]))
               for c in range(E)]
    obs, infos = v.reset(seed=SEED)
    for c, s in enumerate(singles):
        np.testing.assert_array_equal(obs[c, :nu[c]], s.reset_arrays(seed=SEED + c))
        assert infos["mask"][c].tolist() == [j < nu[c] for j in range(6)]
    rng = np.random.default_rng(threads)
    ends, returns = 0, np.zeros((E, 6))
    for k in range(25):
        a = _actions(rng, True, E, 6)
        obs, rew, term, trunc, infos = v.step(a)
        returns += rew
        for c, s in enumerate(singles):
            n, msg = nu[c], f"step {k} copy {c}"
            assert not rew[c, n:].any() and not term[c, n:].any() and not trunc[c, n:].any(), msg
            assert not infos["mask"][c, n:].any(), msg
            if mode == "next_step" and not s.agents:        # this step is the copy's reset
                o = s.reset_arrays()
                ends += 1
            else:
                o, r, t, tr = s.step_arrays(a[c, :n])
                np.testing.assert_array_equal(rew[c, :n].view(np.uint32), r.view(np.uint32), err_msg=msg)
                np.testing.assert_array_equal(term[c, :n], t, err_msg=msg)
                np.testing.assert_array_equal(trunc[c, :n], tr, err_msg=msg)
                if mode == "same_step" and not s.agents:
                    np.testing.assert_array_equal(infos["final_obs"][c][:n], o, err_msg=msg)
                    o = s.reset_arrays()
                    ends += 1
            np.testing.assert_array_equal(obs[c, :n], o, err_msg=msg)
        states = v.state()
        for c, s in enumerate(singles):
            st, ref = states[c], s.state()
            np.testing.assert_array_equal(st[:6 * nu[c]], ref[:6 * nu[c]])
            np.testing.assert_array_equal(st[36:36 + 4 * nt[c]], ref[6 * nu[c]:])
            assert not st[6 * nu[c]:36].any() and not st[36 + 4 * nt[c]:].any()
    assert ends >= E
    assert not returns[1, 4:].any() and not returns[2, 5:].any()


def test_agent_counts_change_at_the_next_reset():
    kw = dict(BASE, arena_size=600.0)
    v = seer_envs.vector_env("aircraft_v0", 2, num_threads=2, **dict(kw, num_uavs=[6, 3], num_targets=[3, 1]))
    obs, infos = v.reset(seed=1)
    v.set_params(copies=[0], num_uavs=2, num_targets=0)
    obs, infos = v.reset(seed=1)
    assert infos["mask"].tolist() == [[True] * 2 + [False] * 4, [True] * 3 + [False] * 3]
    s = seer_envs.make("aircraft_v0", num_threads=1, **dict(kw, num_uavs=2, num_targets=0))
    np.testing.assert_array_equal(obs[0, :2], s.reset_arrays(seed=1))
    a = _actions(np.random.default_rng(0), True, 2, 6)
    obs, rew, *_ = v.step(a)
    np.testing.assert_array_equal(obs[0, :2], s.step_arrays(a[0, :2])[0])
    with pytest.raises(ValueError, match="num_uavs"):
        v.set_params(copies=[1], num_uavs=7)            # above the batch's width


def test_snapshots_and_pickles_carry_each_copys_world_and_counts():
    import pickle
    kw = dict(BASE, arena_size=600.0, max_cycles=8, battery_capacity=10.0)
    src = seer_envs.vector_env("aircraft_v0", 3, num_threads=1,
                               **dict(kw, num_uavs=[6, 4, 5], num_targets=[3, 1, 2],
                                      wind_sigma=[0.5, 2.0, 4.0], max_speed=[20.0, 30.0, 45.0]))
    src.reset(seed=5)
    src.set_params(copies=[2], num_uavs=3, comm_range=200.0)     # pending: travels too
    rng = np.random.default_rng(0)
    acts = [_actions(rng, True, 3, 6) for _ in range(14)]
    for a in acts[:3]:
        src.step(a)
    dst = seer_envs.vector_env("aircraft_v0", 4, num_threads=2, **dict(kw, num_uavs=6, num_targets=3))
    dst.reset(seed=0)
    dst.restore(src.snapshot(copies=[2, 0]), copies=[1, 3])
    assert dst.params["num_uavs"].tolist() == [6, 5, 6, 6]
    assert dst.params["wind_sigma"].tolist() == [1.0, 4.0, 1.0, 0.5]
    twin = pickle.loads(pickle.dumps(src))
    whole = seer_envs.vector_env("aircraft_v0", 3, num_threads=2, **dict(kw, num_uavs=6, num_targets=3))
    whole.reset(seed=1)
    whole.restore(src.snapshot())
    for e in (twin, whole):
        assert {k: x.tolist() for k, x in e.params.items()} == {k: x.tolist() for k, x in src.params.items()}
    for k, a in enumerate(acts[3:]):
        o, r, t, *_ , infos = src.step(a)
        for e in (twin, whole):
            o2, r2, *_ = e.step(a)
            np.testing.assert_array_equal(o, o2, err_msg=f"step {k}")
            np.testing.assert_array_equal(r, r2)
        o3, r3, *_, infos3 = dst.step(np.stack([a[0], a[2], a[0], a[0]]))
        np.testing.assert_array_equal(o3[1], o[2], err_msg=f"step {k}")
        np.testing.assert_array_equal(o3[3], o[0])
        np.testing.assert_array_equal(r3[1], r[2])
        np.testing.assert_array_equal(infos3["mask"][[1, 3]], infos["mask"][[2, 0]])
    assert src.params["num_uavs"][2] == 3 and dst.params["num_uavs"][1] == 3    # came with the restart
    assert src.params["comm_range"][2] == 200.0 == dst.params["comm_range"][1]
