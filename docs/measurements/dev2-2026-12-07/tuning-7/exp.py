"""scratch: train a variant at a budget, evaluate greedy/sampled on held-out seeds."""
import sys, json, time, os
sys.path.insert(0, "/work/main/benchmarks")
import numpy as np
import baselines as B
from seer_bench.examples import load as load_example

def run(task, algo, seed, updates, extra, nseeds=16, patch=None):
    name = {("pcs", "ippo"): "cleanrl_ippo_pcs", ("pcs", "mappo"): "cleanrl_mappo_pcs",
            ("air", "ippo"): "cleanrl_ppo_aircraft", ("air", "mappo"): "cleanrl_mappo_aircraft"}[(task, algo)]
    mod = load_example(name)
    if patch:
        from patches import PATCHES
        for p in patch.split("+"):
            exec(PATCHES[p], {"mod": mod, "torch": __import__("torch")})
    argv = ["--seed", str(seed), "--updates", str(updates), "--num-threads", "1"]
    if task == "air":
        argv += ["--num-envs", "2", "--num-uavs", "64", "--episode", "100"]
    a = mod.make_parser().parse_args(argv + extra)
    t = time.time()
    agent = mod.train(a, on_update=lambda r: None)
    T = B.PCS if task == "pcs" else B.AIRCRAFT
    pols = (B.pcs_policies if task == "pcs" else B.aircraft_policies)(agent)
    env_kw = {} if task == "pcs" else dict(num_uavs=64, max_cycles=100, continuous_actions=True)
    if task == "pcs":
        ex = load_example("cleanrl_ippo_pcs"); env_kw = dict(ex.ENV_KW)
    seeds = list(range(50_000, 50_000 + nseeds))
    out = {m: float(np.mean(B.evaluate(T, pols[m], seeds, env_kw, 1))) for m in ("greedy", "sampled")}
    return dict(out, wall=time.time() - t)

if __name__ == "__main__":
    task, algo, updates, tag = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    seeds = [int(s) for s in sys.argv[5].split(",")]
    extra = sys.argv[6].split() if len(sys.argv) > 6 and sys.argv[6] else []
    patch = sys.argv[7] if len(sys.argv) > 7 else None
    for s in seeds:
        r = run(task, algo, s, updates, extra, patch=patch)
        print(json.dumps(dict(task=task, algo=algo, updates=updates, tag=tag, seed=s, **r)), flush=True)
