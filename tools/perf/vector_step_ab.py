# SPDX-License-Identifier: BSD-3-Clause
"""A/B of the vector env's Python step path: ``seer_envs/views/vector.py`` at a
git revision against the working tree's, in one process over the same
compiled engine, beside the engine alone and SuperSuit, interleaved in rounds.

    python tools/perf/vector_step_ab.py [--rev main] [--copies 64] [--grid 8]
        [--steps 40] [--rounds 5] [--max-cycles 1000000] [--team-reward-share 0] [--threads 1]

Runners (PCS, ``--copies`` copies of a ``--grid`` square grid, ``--threads``
threads (SuperSuit: 1 each), the same random actions):

- ``vector @REV``: the revision's ``vector.py`` (loaded from ``git show``);
- ``vector (tree)``: this tree's;
- ``engine floor``: what any Python layer must call per step: write the
  actions, ``inject_blocks``, ``run_until``, the PCS boundary over every
  copy (copies kept at one step count; no validation, no copies out, no
  auto-reset);
- ``supersuit``: ``concat_vec_envs_v1(..., num_cpus=0)`` over single envs.

Prints env steps/s of the median round and the ratios tree/REV,
tree/SuperSuit, floor/SuperSuit (the most any change to ``vector.py``
could reach) and the Python share of the tree's step.
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile

import numpy as np

from seer_bench import interleave, median_rates, paired
from seer_bench.workloads import supersuit_pcs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_rev(rev):
    # seer_envs/vector.py before the layered layout (issue 53)
    for rel in ("seer_envs/views/vector.py", "seer_envs/vector.py"):
        out = subprocess.run(["git", "show", f"{rev}:{rel}"], cwd=ROOT, capture_output=True, text=True)
        if out.returncode == 0:
            break
    out.check_returncode()
    src = out.stdout
    path = os.path.join(tempfile.mkdtemp(), "vector_rev.py")
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location("vector_rev", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rev", default="main")
    p.add_argument("--copies", type=int, default=64)
    p.add_argument("--grid", type=int, default=8)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--max-cycles", type=int, default=10**6)
    p.add_argument("--team-reward-share", type=float, default=0.0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-supersuit", action="store_true")
    a = p.parse_args()
    from seer_envs.views import vector as tree
    rev = load_rev(a.rev)
    E, g = a.copies, a.grid
    kw = dict(grid_width=g, grid_height=g, max_cycles=a.max_cycles)
    if a.team_reward_share:
        kw["team_reward_share"] = a.team_reward_share
    A = g * g
    rng = np.random.default_rng(0)
    acts = [rng.integers(0, 6, (E, A)) for _ in range(a.steps)]
    runners = {}
    for name, mod in ((f"vector @{a.rev}", rev), ("vector (tree)", tree)):
        v = mod.vector_env("pcs_v0", E, num_threads=a.threads, **kw)
        v.reset(seed=0)
        runners[name] = (lambda v=v: [v.step(x) for x in acts])
    fl = tree.vector_env("pcs_v0", E, num_threads=a.threads, **kw)
    fl.reset(seed=0)
    cp, eng, dt = fl._batch.copies, fl.engine, fl.config.dt
    done = np.zeros(E * A, bool)
    step_no = [0]

    def floor():
        for x in acts:
            k = step_no[0]
            cp.write_actions(x.reshape(-1), done)
            eng.inject(k * dt, cp.action_kind, 0, E * A, execute=True)
            eng.run_until((k + 1) * dt)
            step_no[0] = k + 1
            cp.boundary(0, E, None, a.threads)
    runners["engine floor"] = floor
    if not a.no_supersuit:
        ssv = supersuit_pcs(E, kw)
        ssv.reset(seed=0)
        flat = [x.reshape(-1) for x in acts]
        runners["supersuit"] = (lambda: [ssv.step(x) for x in flat])
    times = interleave(runners, a.rounds)
    rate = median_rates(times, E * a.steps)
    print(f"PCS {g}x{g}, {E} copies, {a.threads} thread(s), max_cycles {a.max_cycles}, {a.steps} steps x "
          f"{a.rounds} interleaved rounds (median round); load average {os.getloadavg()[0]:.1f}")
    for k, r in rate.items():
        print(f"  {k:<22} {r:>10.0f} env steps/s  {1e6 * E / r:>8.0f} us/step")
    tr, rv, fr = rate["vector (tree)"], rate[f"vector @{a.rev}"], rate["engine floor"]
    print(f"tree / @{a.rev}: {paired(times, 'vector (tree)', f'vector @{a.rev}')}")
    print(f"Python share of the tree's step: {1 - tr / fr:.1%} (of @{a.rev}'s: {1 - rv / fr:.1%})")
    if "supersuit" in rate:
        print(f"tree / SuperSuit: {paired(times, 'vector (tree)', 'supersuit')};  @{a.rev} / SuperSuit: "
              f"{paired(times, f'vector @{a.rev}', 'supersuit')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
