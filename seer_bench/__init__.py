# SPDX-License-Identifier: BSD-3-Clause
"""What the benchmarks (``benchmarks/``) and the developers' tools
(``tools/perf/``) share: background load, interleaved rounds and paired
ratios, the PCS workload they step, and the policy loops of the
asynchronous-step measurements.

A measurement on a shared machine runs its runners in rounds, each round
timing one block of every runner back to back, so a slow spell hits all of
them alike; a ratio of two runners is the median of the per-round ratios
(:func:`paired`), not a ratio of medians.

- :mod:`seer_bench.load`: busy-loop processes beside a run, the load average;
- :mod:`seer_bench.rounds`: :func:`interleave` (times), :func:`interleaved`
  (results), :func:`median_rates`, :func:`paired`, :func:`median_of`,
  :func:`spread`;
- :mod:`seer_bench.warmup`: :func:`closed_loop_running` (warm-up until the
  thread tuner's closed loop has ended);
- :mod:`seer_bench.workloads`: :func:`pcs_workload`, :func:`supersuit_pcs`,
  :class:`Halves` (two worker processes of half the copies each),
  :func:`steps_timed`;
- :mod:`seer_bench.async_loops`: the NumPy policy and the synchronous and
  ``send`` / ``recv`` loops;
- :mod:`seer_bench.ppo`: what the example trainers share (PPO's loss and
  passes, return scaling, running normalisation, overlapped rollouts,
  CleanRL's command-line habits; needs torch);
- :mod:`seer_bench.needs`: the examples' first import (a missing optional
  library is one line naming what to install);
- :mod:`seer_bench.examples`: :func:`~seer_bench.examples.load`, an example
  trainer as a module (the benchmarks train with them);
- :mod:`seer_bench.vectorisers`: SuperSuit's and PufferLib's vectorisation of
  single SEER envs, raw (:func:`~seer_bench.vectorisers.supersuit_vec`,
  :func:`~seer_bench.vectorisers.puffer_vec`) and
  shaped like SEER's vector env for the trainers
  (:class:`~seer_bench.vectorisers.SuperSuitVec`,
  :class:`~seer_bench.vectorisers.PufferVec`);
- :mod:`seer_bench.deviation`: the deviation check of a reward (does any
  set of agents gain by leaving the team's best constant while the team
  loses?), :func:`~seer_bench.deviation.check`.

The package sits above every layer (it imports ``seer_envs`` and
``seer_runtime``); nothing in them imports it.
"""

from .load import load1, start_busy, stop
from .rounds import interleave, interleaved, median_of, median_rates, paired, spread
from .warmup import LOOP_MAX, closed_loop_running

__all__ = ["LOOP_MAX", "closed_loop_running", "interleave", "interleaved", "load1", "median_of", "median_rates", "paired", "spread", "start_busy",
           "stop"]
