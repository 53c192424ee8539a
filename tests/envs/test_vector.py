# SPDX-License-Identifier: BSD-3-Clause
"""The vector env (many copies in one engine): every copy is bit-identical
to a single env with the matching seed, at any thread count, across
auto-resets (also when copies end at different steps); SAME_STEP auto-reset
keeps the final observation; bad actions name the copy and the agent."""

import gymnasium
import numpy as np
import pytest

import seer_envs
from seer_envs.views.agent_vector import SeerAgentVectorEnv, agent_vector_env
from seer_envs.views.vector import vector_env
from seer_runtime import ContractViolation, Engine

# Phones move every ~20 min with dt=30: cross-cell events every step.
pytestmark = pytest.mark.filterwarnings("ignore:num_threads=.*exceeds:RuntimeWarning")

KW = dict(grid_width=4, grid_height=3, dt=30.0, move_interval_mean=20.0, call_interarrival_mean=60.0)


def _compare(num_envs, threads, seed, steps, max_cycles, action_seed=0):
    """Step a vector env and num_envs single envs with the same random
    actions; assert equality everywhere (the single env resets without a
    seed at each episode end, as the vector env's auto-reset does)."""
    per_copy = not isinstance(max_cycles, int)
    mcs = list(max_cycles) if per_copy else [max_cycles] * num_envs
    v = vector_env("pcs_v0", num_envs, num_threads=threads, max_cycles=max_cycles,
                   autoreset_mode="same_step", **KW)
    obs, infos = v.reset(seed=seed)
    assert set(infos) == {"mask", "seer_params"} and infos["mask"].all()
    singles = [seer_envs.make("pcs_v0", num_threads=1, max_cycles=mcs[c], **KW) for c in range(num_envs)]
    for c, s in enumerate(singles):
        np.testing.assert_array_equal(obs[c], s.reset_arrays(seed=seed + c))
        assert int(v.seeds_used[c]) == s.seed_used
    rng = np.random.default_rng(action_seed)
    ends = 0
    for k in range(steps):
        a = rng.integers(0, v.single_action_space.n, (num_envs, v.num_agents))
        obs, rew, term, trunc, infos = v.step(a)
        assert obs.shape == (num_envs, v.num_agents, 11) and rew.shape == (num_envs, v.num_agents)
        for c, s in enumerate(singles):
            o, r, t, tr = s.step_arrays(a[c])
            np.testing.assert_array_equal(rew[c], r, err_msg=f"step {k} copy {c}")
            np.testing.assert_array_equal(term[c], t)
            np.testing.assert_array_equal(trunc[c], tr)
            if not s.agents:
                ends += 1
                assert infos["_final_obs"][c] and infos["_seer_episode"][c]
                np.testing.assert_array_equal(infos["final_obs"][c], o)
                np.testing.assert_array_equal(infos["seer_episode"]["l"][c], s._ep_length)
                np.testing.assert_array_equal(infos["seer_episode"]["r"][c], s._ep_return)
                o = s.reset_arrays()
                assert int(v.seeds_used[c]) == s.seed_used
            elif "_final_obs" in infos:
                assert not infos["_final_obs"][c]
            np.testing.assert_array_equal(obs[c], o, err_msg=f"step {k} copy {c}")
        np.testing.assert_array_equal(v.cycles, [s._cycle for s in singles])
    return ends


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", [0, 17])
def test_copies_equal_single_envs(threads, seed):
    # max_cycles=3 over 8 steps: every copy auto-resets twice (same step).
    assert _compare(3, threads, seed, 8, 3) == 6


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_copies_ending_at_different_steps(threads):
    # Per-copy max_cycles: after the first ends the copies sit at different
    # step counts and the engine runs them group by group.
    ends = _compare(4, threads, 5, 14, [2, 5, 3, 4], action_seed=3)
    assert ends == 7 + 2 + 4 + 3


@pytest.mark.parametrize("threads", [2, 3, 4])
def test_shipped_phase_policy_gives_the_one_thread_results(threads):
    # The suite opens every phase to every member (SEER_PHASE_GRAIN_NS=0);
    # users get the shipped policy, under which each phase opens to as many
    # members as its estimate pays for.  Copies end at different steps.
    import seer_runtime
    from seer_runtime.loop import DEFAULT_PHASE_POLICY
    old = seer_runtime.phase_policy(*DEFAULT_PHASE_POLICY)
    try:
        outs = {}
        for t in (1, threads):
            v = vector_env("pcs_v0", 16, num_threads=t, grid_width=8, grid_height=8,
                           max_cycles=[6 + c % 5 for c in range(16)], autoreset_mode="same_step",
                           copy_parallel=False)          # the team: one engine, its phases
            got = [v.reset(seed=4)[0]]
            rng = np.random.default_rng(1)
            for _ in range(14):
                obs, rew, term, trunc, infos = v.step(rng.integers(0, 3, (16, 64)))
                got += [obs, rew, term, trunc, infos.get("_final_obs")]
            outs[t] = got
            opened = v.engine.stats()["phases_opened"]
        assert opened > 0          # the policy opened phases at `threads`
        for a, b in zip(outs[1], outs[threads]):
            np.testing.assert_array_equal(a, b)
    finally:
        seer_runtime.phase_policy(*old)


def test_per_copy_seeds():
    v = vector_env("pcs_v0", 3, num_threads=1, **KW)
    a = np.zeros((3, 12), np.int64)
    o0, _ = v.reset(seed=4)
    runs = [v.step(a)[1] for _ in range(3)]
    # Copies differ from each other...
    assert not np.array_equal(runs[-1][0], runs[-1][1])
    # ...reset(seed) is reproducible, and copy c is seed + c: copy 1 of
    # seed 4 is copy 0 of seed 5.
    o1, _ = v.reset(seed=4)
    np.testing.assert_array_equal(o0, o1)
    np.testing.assert_array_equal(runs[0], v.step(a)[1])
    w = vector_env("pcs_v0", 2, num_threads=1, **KW)
    w.reset(seed=5)
    v.reset(seed=4)
    r_v, r_w = v.step(a)[1], w.step(a[:2])[1]
    np.testing.assert_array_equal(r_v[1], r_w[0])
    np.testing.assert_array_equal(r_v[2], r_w[1])


def test_bad_actions_name_copy_and_agent():
    v = vector_env("pcs_v0", 3, num_threads=1, **KW)
    v.reset(seed=0)
    n = v.single_action_space.n
    a = np.zeros((3, 12), np.int64)
    a[2, 5] = n
    with pytest.raises(ValueError, match=r"copy 2, agent 'cell_1_1' must be in \[0, 5\], got 6"):
        v.step(a)
    a[2, 5] = -1
    with pytest.raises(ValueError, match="copy 2, agent 'cell_1_1'"):
        v.step(a)
    with pytest.raises(ValueError, match=r"shape \(3, 12\)"):
        v.step(np.zeros((3, 11), np.int64))
    with pytest.raises(ValueError, match="integer array"):
        v.step(np.zeros((3, 12)))
    # A rejected step leaves the env steppable and unchanged.
    ok = vector_env("pcs_v0", 3, num_threads=1, **KW)
    ok.reset(seed=0)
    np.testing.assert_array_equal(v.step(np.zeros((3, 12), np.int64))[0],
                                  ok.step(np.zeros((3, 12), np.int64))[0])


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_envs must be an int >= 1"):
        vector_env("pcs_v0", 0, **KW)
    with pytest.raises(ValueError, match="declares no copies; the envs are aircraft_v0, gossip_v0, pcs_hotspot_v0, pcs_hotspot_v1, pcs_v0"):
        vector_env("phold", 2)
    with pytest.raises(ValueError, match="max_cycles must be one value or 2 values"):
        vector_env("pcs_v0", 2, max_cycles=[3, 4, 5], **KW)
    with pytest.raises(ValueError, match="max_cycles"):
        vector_env("pcs_v0", 2, max_cycles=[3, 0], **KW)
    with pytest.raises(ValueError, match="grid_width"):
        vector_env("pcs_v0", 2, grid_width=0)
    with pytest.raises(ValueError, match="seed must be an int"):
        vector_env("pcs_v0", 2, **KW).reset(seed=-1)
    with pytest.raises(RuntimeError, match="reset"):
        vector_env("pcs_v0", 2, **KW).step(np.zeros((2, 12), np.int64))


def test_auto_threads_through_stpa_or_caps():
    v = seer_envs.vector_env("pcs_v0", 2, **KW)
    ref = vector_env("pcs_v0", 2, num_threads=1, **KW)
    o, _ = v.reset(seed=3)
    np.testing.assert_array_equal(o, ref.reset(seed=3)[0])
    assert v.num_threads >= 1 and v.thread_choice.chosen == v.num_threads
    a = np.ones((2, 12), np.int64)
    for _ in range(3):
        np.testing.assert_array_equal(v.step(a)[0], ref.step(a)[0])


def test_agent_vector_env_is_a_gymnasium_vector_env():
    g = agent_vector_env("pcs_v0", 3, num_threads=2, max_cycles=2, autoreset_mode="same_step", **KW)
    ref = vector_env("pcs_v0", 3, num_threads=1, max_cycles=2, autoreset_mode="same_step", **KW)
    assert isinstance(g, gymnasium.vector.VectorEnv) and isinstance(g, SeerAgentVectorEnv)
    assert g.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert g.num_envs == 36
    obs, _ = g.reset(seed=1)
    assert g.observation_space.contains(obs)
    np.testing.assert_array_equal(obs, ref.reset(seed=1)[0].reshape(36, 11))
    rng = np.random.default_rng(0)
    for k in range(3):
        a = g.action_space.sample() if k == 0 else rng.integers(0, 6, 36)
        o, r, t, tr, info = g.step(a)
        o2, r2, t2, tr2, info2 = ref.step(np.asarray(a).reshape(3, 12))
        np.testing.assert_array_equal(o, o2.reshape(36, 11))
        np.testing.assert_array_equal(r, r2.reshape(36))
        np.testing.assert_array_equal(tr, tr2.reshape(36))
        if k == 1:      # max_cycles=2: every copy ends here
            assert info["_final_obs"].all() and info["final_obs"].shape == (36, 11)
            np.testing.assert_array_equal(info["final_obs"], info2["final_obs"].reshape(36, 11))
        else:
            assert set(info) == {"mask"} and info["mask"].all()
    with pytest.raises(ValueError, match="copy 1, agent 'cell_0_0'"):
        bad = np.zeros(36, np.int64)
        bad[12] = 99
        g.step(bad)


def test_engine_copy_methods():
    from seer_envs.pcs.handlers import PcsModel
    cfg = seer_envs.get("pcs_v0").build_config(dict(KW))
    m = PcsModel(cfg, 2)
    eng = Engine(m, num_threads=1, seed=0)
    eng.set_stream_keys(0, 12, 9)
    eng.set_stream_keys(12, 24, 9)
    eng.init(0.0)
    # Both copies keyed alike: identical streams, identical pending events.
    assert [eng.lp_counters(j) for j in range(12)] == [eng.lp_counters(12 + j) for j in range(12)]
    eng.run_until(30.0)
    np.testing.assert_array_equal(m.counters[:12], m.counters[12:])
    with pytest.raises(ValueError, match="after the engine's current time"):
        eng.rewind(31.0)
    eng.rewind(30.0)              # nothing pending before 30
    with pytest.raises(ValueError, match="bad LP range"):
        eng.reset_lps(0, 25)
    # Restarting half a copy: its phones' first calls reach cells outside
    # the range, which copies must never do.
    with pytest.raises(ContractViolation, match="restarted range"):
        eng.reset_lps(0, 6)


def test_set_stream_keys_at_keys_as_each_block_would():
    """Many blocks keyed in one call equal each block keyed alone (the
    same pending events and counters after a run); bad arguments are
    refused before any key changes."""
    from seer_envs.pcs.handlers import PcsModel
    cfg = seer_envs.get("pcs_v0").build_config(dict(KW))
    engines = [Engine(PcsModel(cfg, 3), num_threads=1, seed=0) for _ in range(2)]
    seeds, firsts = [9, 2**63 + 5, 0], [0, 3, 7]
    for c in range(3):
        engines[0].set_stream_keys(12 * c, 12 * (c + 1), seeds[c], firsts[c])
    engines[1].set_stream_keys_at(np.array([0, 12, 24]), 12, np.array(seeds, np.uint64), firsts)
    for eng in engines:
        eng.init(0.0)
    np.testing.assert_array_equal(*(e.export_state()["rng_key"] for e in engines))
    for eng in engines:
        eng.run_until(60.0)
    assert engines[0].state_digest() == engines[1].state_digest()
    eng = engines[1]
    before = eng.export_state()["rng_key"]
    for args, msg in [(([0, 30], 12, [1, 2], [0, 0]), "outside the 36 LPs"),
                      (([-1], 12, [1], [0]), "outside the 36 LPs"),
                      (([0], 12, [-1], [0]), r"seeds must be ints in \[0, 2\*\*64\)"),
                      (([0], 12, [1], [-2]), "firsts must be ints"),
                      (([0], 12, [1, 2], [0]), "differ in length"),
                      (([0.5], 12, [1], [0]), "starts must be a 1-d array of ints"),
                      (([0], 37, [1], [0]), r"count must be an int in \[0, 36\]")]:
        with pytest.raises(ValueError, match=msg):
            eng.set_stream_keys_at(*args)
    np.testing.assert_array_equal(eng.export_state()["rng_key"], before)


def _restarted(threads, lo, hi):
    """Three PCS copies run to t = 90, then LPs [lo, hi) restart at 0: what
    the restart left (per-LP counters), and the state after a run to 180;
    or the error's message, source and target."""
    from seer_envs.pcs.handlers import PcsModel
    m = PcsModel(seer_envs.get("pcs_v0").build_config(dict(KW)), 3)
    eng = Engine(m, num_threads=threads, seed=0)
    for c in range(3):
        eng.set_stream_keys(12 * c, 12 * (c + 1), 9 + c)
    eng.init(0.0)
    eng.run_until(90.0)
    m.reset_cells(lo, hi)
    try:
        eng.reset_lps(lo, hi, 0.0)
    except ContractViolation as e:
        return str(e), e.source, e.target
    counters = [eng.lp_counters(j) for j in range(lo, hi)]
    eng.run_until(180.0)
    return counters, eng.state_digest(), m.counters.tolist()


@pytest.mark.parametrize("threads", [2, 3, 4])
def test_reset_lps_is_the_same_at_every_thread_count(threads):
    # reset_lps runs the on_init hooks on the engine's threads; the phones'
    # first events reach other cells of their copy (messages, drained after)
    for lo, hi in [(12, 24), (0, 36)]:
        assert _restarted(threads, lo, hi) == _restarted(1, lo, hi)
    # a restarted copy starts as a fresh copy keyed alike
    from seer_envs.pcs.handlers import PcsModel
    fresh = Engine(PcsModel(seer_envs.get("pcs_v0").build_config(dict(KW)), 3), num_threads=threads)
    for c in range(3):
        fresh.set_stream_keys(12 * c, 12 * (c + 1), 9 + c)
    fresh.init(0.0)
    assert _restarted(threads, 12, 24)[0] == [fresh.lp_counters(j) for j in range(12, 24)]
    # half a copy: the smallest failing LP, the one a serial restart stops at
    err = _restarted(threads, 0, 6)
    assert err == _restarted(1, 0, 6) and "restarted range [0, 6)" in err[0]


@pytest.mark.parametrize("threads", [1, 2])
def test_next_step_autoreset_equals_single_envs(threads):
    mcs = [2, 3, 2]
    v = vector_env("pcs_v0", 3, num_threads=threads, max_cycles=mcs, autoreset_mode="next_step", **KW)
    assert v.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    assert v.autoreset_mode == gymnasium.vector.AutoresetMode.NEXT_STEP
    obs, _ = v.reset(seed=2)
    singles = [seer_envs.make("pcs_v0", num_threads=1, max_cycles=mcs[c], **KW) for c in range(3)]
    for c, s in enumerate(singles):
        np.testing.assert_array_equal(obs[c], s.reset_arrays(seed=2 + c))
    rng = np.random.default_rng(1)
    restarts = 0
    for k in range(9):
        a = rng.integers(0, 6, (3, 12))
        obs, rew, term, trunc, infos = v.step(a)
        for c, s in enumerate(singles):
            if not s.agents:          # ended last step: this step is the reset
                restarts += 1
                np.testing.assert_array_equal(obs[c], s.reset_arrays())
                assert not rew[c].any() and not term[c].any() and not trunc[c].any()
                continue
            o, r, t, tr = s.step_arrays(a[c])
            np.testing.assert_array_equal(obs[c], o, err_msg=f"step {k} copy {c}")
            np.testing.assert_array_equal(rew[c], r)
            np.testing.assert_array_equal(trunc[c], tr)
            assert bool("_seer_episode" in infos and infos["_seer_episode"][c]) == (not s.agents)
            assert "final_obs" not in infos
    assert restarts == 3 + 2 + 3
    g = agent_vector_env("pcs_v0", 2, num_threads=1, autoreset_mode="next_step", **KW)
    assert g.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    with pytest.raises(ValueError, match="autoreset_mode"):
        vector_env("pcs_v0", 2, autoreset_mode="later", **KW)


AKW = dict(num_uavs=5, num_targets=2, dynamics_substeps=2, battery_capacity=6.0, max_cycles=30)


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
@pytest.mark.parametrize("continuous", [True, False])
def test_aircraft_copies_equal_single_envs_with_terminations(threads, continuous):
    E, seed = 3, 21
    kw = dict(AKW, continuous_actions=continuous)
    v = vector_env("aircraft_v0", E, num_threads=threads, autoreset_mode="same_step", **kw)
    obs, _ = v.reset(seed=seed)
    singles = [seer_envs.make("aircraft_v0", num_threads=1, **kw) for _ in range(E)]
    for c, s in enumerate(singles):
        np.testing.assert_array_equal(obs[c], s.reset_arrays(seed=seed + c))
    rng = np.random.default_rng(threads)
    end_steps = []
    for k in range(26):
        if continuous:
            a = rng.uniform(-1, 1, (E, 5, 2)).astype(np.float32)
        else:
            a = rng.integers(0, 9, (E, 5))
        obs, rew, term, trunc, infos = v.step(a)
        for c, s in enumerate(singles):
            o, r, t, tr = s.step_arrays(a[c])
            np.testing.assert_array_equal(rew[c], r, err_msg=f"step {k} copy {c}")
            np.testing.assert_array_equal(term[c], t)
            np.testing.assert_array_equal(trunc[c], tr)
            if not s.agents:
                end_steps.append((c, k))
                np.testing.assert_array_equal(infos["final_obs"][c], o)
                o = s.reset_arrays()
            np.testing.assert_array_equal(obs[c], o, err_msg=f"step {k} copy {c}")
    # Every copy ended at least twice, and not all at the same steps.
    assert {c for c, _ in end_steps} == set(range(E)) and len(end_steps) >= 2 * E
    assert len({k for _, k in end_steps}) > len(end_steps) // E


def test_aircraft_bad_box_action_names_copy_and_agent():
    v = vector_env("aircraft_v0", 2, num_threads=1, **AKW)
    v.reset(seed=0)
    a = np.zeros((2, 5, 2), np.float32)
    a[1, 3, 0] = np.nan
    with pytest.raises(ValueError, match="copy 1, agent 'uav_3' is not finite"):
        v.step(a)
    a[1, 3, 0] = 1.5
    with pytest.raises(ValueError, match=r"copy 1, agent 'uav_3' must be in \[-1.0, 1.0\]"):
        v.step(a)


def test_team_reward_share_per_copy():
    import dataclasses
    from seer_envs.pcs.config import PCSConfig
    if "team_reward_share" not in {f.name for f in dataclasses.fields(PCSConfig)}:
        pytest.skip("this PCS version has no team_reward_share")
    kw = dict(KW, team_reward_share=0.5)
    v = vector_env("pcs_v0", 3, num_threads=2, max_cycles=[2, 3, 4], autoreset_mode="same_step", **kw)
    v.reset(seed=8)
    singles = [seer_envs.make("pcs_v0", num_threads=1, max_cycles=m, **kw) for m in (2, 3, 4)]
    for c, s in enumerate(singles):
        s.reset_arrays(seed=8 + c)
    rng = np.random.default_rng(4)
    for k in range(7):
        a = rng.integers(0, 6, (3, 12))
        obs, rew, term, trunc, infos = v.step(a)
        for c, s in enumerate(singles):
            o, r, t, tr = s.step_arrays(a[c])
            np.testing.assert_array_equal(rew[c], r, err_msg=f"step {k} copy {c}")
            if not s.agents:
                o = s.reset_arrays()
            np.testing.assert_array_equal(obs[c], o)


def _rllib_episodes(g, actions, seed):
    """Per row, the episodes RLlib 2.60's single-agent env runner records
    from the agent vector env ``g`` (``SingleAgentEnvRunner._sample``: after
    a row's done flag its next step is taken as the reset, the step after
    that continues the new episode).  Each: (observations, rewards,
    terminated, truncated)."""
    obs, _ = g.reset(seed=seed)
    cur = [([o], [], None) for o in obs]
    done = [[] for _ in obs]
    for a in actions:
        obs, rew, term, trunc, _ = g.step(a)
        for i in range(g.num_envs):
            if cur[i] is None:
                cur[i] = ([obs[i]], [], None)
                continue
            cur[i][0].append(obs[i])
            cur[i][1].append(rew[i])
            if term[i] or trunc[i]:
                done[i].append((np.array(cur[i][0]), np.array(cur[i][1]), bool(term[i]), bool(trunc[i])))
                cur[i] = None
    return done


@pytest.mark.parametrize("threads", [1, 2])
def test_next_step_rows_follow_their_agents_under_rllib(threads):
    """Agent vector env, NEXT_STEP, UAVs stopping mid-episode: each row is
    its agent's single-env episode up to the step it stops (terminated
    there, once), then a placeholder (reward 0, masked) terminated at its
    copy's end, then the copy's next episode; as RLlib records the rows,
    no episode runs from a stopped agent into its next one."""
    E, A, seed, steps = 2, 5, 40, 17
    mcs = [4, 30]
    kw = dict(num_uavs=A, num_targets=2, dynamics_substeps=2, battery_capacity=10.0, continuous_actions=True)
    g = agent_vector_env("aircraft_v0", E, num_threads=threads, autoreset_mode="next_step", max_cycles=mcs, **kw)
    rng = np.random.default_rng(0)
    actions = [rng.uniform(-1, 1, (E * A, 2)).astype(np.float32) for _ in range(steps)]
    got = _rllib_episodes(g, actions, seed)
    # Reference: single envs (restarted, actions ignored, the step after an
    # end) and the documented rule for the rows of stopped agents.
    want_steps = [[] for _ in range(E)]
    placeholders = 0
    for c in range(E):
        s = seer_envs.make("aircraft_v0", num_threads=1, max_cycles=mcs[c], **kw)
        first = s.reset_arrays(seed=seed + c)
        restart = False
        for a in actions:
            if restart:
                o = s.reset_arrays()
                z = np.zeros(A, bool)
                want_steps[c].append((o, np.zeros(A, np.float32), z, z))
                restart = False
                continue
            before = ~s._done.copy()
            o, r, t, tr = s.step_arrays(a[c * A:(c + 1) * A])
            if not s.agents:
                placeholders += int((~before).sum())
                t = t | ~before
                restart = True
            want_steps[c].append((o, r, t, tr))
        want_steps[c].insert(0, first)
    class _Replay:           # the single envs' rows in the agent env's layout
        num_envs = E * A
        def reset(self, seed=None):
            return np.concatenate([w[0] for w in want_steps]), {}
        def step(self, _a, k=iter(range(steps))):
            i = next(k) + 1
            return tuple(np.concatenate([w[i][j] for w in want_steps]) for j in range(4)) + ({},)
    want = _rllib_episodes(_Replay(), actions, seed)
    for i in range(E * A):
        assert len(got[i]) == len(want[i]) >= 1, f"row {i}: {len(got[i])} episodes, want {len(want[i])}"
        for (go, gr, gt, gtr), (wo, wr, wt, wtr) in zip(got[i], want[i]):
            np.testing.assert_array_equal(go, wo, err_msg=f"row {i}")
            np.testing.assert_array_equal(gr, wr, err_msg=f"row {i}")
            assert (gt, gtr) == (wt, wtr), f"row {i}"
    assert placeholders >= 1          # the case that matters: UAVs stopped before their copy ended


@pytest.mark.parametrize("env_id", ["pcs_v0", "aircraft_v0"])
@pytest.mark.parametrize("mode", ["same_step", "next_step"])
def test_returned_arrays_are_the_callers(env_id, mode):
    # The boundaries write into the adapter's arrays at every step, reset and
    # auto-reset: nothing a later call does may change what an earlier call
    # returned (rollout buffers keep them).
    kw = dict(KW, max_cycles=[2, 3, 2]) if env_id == "pcs_v0" else dict(AKW, max_cycles=[2, 3, 2])
    v = vector_env(env_id, 3, num_threads=2, autoreset_mode=mode, **kw)
    kept = []

    def keep(out):
        arrays = [x for x in out if isinstance(x, np.ndarray)]
        for info in (x for x in out if isinstance(x, dict)):
            arrays += [x for x in info.values() if isinstance(x, np.ndarray)]
        kept.append([(x, x.copy()) for x in arrays])

    keep(v.reset(seed=4))
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(8):
        a = (rng.integers(0, v.single_action_space.n, (3, v.num_agents)) if env_id == "pcs_v0"
             else rng.uniform(-1, 1, (3, v.num_agents, 2)).astype(np.float32))
        out = v.step(a)
        ended += bool(out[4])
        keep(out)
    keep(v.reset(seed=5))
    keep(v.step(a))
    assert ended >= 3
    for k, pairs in enumerate(kept):
        for x, snapshot in pairs:
            np.testing.assert_array_equal(x, snapshot, err_msg=f"output of call {k} changed")


def _skip_without_state(env_id):
    """A scenario's global state is optional (``Copies.state_space`` None)."""
    spec = seer_envs.envs()[env_id]
    if spec.copies.state_space(spec.build_config(spec.test_params)) is None:
        pytest.skip(f"{env_id} declares no global state")


@pytest.mark.parametrize("env_id", sorted(seer_envs.views.vector.supported()))
@pytest.mark.parametrize("threads, layout", [(1, {}), (2, {}), (3, {"copy_parallel": "engines"}),
                                             (2, {"copy_parallel": True}), (2, {"batch_size": 2}),
                                             (4, {})])
def test_state_is_every_copys_single_env_state(env_id, threads, layout):
    """``state()`` is ``(num_envs,) + single_state_space.shape`` and row c
    is a single env's ``state()`` with copy c's seed, across steps, copies
    ending at different steps (auto-reset) and every layout; before a reset
    it is refused."""
    spec = seer_envs.envs()[env_id]
    E, seed = 4, 3
    mcs = [3, 5, 3, 4]
    kw = dict(spec.test_params)
    kw.pop("max_cycles", None)
    _skip_without_state(env_id)
    v = vector_env(env_id, E, num_threads=threads, max_cycles=mcs, autoreset_mode="same_step", **layout, **kw)
    with pytest.raises(RuntimeError, match="reset"):
        v.state()
    v.reset(seed=seed)
    singles = [seer_envs.make(env_id, num_threads=1, max_cycles=m, **kw) for m in mcs]
    for i, e in enumerate(singles):
        e.reset(seed=seed + i)
    rng = np.random.default_rng(0)
    assert v.state_space.shape == (E,) + v.single_state_space.shape
    assert singles[0].state_space == v.single_state_space
    for t in range(7):
        st = v.state()
        assert st.shape == v.state_space.shape and st.dtype == v.single_state_space.dtype
        for i, e in enumerate(singles):
            np.testing.assert_array_equal(st[i], e.state(), err_msg=f"copy {i} at step {t}")
        sp = v.single_action_space
        acts = (rng.integers(0, sp.n, (E, v.num_agents)) if hasattr(sp, "n") else
                rng.uniform(-1, 1, (E, v.num_agents) + sp.shape).astype(sp.dtype))
        v.step(acts)
        for i, e in enumerate(singles):
            e.step({a: acts[i][k] for k, a in enumerate(e.possible_agents) if a in e.agents})
            if not e.agents:     # SAME_STEP: the copy restarted, its seed drawn from its generator
                e.reset()
    v.close()


@pytest.mark.parametrize("env_id", sorted(seer_envs.views.vector.supported()))
def test_state_after_stepping_some_copies(env_id):
    """``send`` / ``recv`` of one half: every copy's state is still its
    single env's (the half not stepped keeps its earlier state); refused
    while copies are in flight."""
    kw = dict(seer_envs.envs()[env_id].test_params)
    E, seed = 4, 11
    _skip_without_state(env_id)
    v = vector_env(env_id, E, num_threads=2, batch_size=2, **kw)
    v.reset(seed=seed)
    singles = [seer_envs.make(env_id, num_threads=1, **kw) for _ in range(E)]
    for i, e in enumerate(singles):
        e.reset(seed=seed + i)
    sp = v.single_action_space
    acts = (np.ones((2, v.num_agents), np.int64) if hasattr(sp, "n") else
            np.full((2, v.num_agents) + sp.shape, 0.5, sp.dtype))
    for ids in ([0, 1], [2, 3], [2, 3]):
        v.send(acts, ids)
        with pytest.raises(RuntimeError):
            v.state()
        v.recv()
        for k, i in enumerate(ids):
            e = singles[i]
            e.step({a: acts[k][j] for j, a in enumerate(e.possible_agents)})
        st = v.state()
        for i, e in enumerate(singles):
            np.testing.assert_array_equal(st[i], e.state(), err_msg=f"copy {i} after stepping {ids}")
    v.close()
