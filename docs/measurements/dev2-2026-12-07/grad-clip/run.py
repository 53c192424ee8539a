"""Ours at the baselines' BenchMARL budget (Aircraft IPPO, 40 updates x 2
copies x 100 steps, 64 UAVs) with the gradient-norm clip changed, scored as
the suite scores it (greedy and sampled means over its 64 held-out seeds).

    python run.py SEED TAG CLIP [split]    # split: actor and critic clipped apart

Prints one JSON line."""
import json
import os
import sys
import time

ROOT = os.environ.get("SEER_ROOT") or os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 4))
sys.path[:0] = [os.path.join(ROOT, "benchmarks"), ROOT]
import numpy as np  # noqa: E402
import torch  # noqa: E402

import baselines as B  # noqa: E402
from seer_bench.examples import load as load_example  # noqa: E402

seed, tag, clip = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
split = len(sys.argv) > 4 and sys.argv[4] == "split"
orig = torch.nn.utils.clip_grad_norm_
AGENT = {}


def clipped(params, _):
    if not split:
        return orig(params, clip)
    a = AGENT["a"]
    critic = [p for n, p in a.named_parameters() if n.startswith("critic")]
    rest = [p for n, p in a.named_parameters() if not n.startswith("critic")]
    orig(critic, clip)
    return orig(rest, clip)


torch.nn.utils.clip_grad_norm_ = clipped
mod = load_example(B.EXAMPLES[(B.AIRCRAFT, "ippo")])
init = mod.Agent.__init__


def register(self, *args, **kw):
    init(self, *args, **kw)
    AGENT["a"] = self


mod.Agent.__init__ = register
a = mod.make_parser().parse_args(["--seed", str(seed), "--updates", "40", "--num-envs", "2", "--num-uavs", "64",
                                  "--episode", "100", "--num-threads", "1"])
t = time.time()
agent = mod.train(a, on_update=lambda r: None)
pols = B.aircraft_policies(agent)
kw = dict(num_uavs=64, max_cycles=100, continuous_actions=True)
seeds = range(B.EVAL_SEED0, B.EVAL_SEED0 + 64)
out = {m: float(np.mean(B.evaluate(B.AIRCRAFT, pols[m], seeds, kw, 1))) for m in ("greedy", "sampled")}
print(json.dumps(dict(seed=seed, tag=tag, clip=clip, split=split, **out, wall=round(time.time() - t))))
