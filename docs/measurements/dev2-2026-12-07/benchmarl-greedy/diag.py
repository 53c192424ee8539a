"""Trains BenchMARL's MAPPO on Aircraft (seed 1, the baselines' BenchMARL
budget) and scores its greedy actor two ways on held-out seeds 10000-10003:
baselines.evaluate (the suite's harness) and TorchRL's own deterministic
rollout on SEER's TorchRL env; prints both, and the actions' range."""
import sys
import os
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 4))
sys.path[:0] = [os.path.join(ROOT, "benchmarks"), os.path.join(ROOT, "examples"), ROOT]
import numpy as np, torch
import benchmarl_check, baselines, seer_envs
from torchrl.envs.utils import ExplorationType, set_exploration_type
task="aircraft_v0"; env_kw=dict(num_uavs=64, max_cycles=100, continuous_actions=True)
captured={}
orig=benchmarl_check._policy
def cap(module, mode):
    captured['m']=module; return orig(module, mode)
benchmarl_check._policy=cap
pols, wall, it = benchmarl_check.train(task, "mappo", 1, 8000, env_kw, 2, 100, **baselines.example_ppo(task,"mappo"))
m=captured['m']
print("ours-eval greedy per seed", np.round(baselines.evaluate(task, pols["greedy"], range(10000,10004), env_kw),1))
from seer_envs.integrations.torchrl import torchrl_env
for kind in (ExplorationType.DETERMINISTIC, ExplorationType.RANDOM):
    env = torchrl_env(task, 1, num_threads=1, include_state=True, **env_kw)
    rets=[]
    for s in range(10000,10004):
        env.set_seed(s)
        with torch.no_grad(), set_exploration_type(kind):
            td = env.rollout(100, m, break_when_any_done=True)
        rets.append(float(td["next","agents","reward"].sum(1).mean()))
        if s==10000:
            a=td["agents","action"]; print(kind, "action |a|>0.99 frac", float((a.abs()>0.99).float().mean()), "min/max", float(a.min()), float(a.max()))
    print(kind, "torchrl rollout per seed", np.round(rets,1))
# raw distribution params
env = torchrl_env(task, 1, num_threads=1, include_state=True, **env_kw); env.set_seed(10000)
td=env.reset()
with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
    out=m(td)
print({k: (v.shape, float(v.abs().mean())) for k,v in out["agents"].items() if k in ("loc","scale","action")})
