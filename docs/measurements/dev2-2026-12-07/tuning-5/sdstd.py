import torch, torch.nn as nn
from torch.distributions import Normal
A = mod.Agent
_init = A.__init__
BIAS = float(torch.log(torch.expm1(torch.tensor(0.6))))     # softplus(BIAS) = 0.6, ours' exp(-0.5)
def __init__(self, obs_dim, act_dim):
    _init(self, obs_dim, act_dim)
    self.std_head = nn.Sequential(mod.layer(obs_dim, 64), nn.Tanh(), mod.layer(64, 64), nn.Tanh(), mod.layer(64, act_dim, 0.01))
def act(self, x, tf, action=None):
    x = self.obs_norm(x)
    std = nn.functional.softplus(self.std_head(x) + BIAS) + 1e-4
    dist = Normal(self.mean(x), std)
    if action is None:
        action = dist.sample()
    value = self.critic(torch.cat([x, tf.unsqueeze(-1)], -1)).squeeze(-1)
    return action, dist.log_prob(action).sum(-1), dist.entropy().sum(-1), value
A.__init__ = __init__
A.act = act
