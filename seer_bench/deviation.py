# SPDX-License-Identifier: BSD-3-Clause
"""The deviation check: is the policy best for the team one that no agent
gains by leaving?

Every agent plays one constant action (the best constant for the team),
then a set of agents switches to another policy on the same seeds.  A
reward is *misaligned* when such a switch raises the deviators' own return
while it lowers the team's (the mean over all agents): independent
learners then drift away from the team's best, the signature of a social
dilemma.  Returns are compared seed by seed (paired), with a 95% interval
of the mean difference (Student's t; the seeds are independent episodes).

Used by tests/envs/test_reward_alignment.py on every learning task's
default reward (docs/pcs.md, "pcs_hotspot_v1").
"""

import dataclasses

import numpy as np
from scipy import stats


def episode_returns(env_id, policy, seeds, num_threads=1, **env_kw):
    """``(len(seeds), agents)`` float64: each agent's episode return under
    ``policy(env, obs) -> actions`` (arrays in ``possible_agents`` order),
    one single env episode per seed (rows out of play earn 0)."""
    import seer_envs
    out = []
    for s in seeds:
        env = seer_envs.make(env_id, num_threads=num_threads, **env_kw)
        obs = env.reset_arrays(seed=int(s))
        ret = np.zeros(len(env.possible_agents))
        while env.agents:
            obs, rew, _, _ = env.step_arrays(policy(env, obs))
            ret += rew
        env.close()
        out.append(ret)
    return np.array(out)


def constant(action):
    """The policy that plays ``action`` (a scalar or one action's array)
    for every agent."""
    action = np.asarray(action)

    def policy(env, obs):
        return np.broadcast_to(action, (obs.shape[0],) + action.shape).copy()
    return policy


def mixed(base, other, rows):
    """``base`` for every agent but ``rows``, which play ``other``."""
    rows = np.asarray(rows)

    def policy(env, obs):
        a = np.array(base(env, obs))
        a[rows] = np.asarray(other(env, obs))[rows]
        return a
    return policy


def mean_ci(diff, level=0.95):
    """Mean of paired differences and its ``level`` interval (Student's t)."""
    diff = np.asarray(diff, np.float64)
    m = float(diff.mean())
    if len(diff) < 2 or np.all(diff == diff[0]):
        return m, (m, m)
    h = float(stats.sem(diff) * stats.t.ppf(0.5 + level / 2, len(diff) - 1))
    return m, (m - h, m + h)


@dataclasses.dataclass(frozen=True)
class Deviation:
    """One deviation's effect, each a mean over seeds with its 95% interval:
    ``own`` the deviators' mean return change, ``team`` the change of the
    mean over all agents."""

    name: str
    deviators: int
    own: float
    own_ci: tuple
    team: float
    team_ci: tuple

    @property
    def misaligned(self):
        """The deviators gain and the team loses, both beyond their intervals."""
        return self.own_ci[0] > 0 and self.team_ci[1] < 0


def check(env_id, base_action, deviations, rows, seeds, num_threads=1, **env_kw):
    """Every agent at ``base_action``; then ``rows`` switch to each policy
    of ``deviations`` (``{name: policy(env, obs)}``) on the same ``seeds``.
    Returns ``(base returns (seeds, agents), [Deviation, ...])``."""
    base = constant(base_action)
    r0 = episode_returns(env_id, base, seeds, num_threads, **env_kw)
    rows = np.asarray(rows)
    out = []
    for name, other in deviations.items():
        r1 = episode_returns(env_id, mixed(base, other, rows), seeds, num_threads, **env_kw)
        own = r1[:, rows].mean(1) - r0[:, rows].mean(1)
        team = r1.mean(1) - r0.mean(1)
        (m_own, ci_own), (m_team, ci_team) = mean_ci(own), mean_ci(team)
        out.append(Deviation(name, len(rows), m_own, ci_own, m_team, ci_team))
    return r0, out
