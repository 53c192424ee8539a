"""BenchMARL's own IPPO or MAPPO on Aircraft at the suite's full budget
(200 iterations of 2 copies x 100 steps, 64 UAVs: the budget of the
baselines' "IPPO" rows, not the 0.2 of it that the suite's check runs),
through the suite's own job (``baselines.run_job``: the same configs, batch
geometry, learning rate and 64 held-out seeds).

    python full.py SEED ALGO [UPDATES]

Prints one JSON line: the greedy and sampled means over the held-out seeds;
appends the job's whole result to ``full-jobs.jsonl`` as the suite's
``jobs.jsonl`` holds it (key: the job the suite's ``--benchmarl-full`` runs),
so a ``--resume`` of the suite keeps it."""
import json
import os
import sys
import time

ROOT = os.environ.get("SEER_ROOT") or os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 4))
sys.path[:0] = [os.path.join(ROOT, "benchmarks"), ROOT]
import numpy as np  # noqa: E402

import baselines as B  # noqa: E402

seed, algo = int(sys.argv[1]), sys.argv[2]
updates = int(sys.argv[3]) if len(sys.argv) > 3 else 200
b = dict(updates=updates, num_envs=2, num_uavs=64, episode=100)
job = dict(kind="benchmarl", task=B.AIRCRAFT, algo=algo, seed=seed, b=b, num_threads=1, variant="full",
           seeds=list(range(B.EVAL_SEED0, B.EVAL_SEED0 + 64)), env_kw=B.env_kw_of(B.AIRCRAFT, b))
t = time.time()
r = B.run_job(job)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "full-jobs.jsonl"), "a") as f:
    f.write(json.dumps({"key": list(B.job_key(job)), "result": r}, default=float) + "\n")
print(json.dumps(dict(seed=seed, algo=algo, updates=updates, **{m: float(np.mean(v)) for m, v in r["scores"].items()},
                      train_s=round(r["run"]["wall_s"]), wall=round(time.time() - t))), flush=True)
