# SPDX-License-Identifier: BSD-3-Clause
"""The vector env's episode restarts, at 1 and 2 threads, side by side in one
run: every copy restarted at once (``Engine.reset_lps`` runs the copies'
``on_init`` hooks on the engine's threads), and whole steps of copies whose
episodes end every ``--max-cycles`` steps (auto-reset included).

    python tools/perf/vector_restart.py [--copies 64] [--grid 8]
        [--max-cycles 48] [--rounds 9]

Reported: milliseconds per restart of all copies and per step (median
round), and the 2-thread speedup of each (median of per-round ratios).
"""

import argparse
import os

import numpy as np

from seer_envs.views.vector import vector_env

from seer_bench import interleave, median_rates, paired


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--copies", type=int, default=64)
    p.add_argument("--grid", type=int, default=8)
    p.add_argument("--max-cycles", type=int, default=48, help="episode length of the stepping part")
    p.add_argument("--restarts", type=int, default=10, help="restarts per runner per round")
    p.add_argument("--rounds", type=int, default=9)
    a = p.parse_args()
    E, g = a.copies, a.grid
    kw = dict(grid_width=g, grid_height=g)
    every = np.arange(E)
    rng = np.random.default_rng(0)
    steps = 2 * a.max_cycles
    acts = [rng.integers(0, 5, (E, g * g)) for _ in range(steps)]
    runners = {}
    for t in (1, 2):
        v = vector_env("pcs_v0", E, num_threads=t, max_cycles=10**6, **kw)
        v.reset(seed=0)
        runners[f"restart {t} thr"] = (lambda v=v: [v._batch.restart(every) for _ in range(a.restarts)])
        s = vector_env("pcs_v0", E, num_threads=t, max_cycles=a.max_cycles, **kw)
        s.reset(seed=0)
        runners[f"steps {t} thr"] = (lambda s=s: [s.step(x) for x in acts])
    times = interleave(runners, a.rounds)
    print(f"PCS {g}x{g}, {E} copies, {a.rounds} interleaved rounds (median round); "
          f"load average {os.getloadavg()[0]:.1f}")
    for t in (1, 2):
        r = median_rates(times, 1)
        print(f"{t} thread(s): restart of all copies {1e3 / r[f'restart {t} thr'] / a.restarts:.2f} ms, "
              f"step with episodes of {a.max_cycles} steps {1e3 / r[f'steps {t} thr'] / steps:.3f} ms")
    print(f"2-thread speedup: restart {paired(times, 'restart 2 thr', 'restart 1 thr')}, "
          f"steps {paired(times, 'steps 2 thr', 'steps 1 thr')}")


if __name__ == "__main__":
    main()
