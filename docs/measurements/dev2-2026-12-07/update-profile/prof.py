"""One Aircraft IPPO update at 32 copies x 100 steps x 64 UAVs (204,800 rows,
the examples' 4 epochs x 4 minibatches, torch at 1 thread), timed, then
profiled with torch.profiler when an argument is given: python prof.py p"""
import sys, time, os
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 4))
sys.path[:0] = [os.path.join(ROOT, "examples"), ROOT]
import numpy as np, torch
torch.set_num_threads(1)
from seer_bench.examples import load
ex = load("cleanrl_ppo_aircraft")
from seer_bench import ppo
a = ex.make_parser().parse_args(["--num-envs", "32", "--updates", "8", "--num-threads", "1"])
import seer_envs
venv = seer_envs.vector_env("aircraft_v0", 32, num_threads=1, num_uavs=64, max_cycles=100, continuous_actions=True, autoreset_mode="same_step")
obs_dim = venv.single_observation_space.shape[0]
agent = ex.Agent(obs_dim, 2)
opt = torch.optim.Adam(agent.parameters(), lr=a.lr, eps=1e-5)
scaler = ppo.ReturnScaler(venv.num_envs * venv.num_agents, a.gamma)
t = time.perf_counter(); batch = ex.rollout(venv, agent, 1, 100); print("rollout", time.perf_counter() - t)
for i in range(2):
    t = time.perf_counter(); ex._update(a, agent, opt, scaler, batch, i, obs_dim); print("update", time.perf_counter() - t)
if len(sys.argv) > 1:
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        ex._update(a, agent, opt, scaler, batch, 2, obs_dim)
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))
