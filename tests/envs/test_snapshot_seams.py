# SPDX-License-Identifier: BSD-3-Clause
"""The seams of the episode core (issue 55), each held here: a masked reset
retried after a Ctrl-C inside one refuses, naming the full reset, instead of
restarting every copy; a snapshot's kind is its view's (a single env's
``"env"``, a vector env's ``"vector"``), whatever the number of copies, so
a single env's snapshot restores into a one-copy vector env in every
layout and a vector snapshot of another size is refused naming both sizes;
a restore carries each copy's world (its per-copy fields), as
docs/guide.md says; and the per-copy restore checks ``env/last_obs`` as it
checks every other array."""

import os
import sys

import numpy as np
import pytest

import seer_envs
from seer_envs import Snapshot

pytestmark = pytest.mark.filterwarnings("ignore:num_threads=.*exceeds:RuntimeWarning")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(seer_envs.__file__)))     # the tree under test
P = dict(grid_width=4, grid_height=4)
A = 16
#: The layouts of a one-copy vector env: one engine (1 and 2 threads), groups of engines.
LAYOUTS = {"team": dict(num_threads=1), "team-2": dict(num_threads=2, copy_parallel=True),
           "groups": dict(num_threads=2, copy_parallel="engines")}


def _acts(n=None):
    return np.ones(A if n is None else (n, A), np.int64)


def _interrupt_at(fn, name):
    """Run ``fn`` with a KeyboardInterrupt raised at the first call of a
    function ``name`` inside seer_envs (where a Ctrl-C may land)."""
    seer_dir = os.path.dirname(os.path.abspath(seer_envs.__file__))

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code.co_name == name and frame.f_code.co_filename.startswith(seer_dir):
            raise KeyboardInterrupt
        return None
    sys.settrace(tracer)
    try:
        fn()
    except KeyboardInterrupt:
        return True
    finally:
        sys.settrace(None)
    return False


# --- 1: a masked reset retried after a Ctrl-C inside one -----------------------------

@pytest.mark.parametrize("with_params", [False, True])
def test_a_masked_reset_retried_after_an_interrupt_refuses_naming_the_full_reset(with_params):
    def make():
        v = seer_envs.vector_env("pcs_v0", 3, num_threads=1, autoreset_mode="disabled", **P)
        v.reset(seed=0)
        for _ in range(2):
            v.step(_acts(3))
        return v
    v = make()
    opts = {"reset_mask": np.array([True, False, False])}
    if with_params:
        opts["params"] = {"handoff_penalty": 3.0}
    assert _interrupt_at(lambda: v.reset(options=opts), "restart_obs")
    with pytest.raises(RuntimeError, match="was interrupted"):
        v.step(_acts(3))
    cycles, pending = v.cycles.copy(), v.core.batch.param_pending.copy()
    with pytest.raises(RuntimeError, match=r"a reset was interrupted.*reset_mask.*call reset\(\) without"):
        v.reset(options=opts)
    # refused before anything changed: no copy restarted, nothing pending, still marked
    assert np.array_equal(v.cycles, cycles) and v.cycles.tolist() == [2, 2, 2]
    assert np.array_equal(v.core.batch.param_pending, pending, equal_nan=True)
    with pytest.raises(RuntimeError, match="was interrupted"):
        v.step(_acts(3))
    # the full reset it names gives a fresh env; so does a mask of every copy (it asks for it)
    twin = make()
    if with_params:
        obs, _ = v.reset(seed=5, options={"reset_mask": np.ones(3, bool)})
        assert v.core.interrupted is None and v.cycles.tolist() == [0, 0, 0]
    else:
        obs, _ = v.reset(seed=5)
    assert np.array_equal(obs, twin.reset(seed=5)[0])
    for _ in range(2):
        assert all(np.array_equal(x, y) for x, y in zip(v.step(_acts(3))[:4], twin.step(_acts(3))[:4]))
    # an intact env's masked reset is as before: only copy 0 restarts, the other rows as last returned
    last = v.step(_acts(3))[0]
    twin.step(_acts(3))
    obs, _ = v.reset(options={"reset_mask": np.array([True, False, False])})
    assert v.cycles.tolist() == [0, 3, 3] and np.array_equal(obs[1:], last[1:])


# --- 2, 3: one notion of kind, whatever the number of copies ------------------------

def _single(steps=3):
    e = seer_envs.make("pcs_v0", num_threads=1, **P)
    e.reset(seed=4)
    for _ in range(steps):
        e.step_arrays(_acts())
    return e


def _same_future(env, vec, steps=4):
    for _ in range(steps):
        want = env.step_arrays(_acts())
        got = vec.step(_acts(1))
        assert np.array_equal(got[0][0], want[0]) and np.array_equal(got[1][0], want[1])


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("slots", [None, [0]])
def test_a_single_envs_snapshot_restores_into_a_one_copy_vector_env(layout, slots):
    src = _single()
    v = seer_envs.vector_env("pcs_v0", 1, **P, **LAYOUTS[layout])
    v.reset(seed=9)
    v.restore(src.snapshot(), copies=slots)
    assert v.cycles.tolist() == [3]
    _same_future(src, v)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_one_copy_vector_envs_snapshots_are_a_vector_envs(layout):
    v = seer_envs.vector_env("pcs_v0", 1, **P, **LAYOUTS[layout])
    v.reset(seed=2)
    v.step(_acts(1))
    whole = v.snapshot()
    assert whole.kind == ("copies" if layout == "groups" else "vector") and whole.num_copies == 1
    assert v.snapshot(copies=[0]).kind == "copies"
    for dst_layout in sorted(LAYOUTS):
        for snap, slots in ((whole, None), (v.snapshot(copies=[0]), None), (v.snapshot(copies=[0]), [0])):
            w = seer_envs.vector_env("pcs_v0", 1, **P, **LAYOUTS[dst_layout])
            w.reset(seed=7)
            if dst_layout == "groups" and snap.kind == "vector":       # as for N copies: one engine only
                with pytest.raises(ValueError, match="cannot be restored into groups of engines"):
                    w.restore(snap, copies=slots)
                continue
            w.restore(snap, copies=slots)
            assert np.array_equal(w.step(_acts(1))[0][0], _twin_step(snap))
    # a one-copy snapshot of any kind restores into a single env (a batch of one)
    for snap in (whole, v.snapshot(copies=[0])):
        e = seer_envs.make("pcs_v0", num_threads=1, **P)
        e.restore(snap)
        assert np.array_equal(e.step_arrays(_acts())[0], _twin_step(snap))


def _twin_step(snap):
    """The next observation of the copy in ``snap`` (restored into a team vector env of one copy)."""
    t = seer_envs.vector_env("pcs_v0", 1, num_threads=1, **P)
    t.restore(snap)
    return t.step(_acts(1))[0][0]


def test_a_vector_snapshot_of_another_size_names_both_sizes():
    v3 = seer_envs.vector_env("pcs_v0", 3, num_threads=1, **P)
    v3.reset(seed=0)
    v1 = seer_envs.vector_env("pcs_v0", 1, num_threads=1, **P)
    v1.reset(seed=0)
    for dst, src, want in ((v1, v3, "a snapshot of 3 copies cannot be restored into 1 copy"),
                           (v3, v1, "a snapshot of 1 copy cannot be restored into 3 copies")):
        before = dst.snapshot().to_bytes()
        with pytest.raises(ValueError, match=want):
            dst.restore(src.snapshot())
        assert dst.snapshot().to_bytes() == before
    with pytest.raises(ValueError, match="engine-wide snapshot restores every copy at once"):
        v1.restore(v1.snapshot(), copies=[0])
    with pytest.raises(ValueError, match="cannot be restored into a single env"):
        seer_envs.make("pcs_v0", num_threads=1, **P).restore(v3.snapshot())


# --- 4: a restore carries each copy's world -----------------------------------------

AP = dict(num_uavs=6, num_targets=3, max_cycles=30)


def _aircraft_acts(env, n=None):
    shape = (6, 2) if n is None else (n, 6, 2)
    return np.full(shape, 0.3, np.float32)


@pytest.mark.parametrize("path", ["single", "whole", "copy", "groups"])
def test_a_restore_carries_each_copys_world(path):
    """The source's per-copy values (``wind_sigma`` 0.5, ``max_speed`` 20)
    come with its snapshot: the target reports them and continues as the
    source; another value of a shared field is refused."""
    world = dict(wind_sigma=0.5, max_speed=20.0)
    if path == "single":
        src = seer_envs.make("aircraft_v0", num_threads=1, **AP, **world)
        dst = seer_envs.make("aircraft_v0", num_threads=1, **AP)
    else:
        src = seer_envs.vector_env("aircraft_v0", 2, num_threads=1, **AP, **world)
        kw = dict(num_threads=2, copy_parallel="engines") if path == "groups" else dict(num_threads=1)
        dst = seer_envs.vector_env("aircraft_v0", 2, **AP, **kw)
    src.reset(seed=3)
    dst.reset(seed=8)
    single = path == "single"
    step = (lambda e: e.step_arrays(_aircraft_acts(e))) if single else (lambda e: e.step(_aircraft_acts(e, 2)))
    for _ in range(3):
        step(src)
    if path == "copy":
        dst.restore(src.snapshot(copies=[1]), copies=[0])
        assert dst.params["wind_sigma"].tolist() == [0.5, 1.0] and dst.params["max_speed"].tolist() == [20.0, 30.0]
    elif path == "groups":
        dst.restore(src.snapshot(copies=[0, 1]))
    else:
        dst.restore(src.snapshot())
    if single:
        assert dst.params["wind_sigma"] == 0.5 and dst.config.wind_sigma == 0.5 and dst.config.max_speed == 20.0
        for _ in range(3):
            assert np.array_equal(step(dst)[0], step(src)[0])
    else:
        got = dst.params
        if path != "copy":
            assert got["wind_sigma"].tolist() == [0.5, 0.5] and got["max_speed"].tolist() == [20.0, 20.0]
        for _ in range(3):
            a, b = step(dst), step(src)
            rows = (0, 1) if path == "copy" else (slice(None), slice(None))
            assert np.array_equal(a[0][rows[0]], b[0][rows[1]]) and np.array_equal(a[1][rows[0]], b[1][rows[1]])
    # the world stays the copy's at its next reset too (it is the copy's base)
    dst.reset(seed=1)
    ws = dst.params["wind_sigma"]
    assert (ws == 0.5) if single else ws[0] == 0.5
    # a field all copies share (dt) is the env's: another value is refused, nothing changes
    other = (seer_envs.make("aircraft_v0", num_threads=1, dt=0.5, **AP) if single else
             seer_envs.vector_env("aircraft_v0", 2, num_threads=1, dt=0.5, **AP))
    other.reset(seed=0)
    before = dst.snapshot().to_bytes()
    with pytest.raises(ValueError, match="parameters differ .*dt"):
        dst.restore(other.snapshot() if single else other.snapshot(copies=[0]), **({} if single else
                                                                                    {"copies": [1]}))
    assert dst.snapshot().to_bytes() == before


def test_the_guide_says_a_restore_carries_each_copys_world():
    doc = " ".join(open(os.path.join(ROOT, "docs", "guide.md"), encoding="utf-8").read().split())
    assert "other parameters (besides a copy's per-copy fields" in doc
    assert "a restored copy keeps its world" in doc


# --- 5: the per-copy restore checks env/last_obs ------------------------------------

@pytest.mark.parametrize("bad", ["list", "dtype", "shape"])
def test_a_per_copy_restore_checks_the_last_observation(bad):
    v = seer_envs.vector_env("pcs_v0", 3, num_threads=1, **P)
    v.reset(seed=0)
    v.step(_acts(3))
    snap = v.snapshot(copies=[1])
    arrays = dict(snap.arrays)
    lo = np.array(arrays["0/env/last_obs"])
    arrays["0/env/last_obs"] = {"list": lo.tolist(), "dtype": lo.astype(np.float64), "shape": lo[:-1]}[bad]
    forged = Snapshot(snap.scenario, snap.params, snap.kind, snap.num_copies, arrays, snap.meta)
    before = v.snapshot().to_bytes()
    with pytest.raises(ValueError, match=r"copy 0 \(into slot 2\): snapshot array 'env/last_obs'"):
        v.restore(forged, copies=[2])
    assert v.snapshot().to_bytes() == before
