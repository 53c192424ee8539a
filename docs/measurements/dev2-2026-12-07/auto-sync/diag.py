"""Why does "auto" lose on synchronous PCS training? One training run (PCS 64
copies, 6 updates, sync) at env "auto" and a given torch count; prints the
thread choice: STPA's pick, its preflight seconds, the tuner's switches."""
import json, sys, time
sys.path.insert(0, "benchmarks")
import training_speed as T
import torch

torch_threads = int(sys.argv[1]); env = sys.argv[2] if len(sys.argv) > 2 else "auto"
env = env if env == "auto" else int(env)
a = T.make_parser().parse_args(["--updates", "6"])
mod, env_id, kw, extra = T.sizes("pcs", False)
argv = ["--seed", "1", "--updates", "6", "--num-envs", "64", "--torch-threads", str(torch_threads), "--device", "cpu"] + extra
targs = mod.make_parser().parse_args(argv)
venv = T.make_venv("seer_sync", env_id, 64, kw, env)
rows = []
t0 = time.perf_counter()
mod.train(targs, venv=venv, on_update=rows.append)
wall = time.perf_counter() - t0
c = venv.thread_choice
d = rows[-1]
out = {"torch": torch_threads, "env": env, "steps_per_s": d["env_steps"] / d["wall_s"], "env_s": d["env_s"],
       "update_s": d["update_s"], "wall_s": d["wall_s"]}
if c is not None:
    out.update(chosen=c.chosen, method=c.method, preflight_s=getattr(c, "preflight_s", None), cache=getattr(c, "cache", None),
               adapted=getattr(c, "adapted", None), closed_loop=getattr(c, "closed_loop", None),
               trials_not_kept=getattr(c, "trials_not_kept", None))
print(json.dumps(out, default=str))
venv.close()
