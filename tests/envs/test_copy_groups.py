# SPDX-License-Identifier: BSD-3-Clause
"""The vector env in copy groups (each engine thread takes whole copies and
runs each to the step's end) against the round-by-round team, for every
registered scenario: the same outputs, engine state and errors at every
thread count.  (Equality with single envs in every layout and autoreset
mode: test_generic.py.)"""

import numpy as np
import pytest

import seer_envs

from seer_test_helpers import contract_error

SPECS = seer_envs.registry()
ENVS = [s for s in SPECS if SPECS[s].env is not None]


def small(sid, **over):
    return dict(SPECS[sid].test_params, **over)


def _actions(space, shape, rng):
    if hasattr(space, "n"):
        return rng.integers(0, space.n, shape)
    return rng.uniform(space.low.min(), space.high.max(), shape + space.shape).astype(space.dtype)


def _run(sid, threads, layout, mode, seed, steps=24):
    E = 5
    mcs = [3, 7, 5, 9, 4]           # copies end at different steps
    p = {k: v for k, v in small(sid).items() if k != "max_cycles"}
    v = seer_envs.vector_env(sid, E, num_threads=threads, autoreset_mode=mode, max_cycles=mcs,
                             copy_parallel=layout, **p)
    out = [v.reset(seed=seed)[0]]
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        obs, rew, term, trunc, infos = v.step(_actions(v.single_action_space, (E, v.num_agents), rng))
        out += [obs, rew, term, trunc]
        if "_seer_episode" in infos:
            out += [infos["_seer_episode"], infos["seer_episode"]["r"], infos["seer_episode"]["l"]]
            if mode == "disabled":
                obs, _ = v.reset(options={"reset_mask": infos["_seer_episode"]})
                out.append(obs)
    out.append(v.cycles)
    return v, out


@pytest.mark.parametrize("sid", ENVS)
@pytest.mark.parametrize("mode", ["next_step", "same_step", "disabled"])
@pytest.mark.parametrize("seed", [1, 8])
def test_copy_groups_equal_the_team_at_every_thread_count(sid, mode, seed):
    ref, want = _run(sid, 1, False, mode, seed)
    assert ref.layout == "team"
    for threads in (1, 2, 3, 4):
        v, got = _run(sid, threads, True, mode, seed)
        assert v.layout == "copy_groups" and v.engine.copy_groups is not None
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_array_equal(g, w, err_msg=f"{sid} {mode} threads={threads} item {k}")
        assert v.engine.state_digest() == ref.engine.state_digest()
        assert v.engine.stats()["events"] == ref.engine.stats()["events"]


@pytest.mark.parametrize("sid", ENVS)
def test_an_engine_error_inside_the_copies_is_the_same_at_every_thread_count(sid):
    """The event budget of a step: over it in one copy alone, or only in the
    sum over copies; the error is the one a 1-thread run (either layout)
    raises.  (Actions are queued, not run at injection, so that every event
    of a step counts in its run_until.)"""
    E = 6
    probe = seer_envs.vector_env(sid, E, num_threads=1, copy_parallel=False, **small(sid))
    probe.reset(seed=3)
    probe._batch.execute_actions = False
    acts = np.zeros((E, probe.num_agents) + probe.single_action_space.shape,
                    probe.single_action_space.dtype)
    e0 = probe.engine.stats()["events"]
    probe.step(acts)
    per_step = probe.engine.stats()["events"] - e0
    assert per_step > 2 * E
    for budget in (per_step - 1, per_step // E // 2):      # the sum / one copy alone
        errors = {}
        for layout, threads in [(False, 1), (True, 1), (True, 2), (True, 3), (True, 4)]:
            v = seer_envs.vector_env(sid, E, num_threads=threads, copy_parallel=layout, **small(sid))
            v.reset(seed=3)
            v._batch.execute_actions = False
            v.engine.max_events_per_run = budget
            errors[layout, threads] = contract_error(lambda: v.step(acts))
            with pytest.raises(RuntimeError, match="ContractViolation"):
                v.engine.run_until(v.engine.now + 1.0)
        first = errors[False, 1]
        assert first[1] == "event_budget" and f"({budget})" in first[2]
        assert all(e == first for e in errors.values()), errors


def test_the_layout_is_chosen_from_copies_and_threads():
    sid = ENVS[0]
    cases = [(8, 1, None, "team"), (8, 2, None, "copy_groups"), (7, 2, None, "team"),
             (12, 3, None, "copy_groups"), (11, 3, None, "team"),
             (16, 4, None, "copy_groups"), (15, 4, None, "team"), (1, 1, None, "team"),
             (3, 2, True, "copy_groups"), (8, 2, False, "team"), (8, 2, "engines", "groups")]
    for E, threads, cp, want in cases:
        v = seer_envs.vector_env(sid, E, num_threads=threads, copy_parallel=cp, **small(sid))
        v.reset(seed=0)
        assert v.layout == want, (E, threads, cp)
        if threads == 1 and cp is None:
            assert v.engine.copy_groups is None
        assert v.thread_choice.layout == want
        assert (v.engine is not None and v.engine.copy_groups is not None) == (want == "copy_groups")
    # asynchronous batches: an engine per batch, each in copy groups when it has enough copies
    v = seer_envs.vector_env(sid, 32, num_threads=4, batch_size=16, **small(sid))
    v.reset(seed=0)
    assert v.layout == "groups"
    assert all(e.copy_groups is not None for e in v.engines)
    with pytest.raises(ValueError, match="copy_parallel"):
        seer_envs.vector_env(sid, 4, num_threads=1, copy_parallel="yes")


@pytest.mark.parametrize("sid, over", [("pcs_v0", {}), ("pcs_v0", {"team_reward_share": 0.5}),
                                       ("aircraft_v0", {})])
def test_the_boundary_run_inside_the_copies_equals_the_team(sid, over):
    """PCS and Aircraft hand their step boundary to the engine
    (``Copies.copy_end``): in copy groups each copy's observations, rewards
    and terminations are written by the thread that ran it, as it reaches
    the step's end, with no boundary pass after the run.  Every copy at the
    same step (the path that does it; PCS with team rewards on and off):
    the team's outputs at every thread count."""
    E, steps = 6, 12

    def run(threads, layout, seed):
        p = dict(small(sid), max_cycles=10**6, **over)
        v = seer_envs.vector_env(sid, E, num_threads=threads, copy_parallel=layout, **p)
        out = [v.reset(seed=seed)[0]]
        cp = v._batch.copies
        passes = []
        real = cp.boundary
        cp.boundary = lambda *a: (passes.append(a), real(*a))
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            out += list(v.step(_actions(v.single_action_space, (E, v.num_agents), rng))[:4])
        return v, out, passes

    for seed in (2, 5):
        ref, want, passes = run(1, False, seed)
        assert len(passes) == steps                     # the team: a boundary pass per step
        for threads in (1, 2, 3, 4):
            v, got, passes = run(threads, True, seed)
            assert v.layout == "copy_groups" and passes == []
            for k, (g, w) in enumerate(zip(got, want)):
                np.testing.assert_array_equal(g, w, err_msg=f"{sid} {over} threads={threads} item {k}")
            assert v.engine.state_digest() == ref.engine.state_digest()


def test_run_until_copy_end_is_checked():
    from seer_runtime.scenario import CopyEnd
    v = seer_envs.vector_env("pcs_v0", 4, num_threads=2, copy_parallel=True, **small("pcs_v0"))
    v.reset(seed=0)
    eng, now = v.engine, v.engine.now
    for bad in (CopyEnd(), object(), 3):
        with pytest.raises(TypeError, match="copy_end must be a scenario's CopyEnd"):
            eng.run_until(now + 1.0, copy_end=bad)
    team = seer_envs.vector_env("pcs_v0", 4, num_threads=1, copy_parallel=False, **small("pcs_v0"))
    team.reset(seed=0)
    end = team._batch.copies.copy_end(np.zeros(4))
    with pytest.raises(ValueError, match="copy groups"):
        team.engine.run_until(team.engine.now + 1.0, copy_end=end)
    assert eng.now == now and team.engine.now == now      # refused before running
