# SPDX-License-Identifier: BSD-3-Clause
"""A/B (and A/A) of env steps between source trees, each step measured in
its own worker process, the trees alternated round by round.

    python tools/perf/core_ab.py TREE_A TREE_B [TREE_C ...] [--rounds 9] [--only single|vector]
                                 [--stat median|min] [--blocks 5] [--quick]

Each tree is a built checkout (its ``.so`` files in place).  A round runs,
for every case and every tree (in rotating order), one worker that times
the median (``--stat min``: the least) over ``--blocks`` blocks of the
seconds per step: the single env on PCS 16x16 and Aircraft 64 UAVs, through
``step`` (dicts) and ``step_arrays``, and the vector env on 64 x PCS 8x8 and
16 x Aircraft 256, at 1 and 2 threads.
Prints per case each tree's median and the paired ratios of every tree to
the first (above 1: faster than the first).  Pass the first tree twice
(``A A B``) for an A/A beside the A/B.  On a machine that other work shares
in bursts, ``--stat min --blocks 15`` keeps each worker's fastest block (the
least disturbed), which spreads the A/A far less than the median.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

WORKER = r"""
import json, statistics, sys, time
import numpy as np
import seer_envs
case = json.loads(sys.argv[1])
kind, env_id, n, threads, blocks, per, stat = (case[k] for k in ("kind", "env", "n", "threads", "blocks", "per", "stat"))
params = case["params"]
rng = np.random.default_rng(0)
if kind == "vector":
    env = seer_envs.vector_env(env_id, n, num_threads=threads, **params)
    env.reset(seed=0)
    sp = env.single_action_space
    shape = (n, env.num_agents) + tuple(sp.shape or ())
    acts = [(rng.integers(0, sp.n, shape) if hasattr(sp, "n") else rng.uniform(-1, 1, shape).astype(np.float32))
            for _ in range(8)]
    step = env.step
else:
    env = seer_envs.make(env_id, num_threads=threads, **params)
    env.reset(seed=0)
    sp = env.action_space(env.possible_agents[0])
    A = len(env.possible_agents)
    shape = (A,) + tuple(sp.shape or ())
    arrs = [(rng.integers(0, sp.n, shape) if hasattr(sp, "n") else rng.uniform(-1, 1, shape).astype(np.float32))
            for _ in range(8)]
    if kind == "dict":
        acts = [dict(zip(env.possible_agents, (int(x) for x in a) if hasattr(sp, "n") else a)) for a in arrs]
        step = env.step
    else:
        acts, step = arrs, env.step_arrays
for k in range(20):
    step(acts[k % 8])
times = []
for b in range(blocks):
    t0 = time.perf_counter()
    for k in range(per):
        step(acts[k % 8])
    times.append((time.perf_counter() - t0) / per)
print(json.dumps(min(times) if stat == "min" else statistics.median(times)))
"""

PCS_BIG = dict(grid_width=16, grid_height=16, max_cycles=10**6)
AIR = dict(num_uavs=64, max_cycles=10**6, battery_capacity=1e9)


def cases(quick, only="all", stat="median", blocks=5):
    out = []
    for kind in ("array", "dict"):
        out.append(dict(kind=kind, env="pcs_v0", n=1, threads=1, params=PCS_BIG))
        out.append(dict(kind=kind, env="aircraft_v0", n=1, threads=1, params=AIR))
    for threads in (1, 2):
        out.append(dict(kind="vector", env="pcs_v0", n=64, threads=threads,
                        params=dict(grid_width=8, grid_height=8, max_cycles=10**6)))
        out.append(dict(kind="vector", env="aircraft_v0", n=16, threads=threads,
                        params=dict(num_uavs=256, max_cycles=10**6, battery_capacity=1e9)))
    for c in out:
        c["blocks"], c["per"] = (2, 10) if quick else (blocks, 60 if c["kind"] != "vector" else 20)
        c["stat"] = stat
    if only != "all":
        out = [c for c in out if (c["kind"] == "vector") == (only == "vector")]
    return out[:2] if quick else out


def label(c):
    what = f"{c['env']} x{c['n']}" if c["kind"] == "vector" else c["env"]
    return f"{c['kind']:<6} {what:<18} {c['threads']}t"


def run(tree, case):
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run([sys.executable, "-c", WORKER, json.dumps(case)], cwd=tree, env=env,
                         capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"worker failed in {tree}:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trees", nargs="+")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", choices=("all", "single", "vector"), default="all",
                   help="the single-env cases, the vector-env cases, or both")
    p.add_argument("--stat", choices=("median", "min"), default="median",
                   help="each worker's figure: the median or the least seconds per step over its blocks")
    p.add_argument("--blocks", type=int, default=5, help="timed blocks per worker")
    a = p.parse_args()
    trees = [os.path.abspath(t) for t in a.trees]
    if len(trees) < 2:
        p.error("give at least two trees")
    rounds = 1 if a.quick else a.rounds
    results = {i: {j: [] for j in range(len(trees))} for i in range(len(cases(a.quick, a.only, a.stat, a.blocks)))}
    try:
        from tqdm import tqdm
    except ImportError:                       # pragma: no cover
        tqdm = None
    todo = [(r, i) for r in range(rounds) for i in range(len(cases(a.quick, a.only, a.stat, a.blocks)))]
    bar = tqdm(todo, desc="rounds x cases", file=sys.stderr) if tqdm else todo
    for r, i in bar:
        case = cases(a.quick, a.only, a.stat, a.blocks)[i]
        order = list(range(len(trees)))
        order = order[r % len(order):] + order[:r % len(order)]
        for j in order:
            results[i][j].append(run(trees[j], case))
    print(f"{'case':<32}" + "".join(f"  tree {j} us" for j in range(len(trees)))
          + "".join(f"  {j}/0 med [range]" for j in range(1, len(trees))))
    for i, case in enumerate(cases(a.quick, a.only, a.stat, a.blocks)):
        med = [statistics.median(results[i][j]) * 1e6 for j in range(len(trees))]
        line = f"{label(case):<32}" + "".join(f"  {m:>9.1f}" for m in med)
        for j in range(1, len(trees)):
            ratios = [x / y for x, y in zip(results[i][0], results[i][j])]   # speed ratio: tree j / tree 0
            line += f"  {statistics.median(ratios):.3f} [{min(ratios):.2f}-{max(ratios):.2f}]"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
