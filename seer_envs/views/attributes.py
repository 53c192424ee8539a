# SPDX-License-Identifier: BSD-3-Clause
"""Gymnasium's ``get_attr`` / ``set_attr`` / ``call`` for SEER's vector
envs: :class:`CopyAttributes`, mixed into
:class:`~seer_envs.views.vector.SeerVectorEnv` (a sub-env is a copy) and
:class:`~seer_envs.views.agent_vector.SeerAgentVectorEnv` (a sub-env is a row,
with its copy's values).

As Gymnasium's ``SyncVectorEnv``: ``get_attr(name)`` and ``call(name,
*args, **kwargs)`` return a tuple with one entry per sub-env;
``set_attr(name, values)`` takes one value per sub-env (a list, tuple or
1-d array) or one value for all.

- read (``get_attr``): the config's fields (a per-copy field, ``max_cycles``
  included, gives each copy's current value: its list entry, its sampler
  draw, its ``set_params``; the others one value for all), ``cycles`` (steps of the copy's
  current episode), ``seeds_used`` (its episode seed), and the env-wide
  ``env_id``, ``possible_agents``, ``num_agents``, ``render_mode``;
- set (``set_attr``): ``max_cycles`` alone, per copy, validated by the
  config's own bounds; it takes effect at once (a copy already past its new
  value truncates at its next step, as Gymnasium's ``TimeLimit`` does).
  The other config fields are fixed when the env is built;
- run (``call``): ``render`` (each copy's frame) and ``state`` (each copy's
  global state, for scenarios that declare one); any readable name gives
  its values, as ``SyncVectorEnv.call`` does for a non-callable attribute.

An unknown name is an ``AttributeError`` naming it and the known ones.
"""

import dataclasses
import numbers

import numpy as np

__all__ = ["CopyAttributes", "SETTABLE", "CALLABLE"]

#: Per-copy values besides the config's fields.
_PER_COPY = ("cycles", "seeds_used")
#: Env-wide values (the same for every copy).
_ENV_WIDE = ("env_id", "possible_agents", "num_agents", "render_mode")
#: What ``set_attr`` can set.
SETTABLE = ("max_cycles",)
#: What ``call`` runs.
CALLABLE = ("render", "state")


class CopyAttributes:
    """``get_attr`` / ``set_attr`` / ``call`` over the env's copies
    (module docstring).  A class mixing it in provides ``_vec`` (the
    :class:`~seer_envs.views.vector.SeerVectorEnv`) and ``_rows_per_copy`` (1 for
    copies, ``num_agents`` for the agent-level env's rows)."""

    def get_attr(self, name):
        """``name`` of every sub-env, as a tuple (module docstring)."""
        return self._expand(self._copy_values(name))

    def call(self, name, *args, **kwargs):
        """Run ``name`` (``"render"``, ``"state"``) for every sub-env, as a
        tuple; a readable attribute gives its values (module docstring)."""
        vec = self._vec
        if name in CALLABLE and (args or kwargs):
            raise TypeError(f"call({name!r}) takes no arguments")
        if name == "render":
            frames = vec.render()
            per_copy = (None,) * vec.num_envs if frames is None else tuple(frames)
        elif name == "state":
            per_copy = tuple(vec.state())
        else:
            return self.get_attr(name)
        return self._expand(per_copy)

    def set_attr(self, name, values):
        """Set ``name`` (only ``max_cycles``) per sub-env: ``values`` is one
        value per sub-env or one value for all (module docstring)."""
        vec = self._vec
        if name not in SETTABLE:
            self._known(name)                     # AttributeError for an unknown name
            what = ("a config field, fixed when the env is built (build a new env for another value)"
                    if name in self._fields() else "read-only")
            raise ValueError(f"set_attr({name!r}): {name!r} is {what}; set_attr can set "
                             + ", ".join(map(repr, SETTABLE)) + " (per copy)")
        vec._check_nothing_in_flight("set_attr()")
        vec.core.check_open()
        per_copy = self._per_copy_values(name, values)
        core, top = vec.core, vec.core.params
        checked = []
        for c, v in enumerate(per_copy):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise ValueError(f"set_attr('max_cycles'): copy {c}'s value must be an int >= 1, got {v!r}")
            try:                                  # the config's own bounds, as at construction
                core.spec.build_config(dict(top, max_cycles=int(v)))
            except (ValueError, TypeError) as e:
                raise ValueError(f"set_attr('max_cycles'): copy {c}'s value {v!r}: {e}") from None
            checked.append(int(v))
        core.set_max_cycles(checked)

    # --- helpers -------------------------------------------------------------------

    def _fields(self):
        return tuple(f.name for f in dataclasses.fields(self._vec.config))

    def _known(self, name):
        if not isinstance(name, str):
            raise TypeError(f"an attribute name is a str, got {type(name).__name__}")
        if name not in self._fields() + _PER_COPY + _ENV_WIDE + CALLABLE:
            raise AttributeError(
                f"{type(self).__name__} has no sub-env attribute {name!r}: get_attr reads the config's "
                f"fields ({', '.join(self._fields())}), " + ", ".join(_PER_COPY + _ENV_WIDE)
                + "; set_attr sets " + ", ".join(SETTABLE) + "; call runs " + ", ".join(CALLABLE))

    def _copy_values(self, name):
        """``name``'s value of each copy, as a tuple."""
        self._known(name)
        vec = self._vec
        E = vec.num_envs
        if name in CALLABLE:
            raise AttributeError(f"{name!r} is a method: use call({name!r})")
        if name == "max_cycles":
            return tuple(int(m) for m in vec.max_cycles)
        if name in _PER_COPY:                # the episode's state: not while copies are stepping
            vec._check_nothing_in_flight(f"get_attr({name!r})")
        if name == "cycles":
            return tuple(int(c) for c in vec.cycles)
        if name == "seeds_used":
            return tuple(None if s is None else int(s) for s in vec.seeds_used)
        if name in _ENV_WIDE:
            value = getattr(vec, name)
        else:
            per_copy = vec.params.get(name)   # a per-copy field: each copy's current value (list, sampler, set_params)
            if per_copy is not None:
                return tuple(v.item() for v in per_copy)
            value = getattr(vec.config, name)
        return (value,) * E

    def _expand(self, per_copy):
        """Per-copy values -> one per sub-env (each copy's for its rows)."""
        k = self._rows_per_copy
        return tuple(per_copy) if k == 1 else tuple(v for v in per_copy for _ in range(k))

    def _per_copy_values(self, name, values):
        """``set_attr``'s values (one per sub-env, or one for all) -> one per
        copy; a copy's rows must agree."""
        vec, k = self._vec, self._rows_per_copy
        E, N = vec.num_envs, vec.num_envs * k
        if isinstance(values, np.ndarray) and values.ndim == 1:
            values = values.tolist()
        if not isinstance(values, (list, tuple)):
            return [values] * E
        if len(values) != N:
            raise ValueError(f"set_attr({name!r}): values must be one value or {N} (one per sub-env), "
                             f"got {len(values)}")
        values = list(values)
        per_copy = values[::k]
        for c in range(E):
            row = values[c * k:(c + 1) * k]
            if any(v != row[0] for v in row):
                raise ValueError(f"set_attr({name!r}): the rows of copy {c} (rows {c * k}..{c * k + k - 1}) "
                                 f"hold different values {row}; a copy's agents share one {name}")
        return per_copy
