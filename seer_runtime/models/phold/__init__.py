# SPDX-License-Identifier: BSD-3-Clause
"""PHOLD, the standard parallel discrete-event benchmark, on the SEER runtime.

Semantics follow ROSS's ``phold`` model: ``num_lps`` logical processes each
start ``start_events`` events; handling one sends a new event to a uniformly
random LP with probability ``remote_fraction`` (else to itself) after
``lookahead + Exp(mean_delay - lookahead)``.  ``work_iters`` adds a
deterministic arithmetic loop per event, folded into the LP's state, to set
the event granularity.

>>> from seer_runtime.models import phold
>>> r = phold.run(num_lps=256, end_time=20.0, num_threads=2, seed=1)
>>> r["events"] > 0 and len(r["digest"]) == 16
True
"""

import dataclasses
import math
import time

from seer_runtime import Engine
from seer_runtime._threads import resolve_threads
from seer_runtime.config import build, check_number
from seer_runtime.models.phold._model import MAX_WORK_ITERS, PholdModel
from seer_runtime.models.phold.config import PholdConfig
from seer_runtime.tuner import run_until_tuned, tuner_for

__all__ = ["run", "PholdModel", "PholdConfig", "make", "MAX_WORK_ITERS"]

# Smallest lookahead relative to the horizon: below about 2**-52 * t,
# t + lookahead rounds back to t and the windows cannot advance; 2**-50
# leaves a margin of a few ulps.
MIN_RELATIVE_LOOKAHEAD = 2.0**-50

ENGINE_KEYS = ("max_pending_per_lp", "max_messages_per_round", "max_events_per_run")


def _config(params):
    unknown = set(params) - {f.name for f in dataclasses.fields(PholdConfig)}
    if unknown:
        raise TypeError(f"unknown PHOLD parameter(s): {', '.join(sorted(unknown))}; "
                        f"known: {', '.join(f.name for f in dataclasses.fields(PholdConfig))}")
    return build(PholdConfig, params)


def model_from_config(cfg):
    """A :class:`PholdModel` of a :class:`PholdConfig`."""
    return PholdModel(cfg.num_lps, cfg.lookahead, cfg.mean_delay, cfg.remote_fraction,
                      cfg.start_events, cfg.work_iters)


def make(num_lps=PholdConfig.num_lps, num_threads="auto", seed=0, choose=None, **params):
    """Validate the parameters and build ``(model, engine)`` without running.

    ``params`` are :class:`PholdConfig` fields and the engine caps
    ``max_pending_per_lp`` and ``max_messages_per_round``; ``choose`` is
    passed to :func:`seer_runtime.resolve_threads` for ``"auto"``."""
    engine_kwargs = {k: params.pop(k) for k in ENGINE_KEYS if k in params}
    cfg = _config(dict(params, num_lps=num_lps))
    n, _ = resolve_threads(num_threads, choose)
    model = model_from_config(cfg)
    return model, Engine(model, num_threads=n, seed=seed, **engine_kwargs)


def run(num_lps=PholdConfig.num_lps, end_time=100.0, num_threads="auto", seed=0, choose=None,
        **params):
    """Run PHOLD to ``end_time`` and report.

    Parameters
    ----------
    num_lps : int
        Logical processes.
    end_time : float
        Events with ``time < end_time`` run.
    num_threads : int or "auto"
        Worker threads; results do not depend on it.  ``"auto"`` calls
        ``choose()`` when given (the ``seer`` CLI passes one that asks
        STPA), else the hard caps (see :func:`seer_runtime.resolve_threads`).
    seed : int
        Run seed.
    **params
        :class:`PholdConfig` fields (``lookahead`` at least
        ``end_time * 2**-50``, ``work_iters`` at most ``MAX_WORK_ITERS``), and
        the engine's caps ``max_pending_per_lp``, ``max_messages_per_round``
        and ``max_events_per_run``.

    Returns
    -------
    dict
        ``events``, ``wall_s`` (init + run), ``events_per_s``, ``digest``
        (hex hash of all final LP states and counters), ``remote_events``,
        the runtime statistics (see :meth:`Engine.stats`), and the
        parameters.
    """
    end_time = _float_arg("end_time", end_time)
    engine_kwargs = {k: params.pop(k) for k in ENGINE_KEYS if k in params}
    cfg = _config(dict(params, num_lps=num_lps))
    if cfg.lookahead < end_time * MIN_RELATIVE_LOOKAHEAD:
        raise ValueError(f"lookahead must be >= end_time * 2**-50 = {end_time * MIN_RELATIVE_LOOKAHEAD!r} "
                         f"(so that time + lookahead > time up to end_time={end_time!r}), "
                         f"got {cfg.lookahead!r}")
    n, choice = resolve_threads(num_threads, choose)
    model = model_from_config(cfg)
    engine = Engine(model, num_threads=n, seed=seed, **engine_kwargs)
    tuner = tuner_for(engine, num_threads, choice)     # None unless "auto"
    t0 = time.perf_counter()
    engine.init(0.0)
    run_until_tuned(engine, end_time, tuner)
    wall = time.perf_counter() - t0
    if tuner is not None:
        choice = choice.replace(**tuner.report())
    events, remote = model.totals()
    stats = engine.stats()
    assert stats["events"] == events
    out = dict(stats)
    out.update({
        "events": events,
        "wall_s": wall,
        "events_per_s": events / wall if wall > 0 else float("inf"),
        "digest": model.digest(engine),
        "remote_events": remote,
        "pending": engine.pending(),
        "num_lps": num_lps,
        "end_time": end_time,
        "seed": seed,
        "params": {k: v for k, v in dataclasses.asdict(cfg).items() if k != "num_lps"},
        "thread_choice": choice,
    })
    return out


def _float_arg(name, value):
    return check_number(name, value)
