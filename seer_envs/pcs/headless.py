# SPDX-License-Identifier: BSD-3-Clause
"""The headless PDES run of PCS: no agents, guard 0, to an end time.  This is
how SEER's PCS is compared with PDES engines such as ROSS."""

import time

from seer_envs.scenario.config import RUN_WORK_BUDGET
from seer_runtime.config import build, check_number
from seer_runtime import resolve_threads
from seer_envs.pcs.config import PCSConfig
from seer_envs.pcs.summary import summarize
from seer_envs.pcs.handlers import PcsModel
from seer_runtime import Engine
from seer_runtime.tuner import run_until_tuned, tuner_for

#: PCSConfig fields a headless run (no agents, no steps) never reads: the
#: spec's ``headless_ignores``, so `seer list` leaves them out of
#: ``pcs_v0:headless`` and `seer check` refuses them there.
ENV_ONLY = ("dt", "max_cycles", "handoff_penalty", "team_reward_share")


def run_headless(grid_width=256, grid_height=256, end_time=1000.0, num_threads="auto", seed=0,
                 choose=None, **params):
    """Run the PCS model to ``end_time`` minutes with no agents (guard 0).

    ``params`` are any :class:`PCSConfig` fields (those in ``ENV_ONLY`` do
    not affect a headless run).  Returns a dict:
    ``events``, ``wall_s``, ``events_per_s``, the counters
    (``call_attempts``, ``busy_lines``, ``channel_blocks``,
    ``handoff_blocks``, ``handoffs`` = handoffs out, ``handoffs_in``,
    ``handoffs_out``), ``blocking_probability``, ``thread_choice`` and the
    runtime statistics.  ``end_time`` is bounded so the run's expected work
    stays under 2**36 events and ``handoff_latency`` is at least 2**-36 x
    ``end_time`` (``ValueError`` otherwise).
    """
    cfg = build(PCSConfig, dict(params, grid_width=grid_width, grid_height=grid_height))
    end_time = check_number("end_time", end_time)
    # The whole run must fit the work budget, and every time constant must
    # advance time at end_time (docs/pcs.md, "Bounds").
    try:
        cfg.check_run(end_time, "end_time", end_time, "end_time", RUN_WORK_BUDGET)
    except ValueError as e:
        raise ValueError(f"end_time={end_time!r} is too far for these parameters: {e}") from None
    if choose is None:       # "auto" asks STPA about this headless configuration
        from seer_envs import get, stpa_chooser
        choose = stpa_chooser(get("pcs_v0"), cfg, headless=True)
    n_threads, choice = resolve_threads(num_threads, choose)
    model = PcsModel(cfg)
    engine = Engine(model, num_threads=n_threads, seed=seed)
    tuner = tuner_for(engine, num_threads, choice)     # None unless "auto"
    t0 = time.perf_counter()
    engine.init(0.0)
    run_until_tuned(engine, end_time, tuner)
    wall = time.perf_counter() - t0
    if tuner is not None:
        choice = choice.replace(**tuner.report())
    stats = engine.stats()
    out = dict(stats)
    out.update(summarize(model.counters, engine))
    out.update({"wall_s": wall, "events_per_s": stats["events"] / wall if wall > 0 else float("inf"),
                "end_time": end_time, "seed": seed, "grid": (grid_width, grid_height),
                "thread_choice": choice, "state_digest": engine.state_digest()})
    return out

