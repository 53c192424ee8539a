# SPDX-License-Identifier: BSD-3-Clause
"""Validation of action arrays, one rule for every env kind: the single env
(one row per agent), the vector env (copies x agents) and the agent-level
vector env (one row per copy and agent).  Array operations only; the
culprit is looked up only once a check has failed."""

import numpy as np


def check_actions(actions, spec, lead, label, rows=""):
    """``actions`` as an array of shape ``lead + action shape``, checked
    against ``spec`` (``Copies.action_spec``: ``("discrete", n)`` or
    ``("box", shape, low, high)``); not copied when already an array.

    ``label(index)`` names the agent at an index of ``lead`` in an error
    (``"agent 'x'"``, ``"copy 3, agent 'x'"``); ``rows`` says what the
    leading axes are, for the shape error (e.g. ``" (copies, agents)"``).
    Raises ValueError naming the first bad agent in row order.
    """
    a = np.asarray(actions)
    lead = tuple(lead)
    if spec[0] == "discrete":
        n = spec[1]
        if a.shape != lead:
            raise ValueError(f"actions must have shape {lead}{rows}, got {a.shape}")
        if a.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array, got dtype {a.dtype}")
        # Two reductions, no temporaries; the mask only to name the culprit.
        if a.size and (a.min() < 0 or a.max() >= n):
            at = tuple(int(v) for v in np.argwhere((a < 0) | (a >= n))[0])
            raise ValueError(f"action for {label(*at)} must be in [0, {n - 1}], got {a[at]}")
        return a
    shape, low, high = spec[1:]
    if a.shape != lead + tuple(shape):
        raise ValueError(f"actions must have shape {lead + tuple(shape)}{rows}, got {a.shape}")
    if a.dtype.kind not in "fiu":
        raise ValueError(f"actions must be a real-valued (float) array, got dtype {a.dtype}")
    # One pass in the common case: NaN fails both comparisons.
    if ((a >= low) & (a <= high)).all():
        return a
    flat = a.reshape(lead + (-1,)).astype(np.float64)
    bad, what = ~np.isfinite(flat).all(axis=-1), "is not finite (NaN or inf)"
    if not bad.any():
        bad, what = ((flat < low) | (flat > high)).any(axis=-1), f"must be in [{low}, {high}]"
    at = tuple(int(v) for v in np.argwhere(bad)[0])
    raise ValueError(f"action for {label(*at)} {what}, got {flat[at].tolist()}")
