import torch, torch.nn as nn
from torch.distributions import Normal, TransformedDistribution
from torch.distributions.transforms import TanhTransform
A = mod.Agent
def act(self, x, tf, action=None):
    x = self.obs_norm(x)
    base = Normal(self.mean(x), self.log_std.exp())
    dist = TransformedDistribution(base, [TanhTransform(cache_size=1)])
    if action is None:
        action = dist.sample()
    a = action.clamp(-1 + 1e-6, 1 - 1e-6)
    value = self.critic(torch.cat([x, tf.unsqueeze(-1)], -1)).squeeze(-1)
    return action, dist.log_prob(a).sum(-1), base.entropy().sum(-1), value
def policy_mean(self, x):
    return torch.tanh(self.mean(self.obs_norm(x)))
A.act = act
A.policy_mean = policy_mean
