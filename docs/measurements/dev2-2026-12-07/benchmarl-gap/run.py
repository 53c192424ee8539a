"""Ours at the baselines' BenchMARL budget (Aircraft IPPO, 40 updates x 2
copies x 100 steps, 64 UAVs) with one of BenchMARL IPPO's choices taken in,
scored as the suite scores it (greedy and sampled means over its 64
held-out seeds).

    python run.py SEED TAG [--updates N] [EXAMPLE FLAGS...]

TAG picks the change (combine with "+"): base (the example as it is),
noadv (advantages not normalised), std0 (initial std 1 instead of 0.61),
obsraw (no observation normaliser), tanh (a tanh-squashed Gaussian whose
std the actor outputs, through BenchMARL's biased softplus); the flags
after TAG go to the example's parser (--gae-lambda 0.9, ...).  Prints one
JSON line."""
import json
import math
import os
import sys
import time

ROOT = os.environ.get("SEER_ROOT") or os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 4))
sys.path[:0] = [os.path.join(ROOT, "benchmarks"), ROOT]
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import baselines as B  # noqa: E402
import seer_bench.ppo as P  # noqa: E402
from seer_bench.examples import load as load_example  # noqa: E402

seed, tag, rest = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
changes = set(tag.split("+")) - {"base"}
mod = load_example(B.EXAMPLES[(B.AIRCRAFT, "ippo")])

if "noadv" in changes:                  # ppo_loss without its advantage normalisation
    import inspect
    code = inspect.getsource(P.ppo_loss).replace("    adv = (adv - adv.mean()) / (adv.std() + 1e-8)\n", "")
    ns = {}
    exec(code, P.__dict__, ns)
    P.ppo_loss = ns["ppo_loss"]

init = mod.Agent.__init__


def patched_init(self, obs_dim, act_dim):
    init(self, obs_dim, act_dim)
    if "std0" in changes:
        self.log_std.data.fill_(0.0)
    if "obsraw" in changes:
        self.obs_norm.forward = lambda x: x
    if "tanh" in changes:
        self.mean = nn.Sequential(P.layer(obs_dim, 64), P.Tanh(), P.layer(64, 64), P.Tanh(),
                                  P.layer(64, 2 * act_dim, 0.01))


mod.Agent.__init__ = patched_init

if "tanh" in changes:
    from torchrl.modules import TanhNormal

    def biased_softplus(x, bias=math.log(math.e - 1), min_val=1e-4):
        return nn.functional.softplus(x + bias) + min_val   # 1.0 at x = 0

    def dist(self, z):
        loc, s = self.mean(z).chunk(2, -1)
        return TanhNormal(loc, biased_softplus(s), upscale=1.0, low=-1.0, high=1.0)

    def act_normalised(self, x, tf, action=None):
        d = dist(self, x)
        if action is None:
            action = d.rsample().clamp(-1 + 1e-6, 1 - 1e-6)
        # TanhNormal has no closed-form entropy: the sample's -log p
        lp = d.log_prob(action)
        return action, lp, -lp.detach(), self._value(x, tf)

    def policy_mean(self, x):
        return dist(self, self.obs_norm(x)).deterministic_sample

    mod.Agent.act_normalised = act_normalised
    mod.Agent.policy_mean = policy_mean

updates = 40
if "--updates" in rest:
    i = rest.index("--updates")
    updates = int(rest[i + 1])
    rest = rest[:i] + rest[i + 2:]
a = mod.make_parser().parse_args(["--seed", str(seed), "--updates", str(updates), "--num-envs", "2",
                                  "--num-uavs", "64", "--episode", "100", "--num-threads", "1", *rest])
t = time.time()
agent = mod.train(a, on_update=lambda r: None)
pols = B.aircraft_policies(agent)
if "tanh" in changes:                   # draw from the squashed Gaussian with the evaluation's generator
    def sampled(env, obs, rng):
        with torch.no_grad():
            loc, s = agent.mean(agent.obs_norm(torch.from_numpy(obs))).chunk(2, -1)
            std = biased_softplus(s)
        return np.tanh(loc.numpy() + std.numpy() * rng.standard_normal(loc.shape)).astype(np.float32)
    pols["sampled"] = sampled
kw = dict(num_uavs=64, max_cycles=100, continuous_actions=True)
seeds = range(B.EVAL_SEED0, B.EVAL_SEED0 + 64)
out = {m: float(np.mean(B.evaluate(B.AIRCRAFT, pols[m], seeds, kw, 1))) for m in ("greedy", "sampled")}
print(json.dumps(dict(seed=seed, tag=tag, flags=" ".join(rest), updates=updates, **out,
                      wall=round(time.time() - t))), flush=True)
