# SPDX-License-Identifier: BSD-3-Clause
"""A/B of the single env's step (or a vector env's, ``--vector``): this
tree against a git revision, each in its own process, alternated round by
round on the same machine.

    python tools/perf/single_step_ab.py [--rev ff92699] [--rounds 7] [--blocks 5] [--threads 1]
        [--rev-tree DIR] [--vector COPIES [--grid 8] [--copy-parallel auto|team|cg]] [--busy 0]

The revision is unpacked into a temporary folder (``git archive``) and built
there (``setup.py build_ext --inplace``, about a minute on 2 cores) unless
its compiled sources equal this tree's, in which case this tree's
extensions are copied; ``--rev-tree DIR`` uses a tree already unpacked and
built there instead (kept afterwards).  Each round runs one worker process per tree, in
alternating order: ``step_arrays`` with random actions on PCS 16x16 and
Aircraft 64 UAVs (``--threads`` threads, episodes that never end), the
median over ``--blocks`` blocks of 100 steps of the time per step.  With
``--vector COPIES`` the worker steps a vector env of PCS on a ``--grid``
square instead (``COPIES`` copies, ``--threads`` threads, laid out as
``--copy-parallel`` says: ``auto`` as it lays itself out, ``team`` or ``cg``
forced; random actions, as ``vector_env.py``'s), in blocks of 40 steps.
``--busy N`` runs N busy-loop processes beside every round (as
``vector_env.py --busy``).  Prints each tree's median over rounds and the paired ratio tree / revision
(median and range of the per-round ratios): above 1 the tree is faster.
"""

import argparse
import filecmp
import glob
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile

from seer_bench import load1, start_busy, stop                 # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WORKER = r"""
import json, os, statistics, sys, time
import numpy as np
import seer_envs
# the tree's own package (run with cwd and PYTHONPATH the tree), not an installed one
if not os.path.realpath(seer_envs.__file__).startswith(os.path.realpath(os.getcwd()) + os.sep):
    sys.exit(f"seer_envs was imported from {seer_envs.__file__}, not from this tree")
threads, blocks, vector = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])


def per_step(step, acts, warm):
    # the median over blocks of the seconds per step, after `warm` untimed steps
    for a in acts[:warm]:
        step(a)
    per = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for a in acts:
            step(a)
        per.append((time.perf_counter() - t0) / len(acts))
    return statistics.median(per)


if vector:
    from seer_envs.views.vector import vector_env
    E, g, cp = vector["copies"], vector["grid"], vector["copy_parallel"]
    v = vector_env("pcs_v0", E, num_threads=threads, grid_width=g, grid_height=g, max_cycles=10**6,
                   copy_parallel={"auto": None, "team": False, "cg": True}[cp])
    v.reset(seed=0)
    n_act = v.single_action_space.n
    rng = np.random.default_rng(0)
    acts = [rng.integers(0, n_act, (E, g * g)) for _ in range(40)]
    print(json.dumps({f"PCS {g}x{g} x {E} ({v.layout})": per_step(v.step, acts, 10)}))
    sys.exit(0)
envs = {
    "PCS 16x16": lambda: seer_envs.make("pcs_v0", num_threads=threads, grid_width=16, grid_height=16,
                                             max_cycles=10**6),
    "Aircraft 64": lambda: seer_envs.make("aircraft_v0", num_threads=threads, num_uavs=64,
                                                    battery_capacity=1e9, max_cycles=10**6),
}
out = {}
for name, make in envs.items():
    env = make()
    env.reset_arrays(seed=0)
    space = env.action_space(env.possible_agents[0])
    n = len(env.possible_agents)
    rng = np.random.default_rng(0)
    if hasattr(space, "n"):
        acts = [rng.integers(0, space.n, n) for _ in range(100)]
    else:
        acts = [rng.uniform(-1, 1, (n,) + space.shape).astype(np.float32) for _ in range(100)]
    out[name] = per_step(env.step_arrays, acts, 20)
print(json.dumps(out))
"""


def _compiled_sources(tree):
    return sorted(os.path.relpath(p, tree) for pat in ("**/*.pyx", "**/*.pxd", "**/*.pxi", "**/src/*.h")
                  for p in glob.glob(os.path.join(tree, pat), recursive=True)
                  if "/build/" not in p and "/tests/" not in p)


def prepare(rev):
    """The revision unpacked and built in a temporary folder."""
    dest = tempfile.mkdtemp(prefix=f"seer-{rev}-")
    data = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    same = _compiled_sources(dest) == _compiled_sources(ROOT) and all(
        filecmp.cmp(os.path.join(dest, p), os.path.join(ROOT, p), shallow=False)
        for p in _compiled_sources(ROOT))
    if same:
        for so in glob.glob(os.path.join(ROOT, "**", "*.so"), recursive=True):
            rel = os.path.relpath(so, ROOT)
            if not rel.startswith("build"):
                os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
                shutil.copy2(so, os.path.join(dest, rel))
    else:
        print(f"building {rev} in {dest} (its compiled sources differ from this tree's) ...", flush=True)
        subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-j", str(os.cpu_count())],
                       cwd=dest, check=True, capture_output=True)
    return dest


def run(tree, threads, blocks, vector=None):
    env = dict(os.environ, PYTHONPATH=tree)
    r = subprocess.run([sys.executable, "-c", WORKER, str(threads), str(blocks), json.dumps(vector)],
                       cwd=tree, env=env, capture_output=True, text=True)
    if r.returncode != 0:       # a revision without what the worker steps, say: say why
        sys.exit(f"single_step_ab.py: the worker failed in {tree}:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rev", help="the revision to compare with (default ff92699; with --rev-tree, "
                                  "only its name in the output)")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--blocks", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rev-tree", help="the revision already unpacked and built in this folder")
    p.add_argument("--vector", type=int, metavar="COPIES",
                   help="step a vector env of PCS with this many copies instead of the single envs")
    p.add_argument("--grid", type=int, default=8, help="with --vector: the PCS grid's side")
    p.add_argument("--copy-parallel", choices=("auto", "team", "cg"), default="auto",
                   help="with --vector: its layout (auto: as it lays itself out)")
    p.add_argument("--busy", type=int, default=0,
                   help="busy-loop processes beside the rounds (a machine that is not idle)")
    a = p.parse_args()
    if a.busy < 0:
        p.error("--busy must be >= 0")
    vector = None
    if a.vector is not None:
        if a.vector < 1 or a.grid < 1:
            p.error("--vector and --grid must be positive")
        vector = {"copies": a.vector, "grid": a.grid, "copy_parallel": a.copy_parallel}
    old = a.rev_tree or prepare(a.rev or "ff92699")
    # the other tree's name in the output: the revision, else the folder given
    a.rev = a.rev or (a.rev_tree.rstrip("/") if a.rev_tree else "ff92699")
    busy = start_busy(a.busy)
    try:
        trees = {"tree": ROOT, a.rev: old}
        times = {k: [] for k in trees}
        for r in range(a.rounds):
            order = list(trees) if r % 2 == 0 else list(trees)[::-1]
            for k in order:
                times[k].append(run(trees[k], a.threads, a.blocks, vector))
        what = "vector env step" if vector else "single env step_arrays"
        print(f"{what}, {a.threads} thread(s), {a.rounds} alternated rounds x {a.blocks} "
              f"blocks of {40 if vector else 100} steps, {a.busy} busy-loop processes beside them; "
              f"load average {load1():.1f}")
        for env in times["tree"][0]:
            t = [x[env] for x in times["tree"]]
            o = [x[env] for x in times[a.rev]]
            ratios = [y / x for x, y in zip(t, o)]
            print(f"  {env:<12} tree {1e6 * statistics.median(t):8.1f} us/step   @{a.rev} "
                  f"{1e6 * statistics.median(o):8.1f} us/step   tree speed / @{a.rev}: "
                  f"{statistics.median(ratios):.3f} (rounds {min(ratios):.3f}-{max(ratios):.3f})")
    finally:
        stop(busy)
        if not a.rev_tree:
            shutil.rmtree(old, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
