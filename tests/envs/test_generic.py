# SPDX-License-Identifier: BSD-3-Clause
"""What every registered scenario owes, parametrised over the registry: a new
scenario registered from its own package is tested here with no edit.
(Scenario-specific tests stay in the scenario's own files.)"""

import dataclasses
import types

import numpy as np
import pytest
from pettingzoo.test import api_test, max_cycles_test, parallel_api_test, render_test

import seer_envs
from seer.scenarios import registry as cli_registry

SPECS = seer_envs.registry()
ENVS = [s for s in SPECS if SPECS[s].env is not None]
HEADLESS = [s for s in SPECS if SPECS[s].headless is not None]
# every form a run can take: ("pcs_v0", "env"), ("pcs_v0", "headless"), ("phold", "headless")
FORMS = [(s, "env") for s in ENVS] + [(s, "headless") for s in HEADLESS]


def small(sid, **over):
    return dict(SPECS[sid].test_params, **over)


def test_registry_has_the_built_in_scenarios():
    assert {"pcs_v0", "phold"} <= set(SPECS)
    assert list(SPECS) == sorted(SPECS)
    assert set(seer_envs.envs()) == set(ENVS)


@pytest.mark.parametrize("sid", list(SPECS))
def test_spec_is_complete_and_frozen(sid):
    spec = SPECS[sid]
    assert spec.id == sid and spec.description
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.id = "other"
    cfg = spec.build_config()                                  # every field has a default
    assert dataclasses.is_dataclass(cfg)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(cfg, dataclasses.fields(cfg)[0].name, 1)
    assert spec.normalize(spec.test_params) == dataclasses.asdict(spec.build_config(spec.test_params))
    assert spec.kind == ("env" if spec.env is not None else "headless")
    assert spec.env is not None or spec.headless is not None, "a scenario runs in some form"


@pytest.mark.parametrize("sid", list(SPECS))
def test_unknown_and_bad_parameters_are_named(sid):
    spec = SPECS[sid]
    with pytest.raises(ValueError, match="no_such_param"):
        spec.build_config({"no_such_param": 1})
    first = dataclasses.fields(spec.config)[0].name
    with pytest.raises(ValueError, match=first):
        spec.build_config({first: "not a value"})


def test_unknown_id_names_the_registered_ones():
    with pytest.raises(ValueError, match=r"unknown scenario 'pcs_v9'.*pcs_v0"):
        seer_envs.make("pcs_v9")
    with pytest.raises(ValueError, match="headless model"):
        seer_envs.make("phold")
    for sid in set(SPECS) - set(HEADLESS):
        with pytest.raises(ValueError, match="no headless form"):
            SPECS[sid].open_run(SPECS[sid].test_params, 1, 0, headless=True)


@pytest.mark.parametrize("sid", list(SPECS))
def test_cli_registry_reads_the_spec_registry(sid):
    names = cli_registry()
    spec = SPECS[sid]
    if spec.env is not None:
        assert names[sid].kind == "env" and names[sid].config_cls is spec.config
    if spec.headless is not None:
        name = sid + ":headless" if spec.env is not None else sid
        assert names[name].kind == "headless"


# --- the env API -------------------------------------------------------------

@pytest.mark.parametrize("sid", ENVS)
def test_parallel_api(sid):
    parallel_api_test(seer_envs.make(sid, num_threads=2, **small(sid, max_cycles=60)), num_cycles=80)


@pytest.mark.parametrize("sid", ENVS)
def test_aec_api(sid):
    api_test(seer_envs.make(sid, aec=True, num_threads=2, **small(sid, max_cycles=40)), num_cycles=60)


@pytest.mark.parametrize("sid", ENVS)
def test_max_cycles(sid):
    p = {k: v for k, v in small(sid).items() if k != "max_cycles"}
    mod = types.SimpleNamespace(parallel_env=lambda **kw: seer_envs.make(sid, **p, **kw),
                                env=lambda **kw: seer_envs.make(sid, aec=True, **p, **kw))
    max_cycles_test(mod)


@pytest.mark.parametrize("sid", ENVS)
def test_render(sid):
    render_test(lambda render_mode=None: seer_envs.make(sid, aec=True, render_mode=render_mode,
                                                        **small(sid)))


@pytest.mark.parametrize("sid", ENVS)
def test_step_before_reset_and_after_close(sid):
    env = seer_envs.make(sid, **small(sid))
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})
    env.reset(seed=0)
    env.close()
    env.close()                      # closing twice is fine
    with pytest.raises(RuntimeError, match="closed"):
        env.reset(seed=0)


@pytest.mark.parametrize("sid", ENVS)
@pytest.mark.parametrize("bad", [0, -1, 1.5, "two", None, True])
def test_bad_num_threads_is_named_at_construction(sid, bad):
    with pytest.raises(ValueError, match="num_threads"):
        seer_envs.make(sid, num_threads=bad, **small(sid))


@pytest.mark.parametrize("sid", [s for s in ENVS if SPECS[s].heuristic is not None])
def test_heuristic_returns_valid_actions(sid):
    env = seer_envs.make(sid, num_threads=1, **small(sid))
    obs = env.reset_arrays(seed=0)
    acts = np.asarray(SPECS[sid].heuristic(env, obs))
    space = env.action_space(env.possible_agents[0])
    assert len(acts) == len(env.possible_agents)
    assert all(space.contains(np.asarray(a, space.dtype)) for a in acts)
    env.step_arrays(acts)


# --- serial equivalence over threads, through the spec's runs ---------------------

def _trace(sid, form, threads, seed, units=4):
    run = SPECS[sid].open_run(SPECS[sid].test_params, threads, seed, headless=form == "headless")
    out = []
    for _ in range(units):
        run.advance(1)
        s = run.engine.stats()
        out.append((s["events"], s["inbox_pushes"], run.engine.state_digest()))
    if run.owner is not None:
        out.append(run.owner._batch.copies.obs.tobytes())
    return out, run


@pytest.mark.parametrize("sid, form", FORMS, ids=[f"{s}-{f}" for s, f in FORMS])
@pytest.mark.parametrize("seed", [0, 77])
def test_runs_identical_across_thread_counts(sid, form, seed, thread_counts):
    ref, run = _trace(sid, form, 1, seed)
    assert run.units == 4 and run.n_entities >= 1
    assert run.n_agents == (len(run.owner.possible_agents) if form == "env" else 0)
    assert ref[-2][0] > 0 if run.owner is not None else ref[-1][0] > 0, "the run did something"
    for t in thread_counts[1:]:
        assert _trace(sid, form, t, seed)[0] == ref, f"threads={t}"
    assert _trace(sid, form, 1, seed + 1)[0] != ref, "the seed matters"


@pytest.mark.parametrize("sid", HEADLESS)
def test_headless_runner_identical_across_thread_counts(sid, thread_counts):
    runs = [SPECS[sid].headless(end_time=20.0, num_threads=t, seed=3, **SPECS[sid].test_params)
            for t in thread_counts]
    keys = [k for k in ("events", "rounds", "digest", "state_digest") if k in runs[0]]
    assert runs[0]["events"] > 0 and ("state_digest" in keys or "digest" in keys)
    for t, r in zip(thread_counts, runs):
        assert {k: r[k] for k in keys} == {k: runs[0][k] for k in keys}, f"threads={t}"
        assert r["num_threads"] == t


@pytest.mark.parametrize("sid", HEADLESS)
def test_headless_runner_rejects_bad_input(sid):
    h = SPECS[sid].headless
    with pytest.raises(ValueError, match="num_threads"):
        h(end_time=1.0, num_threads=0, seed=0, **SPECS[sid].test_params)
    with pytest.raises(ValueError, match="end_time"):
        h(end_time=-1.0, num_threads=1, seed=0, **SPECS[sid].test_params)
    with pytest.raises((ValueError, TypeError), match="no_such_param"):
        h(end_time=1.0, num_threads=1, seed=0, no_such_param=1, **SPECS[sid].test_params)


# --- the batch: every scenario's vector env --------------------------------------

def _actions(space, shape, rng):
    if hasattr(space, "n"):
        return rng.integers(0, space.n, shape)
    return rng.uniform(space.low, space.high, shape + space.shape).astype(space.dtype)


@pytest.mark.parametrize("sid", ENVS)
@pytest.mark.parametrize("mode", ["next_step", "same_step", "disabled"])
@pytest.mark.parametrize("threads, seed, layout", [(1, 0, None), (2, 5, False), (3, 9, None), (4, 12, None),
                                                   (2, 3, True), (3, 4, True), (4, 6, True),
                                                   (2, 7, "engines"), (3, 8, "engines")])
def test_vector_copies_equal_single_envs(sid, mode, threads, seed, layout):
    """Copy c of the vector env is a single env seeded seed + c and reset
    without a seed at each episode end, in every autoreset mode; copies end
    at different steps (per-copy max_cycles), so the engine runs them in
    groups of equal step count; in one engine, round by round (the team)
    or in copy groups (``layout`` True), or in groups of
    copies, an engine each, stepped concurrently (``layout`` "engines")."""
    E, mcs = 3, [2, 4, 3]
    p = {k: v for k, v in small(sid).items() if k != "max_cycles"}
    v = seer_envs.vector_env(sid, E, num_threads=threads, autoreset_mode=mode, max_cycles=mcs,
                             copy_parallel=layout, **p)
    singles = [seer_envs.make(sid, num_threads=1, max_cycles=mcs[c], **p) for c in range(E)]
    obs, infos = v.reset(seed=seed)
    want = {"engines": "groups", True: "copy_groups", False: "team",
            None: "team"}[layout]           # None: 3 copies are too few to share out
    assert set(infos) == {"mask"} and infos["mask"].all() and v.layout == want
    assert v.thread_choice.layout == v.layout
    for c, s in enumerate(singles):
        np.testing.assert_array_equal(obs[c], s.reset_arrays(seed=seed + c))
    rng = np.random.default_rng(seed)
    restarted = ended = 0
    for k in range(11):
        a = _actions(v.single_action_space, (E, v.num_agents), rng)
        obs, rew, term, trunc, infos = v.step(a)
        for c, s in enumerate(singles):
            if mode == "next_step" and not s.agents:       # this step is the copy's reset
                np.testing.assert_array_equal(obs[c], s.reset_arrays())
                assert not (rew[c].any() or term[c].any() or trunc[c].any())
                restarted += 1
                continue
            o, r, t, tr = s.step_arrays(a[c])
            for got, want in ((rew[c], r), (term[c], t), (trunc[c], tr)):
                np.testing.assert_array_equal(got, want, err_msg=f"step {k} copy {c}")
            copy_ended = (bool(infos["_final_obs"][c]) if "_final_obs" in infos
                          else not infos["mask"][c].any())
            assert copy_ended == (not s.agents)
            if not s.agents:
                ended += 1
                np.testing.assert_array_equal(infos["seer_episode"]["r"][c], s._ep_return)
                np.testing.assert_array_equal(infos["seer_episode"]["l"][c], s._ep_length)
                if mode == "same_step":
                    np.testing.assert_array_equal(infos["final_obs"][c], o)
                    o = s.reset_arrays()
            np.testing.assert_array_equal(obs[c], o, err_msg=f"step {k} copy {c}")
        if mode == "disabled" and not infos["mask"].any(axis=1).all():
            mask = ~infos["mask"].any(axis=1)
            with pytest.raises(RuntimeError, match="has ended"):
                v.step(a)
            obs, _ = v.reset(options={"reset_mask": mask})
            for c in np.flatnonzero(mask):
                np.testing.assert_array_equal(obs[c], singles[c].reset_arrays())
                restarted += 1
        np.testing.assert_array_equal(v.cycles, [s._cycle for s in singles])
    assert ended >= 4 and (mode == "same_step" or restarted >= 3)


def test_a_scenario_that_fails_to_import_is_named_not_dropped_silently(tmp_path, monkeypatch):
    from seer_runtime import spec as spec_mod
    pkg = tmp_path / "brokenpkg"
    (pkg / "typo").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "typo" / "__init__.py").write_text("")
    (pkg / "typo" / "spec.py").write_text("import no_such_module_here\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(spec_mod, "_SEARCH", spec_mod._SEARCH + ["brokenpkg"])
    with pytest.warns(RuntimeWarning, match=r"'brokenpkg\.typo\.spec' failed to import .*no_such_module_here"):
        reg = spec_mod.registry()
    assert "pcs_v0" in reg
