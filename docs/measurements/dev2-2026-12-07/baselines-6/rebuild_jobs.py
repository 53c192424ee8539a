"""Rebuild a ``jobs.jsonl`` for ``benchmarks/baselines.py --resume`` from the
fifth run's raw data (``../baselines-5/eval.csv``): the jobs that do not
depend on our trainers, the fixed policies and BenchMARL's runs, so a
resumed run trains only ours.  The fifth run's own ``jobs.jsonl`` stayed on
the machine that ran it.  A BenchMARL job's per-run wall time was not in its
CSVs; each gets the mean its report printed (409 s PCS, 57 s Aircraft), the
only figure the report makes of them.

    python docs/measurements/dev2-2026-12-07/baselines-6/rebuild_jobs.py OUT_DIR
"""

import csv
import json
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import baselines as B  # noqa: E402

WALL = {B.PCS: 409.0, B.AIRCRAFT: 57.0}      # the fifth run's report, "s a run on average"


def main(out):
    a = B.argparse.Namespace(quick=False, budget=1.0, train_seeds=5, eval_seeds=64, benchmarl_seeds=5,
                             benchmarl_budget=0.2, no_overlap=False, num_threads=1)
    b = B.budgets(a)
    scores = defaultdict(dict)            # (task, policy, train_seed) -> {eval_seed: return}, file order kept
    with open(os.path.join(HERE, "..", "baselines-5", "eval.csv")) as f:
        for r in csv.DictReader(f):
            scores[(r["task"], r["policy"], r["train_seed"])][int(r["eval_seed"])] = float(r["episode_return"])
    os.makedirs(out, exist_ok=True)
    n = 0
    with open(os.path.join(out, "jobs.jsonl"), "w") as f:
        for task in B.TASKS:
            for j in B.task_jobs(task, a, b[task]):
                seeds = j["seeds"]
                if j["kind"] == "fixed":
                    res = {"scores": {pol: [v[s] for s in seeds] for (t, pol, ts), v in scores.items()
                                      if t == task and ts == ""}}
                elif j["kind"] == "benchmarl":
                    res = {"scores": {m: [scores[(task, f"benchmarl {j['algo']} ({m})", str(j["seed"]))][s]
                                          for s in seeds] for m in B.MODES},
                           "run": dict(algo=j["algo"], seed=j["seed"], wall_s=WALL[task],
                                       iterations=j["b"]["updates"],
                                       env_steps=j["b"]["updates"] * j["b"]["num_envs"]
                                       * (48 if task == B.PCS else j["b"]["episode"]))}
                else:
                    continue
                f.write(json.dumps({"key": list(B.job_key(j)), "result": res}) + "\n")
                n += 1
    print(f"wrote {n} jobs to {os.path.join(out, 'jobs.jsonl')}")


if __name__ == "__main__":
    main(sys.argv[1])
