# SPDX-License-Identifier: BSD-3-Clause
"""The checks of the episode core's arguments: seeds, Gymnasium's
auto-reset mode (the enum or its name) and bounded ints."""

import numbers

from gymnasium.vector import AutoresetMode


def check_seed(seed):
    """A seed is an int >= 0 (or None, checked by the caller)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be an int >= 0 or None, got {seed!r}")


def autoreset_mode(mode):
    """An ``AutoresetMode`` from the enum or its name in any case."""
    if isinstance(mode, AutoresetMode):
        return mode
    key = str(mode).lower().replace("_", "").replace("-", "")
    for m in AutoresetMode:
        if m.value.lower().replace("_", "") == key or m.name.lower().replace("_", "") == key:
            return m
    raise ValueError(f'autoreset_mode must be "next_step", "same_step" or "disabled" '
                     f"(or a gymnasium AutoresetMode), got {mode!r}")


def _check_int(name, value, lo, hi=None):
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo
            or (hi is not None and value > hi)):
        span = f"an int >= {lo}" if hi is None else f"an int in [{lo}, {hi}]"
        raise ValueError(f"{name} must be {span}, got {value!r}")
    return int(value)
