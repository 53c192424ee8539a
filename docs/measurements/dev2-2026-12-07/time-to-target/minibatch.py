"""scratch: SEER synchronous Aircraft IPPO to the learning target with more minibatches an
update (a fixed minibatch size as the copies grow) instead of the example's 4.

    python docs/measurements/dev2-2026-12-07/time-to-target/minibatch.py COPIES MINIBATCHES [MAX_ENV_STEPS]
"""
import os
import sys
import types

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 4))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import training_speed as ts  # noqa: E402

copies, mb = int(sys.argv[1]), int(sys.argv[2])
_sizes = ts.sizes
ts.sizes = lambda task, quick: (lambda m, e, kw, extra: (m, e, kw, extra + ["--minibatches", str(mb)]))(*_sizes(task, quick))
a = types.SimpleNamespace(quick=False, seed=1, torch_threads=1, env_threads=1, device="cpu", updates=None,
                          env_steps=int(sys.argv[3]) if len(sys.argv) > 3 else 131072,
                          target_seeds=64, target_eval_seeds=8, max_env_steps=None)
a.max_env_steps = a.env_steps
target, what = ts.measured_target("aircraft", a)
r = ts.target_row("aircraft", "seer_sync", copies, a, target)
print(dict(copies=copies, minibatches=mb, target=round(target, 2), updates_to_target=r["updates_to_target"],
           env_steps_to_target=r["env_steps_to_target"], wall_s_to_target=round(r["wall_s_to_target"], 1),
           train_env_steps_per_s=round(r["train_env_steps_per_s"]), last_eval_return=round(r["last_eval_return"], 2)))
