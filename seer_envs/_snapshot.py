# SPDX-License-Identifier: BSD-3-Clause
"""Snapshots: a running env's whole state as bytes (:class:`Snapshot`), and
the capture and restore of a :class:`~seer_envs._batch.Batch`.

A step's outputs depend only on the LPs' states, every LP's pending events
(with their time, source and sequence keys), the RNG stream keys and
counters, the step counts and the episode statistics (docs/training.md,
"Snapshots").  A snapshot holds all of them: the engine's state
(``Engine.export_state``), every array of the scenario's model and copies,
the batch's counters and each copy's seed generator.  Restored into an env
of the same scenario and parameters, at any thread count, in any process on
a machine of the same architecture, it continues bit for bit.

Bytes: ``SEERSNAP``, the format version, a JSON header (scenario, parameters,
kind, copies, array names, dtypes and shapes, seed generators), the arrays,
and a CRC-32 of all that (it detects corruption, not tampering); corrupted,
truncated or mismatched bytes raise ``ValueError`` naming what is wrong.
"""

import json
import struct
import zlib

import numpy as np

MAGIC = b"SEERSNAP"
#: Bumped when the layout changes: other versions are refused, not guessed.
FORMAT_VERSION = 1
_HEAD = struct.Struct("<8sIQ")          # magic, version, header length
_CRC = struct.Struct("<I")              # CRC-32 of everything before it


class Snapshot:
    """A saved env state: ``scenario`` (its id), ``params`` (every config
    field), ``kind`` (``"env"`` or ``"vector"``), ``num_copies``, ``arrays``
    (name -> NumPy array) and ``meta`` (JSON-able).  ``to_bytes()`` /
    ``Snapshot.from_bytes(b)``; ``nbytes`` is the arrays' size."""

    def __init__(self, scenario, params, kind, num_copies, arrays, meta):
        self.scenario, self.params, self.kind = scenario, params, kind
        self.num_copies, self.arrays, self.meta = int(num_copies), arrays, meta

    @property
    def nbytes(self):
        return sum(a.nbytes for a in self.arrays.values())

    def __repr__(self):
        return (f"Snapshot({self.scenario!r}, {self.kind}, {self.num_copies} copies, "
                f"{self.nbytes / 1e6:.2f} MB)")

    def to_bytes(self):
        names = sorted(self.arrays)
        arrays = [np.ascontiguousarray(self.arrays[n]) for n in names]
        header = json.dumps({"scenario": self.scenario, "params": self.params, "kind": self.kind,
                             "num_copies": self.num_copies, "meta": self.meta,
                             "arrays": [[n, a.dtype.str, list(a.shape)] for n, a in zip(names, arrays)]},
                            sort_keys=True).encode()
        parts = [_HEAD.pack(MAGIC, FORMAT_VERSION, len(header)), header]
        parts += [memoryview(a).cast("B") for a in arrays if a.size]
        crc = 0
        for part in parts:             # one pass over the bytes, no copy of them
            crc = zlib.crc32(part, crc)
        parts.append(_CRC.pack(crc))
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, data):
        """The snapshot in ``data``; ``ValueError`` for anything that is not a
        whole, unmodified snapshot of this format version."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"a snapshot is bytes, got {type(data).__name__}")
        data = memoryview(data).cast("B")
        if len(data) < _HEAD.size + _CRC.size or bytes(data[:len(MAGIC)]) != MAGIC:
            raise ValueError("not a SEER snapshot (no SEERSNAP header, or truncated)")
        magic, version, hlen = _HEAD.unpack_from(data)
        if version != FORMAT_VERSION:
            raise ValueError(f"snapshot format version {version}; this SEER reads version {FORMAT_VERSION}")
        body = data[:-_CRC.size]
        if zlib.crc32(body) != _CRC.unpack_from(data, len(data) - _CRC.size)[0]:
            raise ValueError("snapshot checksum mismatch: the bytes are corrupted or truncated")
        try:
            head = json.loads(bytes(body[_HEAD.size:_HEAD.size + hlen]))
            off = _HEAD.size + hlen
            arrays = {}
            for name, dtype, shape in head["arrays"]:
                dt = np.dtype(dtype)
                n = dt.itemsize * int(np.prod(shape, dtype=np.int64))
                if off + n > len(body):
                    raise ValueError(f"array {name!r} runs past the end")
                # read-only views of the bytes: restoring copies them where they go
                arrays[name] = np.frombuffer(body, dt, int(np.prod(shape, dtype=np.int64)), off).reshape(shape)
                off += n
            if off != len(body):
                raise ValueError("bytes left over after the arrays")
            return cls(head["scenario"], head["params"], head["kind"], head["num_copies"], arrays, head["meta"])
        except (KeyError, TypeError, ValueError, json.JSONDecodeError) as e:
            raise ValueError(f"malformed snapshot: {e}") from None


def _model_arrays(copies):
    """name -> array of every NumPy array the model exposes (its state)."""
    out = {}
    for name in dir(copies.model):
        if name.startswith("__"):
            continue
        try:
            v = getattr(copies.model, name)
        except Exception:          # noqa: BLE001 - a property that needs a running engine
            continue
        if isinstance(v, np.ndarray):
            out[name] = v
    return out


def _copies_arrays(copies):
    """name -> array of the copies object's own arrays (outputs, deltas)."""
    return {k: v for k, v in vars(copies).items() if isinstance(v, np.ndarray)}


_BATCH = ("cycle", "done", "ep_return", "ep_length", "seeds_used", "max_cycles")


def capture(batch, scenario, params, kind, extra=None):
    """A :class:`Snapshot` of a started ``batch`` (``extra``: name -> array of
    the env kind's own state)."""
    arrays = {f"engine/{k}": v for k, v in batch.engine.export_state().items()}
    arrays.update({f"model/{k}": v.copy() for k, v in _model_arrays(batch.copies).items()})
    arrays.update({f"copies/{k}": v.copy() for k, v in _copies_arrays(batch.copies).items()})
    arrays.update({f"batch/{k}": np.array(getattr(batch, k), copy=True) for k in _BATCH})
    arrays.update({f"env/{k}": np.array(v, copy=True) for k, v in (extra or {}).items()})
    meta = {"rngs": batch.rng_states()}
    return Snapshot(scenario, params, kind, batch.num_copies, arrays, meta)


def check(snap, batch, scenario, params, kind):
    """``ValueError`` naming what differs between ``snap`` and this env."""
    if not isinstance(snap, Snapshot):
        raise TypeError(f"restore() takes a Snapshot (Snapshot.from_bytes(b) for bytes), "
                        f"got {type(snap).__name__}")
    if snap.scenario != scenario:
        raise ValueError(f"a snapshot of {snap.scenario!r} cannot be restored into {scenario!r}")
    if snap.kind != kind:
        raise ValueError(f"a snapshot of a {snap.kind} cannot be restored into a {kind}")
    if snap.num_copies != batch.num_copies:
        raise ValueError(f"a snapshot of {snap.num_copies} copies cannot be restored into "
                         f"{batch.num_copies} copies")
    if snap.params != params:
        diff = sorted(k for k in set(snap.params) | set(params) if snap.params.get(k) != params.get(k))
        shown = ", ".join(f"{k}: snapshot {snap.params.get(k)!r}, env {params.get(k)!r}" for k in diff[:4])
        raise ValueError(f"the snapshot's parameters differ from this env's ({shown})")
    want = {f"model/{k}": v for k, v in _model_arrays(batch.copies).items()}
    want.update({f"copies/{k}": v for k, v in _copies_arrays(batch.copies).items()})
    want.update({f"batch/{k}": np.asarray(getattr(batch, k)) for k in _BATCH})
    for name, ref in want.items():
        got = snap.arrays.get(name)
        if got is None or got.shape != ref.shape or got.dtype != ref.dtype:
            what = "missing" if got is None else f"{got.dtype} {got.shape}, want {ref.dtype} {ref.shape}"
            raise ValueError(f"snapshot array {name!r}: {what}")
    rngs = snap.meta.get("rngs") if isinstance(snap.meta, dict) else None
    if not isinstance(rngs, list) or len(rngs) != batch.num_copies:
        raise ValueError("the snapshot's seed generators do not match its copies")


def restore(snap, batch):
    """Put ``snap`` (already :func:`check`-ed) into ``batch``, which has an
    engine: the engine first (it checks its part before changing anything),
    then the arrays."""
    batch.engine.import_state({k[len("engine/"):]: v for k, v in snap.arrays.items()
                               if k.startswith("engine/")})
    for k, v in _model_arrays(batch.copies).items():
        v[...] = snap.arrays[f"model/{k}"]
    for k in _copies_arrays(batch.copies):
        setattr(batch.copies, k, snap.arrays[f"copies/{k}"].copy())
    for k in _BATCH:
        if k == "max_cycles":
            batch.set_max_cycles(snap.arrays["batch/max_cycles"])
        else:
            getattr(batch, k)[...] = snap.arrays[f"batch/{k}"]
    batch.set_rng_states(snap.meta["rngs"])
    batch._any_done = bool(batch.done.any())
    batch._aligned = False
    batch.broken = None
