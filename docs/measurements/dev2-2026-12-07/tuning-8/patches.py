"""scratch patches for exp.py: tuning-6's and tuning-7's, plus this folder's."""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "tuning7_patches", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tuning-7", "patches.py"))
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
PATCHES = dict(_mod.PATCHES)
PATCHES.update({
 # the entropy bonus decayed linearly to 0 over the run, as --anneal-lr decays the rate
 "entdecay": """
_pe = mod.ppo_epochs
def pe(agent, opt, a, update, *r, **k):
    base = a.ent_coef
    a.ent_coef = base * (1 - update / a.updates)
    try:
        return _pe(agent, opt, a, update, *r, **k)
    finally:
        a.ent_coef = base
mod.ppo_epochs = pe
""",
 # the critic per cell: the cell's own observation (read from the state, which is every
 # cell's), the time and a 64-wide summary of the global state (MAPPO's agent-specific state)
 "ascritic": """
import torch, torch.nn as nn
from seer_bench.ppo import layer, Tanh
class Critic(nn.Module):
    def __init__(self, obs_dim, n_agents, ctx=64):
        super().__init__()
        self.obs_dim, self.n = obs_dim, n_agents
        self.ctx = nn.Sequential(layer(obs_dim * n_agents + 1, 128), Tanh(), layer(128, ctx), Tanh())
        self.head = nn.Sequential(layer(obs_dim + ctx + 1, 64), Tanh(), layer(64, 64), Tanh(), layer(64, 1, 1.0))
    def forward(self, state, tf):
        B = state.shape[0]
        t = tf.unsqueeze(-1)
        c = self.ctx(torch.cat([state, t], -1))
        o = state.reshape(B, self.n, self.obs_dim)
        x = torch.cat([o, c.unsqueeze(1).expand(B, self.n, c.shape[-1]), t.unsqueeze(1).expand(B, self.n, 1)], -1)
        return self.head(x).squeeze(-1)
_init = mod.Agent.__init__
def init(self, obs_dim, n_actions, state_dim, n_agents):
    _init(self, obs_dim, n_actions, state_dim, n_agents)
    self.critic = Critic(obs_dim, n_agents)
mod.Agent.__init__ = init
mod.Agent.value = lambda self, state, tf: self.critic(state, tf)
""",
})

