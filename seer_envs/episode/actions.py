# SPDX-License-Identifier: BSD-3-Clause
"""Validation of actions, one rule for every env kind: the single env
(one row per agent), the vector env (copies x agents) and the agent-level
vector env (one row per copy and agent).  Array operations only; the
culprit is looked up only once a check has failed."""

import numbers

import numpy as np


#: The unsigned type of each native signed one (others: by name, in their byte order).
_UNSIGNED = {np.dtype(f"i{k}"): np.dtype(f"u{k}") for k in (1, 2, 4, 8)}


def check_actions(actions, spec, lead, label, rows=""):
    """``actions`` as an array of shape ``lead + action shape``, checked
    against ``spec`` (``Copies.action_spec``: ``("discrete", n, start)`` or
    ``("box", shape, low, high)`` with per-element bounds); not copied when
    already an array.

    ``label(index)`` names the agent at an index of ``lead`` in an error
    (``"agent 'x'"``, ``"copy 3, agent 'x'"``); ``rows`` says what the
    leading axes are, for the shape error (e.g. ``" (copies, agents)"``).
    Raises ValueError naming the first bad agent in row order (and, for a
    Box with per-element bounds, the element and its bounds).
    """
    a = np.asarray(actions)
    lead = tuple(lead)
    if spec[0] == "discrete":
        n, start = spec[1], spec[2]
        if a.shape != lead:
            raise ValueError(f"actions must have shape {lead}{rows}, got {a.shape}")
        if a.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array, got dtype {a.dtype}")
        if not a.size:
            return a
        if start == 0:
            # One comparison: viewed as unsigned, a negative action is >= n too;
            # count_nonzero is several times cheaper than a ufunc reduction here.
            # The mask is built again only to name the culprit.
            bad = np.count_nonzero(a.view(_UNSIGNED.get(a.dtype) or a.dtype.str.replace("i", "u"))
                                   >= n if a.dtype.kind == "i" else a >= n)
        else:           # (NumPy compares with Python ints out of the dtype's range exactly)
            bad = np.count_nonzero((a < start) | (a >= start + n))
        if bad:
            at = tuple(int(v) for v in np.argwhere((a < start) | (a >= start + n))[0])
            raise ValueError(f"action for {label(*at)} must be in [{start}, {start + n - 1}], got {a[at]}")
        return a
    shape, low, high = spec[1:]
    if a.shape != lead + tuple(shape):
        raise ValueError(f"actions must have shape {lead + tuple(shape)}{rows}, got {a.shape}")
    if a.dtype.kind not in "fiu":
        raise ValueError(f"actions must be a real-valued (float) array, got dtype {a.dtype}")
    # One pass in the common case: NaN fails both comparisons.
    if np.count_nonzero((a >= low) & (a <= high)) == a.size:
        return a
    k = len(lead)
    bad = ~((a >= low) & (a <= high)).reshape(lead + (-1,)).all(axis=-1)
    finite = np.isfinite(a).reshape(lead + (-1,)).all(axis=-1)
    if not finite.all():
        bad, what = ~finite, "is not finite (NaN or inf)"
    at = tuple(int(v) for v in np.argwhere(bad)[0])
    row = a[at[:k]]
    if finite.all():
        what = _out_of_bounds(row, low, high)
    raise ValueError(f"action for {label(*at)} {what}, got {row.astype(np.float64).tolist()}")


def _out_of_bounds(act, low, high):
    """The error's words for an action ``act`` of a Box outside its bounds:
    the common interval where every element has the same one, else the
    first bad element and its own interval."""
    lo, hi = low.reshape(-1), high.reshape(-1)
    if lo.size == 0 or ((lo == lo[0]).all() and (hi == hi[0]).all()):        # (0-d: one interval)
        return f"must be in [{float(lo[0])}, {float(hi[0])}]" if lo.size else "is out of bounds"
    i = np.unravel_index(int(np.argmax(~((act >= low) & (act <= high)))), low.shape)
    i = tuple(int(v) for v in i)
    return f"element {i} must be in [{float(low[i])}, {float(high[i])}]"


def resting_action(spec):
    """One valid action of ``spec`` (``start`` of a Discrete space; 0
    clipped into each element's bounds of a Box): what an action buffer
    holds in rows not written yet."""
    if spec[0] == "discrete":
        return np.int64(spec[2])
    return np.clip(np.zeros(spec[1]), spec[2], spec[3]).astype(np.float64)


# --- dicts (the PettingZoo env's step) -------------------------------------------------

_INT_TYPES = (int, np.integer)
_ALL = slice(None)


def _int_types_only(types):
    return all(issubclass(t, _INT_TYPES) and t is not bool for t in types)


def check_action_dict(actions, agents, live, live_rows, index, n, spec, out):
    """A dict ``agent -> action`` of exactly the live ``agents`` (``live``
    their set, ``live_rows`` their rows, ``index`` agent -> row, ``n`` every
    agent), validated against ``spec`` into ``out`` (rows in
    ``possible_agents`` order; the other rows 0).  One stacked array check in
    the common case; the per-agent checks name the first bad agent
    otherwise (the same messages as :func:`check_actions`' culprits)."""
    if not isinstance(actions, dict):
        raise ValueError(f"actions must be a dict agent -> action, got {type(actions).__name__}")
    if len(actions) == len(agents) and list(actions) == agents:
        rows = _ALL if len(agents) == n else live_rows       # (every row: no fancy indexing)
    else:
        _live_actions(actions, agents, live, index)       # names the unknown, finished or missing agent
        rows = np.fromiter(map(index.__getitem__, actions), np.intp, len(actions))
    if len(agents) != n:
        out[...] = 0
    vals = list(actions.values())
    if spec[0] == "discrete":
        n, start = spec[1], spec[2]
        if _int_types_only(set(map(type, vals))):
            try:
                arr = np.array(vals, np.int64)
            except OverflowError:
                arr = None
            # viewed as unsigned, an action below start is >= n too (as in
            # check_actions; the difference wraps, which keeps that true)
            if arr is not None and not np.count_nonzero(
                    (arr if start == 0 else arr - np.int64(start)).view(np.uint64) >= n):
                out[rows] = arr
                return out
        for agent, act in _live_actions(actions, agents, live, index):
            out[index[agent]] = _check_discrete_value(agent, act, n, start)
        return out
    shape, low, high = spec[1:]
    # Fast path: arrays of one real dtype (stacking would promote a bool or a
    # mixed entry silently; lists go through the per-agent checks).
    if set(map(type, vals)) == {np.ndarray}:
        dtypes = {v.dtype for v in vals}
        dtype = dtypes.pop() if len(dtypes) == 1 else None
        if dtype is not None and dtype.kind in "fiu" and {v.shape for v in vals} == {tuple(shape)}:
            try:        # the raw buffers joined: ~8x faster than np.array(vals)
                arr = np.frombuffer(b"".join(vals), dtype).reshape((len(vals),) + tuple(shape))
            except (TypeError, BufferError):                # a non-contiguous view
                arr = np.array(vals)
            if np.count_nonzero((arr >= low) & (arr <= high)) == arr.size:    # NaN fails both
                out[rows] = arr
                return out
    for agent, act in _live_actions(actions, agents, live, index):
        out[index[agent]] = _check_box_value(agent, act, shape, low, high)
    return out


def _live_actions(actions, agents, live, index):
    """(agent, action) pairs of a dict that has exactly the live agents."""
    if not agents:
        raise RuntimeError("the episode has ended (all agents are done); call reset() first")
    for agent in actions:
        if agent not in live:
            kind = "finished" if agent in index else "unknown"
            raise ValueError(f"action for {kind} agent {agent!r}")
    if len(actions) != len(live):
        missing = [a for a in agents if a not in actions]
        raise ValueError(f"missing action for agent {missing[0]!r}"
                         + (f" and {len(missing) - 1} more" if len(missing) > 1 else ""))
    return actions.items()


def _check_discrete_value(agent, act, n_actions, start=0):
    if isinstance(act, np.ndarray):
        if act.size != 1:
            raise ValueError(f"action for agent {agent!r} must be a scalar, got shape {act.shape}")
        act = act.reshape(())[()]
    if isinstance(act, (bool, np.bool_)) or not isinstance(act, numbers.Integral):
        raise ValueError(f"action for agent {agent!r} must be an integer, got {act!r}")
    if not start <= act < start + n_actions:
        raise ValueError(f"action for agent {agent!r} must be in [{start}, {start + n_actions - 1}], "
                         f"got {act!r}")
    return act


def _check_box_value(agent, act, shape, low, high):
    if not isinstance(act, (np.ndarray, list, tuple)):
        raise ValueError(f"action for agent {agent!r} must be an array of shape {shape}, got {act!r}")
    try:
        a = np.asarray(act)
    except ValueError:
        raise ValueError(f"action for agent {agent!r} must be an array of shape {shape}, "
                         f"got {act!r}") from None
    if a.dtype.kind not in "fiu":
        raise ValueError(f"action for agent {agent!r} must be real numbers, got dtype {a.dtype}")
    if a.shape != shape:
        raise ValueError(f"action for agent {agent!r} must have shape {shape}, got {a.shape}")
    a = a.astype(np.float64)
    if not np.isfinite(a).all():
        raise ValueError(f"action for agent {agent!r} is not finite (NaN or inf): {act!r}")
    if not ((a >= low) & (a <= high)).all():
        raise ValueError(f"action for agent {agent!r} {_out_of_bounds(a, low, high)}, got {a.tolist()}")
    return a
