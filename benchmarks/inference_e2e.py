# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end inference: a batched torch policy plus env.step, serial SEER
against num_threads="auto", measured side by side in one run.

    python benchmarks/inference_e2e.py [--steps 50] [--repeats 3] [--torch-threads 1]

The policy is MAPPO-sized: an actor MLP (obs -> 64 -> 64 -> actions, tanh)
over all agents in one batch.  Each step: policy forward on the observation
array, then ``env.step_arrays``.  Reported per configuration: inference
steps/s, and per-step latency split into policy and environment time;
then the end-to-end ratio auto / serial.  Two warm-up steps are not timed,
and with "auto" neither are the thread tuner's closed-loop steps (the
steady rate; ``loop_steps`` says how many).  Also reports which OpenMP
runtimes are loaded.
"""

import argparse
import os
import re
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn as nn

import seer_envs
from seer_bench import LOOP_MAX, closed_loop_running


class Actor(nn.Module):
    def __init__(self, obs_dim, out_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                                 nn.Linear(64, out_dim))

    def forward(self, x):
        return self.net(x)


def workloads():
    out = [("pcs_v0", "PCS 64x64", dict(grid_width=64, grid_height=64))]
    if "aircraft_v0" in seer_envs.registry():
        out.insert(0, ("aircraft_v0", "Aircraft 1024 UAVs", dict(num_uavs=1024)))
    return out


def run(name, kw, threads, steps, seed=0):
    env = seer_envs.make(name, num_threads=threads, max_cycles=10**6, **kw)
    obs = env.reset_arrays(seed=seed)
    space = env.action_space(env.possible_agents[0])
    discrete = hasattr(space, "n")
    actor = Actor(obs.shape[1], space.n if discrete else int(np.prod(space.shape)))
    pol = envt = 0.0
    n = warm = 0
    with torch.inference_mode():
        while n < steps:
            t0 = time.perf_counter()
            out = actor(torch.from_numpy(obs))
            acts = (out.argmax(-1).numpy() if discrete else torch.tanh(out).numpy())
            t1 = time.perf_counter()
            obs, rew, term, trunc = env.step_arrays(acts)
            t2 = time.perf_counter()
            if warm < 2 or (closed_loop_running(env) and warm < LOOP_MAX):
                warm += 1
            else:
                pol += t1 - t0
                envt += t2 - t1
                n += 1
            if not env.agents:
                obs = env.reset_arrays(seed=seed + n + warm)
    return {"policy_ms": pol / n * 1e3, "env_ms": envt / n * 1e3, "sps": n / (pol + envt),
            "threads": env.num_threads, "choice": env.thread_choice.to_dict(), "loop_steps": warm - 2}


def openmp_runtimes():
    libs = set()
    try:
        for line in open("/proc/self/maps"):
            path = line.split()[-1]
            if re.match(r"lib(g|i)?omp[-.]", os.path.basename(path)):
                libs.add(path)
    except OSError:
        pass
    return sorted(libs)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--torch-threads", type=int, default=1,
                   help="torch intra-op threads (1 leaves the cores to SEER)")
    a = p.parse_args()
    torch.set_num_threads(a.torch_threads)
    print(f"End-to-end inference: torch {torch.__version__} ({a.torch_threads} intra-op thread(s)), "
          f"{a.steps} steps x {a.repeats} interleaved repeats, medians\n")
    print(f"{'workload':<20} {'SEER threads':<16} {'steps/s':>8} {'policy ms':>10} {'env ms':>8}")
    for name, label, kw in workloads():
        res = {"serial": [], "auto": []}
        for _ in range(a.repeats):
            res["serial"].append(run(name, kw, 1, a.steps))
            res["auto"].append(run(name, kw, "auto", a.steps))
        med = {k: {m: statistics.median(r[m] for r in v) for m in ("sps", "policy_ms", "env_ms")}
               for k, v in res.items()}
        for k in ("serial", "auto"):
            t = res[k][-1]["threads"]
            print(f"{label:<20} {k + f' ({t})':<16} {med[k]['sps']:>8.1f} {med[k]['policy_ms']:>10.2f} "
                  f"{med[k]['env_ms']:>8.2f}")
        ratio = med["auto"]["sps"] / med["serial"]["sps"]
        target = " (target >= 1.3x: " + ("MET)" if ratio >= 1.3 else "NOT MET)") if "Aircraft" in label else ""
        print(f"{label:<20} end-to-end auto / serial: {ratio:.2f}x{target}\n")
    print("OpenMP runtimes loaded in this process:", ", ".join(openmp_runtimes()) or "none found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
