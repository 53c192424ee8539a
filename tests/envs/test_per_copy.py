# SPDX-License-Identifier: BSD-3-Clause
"""Every copy its own world (seer_envs.episode.worlds): per-copy values of every
field a scenario declares ``per_copy``, one at a time and all at once in
every layout, ``set_params``, reset options, samplers and snapshots, each
copy against a single env built with its values and seed, bit for bit, at
1-4 threads."""

import math
import pickle

import numpy as np
import pytest
from seer_test_helpers import env_cases, three_values

import seer_envs
from seer_envs.episode.worlds import per_copy_fields

SPECS = seer_envs.registry()
CASES = [tuple(c.values) for c in env_cases()]    # (sid, small params): each env, and its stopping variant
E = 3


def _fields(sid):
    return per_copy_fields(SPECS[sid].copies)


def _stopping(sid, params):
    """Whether ``params`` are the scenario's stopping variant: agents leave a running episode."""
    return params == SPECS[sid].test_params_stopping


# (copies class, field): each field once, tried in every case of the scenarios sharing the class
FIELDS = sorted({(SPECS[sid].copies.__name__, f) for sid, _ in CASES for f in _fields(sid)})


def _actions(space, shape, rng):
    if hasattr(space, "n"):
        return rng.integers(0, space.n, shape)
    return rng.uniform(space.low, space.high, shape + space.shape).astype(space.dtype)


def _run_against_singles(sid, params, per_copy, threads, seeds, steps, rng_seed=0, state=False,
                         until_restarted=False, **vkw):
    """Step a vector env with ``per_copy`` values (field -> E values) and E
    single envs with copy c's values, NEXT_STEP autoreset; assert every
    output equal (``state``: the global state too, where the copy fills the
    batch's width).  ``until_restarted``: stop two steps after every copy
    has restarted (``steps`` is then a cap).  Returns each copy's outputs
    (for comparing copies) and how often an agent left a running episode."""
    v = seer_envs.vector_env(sid, E, num_threads=threads, **dict(params, **per_copy), **vkw)
    state = state and hasattr(v, "single_state_space")     # a scenario may declare none
    singles = [seer_envs.make(sid, num_threads=1, **dict(params, **{k: vs[c] for k, vs in per_copy.items()}))
               for c in range(E)]
    obs, infos = v.reset(seed=list(seeds))
    for k, vs in per_copy.items():
        np.testing.assert_array_equal(infos["seer_params"][k], vs)
    trace = [[o] for o in obs]
    n = [len(s.possible_agents) for s in singles]       # a copy's agent count may be below the width
    for c, s in enumerate(singles):
        np.testing.assert_array_equal(obs[c, :n[c]], s.reset_arrays(seed=seeds[c]))
    rng = np.random.default_rng(rng_seed)
    restarted, exits, end = set(), 0, steps
    for k in range(steps):
        if k == end:
            break
        a = _actions(v.single_action_space, (E, v.num_agents), rng)
        obs, rew, term, trunc, infos = v.step(a)
        states = v.state() if state else None
        for c, s in enumerate(singles):
            m = n[c]
            if not s.agents:                    # this step is the copy's reset (NEXT_STEP)
                o, r = s.reset_arrays(), np.zeros_like(rew[c, :m])
                assert infos["_seer_params"][c]
                restarted.add(c)
            else:
                o, r, t, tr = s.step_arrays(a[c, :m])
                np.testing.assert_array_equal(term[c, :m], t)
                np.testing.assert_array_equal(trunc[c, :m], tr)
                exits += bool((t | tr).any() and s.agents)
            np.testing.assert_array_equal(obs[c, :m], o, err_msg=f"{sid} step {k} copy {c}")
            np.testing.assert_array_equal(rew[c, :m].view(np.uint32), r.view(np.uint32), err_msg=f"step {k} copy {c}")
            assert not rew[c, m:].any() and not term[c, m:].any() and not trunc[c, m:].any()
            # the state where the copy fills the batch's width: a copy with fewer agents (or
            # Aircraft's targets) pads it its scenario's way (tests/envs/test_per_copy_aircraft.py)
            if state and s.state().shape == states[c].shape:
                np.testing.assert_array_equal(states[c], s.state(), err_msg=f"state step {k} copy {c}")
            trace[c] += [o, rew[c]]
        if until_restarted and len(restarted) == E:
            end = min(end, k + 3)               # two steps into the last copy's second episode
    assert len(restarted) == E if until_restarted else restarted
    return trace, exits


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("cls_name, field", FIELDS)
def test_each_per_copy_field_gives_each_copy_its_world(cls_name, field, threads):
    """Copies with three values of one per-copy field equal single envs
    built with them, across episodes; with one seed for all three, the
    copies differ in at least one case of the scenarios sharing the class:
    the model reads the field per copy (not one shared value).  In a
    stopping case agents leave a running episode (exits are compared too)."""
    differs = False
    for sid, params in CASES:
        if SPECS[sid].copies.__name__ != cls_name:
            continue
        cfg = SPECS[sid].build_config(params)
        vals = three_values(cfg, field)
        mc = max(cfg.max_cycles, 3)
        p = dict(params, max_cycles=mc)
        if field == "max_cycles":
            vals = [mc, mc + 2, mc - 1]
        trace, exits = _run_against_singles(sid, p, {field: vals}, threads, [7, 7, 7], steps=2 * mc + 3)
        assert exits or not _stopping(sid, params), f"{sid}: no agent left a running episode"
        differs |= any(not all(np.array_equal(x, y) for x, y in zip(trace[0], trace[c])) for c in (1, 2))
    assert differs, f"{field}: three values gave the same outputs in every case"


def _edges(cfg, field):
    """Three values of ``field``: ``cfg``'s, its low edge (its closed lower
    bound, else a quarter of cfg's) and a far value (four times cfg's, or
    1 from 0, capped by its upper bound); an infinite value stays."""
    m = cfg.__dataclass_fields__[field].metadata
    d = getattr(cfg, field)
    if math.isinf(d):
        return [d] * 3
    low = m["lo"] if m.get("lo") is not None and not m.get("lo_open") else d / 4
    high = 4 * d if d else 1
    if m.get("hi") is not None:
        high = min(high, m["hi"])
    return [d, int(low), int(high)] if m.get("integer") else [d, float(low), float(high)]


def _worlds(sid, params, values):
    """Every per-copy field of the scenario at once: ``values(cfg, field)``
    (copy c takes value c; copy 0 the base config's), ``max_cycles`` at
    least 3 and differing as in
    :func:`test_each_per_copy_field_gives_each_copy_its_world`.  Returns
    the base params and the per-copy values."""
    cfg = SPECS[sid].build_config(params)
    mc = max(cfg.max_cycles, 3)
    worlds = {f: values(cfg, f) for f in _fields(sid) if f != "max_cycles"}
    worlds["max_cycles"] = [mc, mc + 2, mc - 1]
    # No repair of the combination: a copy moves its fields alike (x1.7 or x0.6, x4 or to the
    # lower bounds), which keeps the bounds one field sets on another (Aircraft's wind_sigma by
    # max_speed and the substep), so every registered scenario's copies validate; one that
    # did not would fail here with its config's own message, naming the field.
    return dict(params, max_cycles=mc), worlds


#: the cases whose scenario has per-copy fields
WORLD_CASES = [c for c in env_cases() if SPECS[c.values[0]].copies is not None and _fields(c.values[0])]
LAYOUTS = [pytest.param({}, id="auto"), pytest.param({"copy_parallel": True}, id="copies"),
           pytest.param({"batch_size": 2}, id="batches")]


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("sid, params", WORLD_CASES)
def test_all_per_copy_fields_at_once_equal_single_envs(sid, params, layout, threads):
    """Copies with their own value of every per-copy field at once (agent
    counts included) equal single envs built with them, global state
    included, into every copy's second episode, in every layout; in a
    stopping case agents leave a running episode (exits are compared too)."""
    p, worlds = _worlds(sid, params, three_values)
    _, exits = _run_against_singles(sid, p, worlds, threads, [7, 8, 9], 2 * p["max_cycles"] + 3, state=True,
                                    until_restarted=True, **layout)
    assert exits or not _stopping(sid, params), f"{sid}: no agent left a running episode"


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("sid, params", WORLD_CASES)
def test_all_per_copy_fields_at_their_edges_equal_single_envs(sid, params, layout):
    """As above with every field at its edges (:func:`_edges`) beside a
    copy at the base config: one copy at the lower bounds (Aircraft's no
    wind, no message, no target, one UAV), one far above (Gossip's messages
    in flight over more steps than the base config's, Aircraft's four times
    the UAVs)."""
    p, worlds = _worlds(sid, params, _edges)
    _, exits = _run_against_singles(sid, p, worlds, 2, [7, 8, 9], 2 * p["max_cycles"] + 3, state=True,
                                    until_restarted=True, **layout)
    assert exits or not _stopping(sid, params), f"{sid}: no agent left a running episode"


#: Scenarios whose model reads per-copy parameters (``Copies.per_copy``), each at its test_params.
CONFIGURED = sorted(sid for sid in SPECS if SPECS[sid].copies is not None and SPECS[sid].copies.per_copy)


@pytest.mark.parametrize("sid", CONFIGURED)
def test_configure_checks_its_copy(sid):
    """The model's ``configure(c, cfg)`` refuses a copy it does not hold,
    naming the range (``seer_envs.scenario.per_copy.PerCopy``)."""
    spec = SPECS[sid]
    cfg = spec.build_config(spec.test_params)
    cp = spec.copies(cfg, 2)
    for c in (2, -1):
        with pytest.raises(ValueError, match=rf"configure: copy {c} out of range \[0, 2\)"):
            cp.model.configure(c, cfg)
    cp.model.configure(1, cfg)


def _other_world(spec, params):
    """Other valid values of as many per-copy fields (not the agent counts)
    as one config takes together: each field's second value of
    :func:`three_values`, kept where the config with it still validates."""
    import dataclasses
    cfg = spec.build_config(params)
    new = {}
    for f in spec.copies.per_copy:
        if f in spec.copies.per_copy_counts:
            continue
        try:
            dataclasses.replace(cfg, **dict(new, **{f: three_values(cfg, f)[1]}))
        except (ValueError, AssertionError):
            continue
        new[f] = three_values(cfg, f)[1]
    return new


@pytest.mark.parametrize("sid", CONFIGURED)
def test_single_env_reset_params_equal_a_single_env_built_with_them(sid):
    """``reset(options={"params": ...})`` of a single env gives the world of
    a single env built with those values, bit for bit, over its steps."""
    spec = SPECS[sid]
    base = dict(spec.test_params, max_cycles=10)
    new = _other_world(spec, base)
    assert len(new) >= min(2, len(spec.copies.per_copy)), new
    s = seer_envs.make(sid, num_threads=1, **base)
    built = seer_envs.make(sid, num_threads=1, **dict(base, **new))
    np.testing.assert_array_equal(s.reset_arrays(seed=4, options={"params": new}), built.reset_arrays(seed=4))
    assert s.config == built.config
    rng = np.random.default_rng(1)
    space = s.action_space(s.possible_agents[0])
    for k in range(8):
        a = _actions(space, (len(s.possible_agents),), rng)
        for x, y in zip(s.step_arrays(a), built.step_arrays(a)):
            np.testing.assert_array_equal(x, y, err_msg=f"step {k}")
        if not s.agents:
            break


def test_refused_fields_and_values_name_the_field_and_change_nothing():
    p = SPECS["pcs_v0"].test_params
    with pytest.raises(ValueError, match=r"grid_width cannot differ between copies.*per-copy fields are "
                                         r"max_cycles, call_interarrival_mean"):
        seer_envs.vector_env("pcs_v0", 2, num_threads=1, **dict(p, grid_width=[4, 5]))
    with pytest.raises(ValueError, match=r"call_interarrival_mean must be one value or 2 values"):
        seer_envs.vector_env("pcs_v0", 2, num_threads=1, call_interarrival_mean=[1.0, 2.0, 3.0], **p)
    # an out-of-bound value: the config's own message, as a single env gives it
    with pytest.raises(ValueError) as single:
        seer_envs.make("pcs_v0", num_threads=1, **dict(p, call_duration_mean=-1.0))
    with pytest.raises(ValueError) as batch:
        seer_envs.vector_env("pcs_v0", 2, num_threads=1, **dict(p, call_duration_mean=[10.0, -1.0]))
    assert str(batch.value) == str(single.value) == "PCSConfig.call_duration_mean must be > 0.0, got -1.0"
    v, twin = (seer_envs.vector_env("pcs_v0", 2, num_threads=1, **p) for _ in range(2))
    for e in (v, twin):
        e.reset(seed=3)
    bad = [
        (lambda: v.set_params(call_duration_mean=-1.0), str(single.value)),
        (lambda: v.set_params(copies=[1], call_duration_mean=[5.0, 6.0]), "one value or 1 values"),
        (lambda: v.set_params(grid_height=5), "grid_height cannot differ"),
        (lambda: v.set_params(no_such_field=1), "has no field 'no_such_field'"),
        (lambda: v.set_params(call_duration_mean="long"), "must be a number"),
        (lambda: v.set_params(copies=[2], max_cycles=4), r"copies must be in \[0, 1\]"),
        (lambda: v.reset(options={"params": {"call_duration_mean": 0.0}}), "call_duration_mean must be > 0.0"),
        (lambda: v.reset(options={"params": {"dt": 5.0}}), "dt cannot differ"),
        (lambda: v.set_param_sampler({"grid_width": (2, 4)}), "grid_width cannot differ"),
        (lambda: v.set_param_sampler({"call_duration_mean": (5.0, 1.0)}), "low <= high"),
    ]
    for call, match in bad:
        with pytest.raises(ValueError, match=match):
            call()
    np.testing.assert_array_equal(v.core.batch.param_pending, twin.core.batch.param_pending)
    a = np.zeros((2, v.num_agents), np.int64)
    for _ in range(2 * p["max_cycles"] + 1):
        for x, y in zip(v.step(a)[:4], twin.step(a)[:4]):
            np.testing.assert_array_equal(x, y)
    # a sampler whose draw is out of bounds: the config's message at the reset, before any change
    v.set_param_sampler(lambda rng: {"call_duration_mean": -1.0})
    with pytest.raises(ValueError, match="call_duration_mean must be > 0.0, got -1.0"):
        v.reset(seed=1)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_set_params_apply_at_each_copys_next_reset_and_autoreset(threads):
    """``set_params`` mid-episode changes nothing until the copy's next
    episode, whether it auto-resets or is reset (Gymnasium #787's flaw does
    not happen); a single env gets the same with reset options."""
    sid, p = "pcs_hotspot_v0", dict(SPECS["pcs_hotspot_v0"].test_params, max_cycles=4)
    v = seer_envs.vector_env(sid, E, num_threads=threads, max_cycles=[4, 5, 4], **{
        k: x for k, x in p.items() if k != "max_cycles"})
    singles = [seer_envs.make(sid, num_threads=1, **dict(p, max_cycles=m)) for m in (4, 5, 4)]
    v.reset(seed=[1, 2, 3])
    for c, s in enumerate(singles):
        s.reset_arrays(seed=c + 1)
    rng = np.random.default_rng(0)
    new = {"call_interarrival_mean": 30.0, "hotspot_amplitude": 9.0}
    for k in range(14):
        if k == 1:
            v.set_params(copies=[0, 2], **new)
            assert v.params["hotspot_amplitude"][0] != 9.0        # not in force yet
        a = _actions(v.single_action_space, (E, v.num_agents), rng)
        obs, rew, *_ , infos = v.step(a)
        for c, s in enumerate(singles):
            if not s.agents:
                fresh = k >= 1 and c in (0, 2) and s.params["hotspot_amplitude"] != 9.0
                o = s.reset_arrays(options={"params": new} if fresh else None)
                assert infos["_seer_params"][c]
                assert infos["seer_params"]["hotspot_amplitude"][c] == s.params["hotspot_amplitude"]
            else:
                o, r, *_ = s.step_arrays(a[c])
                np.testing.assert_array_equal(rew[c], r)
            np.testing.assert_array_equal(obs[c], o, err_msg=f"step {k} copy {c}")
    assert v.params["hotspot_amplitude"].tolist() == [9.0, SPECS[sid].build_config(p).hotspot_amplitude, 9.0]
    assert singles[0].config.hotspot_amplitude == 9.0
    # reset options: now, for the masked copies (DISABLED) or all
    v.reset(options={"params": {"max_cycles": [6, 7, 8]}})
    assert v.params["max_cycles"].tolist() == [6, 7, 8]


def test_samplers_draw_the_same_worlds_at_any_thread_count_layout_and_batch_size():
    sid, p = "pcs_hotspot_v0", dict(SPECS["pcs_hotspot_v0"].test_params, max_cycles=3)
    sampler = {"call_interarrival_mean": (50.0, 400.0), "hotspot_amplitude": [0.0, 2.0, 6.0],
               "power_control_iters": {"uniform": [0, 5]}}
    runs = []
    for E_, threads, kw in [(4, 1, {}), (4, 2, {"copy_parallel": True}), (4, 2, {"batch_size": 2}),
                            (2, 1, {})]:
        v = seer_envs.vector_env(sid, E_, num_threads=threads, param_sampler=sampler, **p, **kw)
        _, infos = v.reset(seed=[10, 11, 12, 13][:E_])
        seen = [dict((k, x[:2].tolist()) for k, x in infos["seer_params"].items())]
        rng = np.random.default_rng(0)
        outs = []
        for _ in range(8):
            obs, rew, *_ , infos = v.step(rng.integers(0, 3, (4, v.num_agents))[:E_])
            outs.append(obs[:2].copy())
            if "seer_params" in infos:
                seen.append(dict((k, x[:2].tolist()) for k, x in infos["seer_params"].items()))
        runs.append((seen, outs))
    for seen, outs in runs[1:]:
        assert seen == runs[0][0]
        for x, y in zip(outs, runs[0][1]):
            np.testing.assert_array_equal(x, y)
    draws = {tuple(s["call_interarrival_mean"]) for s in runs[0][0]}
    assert len(draws) >= 3                              # a new world at every episode
    for s in runs[0][0]:
        assert all(50.0 <= x <= 400.0 for x in s["call_interarrival_mean"])
        assert set(s["hotspot_amplitude"]) <= {0.0, 2.0, 6.0}
        assert all(isinstance(x, int) and 0 <= x <= 5 for x in s["power_control_iters"])
    # copy c equals a single env with the same sampler and seed
    single = seer_envs.make(sid, num_threads=1, param_sampler=sampler, **p)
    single.reset_arrays(seed=11)
    assert {k: [x] for k, x in single.params.items() if k in runs[0][0][0]} == \
        {k: [x[1]] for k, x in runs[0][0][0].items()}


def test_snapshots_and_pickles_carry_each_copys_world():
    sid, p = "pcs_v0", dict(SPECS["pcs_v0"].test_params, max_cycles=9)
    src = seer_envs.vector_env(sid, 3, num_threads=1, call_duration_mean=[30.0, 90.0, 300.0],
                               handoff_penalty=[1.0, 2.0, 3.0], **p)
    src.reset(seed=5)
    src.set_params(copies=[2], call_duration_mean=60.0)           # pending: travels too
    rng = np.random.default_rng(0)
    acts = [rng.integers(0, 3, (3, src.num_agents)) for _ in range(12)]
    for a in acts[:3]:
        src.step(a)
    dst = seer_envs.vector_env(sid, 4, num_threads=2, **p)        # other worlds
    dst.reset(seed=0)
    dst.restore(src.snapshot(copies=[2, 0]), copies=[1, 3])
    assert dst.params["call_duration_mean"].tolist() == [p.get("call_duration_mean", 180.0), 300.0,
                                                          p.get("call_duration_mean", 180.0), 30.0]
    np.testing.assert_array_equal(dst.core.batch.param_pending[1], src.core.batch.param_pending[2])
    twin = pickle.loads(pickle.dumps(src))
    whole = seer_envs.vector_env(sid, 3, num_threads=2, **p)
    whole.reset(seed=1)
    whole.restore(src.snapshot())
    for e in (twin, whole):
        assert {k: x.tolist() for k, x in e.params.items()} == {k: x.tolist() for k, x in src.params.items()}
    for a in acts[3:]:
        o, r, *_ = src.step(a)
        for e in (twin, whole):
            o2, r2, *_ = e.step(a)
            np.testing.assert_array_equal(o, o2)
            np.testing.assert_array_equal(r, r2)
        o3, r3, *_ = dst.step(np.stack([a[0], a[2], a[0], a[0]]))
        np.testing.assert_array_equal(o3[1], o[2])
        np.testing.assert_array_equal(o3[3], o[0])
    assert src.params["call_duration_mean"][2] == 60.0          # the pending value came with the restart
    assert dst.params["call_duration_mean"][1] == 60.0


def test_the_agent_level_env_gives_each_copy_its_world():
    p = dict(SPECS["pcs_v0"].test_params, max_cycles=3)
    env = seer_envs.agent_vector_env("pcs_v0", 2, num_threads=1, handoff_penalty=[1.0, 4.0], **p)
    env.reset(seed=0)
    assert env.params["handoff_penalty"].tolist() == [1.0, 4.0]
    env.set_params(copies=[1], handoff_penalty=2.0)
    for _ in range(3):
        *_, infos = env.step(np.zeros(env.num_envs, np.int64))
        assert set(infos) <= {"mask", "seer_episode", "_seer_episode"}
        assert env.params["handoff_penalty"].tolist() == [1.0, 4.0]     # not before the restart
    env.step(np.zeros(env.num_envs, np.int64))                          # the restart (NEXT_STEP)
    assert env.params["handoff_penalty"].tolist() == [1.0, 2.0]
