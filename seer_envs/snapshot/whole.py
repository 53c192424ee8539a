# SPDX-License-Identifier: BSD-3-Clause
"""Snapshots: a running env's whole state as bytes (:class:`Snapshot`), and
the capture and restore of a :class:`~seer_envs.layout.batch.Batch`.

A step's outputs depend only on the LPs' states, every LP's pending events
(with their time, source and sequence keys), the RNG stream keys and
counters, the step counts and the episode statistics (docs/training.md,
"Snapshots").  A snapshot holds all of them: the engine's state
(``Engine.export_state``), every array of the scenario's model and copies,
the batch's counters and each copy's seed generator.  Restored into an env
of the same scenario and parameters, at any thread count, in any process on
a machine of the same architecture, it continues bit for bit.

Bytes: ``SEERSNAP``, the format version, a JSON header (scenario,
parameters, kind, copies, array names, dtypes and shapes, seed generators),
the arrays (each 8-byte aligned), and the XXH3-64 digest of every byte
before it (the ``xxhash`` package).  It detects accidents (a flipped bit, a
truncated or spliced file), not tampering: anyone can write a matching
digest.  So whatever the digest says, a restore checks everything the
engine and the env will trust before anything changes (every array's dtype
and shape, the counts against the event bytes, each event in its own
copy's LPs at a finite time no earlier than its copy's clock, the step
counts inside the episode): a hand-built or altered snapshot gets a
``ValueError`` naming the array, never a crash or a stalled step.
The snapshot of a whole env or vector env is written straight into its
bytes (:func:`capture`), so ``to_bytes()`` costs nothing and its arrays
are read-only views of them.  The events stay raw: packing them (the
narrowest exact width per field and LP: 48% of the bytes for PCS 64x64)
was measured, and its encoding and decoding cost more than the copies and
checksum passes it saved (docs/guide.md, the snapshot benchmark).
"""

import functools
import json
import math
import struct

import numpy as np
import xxhash

from seer_envs._snapbytes import empty, pack, place, seal

MAGIC = b"SEERSNAP"
#: Bumped when the layout changes: other versions are refused, not guessed.
#: 2: arrays 8-byte aligned, a 64-bit position-weighted sum instead of CRC-32.
#: 3: the pending events summed apart (checked as a restore copies them).
#: 4: one XXH3-64 digest of every byte (the position-weighted sums missed
#: some pairs of flipped bits).
#: 5: each copy's world (its per-copy parameters) in ``batch/param_*``.
FORMAT_VERSION = 5
_HEAD = struct.Struct("<8sIIQ")         # magic, version, 0, header length (padded to 8)
_SUM = struct.Struct("<Q")              # XXH3-64 of every byte before it
_CORRUPT = "snapshot checksum mismatch: the bytes are corrupted or truncated"
_digest = xxhash.xxh3_64_intdigest


def _pad8(n):
    return -n % 8


class Snapshot:
    """A saved env state: ``scenario`` (its id), ``params`` (every config
    field), ``kind`` (the env's, whatever the number of copies: ``"env"``,
    a single env; ``"vector"``, every copy of a vector env's one engine; or
    ``"copies"``: single copies), ``num_copies``, ``arrays`` (name -> NumPy
    array; read-only views of the bytes in a snapshot an env took or
    ``from_bytes`` read) and ``meta`` (JSON-able).  ``to_bytes()`` /
    ``Snapshot.from_bytes(b)``; ``nbytes`` is the arrays' size."""

    def __init__(self, scenario, params, kind, num_copies, arrays, meta):
        self.scenario, self.params, self.kind = scenario, params, kind
        self.num_copies, self.arrays, self.meta = int(num_copies), arrays, meta
        # The bytes these arrays are views of (capture, from_bytes), with the
        # arrays and header fields they hold: to_bytes returns them while
        # nothing here has been replaced or changed (_keep, _unchanged).
        self._raw = self._head = self._views = None

    @property
    def nbytes(self):
        return sum(a.nbytes for a in self.arrays.values())

    def __repr__(self):
        return (f"Snapshot({self.scenario!r}, {self.kind}, {self.num_copies} copies, "
                f"{self.nbytes / 1e6:.2f} MB)")

    def __reduce__(self):
        # Pickled as its bytes: once, and without a copy for a captured
        # snapshot (its arrays are views of them).
        return (Snapshot.from_bytes, (self.to_bytes(),))

    def _layout(self):
        """(array names in order, the arrays contiguous, the JSON header)."""
        arrays = self.arrays
        names = sorted(arrays)
        arrays = [np.ascontiguousarray(arrays[n]) for n in names]
        header = _header(self.scenario, self.params, self.kind, self.num_copies, self.meta,
                         [(n, a.dtype, a.shape) for n, a in zip(names, arrays)])
        return names, arrays, header

    def _keep(self, raw, arrays, texts=None):
        """Remember that ``raw`` holds exactly this snapshot (``arrays`` its
        views; ``texts``: :func:`_texts` of its params and meta, if known)."""
        self._raw, self._views = raw, {k: (v, v.shape, v.dtype) for k, v in arrays.items()}
        self._head = _fields(self.scenario, self.params, self.kind, self.num_copies, self.meta, texts)

    def _unchanged(self):
        """Whether the arrays and the header's fields are still those of
        ``self._raw`` (the arrays the same objects, of the same shapes and
        dtypes; the fields as the header wrote them)."""
        views, arrays = self._views, self.arrays
        if len(arrays) != len(views) or any(arrays.get(k) is not v or v.shape != shape or v.dtype != dt
                                            for k, (v, shape, dt) in views.items()):
            return False
        return _fields(self.scenario, self.params, self.kind, self.num_copies, self.meta) == self._head

    def to_bytes(self):
        """The snapshot as bytes: one copy of the arrays (each 8-byte
        aligned) behind a JSON header, then the XXH3-64 digest of every byte
        before it."""
        if self._raw is not None and self._unchanged():
            return self._raw            # already these bytes (capture or from_bytes)
        names, arrays, header = self._layout()
        header += b" " * _pad8(len(header))
        parts = [memoryview(a.reshape(-1)).cast("B") for a in arrays if a.size]
        raw = pack(_HEAD.pack(MAGIC, FORMAT_VERSION, 0, len(header)) + header, parts, _SUM.size)
        seal(raw, _digest(memoryview(raw)[:-_SUM.size]))
        return raw

    @classmethod
    def from_bytes(cls, data):
        """The snapshot in ``data`` (its arrays are read-only views of it);
        ``ValueError`` for anything that is not a whole, unmodified
        snapshot of this format version (its digest is checked over every
        byte first)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"a snapshot is bytes, got {type(data).__name__}")
        data = memoryview(data).cast("B")
        if len(data) < 16 or bytes(data[:len(MAGIC)]) != MAGIC:
            raise ValueError("not a SEER snapshot (no SEERSNAP header, or truncated)")
        version = struct.unpack_from("<I", data, len(MAGIC))[0]
        if version != FORMAT_VERSION:
            raise ValueError(f"snapshot format version {version}; this SEER reads version {FORMAT_VERSION}")
        if len(data) < _HEAD.size + _SUM.size:
            raise ValueError("not a SEER snapshot (no SEERSNAP header, or truncated)")
        n = len(data) - _SUM.size
        body = data[:n]
        if _digest(body) != _SUM.unpack_from(data, n)[0] or n % 8:
            raise ValueError(_CORRUPT)
        _, _, _, hlen = _HEAD.unpack_from(data)
        try:
            if _HEAD.size + hlen > n:
                raise ValueError("the header runs past the end")
            head = json.loads(bytes(body[_HEAD.size:_HEAD.size + hlen]))
            off = _HEAD.size + hlen
            arrays = {}
            for name, dtype, shape in head["arrays"]:
                dt = np.dtype(dtype)
                count = math.prod(shape)
                nb = dt.itemsize * count
                if count < 0 or off + nb > n:
                    raise ValueError(f"array {name!r} runs past the end")
                # read-only views of the bytes: restoring copies them where they go
                arrays[name] = np.frombuffer(body, dt, count, off).reshape(shape)
                if nb:
                    off += nb + _pad8(nb)
            if off != n:
                raise ValueError("bytes left over after the arrays")
            snap = cls(head["scenario"], head["params"], head["kind"], head["num_copies"], arrays, head["meta"])
        except (KeyError, TypeError, ValueError, OverflowError, json.JSONDecodeError) as e:
            raise ValueError(f"malformed snapshot: {e}") from None
        if type(data.obj) is bytes and len(data) == len(data.obj):
            snap._keep(data.obj, arrays)
        return snap


def _model_arrays(copies):
    """name -> array of every NumPy array the model exposes (its state).

    The names are looked up once per model (``dir()`` and a getattr of
    every attribute, three times a snapshot and restore) and kept on
    ``copies``; the scan runs again if the model was replaced, a kept name
    stops being an array, or a property raised (one that needs a running
    engine: its array may appear later)."""
    model = copies.model
    kept = copies.__dict__.get("_snapshot_model_names")
    if kept is not None and kept[0] is model:
        out = {name: getattr(model, name) for name in kept[1]}
        if all(isinstance(v, np.ndarray) for v in out.values()):
            return out
    out, whole = {}, True
    for name in dir(model):
        if name.startswith("__"):
            continue
        try:
            v = getattr(model, name)
        except Exception:          # noqa: BLE001 - a property that needs a running engine
            whole = False
            continue
        if isinstance(v, np.ndarray):
            out[name] = v
    if whole:
        copies._snapshot_model_names = (model, tuple(out))
    return out


def _copies_arrays(copies):
    """name -> array of the copies object's own arrays (outputs, deltas)."""
    return {k: v for k, v in vars(copies).items() if isinstance(v, np.ndarray)}


_BATCH = ("cycle", "done", "ep_return", "ep_length", "seeds_used")
#: Each copy's world (seer_envs.episode.worlds): ``(copies, fields)`` float64, ``max_cycles`` first.
_WORLDS = ("param_base", "param_values", "param_pending")
#: The copies' output arrays (a step hands them out: a restore puts new ones in place).
_COPY_ARRAYS = ("obs", "rew", "_term")


def _texts(params, meta):
    """``params`` and ``meta`` as JSON text (keys sorted)."""
    return json.dumps(params, sort_keys=True), json.dumps(meta, sort_keys=True)


def _fields(scenario, params, kind, num_copies, meta, texts=None):
    """The header's fields other than the arrays, as JSON text (to tell
    whether they changed): ``json.dumps([scenario, params, kind,
    num_copies, meta], sort_keys=True)``, from ``texts`` (:func:`_texts`)
    when given."""
    p, m = texts or _texts(params, meta)
    return f"[{json.dumps(scenario)}, {p}, {json.dumps(kind)}, {int(num_copies)}, {m}]"


@functools.lru_cache(maxsize=64)
def _specs_text(specs):
    """The header's ``"arrays"`` (name, dtype, shape per array) as JSON text."""
    return json.dumps([[n, np.dtype(d).str, [int(x) for x in s]] for n, d, s in specs])


def _header(scenario, params, kind, num_copies, meta, specs, texts=None):
    """The JSON header (padded to 8 bytes with spaces) of arrays ``specs``
    (name, dtype, shape), in name order: ``json.dumps`` of the dict of the
    fields and ``"arrays"``, keys sorted, put together from pieces (the
    arrays' text is kept: an env's are the same at every snapshot but for
    the events' count)."""
    p, m = texts or _texts(params, meta)
    header = (f'{{"arrays": {_specs_text(tuple(specs))}, "kind": {json.dumps(kind)}, "meta": {m}, '
              f'"num_copies": {int(num_copies)}, "params": {p}, "scenario": {json.dumps(scenario)}}}').encode()
    return header + b" " * _pad8(len(header))


def capture(batch, scenario, params, kind, extra=None):
    """A :class:`Snapshot` of a started ``batch`` (``extra``: name -> array of
    the env kind's own state).

    Written straight into its bytes: the layout first (the shapes are
    known: the engine tells its pending events' count), then every array
    into its place, the engine's through ``export_state(out=...)``, then the
    digest.  The snapshot's arrays are read-only views of those bytes, and
    ``to_bytes()`` returns them without a copy."""
    eng = batch.engine
    n, total = eng.num_lps, eng.pending()
    src = {}                            # name -> (dtype, shape, the array to copy or None: the engine's)
    for k, dt, size in (("counts", np.int64, n), ("events", np.uint8, total * EVENT.itemsize),
                        ("rng_key", np.uint64, n), ("rng_ctr", np.uint64, n), ("emit_seq", np.uint64, n),
                        ("next_time", np.float64, n), ("now", np.float64, 1), ("tallies", np.uint64, 2),
                        ("event_size", np.int64, 1)):
        src[f"engine/{k}"] = (np.dtype(dt), (size,), None)
    parts = [("model", _model_arrays(batch.copies)), ("copies", _copies_arrays(batch.copies)),
             ("batch", {k: np.asarray(getattr(batch, k)) for k in _BATCH + _WORLDS}),
             ("env", {k: np.asarray(v) for k, v in (extra or {}).items()})]
    for group, arrays in parts:
        for k, v in arrays.items():
            src[f"{group}/{k}"] = (v.dtype, v.shape, v)
    meta = {"rngs": batch.rng_states()}
    names = sorted(src)
    texts = _texts(params, meta)
    header = _header(scenario, params, kind, batch.num_copies, meta, [(k, src[k][0], src[k][1]) for k in names],
                     texts)
    offs, off = [], _HEAD.size + len(header)
    for k in names:
        nb = src[k][0].itemsize * math.prod(src[k][1])
        offs.append(off)
        if nb:
            off += nb + _pad8(nb)
    raw, view = empty(off + _SUM.size)
    head = _HEAD.pack(MAGIC, FORMAT_VERSION, 0, len(header)) + header
    items, out = [(0, len(head), head)], {}
    for k, o in zip(names, offs):
        dt, shape, v = src[k]
        items.append((o, dt.itemsize * math.prod(shape), None if v is None else np.ascontiguousarray(v)))
    place(view, items)                  # the header, the arrays we have, every padding
    buf = np.frombuffer(view, np.uint8)
    for k, o in zip(names, offs):
        dt, shape, v = src[k]
        if v is None:                   # the engine's parts: it writes them itself
            out[k[len("engine/"):]] = buf[o:o + dt.itemsize * math.prod(shape)].view(dt)
    eng.export_state(out=out)
    del buf, view, out                  # no writable window on the bytes stays
    seal(raw, _digest(memoryview(raw)[:-_SUM.size]))
    arrays = {k: np.frombuffer(raw, src[k][0], math.prod(src[k][1]), o).reshape(src[k][1])
              for k, o in zip(names, offs)}
    snap = Snapshot(scenario, params, kind, batch.num_copies, arrays, meta)
    snap._keep(raw, arrays, texts)
    return snap


#: The engine's parts of an env's snapshot: dtype, and length (None: the
#: events' bytes, ``counts.sum()`` events; an int: that many; "n": one per LP).
_ENGINE = {"counts": (np.int64, "n"), "events": (np.uint8, None), "rng_key": (np.uint64, "n"),
           "rng_ctr": (np.uint64, "n"), "emit_seq": (np.uint64, "n"), "next_time": (np.float64, "n"),
           "now": (np.float64, 1), "tallies": (np.uint64, 2), "event_size": (np.int64, 1)}


def copies_text(n):
    """``"1 copy"``, ``"3 copies"``."""
    return "1 copy" if n == 1 else f"{n} copies"


def check_array(snap_arrays, name, dtype, shape):
    """``snap_arrays[name]``, or ``ValueError`` naming it when it is missing,
    not an array, or not of ``dtype`` and ``shape``."""
    got = snap_arrays.get(name)
    if not isinstance(got, np.ndarray) or got.shape != shape or got.dtype != dtype:
        what = ("missing" if got is None else f"a {type(got).__name__}, not an array"
                if not isinstance(got, np.ndarray) else f"{got.dtype} {got.shape}")
        raise ValueError(f"snapshot array {name!r}: {what}, want {np.dtype(dtype)} {shape}")
    return got


def check(snap, batch, scenario, params, kind):
    """Everything :func:`restore` needs of ``snap``, checked against this
    env before anything changes: ``ValueError`` naming what differs.
    Returns the snapshot's seed generators (one per copy)."""
    if not isinstance(snap, Snapshot):
        raise TypeError(f"restore() takes a Snapshot (Snapshot.from_bytes(b) for bytes), "
                        f"got {type(snap).__name__}")
    if snap.scenario != scenario:
        raise ValueError(f"a snapshot of {snap.scenario!r} cannot be restored into {scenario!r}")
    if snap.kind != kind:
        raise ValueError(f"a snapshot of a {snap.kind} cannot be restored into a {kind}")
    if snap.num_copies != batch.num_copies:
        raise ValueError(f"a snapshot of {copies_text(snap.num_copies)} cannot be restored into "
                         f"{copies_text(batch.num_copies)}")
    _same_params(snap, params, batch.worlds.fields)
    arrays = snap.arrays
    if not isinstance(arrays, dict):
        raise ValueError(f"the snapshot's arrays are a {type(arrays).__name__}, not a dict")
    want = {f"model/{k}": v for k, v in _model_arrays(batch.copies).items()}
    want.update({f"copies/{k}": v for k, v in _copies_arrays(batch.copies).items()})
    want.update({f"batch/{k}": np.asarray(getattr(batch, k)) for k in _BATCH + _WORLDS})
    for name, ref in want.items():
        check_array(arrays, name, ref.dtype, ref.shape)
    check_steps(arrays["batch/cycle"], check_worlds(batch, arrays, ""), "")
    n = batch.copies.model.num_lps
    counts = check_array(arrays, "engine/counts", np.int64, (n,))
    if (counts < 0).any():
        raise ValueError("snapshot array 'engine/counts': negative pending-event counts")
    for k, (dt, size) in _ENGINE.items():
        size = n if size == "n" else int(counts.sum()) * EVENT.itemsize if size is None else size
        check_array(arrays, f"engine/{k}", dt, (size,))
    if int(arrays["engine/event_size"][0]) != EVENT.itemsize:
        raise ValueError(f"snapshot array 'engine/event_size': events of {int(arrays['engine/event_size'][0])} "
                         f"bytes, this build's are {EVENT.itemsize}")
    if not np.isfinite(arrays["engine/now"][0]):
        raise ValueError(f"snapshot array 'engine/now': {float(arrays['engine/now'][0])!r} is not a finite time")
    if batch.engine is None:
        # no engine yet: the restore starts one (a change), so the events are
        # checked here first, as the engine's import would check them
        check_queues(arrays["engine/events"], counts, np.arange(n), lp_clocks(batch, arrays["batch/cycle"]), n)
    return generators(snap, batch.num_copies)


def check_steps(cycle, max_cycles, label):
    """``ValueError`` unless every copy's step count lies in its episode
    (``0 <= cycle <= max_cycles``, ``max_cycles >= 1``): a copy's clock,
    ``cycle * dt``, bounds its events' times from below."""
    if (max_cycles < 1).any():
        raise ValueError(f"{label}snapshot array 'batch/param_values': max_cycles < 1 ({int(max_cycles.min())})")
    if (cycle < 0).any() or (cycle > max_cycles).any():
        raise ValueError(f"{label}snapshot array 'batch/cycle': step counts outside [0, max_cycles] "
                         f"({cycle.tolist()[:8]}, max_cycles {max_cycles.tolist()[:8]})")


def lp_clocks(batch, cycle):
    """Each LP's clock: ``cycle[c] * dt`` of the copy ``c`` it belongs to
    (no pending event of a copy is earlier: a step runs every event before
    its end)."""
    cp = batch.copies
    t = np.asarray(cycle, np.int64) * batch.config.dt      # as the steps compute k * dt
    out = np.empty(cp.num_lps, np.float64)
    for base, size, _ in cp._blocks:
        out[base:base + len(t) * size] = np.repeat(t, size)
    return out


def check_queues(events, counts, lps, clocks, n):
    """What ``Engine.import_state`` checks of every event, in NumPy (for a
    restore that must start an engine first): in its own LP's queue (``lps``
    the engine ids, in order), from an LP or the environment, at a finite
    time no earlier than its LP's clock, each queue in heap order."""
    ev = events.view(EVENT)
    if not len(ev):
        return
    counts = np.asarray(counts, np.int64)
    owner = np.repeat(np.asarray(lps, np.int64), counts)
    clock = np.repeat(np.asarray(clocks, np.float64), counts)
    start = np.repeat(np.cumsum(counts) - counts, counts)
    j = np.arange(len(ev)) - start                  # the index in its queue
    bad = ev["target"] != owner
    bad |= (ev["src"] != ENV_SOURCE) & (ev["src"] >= n)
    bad |= ~(ev["time"] >= clock) | np.isinf(ev["time"])
    par = np.where(j > 0, start + (j - 1) // 2, np.arange(len(ev)))
    a, p = ev, ev[par]
    before = (a["time"] < p["time"]) | ((a["time"] == p["time"]) & (
        (a["src"] < p["src"]) | ((a["src"] == p["src"]) & (a["seq"] < p["seq"]))))
    bad |= (j > 0) & before
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"snapshot array 'engine/events': event {int(j[i])} of LP {int(owner[i])} cannot be "
                         f"trusted (target {int(ev['target'][i])}, source {int(ev['src'][i])}, time "
                         f"{float(ev['time'][i])!r}, its LP's clock {float(clock[i])!r}, or out of heap order)")


def restore(snap, batch, gens):
    """Put ``snap`` (:func:`check`-ed: ``gens`` its seed generators) into
    ``batch``, which has an engine: what needs new memory first, then the
    engine, which checks its part (every event, against each copy's clock)
    before changing anything, then the arrays, which cannot fail."""
    arrays = snap.arrays
    # Arrays a step handed out stay the caller's: those come anew (before
    # anything changes: new memory), the copies' own ones are written in place.
    fresh = {k: arrays[f"copies/{k}"].copy() for k in _copies_arrays(batch.copies) if k in _COPY_ARRAYS}
    state = {k[len("engine/"):]: v for k, v in arrays.items() if k.startswith("engine/")}
    batch.engine.import_state(state, min_time=lp_clocks(batch, arrays["batch/cycle"]))
    for k, v in _model_arrays(batch.copies).items():
        v[...] = arrays[f"model/{k}"]
    for k, v in _copies_arrays(batch.copies).items():
        if k in fresh:
            setattr(batch.copies, k, fresh[k])
        else:
            v[...] = arrays[f"copies/{k}"]
    for k in _BATCH:
        getattr(batch, k)[...] = arrays[f"batch/{k}"]
    batch._set_worlds(*(arrays[f"batch/{k}"] for k in _WORLDS))      # checked: cannot fail
    batch.seed_rngs = gens
    batch._any_done = bool(batch.done.any())
    batch._aligned = False


#: One engine event, as contract.pxd lays it out (80 bytes).
EVENT = np.dtype([("time", "<f8"), ("seq", "<u8"), ("src", "<u4"), ("target", "<u4"),
                  ("kind", "<i4"), ("_reserved", "<i4"), ("data", "<i8", (6,))])
ENV_SOURCE = 0xFFFFFFFF


def generators(snap, n):
    """The snapshot's ``n`` seed generators (``ValueError`` when they do not fit)."""
    rngs = snap.meta.get("rngs") if isinstance(snap.meta, dict) else None
    if not isinstance(rngs, list) or len(rngs) != n:
        raise ValueError("the snapshot's seed generators do not match its copies")
    out = []
    for st in rngs:
        g = np.random.default_rng(0)
        try:
            g.bit_generator.state = st
        except (TypeError, ValueError, KeyError) as e:
            raise ValueError(f"the snapshot's seed generators are malformed ({e})") from None
        out.append(g)
    return out


def _same_params(snap, params, fields):
    """The snapshot's parameters are the env's, the per-copy ``fields`` aside
    (each copy's values are in the snapshot's world arrays)."""
    sp = {k: v for k, v in snap.params.items() if k not in fields} if isinstance(snap.params, dict) else {}
    ep = {k: v for k, v in params.items() if k not in fields}
    if sp != ep:
        diff = sorted(k for k in set(sp) | set(ep) if sp.get(k) != ep.get(k))
        shown = ", ".join(f"{k}: snapshot {sp.get(k)!r}, env {ep.get(k)!r}" for k in diff[:4])
        raise ValueError(f"the snapshot's parameters differ from this env's ({shown or snap.params!r})")


def check_worlds(batch, arrays, label):
    """Each copy's world in the snapshot ``arrays`` is a valid config of
    this env (the config's own error, named); returns each copy's
    ``max_cycles``."""
    base, values, pending = (arrays[f"batch/{k}"] for k in _WORLDS)
    w = batch.worlds
    try:
        for b, v, p in zip(base, values, pending):
            w.config_for(v)
            w.config_for(b)
            w.config_for(np.where(np.isnan(p), b, p))
    except ValueError as e:
        raise ValueError(f"{label}snapshot arrays 'batch/param_*' (each copy's parameters): {e}") from None
    return values[:, 0].astype(np.int64)
