# SPDX-License-Identifier: BSD-3-Clause
"""Per-copy worlds against one shared config, in one tree, alternated.

    python tools/perf/worlds_ab.py [TREE] [--rounds 9] [--quick]

For 64 x PCS 8x8 and 16 x Aircraft 256 UAVs at 1 and 2 threads, a round
times (each in its own worker process, :mod:`core_ab`'s worker, in
rotating order) the vector env with one shared config twice (A and A')
and with every per-copy field the scenario declares set per copy: floats
spread by +-1% around the shared value (copy ``c`` gets ``x * (1 + 0.01
((c mod 3) - 1))``), so the work stays about the same and what is timed is
the per-copy machinery.  Prints each variant's median seconds per step and
the paired speed ratios per-copy / A and A' / A (the A/A).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from core_ab import WORKER  # noqa: E402

SPREAD = r"""
import json, sys
import seer_envs
from seer_envs.episode.worlds import per_copy_fields
env_id, n, params = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
spec = seer_envs.registry()[env_id]
cfg = spec.build_config(params)
out = {}
for f in per_copy_fields(spec.copies):
    v = getattr(cfg, f)
    if f == "max_cycles" or f in spec.copies.per_copy_counts or isinstance(v, int) or not v or v == float("inf"):
        continue
    out[f] = [v * (1 + 0.01 * ((c % 3) - 1)) for c in range(n)]
print(json.dumps(out))
"""

CASES = [("pcs_v0", 64, dict(grid_width=8, grid_height=8, max_cycles=10**6)),
         ("aircraft_v0", 16, dict(num_uavs=256, max_cycles=10**6, battery_capacity=1e9))]


def _run(tree, code, *args):
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=tree, env=env, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"worker failed in {tree}:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tree", nargs="?", default=".")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    tree = os.path.abspath(a.tree)
    rounds = 1 if a.quick else a.rounds
    blocks, per = (2, 5) if a.quick else (5, 20)
    cases = []
    for env_id, n, params in CASES[:1] if a.quick else CASES:
        spread = _run(tree, SPREAD, env_id, str(n), json.dumps(params))
        for threads in (1,) if a.quick else (1, 2):
            base = dict(kind="vector", env=env_id, n=n, threads=threads, blocks=blocks, per=per, params=params,
                        stat="median")
            cases.append((f"{env_id} x{n} {threads}t", [base, base, dict(base, params=dict(params, **spread))],
                          sorted(spread)))
    try:
        from tqdm import tqdm
    except ImportError:                       # pragma: no cover
        tqdm = None
    todo = [(r, i) for r in range(rounds) for i in range(len(cases))]
    results = {i: [[], [], []] for i in range(len(cases))}
    for r, i in (tqdm(todo, desc="rounds x cases", file=sys.stderr) if tqdm else todo):
        variants = cases[i][1]
        for j in [(r + k) % 3 for k in range(3)]:
            results[i][j].append(_run(tree, WORKER, json.dumps(variants[j])))
    print(f"{'case':<26}{'shared us':>11}{'shared2 us':>12}{'per-copy us':>13}  per-copy/shared [range]"
          "  A/A [range]")
    for i, (name, _, fields) in enumerate(cases):
        a0, a1, w = results[i]
        med = [statistics.median(x) * 1e6 for x in (a0, a1, w)]
        rw = [x / y for x, y in zip(a0, w)]
        ra = [x / y for x, y in zip(a0, a1)]
        print(f"{name:<26}{med[0]:>11.1f}{med[1]:>12.1f}{med[2]:>13.1f}  {statistics.median(rw):.3f} "
              f"[{min(rw):.2f}-{max(rw):.2f}]     {statistics.median(ra):.3f} [{min(ra):.2f}-{max(ra):.2f}]")
    print("per-copy fields: " + "; ".join(f"{name}: {', '.join(f)}" for name, _, f in cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
