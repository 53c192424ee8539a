# SPDX-License-Identifier: BSD-3-Clause
"""Snapshots of single copies (:mod:`seer_envs.snapshot.whole` holds the format
and the engine-wide capture and restore): a copy's state cut out of a
batch, and put into any slot of any batch of the same scenario.

A copy's state is kept in the coordinates of a single env (a batch of one):
its LPs numbered block by block from 0, its model rows as a single env's
arrays, its batch counters with a leading axis of 1.  A single env's
snapshot is therefore already one copy's state, and a copy's state moves
into any slot of any batch of the same scenario and parameters.  Moving
keeps the copy's RNG stream keys: they derive from its episode seed and
its entity numbers, not from where its LPs sit, so the copy draws what it
would have drawn where it was.
"""

import math

import numpy as np

from seer_envs.snapshot.whole import (_BATCH, _COPY_ARRAYS, _WORLDS, ENV_SOURCE, EVENT, Snapshot,
                                 _model_arrays, _same_params, check_array, check_queues, check_steps,
                                 check_worlds)

_ENGINE_LPS = ("counts", "events", "rng_key", "rng_ctr", "emit_seq")


def copy_lps(cp, c):
    """Engine LP ids of copy ``c`` of ``cp``, in a single env's LP order."""
    return np.concatenate([np.arange(lo, hi, dtype=np.int64) for lo, hi, _ in cp.copy_blocks(c)])


def _single_moves(cp, c, to_slot):
    """``(lo, hi, new lo)`` per block: copy ``c``'s engine ids to a single
    env's (``to_slot=False``), or back (``True``)."""
    out, base = [], 0
    for lo, hi, _ in cp.copy_blocks(c):
        out.append((base, base + hi - lo, lo) if to_slot else (lo, hi, base))
        base += hi - lo
    return out


def _move_ids(x, moves):
    """LP ids ``x`` moved range by range; the environment source stays.
    Returns the new ids (int64) and whether each id was in a range."""
    out = x.astype(np.int64)
    hit = np.zeros(x.shape, bool)
    for lo, hi, new in moves:
        m = (x >= lo) & (x < hi)
        out[m] += new - lo
        hit |= m
    return out, hit


def move_events(events, moves, payload_lps):
    """Events (raw bytes, a fresh writable array) with their LP ids moved:
    source, target and the payload words ``payload_lps`` declares.
    ``ValueError`` for an id outside the copy (a damaged or foreign state)."""
    if events.size % EVENT.itemsize:
        raise ValueError("the event bytes are not whole events")
    ev = events.view(EVENT)
    if not len(ev):
        return events
    tgt, ok = _move_ids(ev["target"], moves)
    if not ok.all():
        raise ValueError(f"an event targets LP {int(ev['target'][~ok][0])}, outside its copy")
    src, ok = _move_ids(ev["src"], moves)
    env = ev["src"] == ENV_SOURCE
    if not (ok | env).all():
        raise ValueError(f"an event comes from LP {int(ev['src'][~(ok | env)][0])}, outside its copy")
    ev["target"] = tgt
    ev["src"] = np.where(env, ENV_SOURCE, src)
    for kind, words in payload_lps.items():
        sel = ev["kind"] == kind
        if sel.any():
            for w in words:
                v, ok = _move_ids(ev["data"][sel, w], moves)
                if not ok.all():
                    raise ValueError(f"an event of kind {kind} names LP {int(ev['data'][sel, w][~ok][0])} "
                                     "in its payload, outside its copy")
                col = ev["data"][:, w]
                col[sel] = v
                ev["data"][:, w] = col
    return events


def _rows(cp, name, shape, c, num_copies):
    """Index of copy ``c``'s rows of model array ``name``."""
    segs = cp.array_layout(name, shape, num_copies)
    if len(segs) == 1:
        b, n = segs[0]
        return slice(b + c * n, b + (c + 1) * n)
    return np.concatenate([np.arange(b + c * n, b + (c + 1) * n) for b, n in segs])


def _block_sizes(cp):
    return [n for _, n, _ in cp._blocks]


def capture_copy(batch, c):
    """Copy ``c`` of a started ``batch``: name -> array, in a single env's
    coordinates (the names and shapes of a single env's snapshot)."""
    cp, C = batch.copies, batch.num_copies
    eng = batch.engine.export_lps(copy_lps(cp, c))
    out = {f"engine/{k}": eng[k] for k in _ENGINE_LPS}
    move_events(out["engine/events"], _single_moves(cp, c, False), cp.payload_lps)
    out["engine/now"] = np.array([batch.cycle[c] * batch.config.dt], np.float64)
    out["engine/tallies"] = np.array([int(eng["inject_seq"][0]), 0], np.uint64)
    out["engine/event_size"] = np.array([EVENT.itemsize], np.int64)
    sizes = _block_sizes(cp)
    for k, v in _model_arrays(cp).items():
        rows = v[_rows(cp, k, v.shape, c, C)]
        if k in cp.index_arrays:
            rows = rows - c * sizes[cp.index_arrays[k]]
        out[f"model/{k}"] = np.array(rows, copy=True)
    a = cp.agent_rows(c)
    for k in _COPY_ARRAYS + tuple(cp.agent_arrays):
        out[f"copies/{k}"] = getattr(cp, k)[a].copy()
    for k in _BATCH + _WORLDS:
        out[f"batch/{k}"] = np.array(getattr(batch, k)[c:c + 1], copy=True)
    return out


def env_copy_state(snap):
    """The one copy's state in a single env's snapshot (``kind == "env"``)."""
    return {k: v for k, v in snap.arrays.items() if not k.startswith("env/")}


def copy_states(snap, cp):
    """The per-copy states of a snapshot of copies, or of one copy's
    engine (a single env's, or a one-copy vector env's with its last
    observation): its model arrays cut to one copy's rows by ``cp``'s
    layout."""
    if snap.kind in ("env", "vector"):
        if snap.num_copies != 1:
            raise ValueError(f"a snapshot of a {snap.kind} of {snap.num_copies} copies holds no single copy")
        st = env_copy_state(snap)
        for k, v in list(st.items()):
            if k.startswith("model/"):
                try:
                    st[k] = v[_rows(cp, k[len("model/"):], v.shape, 0, 1)]
                except NotImplementedError:
                    pass                # not an array of this scenario: named by the checks
        if snap.kind == "vector":       # (1, agents, ...): the copy's row; anything else is named by the checks
            lo = snap.arrays.get("env/last_obs")
            st["env/last_obs"] = lo[0] if isinstance(lo, np.ndarray) and lo.ndim > 1 and len(lo) == 1 else lo
        return [st]
    if snap.kind != "copies":
        raise ValueError(f"a snapshot of a {snap.kind} holds no single copies")
    n = snap.num_copies
    states = [{} for _ in range(n)]
    for name, v in snap.arrays.items():
        i, _, rest = name.partition("/")
        try:
            states[int(i)][rest] = v
        except (ValueError, IndexError):
            raise ValueError(f"malformed snapshot of copies: array {name!r}") from None
    return states


def capture_copies(parts, scenario, params, source_ids, rngs, extras):
    """A snapshot of single copies: ``parts`` their states, ``extras`` one
    dict (env kind's own rows) per copy."""
    arrays = {}
    for i, (st, ex) in enumerate(zip(parts, extras)):
        arrays.update({f"{i}/{k}": v for k, v in st.items()})
        arrays.update({f"{i}/env/{k}": np.array(v, copy=True) for k, v in ex.items()})
    meta = {"rngs": rngs, "copies": [int(c) for c in source_ids]}
    return Snapshot(scenario, params, "copies", len(parts), arrays, meta)


def check_params(snap, scenario, params, fields):
    """Scenario and parameters (the per-copy ``fields`` aside: a copy keeps its own world)."""
    if not isinstance(snap, Snapshot):
        raise TypeError(f"restore() takes a Snapshot (Snapshot.from_bytes(b) for bytes), "
                        f"got {type(snap).__name__}")
    if snap.scenario != scenario:
        raise ValueError(f"a snapshot of {snap.scenario!r} cannot be restored into {scenario!r}")
    _same_params(snap, params, fields)


def prepare_copy(state, batch, slot, label):
    """Check one copy's state against ``batch`` and build what goes into
    slot ``slot``: ``(lps, engine state, model rows, other arrays)``.
    ``ValueError`` naming the array that does not fit; nothing changes."""
    cp, C = batch.copies, batch.num_copies
    lps = copy_lps(cp, slot)
    n = len(lps)

    def array(name, dtype, shape):
        try:
            return check_array(state, name, dtype, shape)
        except ValueError as e:
            raise ValueError(f"{label}: {e}") from None
    size = array("engine/event_size", np.int64, (1,))
    if int(size[0]) != EVENT.itemsize:
        raise ValueError(f"{label}: snapshot array 'engine/event_size': events of {int(size[0])} bytes, "
                         f"this build's are {EVENT.itemsize}")
    eng = {"counts": array("engine/counts", np.int64, (n,))}
    for k in ("rng_key", "rng_ctr", "emit_seq"):
        eng[k] = array(f"engine/{k}", np.uint64, (n,))
    counts = eng["counts"]
    if (counts < 0).any():
        raise ValueError(f"{label}: snapshot array 'engine/counts': negative pending-event counts")
    eng["events"] = array("engine/events", np.uint8, (int(counts.sum()) * EVENT.itemsize,))
    now = float(array("engine/now", np.float64, (1,))[0])
    inject_seq = int(array("engine/tallies", np.uint64, (2,))[0])
    if not math.isfinite(now):
        raise ValueError(f"{label}: snapshot array 'engine/now': {now!r} is not a finite time")
    cycle = array("batch/cycle", np.int64, (1,))
    F = len(batch.worlds.fields)
    world = {f"batch/{k}": array(f"batch/{k}", np.float64, (1, F)) for k in _WORLDS}
    check_steps(cycle, check_worlds(batch, world, f"{label}: "), f"{label}: ")
    clock = int(cycle[0]) * batch.config.dt         # as the steps compute k * dt
    try:
        eng["events"] = move_events(eng["events"].copy(), _single_moves(cp, slot, True), cp.payload_lps)
    except ValueError as e:
        raise ValueError(f"{label}: snapshot array 'engine/events': {e}") from None
    sizes = _block_sizes(cp)
    model = []
    for k, v in _model_arrays(cp).items():
        idx = _rows(cp, k, v.shape, slot, C)
        want = v[idx].shape
        got = state.get(f"model/{k}")
        if not isinstance(got, np.ndarray) or got.shape != want or got.dtype != v.dtype:
            what = ("missing" if got is None else f"a {type(got).__name__}, not an array"
                    if not isinstance(got, np.ndarray) else f"{got.dtype} {got.shape}, want {v.dtype} {want}")
            raise ValueError(f"{label}: snapshot array 'model/{k}': {what}")
        if k in cp.index_arrays:
            got = got + slot * sizes[cp.index_arrays[k]]
        model.append((v, idx, got))
    rows = {}
    A = cp.num_agents
    for k in _COPY_ARRAYS + tuple(cp.agent_arrays):
        ref = getattr(cp, k)
        rows[f"copies/{k}"] = array(f"copies/{k}", ref.dtype, (A,) + ref.shape[1:])
    for k in _BATCH:
        ref = np.asarray(getattr(batch, k))
        rows[f"batch/{k}"] = array(f"batch/{k}", ref.dtype, (1,) + ref.shape[1:])
    rows.update(world)
    # the events against the copy's clock, as the engine's import checks them (before anything changes)
    try:
        check_queues(eng["events"], counts, lps, np.full(n, clock), batch.copies.num_lps)
    except ValueError as e:
        raise ValueError(f"{label}: {e}") from None
    return lps, eng, (now, clock), inject_seq, model, rows


def restore_copies(batch, prepared, slots, gens):
    """Put prepared copies (:func:`prepare_copy`) into ``slots`` of a
    started ``batch``: the engine first, in one call (it checks and makes
    room before changing anything), then the arrays, which cannot fail."""
    cp = batch.copies
    lps = np.concatenate([p[0] for p in prepared])
    counts = np.concatenate([p[1]["counts"] for p in prepared])
    state = {"counts": counts, "events": np.concatenate([p[1]["events"] for p in prepared])}
    for k in ("rng_key", "rng_ctr", "emit_seq"):
        state[k] = np.concatenate([p[1][k] for p in prepared])
    now = min(p[2][0] for p in prepared)
    clocks = np.concatenate([np.full(len(p[0]), p[2][1]) for p in prepared])
    batch.engine.import_lps(lps, state, now=now, inject_seq=max(p[3] for p in prepared), min_time=clocks)
    # Arrays a step handed out stay the caller's: rows go into copies of them.
    for k in _COPY_ARRAYS:
        setattr(cp, k, getattr(cp, k).copy())
    worlds = [[] for _ in _WORLDS]
    rng_list = batch.rngs()
    for (_, _, _, _, model, rows), d, g in zip(prepared, slots, gens):
        for arr, idx, got in model:
            arr[idx] = got
        a = cp.agent_rows(d)
        for k in _COPY_ARRAYS + tuple(cp.agent_arrays):
            getattr(cp, k)[a] = rows[f"copies/{k}"]
        for k in _BATCH:
            getattr(batch, k)[d] = rows[f"batch/{k}"][0]
        for arr, k in zip(worlds, _WORLDS):
            arr.append(rows[f"batch/{k}"][0])
        rng_list[d] = g
    batch._set_worlds(*map(np.array, worlds), idx=slots)      # checked (prepare_copy): cannot fail
    batch._any_done = bool(batch.done.any())
    batch._aligned = False
