# SPDX-License-Identifier: BSD-3-Clause
"""Declarative, validated scenario configs.

A scenario's ``Config`` is a frozen dataclass whose fields are declared with
:func:`param`: default, unit, meaning and bounds live in one place and feed
validation, error messages, ``seer list`` and the docs.
"""

import dataclasses
import difflib
import math

# --- model-derived bounds shared by the scenario configs (docs/pcs.md, docs/aircraft.md) ---

#: Lookahead-like times (and every mean time between a repeated event's
#: occurrences) must be at least this fraction of the episode horizon: at
#: any time T <= horizon, T + it > T holds with about 2**16 ulps to spare, so
#: a window always advances and a chain of draws always moves time on.
HORIZON_REL_EPS = 2.0 ** -36
#: Expected work of one env step (or one headless run) over all entities, in
#: units of one event, one walked phone move, one RK4 substep or one
#: power-control iteration (each 10-300 ns): about 1-5 minutes of one core.
STEP_WORK_BUDGET = 2 ** 30
#: The same for a whole headless run (about 1-3 hours of one core).
RUN_WORK_BUDGET = 2 ** 36
#: Expected work of a single handler call, in the same units (about 10 ms):
#: handlers run without the GIL, so this bounds how long Ctrl-C can wait.
HANDLER_WORK_BUDGET = 2 ** 17
#: Largest float32 (observations and rewards are float32).
FLOAT32_MAX = 3.4028234663852886e38


def bound_error(cls_name, name, value, rel, bound, why):
    """The ValueError of a violated model-derived bound."""
    return ValueError(f"{cls_name}.{name} must be {rel} {bound:.6g} ({why}), got {value!r}")


def check_horizon(cls_name, cfg, names, horizon, horizon_text):
    """Each of ``names`` (times) must be >= HORIZON_REL_EPS * horizon."""
    floor = HORIZON_REL_EPS * horizon
    for name in names:
        v = getattr(cfg, name)
        if v < floor:
            raise bound_error(cls_name, name, v, ">=", floor,
                              f"2**-36 x the horizon {horizon_text} = {horizon:g}, "
                              f"so that T + {name} > T at every time T of the run")


def param(default, unit="", doc="", *, lo=None, hi=None, lo_open=False, integer=False,
          allow_inf=False, choices=None):
    """A config field with its unit, meaning and allowed values."""
    return dataclasses.field(default=default, metadata={
        "unit": unit, "doc": doc, "lo": lo, "hi": hi, "lo_open": lo_open,
        "integer": integer, "allow_inf": allow_inf, "choices": choices})


def _check(cls_name, f, value):
    m = f.metadata
    where = f"{cls_name}.{f.name}"
    if m.get("choices") is not None:
        if value not in m["choices"]:
            raise ValueError(f"{where} must be one of {list(m['choices'])}, got {value!r}")
        return value
    if m.get("integer"):
        if isinstance(value, bool) or not isinstance(value, int):
            try:
                import numpy as np
                if isinstance(value, np.integer):
                    value = int(value)
                else:
                    raise TypeError
            except TypeError:
                raise ValueError(f"{where} must be an integer, got {value!r}") from None
    else:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            try:
                import numpy as np
                if not isinstance(value, (np.integer, np.floating)):
                    raise TypeError
            except TypeError:
                raise ValueError(f"{where} must be a number, got {value!r}") from None
        value = float(value)
        if math.isnan(value) or (math.isinf(value) and not m.get("allow_inf")):
            raise ValueError(f"{where} must be a finite number, got {value!r}")
    lo, hi = m.get("lo"), m.get("hi")
    if lo is not None and (value < lo or (m.get("lo_open") and value == lo)):
        raise ValueError(f"{where} must be {'>' if m.get('lo_open') else '>='} {lo}, got {value!r}")
    if hi is not None and value > hi:
        raise ValueError(f"{where} must be <= {hi}, got {value!r}")
    return value


def validate(cfg):
    """Check every field of a config dataclass; normalise numeric types."""
    name = type(cfg).__name__
    for f in dataclasses.fields(cfg):
        if f.metadata.get("unit") is None and not f.metadata:
            continue
        v = _check(name, f, getattr(cfg, f.name))
        object.__setattr__(cfg, f.name, v)


def build(cls, kwargs):
    """``cls(**kwargs)`` with a clear error for unknown keys."""
    known = {f.name for f in dataclasses.fields(cls)}
    for key in kwargs:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"unknown {cls.__name__} parameter {key!r}{hint}; "
                             f"known: {', '.join(sorted(known))}")
    return cls(**kwargs)


def describe(cls):
    """Rows (name, default, unit, meaning) for documentation and ``seer list``."""
    return [(f.name, f.default, f.metadata.get("unit", ""), f.metadata.get("doc", ""))
            for f in dataclasses.fields(cls)]
