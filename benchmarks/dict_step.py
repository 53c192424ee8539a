# SPDX-License-Identifier: BSD-3-Clause
"""The PettingZoo dict step against the array step, side by side.

Two envs with the same configuration and seed are stepped in turn with the
same actions (one through ``step_arrays``, one through ``step`` with a
dict built beforehand, as a policy would hand it over), so load on the
machine hits both alike.  Prints the median step time of each and the dict
path's overhead per agent: (dict - array) / agents.

    PYTHONPATH=$PWD python benchmarks/dict_step.py [--steps 20] [--threads 1 2]
"""

import argparse
import statistics
import time

import numpy as np

from seer_envs import aircraft_v0, pcs_v0

CASES = {
    "aircraft_4096": lambda t: aircraft_v0.parallel_env(num_uavs=4096, num_threads=t, max_cycles=10**6),
    "pcs_64x64": lambda t: pcs_v0.parallel_env(grid_width=64, grid_height=64, num_threads=t,
                                               max_cycles=10**6),
}


def _actions(env, rng):
    n = len(env.possible_agents)
    space = env.action_space(env.possible_agents[0])
    if hasattr(space, "n"):
        return rng.integers(0, space.n, n)
    return rng.uniform(-1, 1, (n,) + space.shape).astype(np.float32)


def measure(name, threads, steps, warmup=3):
    arr_env, dict_env = CASES[name](threads), CASES[name](threads)
    arr_env.reset_arrays(seed=0)
    dict_env.reset(seed=0)
    rng = np.random.default_rng(0)
    t_arr, t_dict = [], []
    for k in range(warmup + steps):
        a = _actions(arr_env, rng)
        d = {ag: a[i] for i, ag in enumerate(dict_env.possible_agents)}
        t0 = time.perf_counter()
        arr_env.step_arrays(a)
        t1 = time.perf_counter()
        dict_env.step(d)
        t2 = time.perf_counter()
        if k >= warmup:
            t_arr.append(t1 - t0)
            t_dict.append(t2 - t1)
    n = len(arr_env.possible_agents)
    ma, md = statistics.median(t_arr), statistics.median(t_dict)
    return {"case": name, "threads": threads, "agents": n, "array_ms": ma * 1e3, "dict_ms": md * 1e3,
            "overhead_us_per_agent": (md - ma) / n * 1e6}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    args = p.parse_args(argv)
    print(f"{'case':<15}{'threads':>8}{'agents':>8}{'array ms':>10}{'dict ms':>10}{'dict-array us/agent':>21}")
    for name in args.cases:
        for t in args.threads:
            r = measure(name, t, args.steps)
            print(f"{r['case']:<15}{r['threads']:>8}{r['agents']:>8}{r['array_ms']:>10.2f}"
                  f"{r['dict_ms']:>10.2f}{r['overhead_us_per_agent']:>21.2f}", flush=True)


if __name__ == "__main__":
    main()
