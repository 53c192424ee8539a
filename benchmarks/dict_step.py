# SPDX-License-Identifier: BSD-3-Clause
"""The PettingZoo dict step against the array step, side by side.

Two envs with the same configuration and seed are stepped in turn with the
same actions (one through ``step_arrays``, one through ``step`` with a dict
built beforehand, as a policy would hand it over), so load on the machine
hits both alike.  Per step it records each call's wall time and, inside it,
the time of the shared engine part (``SeerParallelEnv._advance``: write the
actions, run the engine, the boundary), so the engine's run-to-run noise,
large on a shared machine, can be taken out:

- ``raw``: the median over steps of (dict step - array step) / agents;
- ``min``: (fastest dict step - fastest array step) / agents;
- ``layer``: (min over steps of (dict step - its engine part) - min over
  steps of (array step - its engine part)) / agents: what the dict layer
  costs beyond the array layer (validation, dict building, infos).  The
  minimum, because preemption by other processes only ever adds time and
  on a loaded machine it lands in the few milliseconds of the dict layer
  often enough to move a median.

With ``--plain`` the engine part is not timed (for code without
``_advance``, such as the envs before the template): ``raw`` and ``min``.

    python benchmarks/dict_step.py [--steps 20] [--threads 1 2]
"""

import argparse
import statistics
import time

import numpy as np

import seer_envs

CASES = {
    "aircraft_4096": lambda t: seer_envs.make("aircraft_v0", num_uavs=4096, num_threads=t, max_cycles=10**6),
    "pcs_64x64": lambda t: seer_envs.make("pcs_v0", grid_width=64, grid_height=64, num_threads=t,
                                               max_cycles=10**6),
}


def _actions(env, rng):
    n = len(env.possible_agents)
    space = env.action_space(env.possible_agents[0])
    if hasattr(space, "n"):
        return rng.integers(0, space.n, n)
    return rng.uniform(-1, 1, (n,) + space.shape).astype(np.float32)


def _time_engine_part(env, sink):
    inner = env._advance

    def timed(a):
        t0 = time.perf_counter()
        out = inner(a)
        sink.append(time.perf_counter() - t0)
        return out
    env._advance = timed


def measure(name, threads, steps, warmup=3, plain=False):
    arr_env, dict_env = CASES[name](threads), CASES[name](threads)
    arr_env.reset_arrays(seed=0)
    dict_env.reset(seed=0)
    e_arr, e_dict = [], []
    if not plain:
        _time_engine_part(arr_env, e_arr)
        _time_engine_part(dict_env, e_dict)
    rng = np.random.default_rng(0)
    t_arr, t_dict = [], []
    for k in range(warmup + steps):
        a = _actions(arr_env, rng)
        d = {ag: a[i] for i, ag in enumerate(dict_env.possible_agents)}
        # alternate which env goes first, so neither always inherits the other's cache state
        for which in ((0, 1) if k % 2 else (1, 0)):
            t0 = time.perf_counter()
            if which == 0:
                arr_env.step_arrays(a)
            else:
                dict_env.step(d)
            (t_arr if which == 0 else t_dict).append(time.perf_counter() - t0)
    n = len(arr_env.possible_agents)
    t_arr, t_dict = t_arr[warmup:], t_dict[warmup:]
    med = statistics.median
    out = {"case": name, "threads": threads, "agents": n, "array_ms": med(t_arr) * 1e3,
           "dict_ms": med(t_dict) * 1e3,
           "raw_us_per_agent": med(y - x for x, y in zip(t_arr, t_dict)) / n * 1e6,
           "min_us_per_agent": (min(t_dict) - min(t_arr)) / n * 1e6,
           "layer_us_per_agent": float("nan")}
    if not plain:
        e_arr, e_dict = e_arr[warmup:], e_dict[warmup:]
        # Preemption by other processes only ever adds time: the fastest step
        # of each layer is its cost.
        dict_layer = min(td - ed for td, ed in zip(t_dict, e_dict))
        arr_layer = min(ta - ea for ta, ea in zip(t_arr, e_arr))
        out["layer_us_per_agent"] = (dict_layer - arr_layer) / n * 1e6
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    p.add_argument("--plain", action="store_true", help="do not time the engine part (old code)")
    args = p.parse_args(argv)
    print(f"{'case':<15}{'threads':>8}{'agents':>8}{'array ms':>10}{'dict ms':>10}"
          f"{'raw us/agent':>14}{'min us/agent':>14}{'layer us/agent':>16}")
    for name in args.cases:
        for t in args.threads:
            r = measure(name, t, args.steps, plain=args.plain)
            print(f"{r['case']:<15}{r['threads']:>8}{r['agents']:>8}{r['array_ms']:>10.2f}"
                  f"{r['dict_ms']:>10.2f}{r['raw_us_per_agent']:>14.2f}{r['min_us_per_agent']:>14.2f}"
                  f"{r['layer_us_per_agent']:>16.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
