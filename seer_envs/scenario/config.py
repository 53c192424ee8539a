# SPDX-License-Identifier: BSD-3-Clause
"""Scenario config helpers: the declarative fields and validation live in
:mod:`seer_runtime.config` (re-exported here); the model-derived bounds the
env scenarios share (docs/pcs.md, docs/aircraft.md) live here."""

from seer_runtime.config import build, describe, param, validate  # noqa: F401

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
