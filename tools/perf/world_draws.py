# SPDX-License-Identifier: BSD-3-Clause
"""What a drawn world costs at a copy's episode start.

    python tools/perf/world_draws.py [--copies 2048] [--grid 2] [--max-cycles 7] [--steps 70] [--rounds 3]

A vector env of many small PCS copies with short episodes, stepped under
two samplers of ``call_interarrival_mean``, alternated within each round:
``[60.0]`` (one value: every start finds its config in the cache) and
``(59.0, 61.0)`` (a new value, so a new validated config, at every copy's
start); the work the engine does is about the same.  Prints the median ms
a step of each and the difference per copy start in us; then the part
itself, timed alone: the draw and the checked config of every copy
(``Worlds.next_worlds``) with fresh seeds, so no config comes from the
cache, in us a copy; and ``validate`` and ``dataclasses.replace`` of
PCS's default config.  For an A/B, run it with ``PYTHONPATH`` set to each
tree, alternated, twice for the A/A."""

import argparse
import itertools
import statistics
import time
import timeit

import numpy as np

import seer_envs

SAMPLERS = {"cached": {"call_interarrival_mean": [60.0]}, "drawn": {"call_interarrival_mean": (59.0, 61.0)}}


def seconds_per_step(sampler, a):
    v = seer_envs.vector_env("pcs_v0", a.copies, grid_width=a.grid, grid_height=a.grid, num_threads=1,
                             max_cycles=a.max_cycles, call_interarrival_mean=60.0, param_sampler=sampler)
    v.reset(seed=0)
    acts = np.ones((a.copies, v.num_agents), np.int64)
    for _ in range(2 * a.max_cycles):
        v.step(acts)
    t = time.perf_counter()
    for _ in range(a.steps):
        v.step(acts)
    s = (time.perf_counter() - t) / a.steps
    v.close()
    return s


def check_us():
    """Us for ``validate`` and ``dataclasses.replace`` of PCS's default config."""
    import dataclasses
    from seer_runtime.config import validate
    cfg = seer_envs.get("pcs_v0").build_config({})
    n = 20000
    return [1e6 * min(timeit.repeat(f, number=n, repeat=5)) / n
            for f in (lambda: validate(cfg), lambda: dataclasses.replace(cfg))]


def new_world_us(a):
    """Us a copy for its draw and checked config, none from the cache."""
    v = seer_envs.vector_env("pcs_v0", a.copies, grid_width=a.grid, grid_height=a.grid, num_threads=1,
                             call_interarrival_mean=60.0, param_sampler=SAMPLERS["drawn"])
    v.reset(seed=0)
    w = v.core.batch.worlds
    idx, seeds = list(range(a.copies)), itertools.count(10**6, a.copies)

    def once():
        w._cache.clear()
        s = next(seeds)
        w.next_worlds(idx, range(s, s + a.copies))
    best = min(timeit.repeat(once, number=1, repeat=max(3, a.rounds)))
    v.close()
    return 1e6 * best / a.copies


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--copies", type=int, default=2048)
    p.add_argument("--grid", type=int, default=2)
    p.add_argument("--max-cycles", type=int, default=7)
    p.add_argument("--steps", type=int, default=70)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    times = {k: [] for k in SAMPLERS}
    for r in range(a.rounds):
        for k in (list(SAMPLERS) if r % 2 == 0 else list(SAMPLERS)[::-1]):
            times[k].append(seconds_per_step(SAMPLERS[k], a))
    med = {k: statistics.median(v) for k, v in times.items()}
    starts = a.copies / a.max_cycles            # copy starts a step, on average
    print(f"{a.copies} x PCS {a.grid}x{a.grid}, {a.max_cycles}-step episodes, 1 thread, median of {a.rounds} rounds")
    for k in SAMPLERS:
        print(f"  {k:<7} {1e3 * med[k]:8.2f} ms a step")
    print(f"  drawn - cached: {1e6 * (med['drawn'] - med['cached']) / starts:.1f} us per copy start")
    print(f"  a new world alone (draw and checked config): {new_world_us(a):.1f} us a copy (best of "
          f"{max(3, a.rounds)})")
    print("  validate(PCSConfig()) {:.1f} us, dataclasses.replace(PCSConfig()) {:.1f} us".format(*check_us()))


if __name__ == "__main__":
    main()
