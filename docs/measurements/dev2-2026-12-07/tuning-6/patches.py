"""scratch patches for exp.py: PATCHES[name] is exec'd with mod (the example module) and torch."""
PATCHES = {
 # global gradient clip at BenchMARL's 5.0 instead of CleanRL's 0.5
 "clip5": """
import seer_bench.ppo as P, torch
_orig = torch.nn.utils.clip_grad_norm_
P.nn.utils.clip_grad_norm_ = lambda params, max_norm, *a, **k: _orig(params, 5.0)
""",
 # clip actor and critic separately (each at 0.5), as separate optimisers would
 "sepclip": """
import seer_bench.ppo as P, torch
_orig = torch.nn.utils.clip_grad_norm_
REG = {}
_init = mod.Agent.__init__
def init(self, *a, **k):
    _init(self, *a, **k); REG['crit'] = {id(p) for p in self.critic.parameters()}
mod.Agent.__init__ = init
def clip(params, max_norm, *a, **k):
    params = list(params); c = REG['crit']
    _orig([p for p in params if id(p) in c], max_norm); return _orig([p for p in params if id(p) not in c], max_norm)
P.nn.utils.clip_grad_norm_ = clip
""",
 # no observation normaliser
 "nonorm": """
import seer_bench.ppo as P
P.RunningNorm.forward = lambda self, x: x
""",
 # critic's time input zeroed
 "notime": """
_act = mod.Agent.act
def act(self, x, tf, action=None):
    return _act(self, x, tf * 0, action)
mod.Agent.act = act
""",
}
PATCHES["ls0"] = """
import torch
_init = mod.Agent.__init__
def init(self, *a, **k):
    _init(self, *a, **k)
    with torch.no_grad(): self.log_std.fill_(0.0)
mod.Agent.__init__ = init
"""
# --- the overlap's decoupled objective (run with "--overlap") ---
PATCHES["cap1"] = """
import seer_bench.ppo as P
P.WEIGHT_CAP = 1.0
"""
PATCHES["noweight"] = """
import seer_bench.ppo as P
_loss = P.ppo_loss
P.ppo_loss = lambda *args: _loss(*args[:8])
"""
