# SPDX-License-Identifier: BSD-3-Clause
"""Declarative, validated scenario configs.

A scenario's ``Config`` is a frozen dataclass whose fields are declared with
:func:`param`: default, unit, meaning and bounds live in one place and feed
validation, error messages, ``seer list`` and the docs.  It lives in the
runtime so models that ship with it (PHOLD) declare their parameters the
same way as the envs.
"""

import dataclasses
import difflib
import functools
import math


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
        try:
            value = float(value)
        except OverflowError:         # an int beyond float64 (10**400)
            raise ValueError(f"{where} must be a finite number, got an int of "
                             f"{value.bit_length()} bits") from None
        if math.isnan(value) or (math.isinf(value) and not m.get("allow_inf")):
            raise ValueError(f"{where} must be a finite number, got {value!r}")
    lo, hi, lo_open = m.get("lo"), m.get("hi"), m.get("lo_open")
    if not _fits(value, lo, lo_open, None):
        raise ValueError(f"{where} must be {'>' if lo_open else '>='} {lo}, got {value!r}")
    if not _fits(value, None, False, hi):
        raise ValueError(f"{where} must be <= {hi}, got {value!r}")
    return value


def _fits(v, lo, lo_open, hi):
    """Whether the number ``v`` lies within a field's bounds (None: none)."""
    return (lo is None or (v > lo if lo_open else v >= lo)) and (hi is None or v <= hi)


def check_number(name, value, lo=0.0):
    """A run's numeric argument (``end_time``, ...) as a float: a real
    number (an int or float, NumPy's too; not a bool or a string), finite and
    >= ``lo``.  Otherwise a ValueError naming the argument, the range and
    the value (never a bare ``float()`` error)."""
    real = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not real:
        try:
            import numpy as np
            real = isinstance(value, (np.integer, np.floating))
        except ImportError:       # pragma: no cover - numpy is a dependency
            pass
    if not real:
        raise ValueError(f"{name} must be a finite number >= {lo:g}, got {value!r} "
                         f"({type(value).__name__})")
    try:
        v = float(value)
    except OverflowError:
        v = math.inf
    if math.isnan(v) or math.isinf(v) or v < lo:
        raise ValueError(f"{name} must be a finite number >= {lo:g}, got {value!r}")
    return v


@functools.lru_cache(maxsize=None)
def _rules(cls):
    """Each declared field of ``cls`` with what :func:`_check` would pass
    unchanged: ``(field, exact type, lo, lo_open, hi, allow_inf)``, the type
    ``None`` for a field of choices (always checked in full)."""
    out = []
    for f in dataclasses.fields(cls):
        m = f.metadata
        if not m:
            continue
        kind = None if m.get("choices") is not None else int if m.get("integer") else float
        out.append((f, kind, m.get("lo"), bool(m.get("lo_open")), m.get("hi"), bool(m.get("allow_inf"))))
    return tuple(out)


def validate(cfg):
    """Check every field of a config dataclass; normalise numeric types.

    A value already of its field's exact type (an ``int`` for an integer
    field, a ``float`` otherwise) that is finite and in range passes at
    once: per-copy worlds build a config at every copy's episode start.
    Anything else takes :func:`_check`, which converts it or names what is
    wrong."""
    name = type(cfg).__name__
    for f, kind, lo, lo_open, hi, allow_inf in _rules(type(cfg)):
        v = getattr(cfg, f.name)
        if (kind is not None and type(v) is kind and v == v and (allow_inf or -math.inf < v < math.inf)
                and _fits(v, lo, lo_open, hi)):
            continue
        object.__setattr__(cfg, f.name, _check(name, f, v))


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
