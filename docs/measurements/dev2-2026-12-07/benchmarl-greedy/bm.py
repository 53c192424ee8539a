"""BenchMARL MAPPO (or IPPO) through benchmarks/benchmarl_check.py at the
baselines' BenchMARL budget, with one setting changed (scratch; the
measurement record's "BenchMARL's greedy MAPPO below random").

    python bm.py TASK ALGO SEED VARIANT    # VARIANT: base, or k=v[,k=v]: scale, gamma, lr, iters, evals

Prints one JSON line: the greedy and sampled means over 16 held-out seeds."""
import sys, json, time
import os
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 4))
sys.path[:0] = [os.path.join(ROOT, "benchmarks"), os.path.join(ROOT, "examples"), ROOT]
import numpy as np
import benchmarl_check, baselines
task, algo, seed, variant = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
extra = dict(kv.split("=") for kv in variant.split(",") if "=" in kv)
from seer_envs.integrations import benchmarl as sb
orig = sb.SeerTaskClass.get_env_transforms
if "scale" in extra:
    from torchrl.envs.transforms import RewardScaling
    s = float(extra["scale"])
    sb.SeerTaskClass.get_env_transforms = lambda self, env: [RewardScaling(0.0, s, in_keys=[("agents", "reward")])]
from benchmarl.experiment import ExperimentConfig
og = ExperimentConfig.get_from_yaml
def patched(*a, **k):
    c = og(*a, **k)
    if "gamma" in extra: c.gamma = float(extra["gamma"])
    return c
ExperimentConfig.get_from_yaml = staticmethod(patched)
sb.ExperimentConfig.get_from_yaml = staticmethod(patched)
kw = baselines.example_ppo(task, algo)
if "lr" in extra: kw["lr"] = float(extra["lr"])
if task == "aircraft_v0":
    env_kw = dict(num_uavs=64, max_cycles=100, continuous_actions=True); steps = 100; copies = 2; frames = int(extra.get("iters", 40)) * 200
else:
    env_kw = {}; steps = 48; copies = 16; frames = int(extra.get("iters", 30)) * 768
pols, wall, iters = benchmarl_check.train(task, algo, seed, frames, dict(env_kw, max_cycles=steps), copies, steps, **kw)
seeds = range(10000, 10000 + int(extra.get("evals", 16)))
res = {m: float(np.mean(baselines.evaluate(task, pols[m], seeds, env_kw))) for m in ("greedy", "sampled")}
print(json.dumps(dict(task=task, algo=algo, seed=seed, variant=variant, wall=round(wall), **res)), flush=True)
