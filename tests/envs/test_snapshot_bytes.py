# SPDX-License-Identifier: BSD-3-Clause
"""A snapshot's bytes: the digest (XXH3-64 of every byte before it), the
bytes a capture writes in place against the generic writer (the same
format, byte for byte), a snapshot changed after its capture written anew,
and ``Engine.export_state(out=...)``, which a capture writes through.  (Continuation through bytes, pickling and the bad-input fuzz:
test_snapshot.py.)"""

import copy
import json
import pickle
import struct

import numpy as np
import pytest

import seer_envs
from seer_envs import Snapshot
import xxhash

from seer_envs._snapbytes import empty, pack, seal

SPECS = seer_envs.envs()


def test_snapshot_digest_is_xxh3_of_every_byte_before_it():
    from seer_envs.snapshot import whole as S
    env = _mid_episode("pcs_v0")
    raw = env.snapshot().to_bytes()
    assert struct.unpack_from("<8sI", raw) == (S.MAGIC, 5)
    assert struct.unpack("<Q", raw[-8:])[0] == xxhash.xxh3_64_intdigest(raw[:-8])
    hand = Snapshot.from_bytes(raw)
    hand = Snapshot(hand.scenario, hand.params, hand.kind, hand.num_copies,
                    {k: v.copy() for k, v in hand.arrays.items()}, hand.meta)
    assert hand.to_bytes() == raw


def test_snapshot_pack_and_seal_write_the_format():
    rng = np.random.default_rng(1)
    for trial in range(60):
        head = rng.integers(0, 256, 8 * int(rng.integers(0, 4)), dtype=np.uint8).tobytes()
        parts = [rng.integers(0, 256, int(rng.integers(0, 5000 if trial % 2 else 20)),
                              dtype=np.uint8).tobytes() for _ in range(int(rng.integers(0, 6)))]
        out = pack(head, parts, 8)
        body = head + b"".join(p + bytes(-len(p) % 8) for p in parts)
        assert out == body + bytes(8)
        seal(out, xxhash.xxh3_64_intdigest(body))
        assert out[:-8] == body and struct.unpack("<Q", out[-8:])[0] == xxhash.xxh3_64_intdigest(body)
        b, view = empty(len(out))
        np.frombuffer(view, np.uint8)[:len(body)] = np.frombuffer(body, np.uint8)
        del view
        seal(b, xxhash.xxh3_64_intdigest(body))
        assert b == out
    with pytest.raises(ValueError, match="padded to 8"):
        pack(b"1234", [])
    with pytest.raises(ValueError, match="fewer than 8"):
        seal(b"1234", 0)


def _mid_episode(sid, steps=4, **over):
    p = dict(SPECS[sid].test_params, **over)
    env = seer_envs.make(sid, num_threads=1, **p)
    env.reset(seed=7)
    space, n = env.action_space(env.possible_agents[0]), len(env.possible_agents)
    rng = np.random.default_rng(3)
    for _ in range(steps):
        if hasattr(space, "n"):
            env.step_arrays(rng.integers(0, space.n, n))
        else:
            env.step_arrays(rng.uniform(-1, 1, (n,) + space.shape).astype(np.float32))
    return env


@pytest.mark.parametrize("sid", sorted(SPECS))
def test_snapshot_bytes_written_in_place_are_the_format(sid):
    """A capture writes its bytes in place; the generic writer (a snapshot
    built from copies of the same arrays) writes the same bytes."""
    env = _mid_episode(sid)
    snap = env.snapshot()
    raw = snap.to_bytes()
    assert snap.to_bytes() is raw                       # nothing copied a second time
    twin = Snapshot(snap.scenario, dict(snap.params), snap.kind, snap.num_copies,
                    {k: v.copy() for k, v in snap.arrays.items()}, dict(snap.meta))
    assert twin.to_bytes() == raw
    back = Snapshot.from_bytes(raw)
    assert back.to_bytes() is raw
    assert Snapshot.from_bytes(bytearray(raw)).to_bytes() == raw
    # the arrays are read-only views of the (immutable) bytes
    with pytest.raises(ValueError, match="read-only"):
        snap.arrays["engine/counts"][0] = 1
    with pytest.raises(ValueError, match="read-only"):
        back.arrays["engine/counts"][0] = 1
    assert snap.to_bytes() == raw and Snapshot.from_bytes(raw).arrays.keys() == snap.arrays.keys()


def test_a_snapshot_pickles_as_its_bytes():
    env = _mid_episode("pcs_v0")
    snap = env.snapshot()
    raw = snap.to_bytes()
    data = pickle.dumps(snap)
    assert len(raw) < len(data) < len(raw) + 200          # the bytes once, not again as arrays
    for back in (pickle.loads(data), copy.deepcopy(snap)):
        assert back.to_bytes() == raw
        assert (back.scenario, back.params, back.kind, back.meta) == (snap.scenario, snap.params, snap.kind,
                                                                      snap.meta)
    hand = Snapshot(snap.scenario, snap.params, snap.kind, snap.num_copies,
                    {k: v.copy() for k, v in snap.arrays.items()}, snap.meta)
    assert pickle.loads(pickle.dumps(hand)).to_bytes() == raw


def test_a_snapshot_changed_after_capture_is_written_anew():
    env = _mid_episode("pcs_v0")
    snap = env.snapshot()
    raw = snap.to_bytes()
    # an array replaced
    ret = snap.arrays["batch/ep_return"] + 1.0
    snap.arrays["batch/ep_return"] = ret
    changed = snap.to_bytes()
    assert changed != raw
    np.testing.assert_array_equal(Snapshot.from_bytes(changed).arrays["batch/ep_return"], ret)
    # an array added, then the set as it was again: the captured bytes
    snap.arrays["batch/ep_return"] = Snapshot.from_bytes(raw).arrays["batch/ep_return"]
    assert snap.to_bytes() == raw
    snap.arrays["extra/x"] = np.arange(3)
    assert "extra/x" in Snapshot.from_bytes(snap.to_bytes()).arrays
    # the header's fields
    snap2 = env.snapshot()
    raw2 = snap2.to_bytes()
    snap2.meta["note"] = "changed"
    assert Snapshot.from_bytes(snap2.to_bytes()).meta["note"] == "changed"
    snap2.meta.pop("note")
    assert snap2.to_bytes() == raw2
    snap2.params = dict(snap2.params, handoff_penalty=123.0)
    assert Snapshot.from_bytes(snap2.to_bytes()).params["handoff_penalty"] == 123.0
    # an array of the captured ones reshaped in place
    snap3 = env.snapshot()
    raw3 = snap3.to_bytes()
    ret = snap3.arrays["batch/ep_return"]
    ret.shape = (ret.size,)
    assert snap3.to_bytes() != raw3
    assert Snapshot.from_bytes(snap3.to_bytes()).arrays["batch/ep_return"].shape == (ret.size,)


def _phold_engine(threads=1):
    from seer_runtime import Engine
    from seer_runtime.models import phold
    eng = Engine(phold.PholdModel(64, 1.0, 1.0, 0.5, 1, 0), num_threads=threads, seed=3)
    eng.init(0.0)
    eng.run_until(20.0)
    return eng


def test_snapshot_engine_export_state_into_given_arrays():
    eng = _phold_engine()
    ref = eng.export_state()
    total = eng.pending()
    assert ref["events"].size == total * ref["event_size"][0] and total > 0
    out = {k: np.full_like(v, 7) for k, v in ref.items()}
    got = eng.export_state(out=out)
    for k, v in ref.items():
        assert got[k] is out[k]
        np.testing.assert_array_equal(got[k], v)
    # some parts given, the rest new
    part = eng.export_state(out={"counts": np.zeros_like(ref["counts"])})
    for k, v in ref.items():
        np.testing.assert_array_equal(part[k], v)


@pytest.mark.parametrize("bad, match", [
    ({"events": np.zeros(3, np.uint8)}, r"out\['events'\] must be a writable C-contiguous uint8 array"),
    ({"counts": np.zeros(64, np.int32)}, r"out\['counts'\] must be .* int64"),
    ({"rng_key": np.zeros((64, 1), np.uint64)}, r"out\['rng_key'\] must be .* shape \(64,\)"),
    ({"rng_ctr": np.zeros(128, np.uint64)[::2]}, r"out\['rng_ctr'\] must be a writable C-contiguous"),
    ({"next_time": [0.0] * 64}, r"out\['next_time'\] must be"),
    ({"nonsense": np.zeros(1)}, r"out\['nonsense'\] is not a part it writes"),
])
def test_snapshot_engine_export_state_names_a_bad_out_and_writes_nothing(bad, match):
    eng = _phold_engine()
    ref = eng.export_state()
    counts = np.full_like(ref["counts"], -1)
    with pytest.raises(ValueError, match=match):
        eng.export_state(out=dict(bad, counts=counts) if "counts" not in bad else bad)
    if "counts" not in bad:
        assert (counts == -1).all()                     # checked before anything is written
    ro = np.zeros_like(ref["now"])
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=r"out\['now'\] must be a writable"):
        eng.export_state(out={"now": ro})
    np.testing.assert_array_equal(eng.export_state()["events"], ref["events"])


def test_snapshot_header_pieces_are_the_json_of_the_whole():
    """The header is put together from pieces (the arrays' text kept): it is
    ``json.dumps`` of the whole, keys sorted, as the format says."""
    from seer_envs.snapshot import whole as S
    specs = [("a/b", np.dtype(np.float32), (3, 4)), ("c", np.dtype("<u8"), (0,)), ("d", np.dtype(bool), ())]
    for params, meta in (({"x": 1.5, "a": [1, 2], "z": None, "s": "é\""}, {"rngs": [{"s": 2**70, "b": "PCG64"}]}),
                         ({}, {}), ({"k": {"y": 1, "b": 2}}, {"rngs": []})):
        for kind, n in (("env", 1), ("vector", 12)):
            whole = {"scenario": "pcs_v0", "params": params, "kind": kind, "num_copies": n, "meta": meta,
                     "arrays": [[a, np.dtype(d).str, list(s)] for a, d, s in specs]}
            got = S._header("pcs_v0", params, kind, n, meta, specs)
            assert len(got) % 8 == 0 and got.rstrip(b" ") == json.dumps(whole, sort_keys=True).encode()
            assert json.loads(got) == whole
            assert S._fields("pcs_v0", params, kind, n, meta) == json.dumps(["pcs_v0", params, kind, n, meta],
                                                                            sort_keys=True)


def test_snapshot_model_array_names_are_kept_and_looked_up_again_when_stale():
    from seer_envs.snapshot import whole as S
    env = _mid_episode("pcs_v0")
    cp = env.unwrapped._batch.copies
    first = S._model_arrays(cp)
    assert cp._snapshot_model_names[0] is cp.model and set(cp._snapshot_model_names[1]) == set(first)
    again = S._model_arrays(cp)
    assert again.keys() == first.keys() and all(again[k] is getattr(cp.model, k) for k in again)
    # another model put in its place (another grid): its arrays, not the kept names' old ones
    other = seer_envs.make("pcs_v0", num_threads=1, **dict(SPECS["pcs_v0"].test_params, grid_width=5))
    other.reset(seed=0)
    cp.model, saved = other.unwrapped._batch.copies.model, cp.model
    try:
        got = S._model_arrays(cp)
        assert all(got[k] is getattr(cp.model, k) for k in got)
        assert cp._snapshot_model_names[0] is cp.model
    finally:
        cp.model = saved
