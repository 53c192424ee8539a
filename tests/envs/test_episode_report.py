# SPDX-License-Identifier: BSD-3-Clause
"""One episode, one report: an agent that stops inside a running episode is
reported at the step it stops, with the return and length a hand count
gives, and is out of play (masked, reward 0, no flags) until its copy
restarts, in every view (the TorchRL and RLlib views: tests/integrations)."""

import numpy as np
import pytest
from seer_test_helpers import EXIT_ACTS as ACTS, EXIT_ENDS as ENDS, EXIT_KW as KW
from seer_test_helpers import exit_hand_count as _hand_count

import seer_envs


def test_the_scenario_is_what_the_tests_assume():
    got = _hand_count()
    assert {i: v[:2] for i, v in got.items()} == ENDS


@pytest.mark.parametrize("threads", [1, 3])
def test_the_dict_api_reports_each_end_once_with_its_statistics(threads):
    want = _hand_count()
    env = seer_envs.make("aircraft_v0", num_threads=threads, **KW)
    env.reset(seed=0)
    names = env.possible_agents
    seen = {}
    for k in range(1, 31):
        live = list(env.agents)
        _, rew, term, trunc, infos = env.step({a: ACTS[names.index(a)] for a in live})
        assert set(rew) == set(live)
        for a in live:
            if term[a] or trunc[a]:
                i = names.index(a)
                seen[i] = (k, "term" if term[a] else "trunc", infos[a]["seer_episode"]["r"],
                           infos[a]["seer_episode"]["l"])
                assert a not in env.agents
            else:
                assert "seer_episode" not in infos[a]
    assert seen.keys() == want.keys()
    for i in want:
        assert seen[i][:2] == want[i][:2] and seen[i][3] == want[i][3]
        assert seen[i][2] == pytest.approx(want[i][2], rel=1e-6)


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("mode", ["next_step", "same_step", "disabled"])
def test_the_vector_env_reports_what_the_single_env_does(threads, mode):
    want = _hand_count()
    v = seer_envs.vector_env("aircraft_v0", 2, num_threads=threads, autoreset_mode=mode, **KW)
    _, info = v.reset(seed=[0, 0])
    assert info["mask"].all()
    seen = {}
    for k in range(1, 31):
        _, rew, term, trunc, infos = v.step(np.stack([ACTS, ACTS]))
        before = mask if k > 1 else np.ones((2, 4), bool)
        mask = infos["mask"]
        assert (rew[~before] == 0).all() and not (term | trunc)[~before].any()
        for c in range(2):
            for i in np.flatnonzero(term[c] | trunc[c]):
                seen.setdefault(c, {})[int(i)] = (k, "term" if term[c, i] else "trunc",
                                                  infos["seer_episode"]["r"][c, i],
                                                  infos["seer_episode"]["l"][c, i])
                assert infos["_seer_episode"][c]
        if k < 30 or mode != "same_step":
            np.testing.assert_array_equal(mask, before & ~(term | trunc))
    for c in range(2):
        for i in want:
            assert seen[c][i][:2] == want[i][:2] and seen[c][i][3] == want[i][3]
            assert seen[c][i][2] == pytest.approx(want[i][2], rel=1e-6)
    if mode == "same_step":
        assert mask.all()            # restarted within the ending step
    else:
        assert not mask.any()        # every agent ended: out of play until the restart


def test_the_agent_vector_env_reports_each_row_at_its_agents_step():
    want = _hand_count()
    g = seer_envs.agent_vector_env("aircraft_v0", 1, num_threads=2, **KW)
    _, info = g.reset(seed=0)
    assert info["mask"].all()
    flags = {}
    for k in range(1, 31):
        _, rew, term, trunc, infos = g.step(ACTS)
        for i in np.flatnonzero(term | trunc):
            flags.setdefault(int(i), []).append((k, bool(term[i]), bool(infos.get("_seer_episode", [0] * 4)[i])))
            if infos.get("_seer_episode", np.zeros(4, bool))[i]:
                assert infos["seer_episode"]["l"][i] == want[i][3]
                assert infos["seer_episode"]["r"][i] == pytest.approx(want[i][2], rel=1e-6)
    # each agent's end at its step (with its statistics); the placeholders of
    # UAVs 0-2 end at the copy's end (step 30), terminated, with no statistics
    assert flags[0] == [(15, True, True), (30, True, False)]
    assert flags[1] == [(15, True, True), (30, True, False)]
    assert flags[2] == [(21, True, True), (30, True, False)]
    assert flags[3] == [(30, False, True)]


def test_record_episode_statistics_counts_the_agents_and_the_placeholders():
    from gymnasium.wrappers.vector import RecordEpisodeStatistics
    want = _hand_count()
    g = RecordEpisodeStatistics(seer_envs.agent_vector_env("aircraft_v0", 1, num_threads=1, **KW))
    g.reset(seed=0)
    for _ in range(30):
        g.step(ACTS)
    got = sorted(zip(g.length_queue, g.return_queue))
    agents = sorted((w[3], w[2]) for w in want.values())
    # NEXT_STEP: a placeholder runs from the step after its agent's reset step to the copy's end
    placeholders = sorted((30 - (want[i][0] + 1), 0.0) for i in (0, 1, 2))
    assert [n for n, _ in got] == sorted([n for n, _ in agents] + [n for n, _ in placeholders])
    for n, r in agents:
        assert any(m == n and r2 == pytest.approx(r, rel=1e-6) for m, r2 in got)
