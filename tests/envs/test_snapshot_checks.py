# SPDX-License-Identifier: BSD-3-Clause
"""A restore checks everything before it changes anything.

Bytes: their digest is checked over every byte when they are read, so
damaged bytes are refused by ``Snapshot.from_bytes`` and by a restore of
them, the env left as it was; the engine checks every event as it copies
it (into spare heaps, swapped in only once all pass).  Objects: a snapshot built or altered in memory (bad seed
generators, missing arrays, wrong dtypes or shapes) is refused with a
``ValueError`` naming what is wrong before anything changes; after each
refusal the env steps on exactly like its untouched twin.  (Continuation
and the bytes fuzz: test_snapshot.py; the format: test_snapshot_bytes.py.)"""

import numpy as np
import pytest

import seer_envs
from seer_envs import Snapshot
from seer_test_helpers import events_place

pytestmark = pytest.mark.filterwarnings("ignore:num_threads=.*exceeds:RuntimeWarning")

PARAMS = dict(seer_envs.envs()["pcs_v0"].test_params, max_cycles=40)


def _twins(threads=(1, 1), steps=3, **over):
    p = dict(PARAMS, **over)
    a = seer_envs.make("pcs_v0", num_threads=threads[0], **p)
    b = seer_envs.make("pcs_v0", num_threads=threads[1], **p)
    acts = np.ones(len(a.possible_agents), np.int64)
    for env in (a, b):
        env.reset(seed=4)
        for _ in range(steps):
            env.step_arrays(acts)
    return a, b, acts


def _steps_alike(env, twin, acts, n=3):
    for _ in range(n):
        for x, y in zip(env.step_arrays(acts), twin.step_arrays(acts)):
            np.testing.assert_array_equal(x, y)
    assert env.summary() == twin.summary()


def _damaged_events(raw, at=0.5):
    """``raw`` with one bit flipped inside the pending events (most of the bytes)."""
    off, length = events_place(raw)
    assert length > 0
    b = bytearray(raw)
    b[off + int(at * (length - 1))] ^= 0x10
    return bytes(b)




def test_damaged_events_are_refused_by_the_restore_and_change_nothing():
    src, _, acts = _twins(steps=5)
    raw = src.snapshot().to_bytes()
    for at in (0.0, 0.3, 1.0):
        bad = _damaged_events(raw, at)
        with pytest.raises(ValueError, match="checksum mismatch"):
            Snapshot.from_bytes(bad)
        env, twin, _ = _twins(threads=(3, 1))
        with pytest.raises(ValueError, match="checksum mismatch"):
            env.restore(bad)
        _steps_alike(env, twin, acts)
    # a good snapshot read from bytes: restored twice
    back = Snapshot.from_bytes(raw)
    env, twin, _ = _twins(threads=(2, 1))
    env.restore(back)
    twin.restore(back)
    _steps_alike(env, twin, acts)


def test_damaged_events_into_a_never_reset_env_change_nothing():
    src, _, acts = _twins(steps=5)
    bad = _damaged_events(src.snapshot().to_bytes())
    env = seer_envs.make("pcs_v0", num_threads=2, **PARAMS)
    twin = seer_envs.make("pcs_v0", num_threads=1, **PARAMS)
    with pytest.raises(ValueError, match="checksum mismatch"):
        env.restore(bad)
    with pytest.raises(RuntimeError, match="reset"):
        env.snapshot()                              # still never started
    for e in (env, twin):
        e.reset(seed=11)
    _steps_alike(env, twin, acts)


def _vector_trio(copies, threads):
    """A source vector env (seed 0, one step), an env at ``threads`` threads
    and its untouched twin (seed 5, one step each), and the actions."""
    kw = dict(PARAMS, num_threads=1)
    src = seer_envs.vector_env("pcs_v0", copies, **kw)
    env = seer_envs.vector_env("pcs_v0", copies, **dict(kw, num_threads=threads))
    twin = seer_envs.vector_env("pcs_v0", copies, **kw)
    acts = np.ones((copies, src.num_agents), np.int64)
    for v, seed in ((src, 0), (env, 5), (twin, 5)):
        v.reset(seed=seed)
        v.step(acts)
    return src, env, twin, acts


def test_damaged_events_into_a_vector_env_change_nothing():
    src, env, twin, acts = _vector_trio(3, 2)
    src.step(acts)
    raw = src.snapshot().to_bytes()
    with pytest.raises(ValueError, match="checksum mismatch"):
        env.restore(_damaged_events(raw))
    for _ in range(3):
        for x, y in zip(env.step(acts)[:4], twin.step(acts)[:4]):
            np.testing.assert_array_equal(x, y)
    env.restore(raw)                                # the good bytes: it continues as the source
    for _ in range(3):
        for x, y in zip(env.step(acts)[:4], src.step(acts)[:4]):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_checked_restores_in_a_row_continue_bit_for_bit(threads):
    """Each restore from bytes fills the spare heaps and swaps them in: the
    heaps it swapped out are the next one's spares, whatever they held."""
    src, _, acts = _twins(steps=2)
    env = seer_envs.make("pcs_v0", num_threads=threads, **PARAMS)
    env.reset(seed=9)
    rng = np.random.default_rng(threads)
    for k in range(4):
        raw = src.snapshot().to_bytes()
        env.restore(Snapshot.from_bytes(raw))
        for _ in range(int(rng.integers(1, 4))):    # the two go on alike, then src moves ahead alone
            a = rng.integers(0, 3, len(acts))
            for x, y in zip(env.step_arrays(a), src.step_arrays(a)):
                np.testing.assert_array_equal(x, y)
        src.step_arrays(acts)


def _phold(threads=1, seed=3):
    from seer_runtime import Engine
    from seer_runtime.models import phold
    eng = Engine(phold.PholdModel(64, 1.0, 1.0, 0.5, 1, 0), num_threads=threads, seed=seed)
    eng.init(0.0)
    eng.run_until(20.0)
    return eng


def test_engine_checked_import_is_all_or_nothing():
    from seer_envs.snapshot.whole import EVENT
    e1, e2, twin = _phold(1, 3), _phold(3, 8), _phold(1, 8)
    state = e1.export_state()
    bad = dict(state, events=state["events"].copy())
    ev = bad["events"].view(EVENT)
    ev["target"][len(ev) // 2] += 1                 # an event in another LP's queue
    for _ in range(2):                              # the second time into the spares the first one made
        with pytest.raises(ValueError, match="engine/events.*its target is LP"):
            e2.import_state(bad)
        assert e2.state_digest() == twin.state_digest() and e2.now == twin.now
    for eng in (e2, twin):
        eng.run_until(30.0)
    assert e2.state_digest() == twin.state_digest()
    for _ in range(3):                              # accepted: swapped in, spares swapped out
        e2.import_state(state)
        assert e2.state_digest() == e1.state_digest() and e2.now == e1.now
    for eng in (e1, e2):
        eng.run_until(40.0)
    assert e2.state_digest() == e1.state_digest()


# --- snapshots built or altered in memory -------------------------------------------


def _altered(snap, arrays=None, meta=None, drop=(), **fields):
    arr = {k: v for k, v in snap.arrays.items() if k not in drop}
    arr.update(arrays or {})
    return Snapshot(fields.get("scenario", snap.scenario), fields.get("params", snap.params), snap.kind,
                    snap.num_copies, fields.get("arrays_obj", arr),
                    snap.meta if meta is None else meta)


def _bad_cases(snap):
    a = snap.arrays
    st = snap.meta["rngs"][0]
    counts = a["engine/counts"]
    neg = counts.copy()
    i = int(np.flatnonzero(neg)[0])
    neg[i] = -1
    model = sorted(k for k in a if k.startswith("model/"))[0]
    return [
        (dict(meta={"rngs": [{"bit_generator": "PCG64", "state": "no"}]}), "seed generators are malformed"),
        (dict(meta={"rngs": [dict(st, bit_generator="MT19937")]}), "seed generators are malformed"),
        (dict(meta={"rngs": [{k: v for k, v in st.items() if k != "state"}]}), "seed generators are malformed"),
        (dict(meta={"rngs": [st, st]}), "seed generators do not match"),
        (dict(meta={}), "seed generators do not match"),
        (dict(meta=["not", "a", "dict"]), "seed generators do not match"),
        (dict(drop=(model,)), f"'{model}': missing"),
        (dict(arrays={model: a[model].astype(np.float32)}), f"'{model}': float32"),
        (dict(arrays={model: a[model].reshape(-1)[:-1]}), f"'{model}': "),
        (dict(arrays={"copies/obs": a["copies/obs"][:, :-1]}), "'copies/obs': "),
        (dict(arrays={"copies/rew": list(a["copies/rew"])}), "'copies/rew': a list, not an array"),
        (dict(arrays={"batch/param_values": np.where(np.arange(a["batch/param_values"].shape[1]) == 0, 0.0,
                                                     a["batch/param_values"])}),
         r"'batch/param_\*' \(each copy's parameters\): PCSConfig.max_cycles must be >= 1"),
        (dict(drop=("engine/now",)), "'engine/now': missing"),
        (dict(arrays={"engine/counts": counts.astype(np.int32)}), "'engine/counts': int32"),
        (dict(arrays={"engine/counts": counts[:-1]}), "'engine/counts': "),
        (dict(arrays={"engine/counts": neg}), "negative pending-event counts"),
        (dict(arrays={"engine/events": a["engine/events"][:-80]}), "'engine/events': "),
        (dict(arrays={"engine/rng_key": a["engine/rng_key"][:, None]}), "'engine/rng_key': "),
        (dict(arrays={"engine/next_time": a["engine/next_time"].astype(np.float32)}), "'engine/next_time': "),
        (dict(arrays={"engine/event_size": np.array([64], np.int64)}), "events of 64 bytes"),
        (dict(arrays_obj=[("engine/counts", counts)]), "arrays are a list, not a dict"),
        (dict(params=dict(snap.params, guard_channels=3)), "parameters differ"),
        (dict(params="not a dict"), "parameters differ"),
    ]


def test_snapshots_built_in_memory_are_checked_before_anything_changes():
    env, twin, acts = _twins(threads=(2, 1))
    src, _, _ = _twins(steps=6)
    snap = src.snapshot()
    for kw, match in _bad_cases(snap):
        with pytest.raises(ValueError, match=match):
            env.restore(_altered(snap, **kw))
        _steps_alike(env, twin, acts, n=1)
    # the snapshot's own meta altered in place: a seed generator of the wrong kind
    snap.meta["rngs"][0] = {"bit_generator": "PCG64", "state": {"state": "x", "inc": 1}}
    with pytest.raises(ValueError, match="seed generators are malformed"):
        env.restore(snap)
    _steps_alike(env, twin, acts)
    # and a good one still goes in
    good = src.snapshot()
    env.restore(good)
    for x, y in zip(env.step_arrays(acts), src.step_arrays(acts)):
        np.testing.assert_array_equal(x, y)


def test_a_never_reset_env_refuses_a_bad_snapshot_unstarted():
    src, _, acts = _twins(steps=4)
    snap = src.snapshot()
    env = seer_envs.make("pcs_v0", num_threads=1, **PARAMS)
    for kw, match in _bad_cases(snap)[:3] + _bad_cases(snap)[13:17]:
        with pytest.raises(ValueError, match=match):
            env.restore(_altered(snap, **kw))
        with pytest.raises(RuntimeError, match="reset"):
            env.snapshot()


def test_vector_snapshots_built_in_memory_are_checked_before_anything_changes():
    src, env, twin, acts = _vector_trio(2, 3)
    snap = src.snapshot()
    a = snap.arrays
    st = snap.meta["rngs"]
    cases = [
        (dict(meta={"rngs": st[:1]}), "seed generators do not match"),
        (dict(meta={"rngs": [st[0], {"bit_generator": "PCG64"}]}), "seed generators are malformed"),
        (dict(drop=("env/last_obs",)), "'env/last_obs': missing"),
        (dict(arrays={"env/last_obs": a["env/last_obs"][:1]}), "'env/last_obs': "),
        (dict(arrays={"env/waiting": a["env/waiting"].astype(np.int8)}), "'env/waiting': int8"),
        (dict(arrays={"engine/counts": a["engine/counts"][:-1]}), "'engine/counts': "),
    ]
    for kw2, match in cases:
        with pytest.raises(ValueError, match=match):
            env.restore(_altered(snap, **kw2))
        for x, y in zip(env.step(acts)[:4], twin.step(acts)[:4]):
            np.testing.assert_array_equal(x, y)
