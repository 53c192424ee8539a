# SPDX-License-Identifier: BSD-3-Clause
"""The vectorisers SEER is measured against, over single SEER envs (1 thread
each), shaped like SEER's vector env for the examples' trainers:
``(copies, agents, ...)`` arrays, terminations and truncations as bools.
SuperSuit's ``concat_vec_envs_v1`` (in-process or over processes) and
PufferLib's ``Serial`` / ``Multiprocessing`` backends; one copy of each for
``benchmarks/training_speed.py`` and the speed part of
``benchmarks/baselines.py``.  SuperSuit refuses agent death (an
AssertionError): the benchmarks' Aircraft episodes are shorter than any
UAV's battery lasts (at most 2.8 energy units a step against 600)."""

import functools
import os

import numpy as np

__all__ = ["PufferVec", "SuperSuitVec", "puffer_available", "puffer_vec", "supersuit_vec", "workers"]


class _Shaped:
    """``(copies, agents, ...)`` arrays from a vectoriser's flat ones;
    terminations and truncations as bools; copies of the vectoriser's
    buffers (PufferLib's are overwritten in place by the next step)."""

    def _spaces(self, env_id, kw):
        import seer_envs
        env = seer_envs.make(env_id, num_threads=1, **kw)
        first = env.possible_agents[0]
        self.num_agents = len(env.possible_agents)
        self.single_action_space = env.action_space(first)
        self.single_observation_space = env.observation_space(first)
        env.close()

    def _shape(self, x):
        x = np.asarray(x)
        return x.reshape((self.num_envs, self.num_agents) + x.shape[1:]).copy()

    def _flat(self, actions):
        space = self.single_action_space
        return np.ascontiguousarray(np.asarray(actions, space.dtype).reshape((-1,) + space.shape))

    def step(self, actions):
        obs, rew, term, trunc, info = self._v.step(self._flat(actions))
        return (self._shape(obs), self._shape(rew), self._shape(term).astype(bool),
                self._shape(trunc).astype(bool), info)


def supersuit_vec(env_id, num_envs, num_cpus=0, **kw):
    """SuperSuit's own ``concat_vec_envs_v1`` over ``num_envs`` single SEER
    envs (1 thread each; its ``pettingzoo_env_to_vec_env_v1`` of each):
    flat ``(copies x agents, ...)`` arrays, as the env benchmarks step it."""
    import supersuit as ss

    import seer_envs
    single = ss.pettingzoo_env_to_vec_env_v1(seer_envs.make(env_id, num_threads=1, **kw))
    return ss.concat_vec_envs_v1(single, num_envs, num_cpus=num_cpus, base_class="gymnasium")


class SuperSuitVec(_Shaped):
    """SuperSuit's ``concat_vec_envs_v1`` over single SEER envs (1 thread
    each), in-process (``num_cpus=0``) or over ``num_cpus`` processes.  Copy
    i of ``reset(seed=s)`` is reset with ``s + i``; an ended copy resets in
    the same step."""

    def __init__(self, env_id, num_envs, num_cpus=0, **kw):
        self._spaces(env_id, kw)
        self.num_envs = num_envs
        self._v = supersuit_vec(env_id, num_envs, num_cpus=num_cpus, **kw)

    def reset(self, seed=None):
        obs, info = self._v.reset(seed=seed)
        return self._shape(obs), {}

    def close(self):
        self._v.close()


def _puffer_env(env_id, kw, buf=None, seed=0):
    """One single SEER env (1 thread) in PufferLib's PettingZoo emulation (a
    module-level function: the Multiprocessing workers build their own)."""
    import pufferlib.emulation

    import seer_envs
    return pufferlib.emulation.PettingZooPufferEnv(env=seer_envs.make(env_id, num_threads=1, **kw),
                                                   buf=buf, seed=seed)


def puffer_vec(env_id, num_envs, backend, env_kw=None, **settings):
    """PufferLib's own ``pufferlib.vector.make`` with ``backend`` (its
    ``Serial`` or ``Multiprocessing`` class) over ``num_envs`` single SEER
    envs (1 thread each, ``env_kw`` their parameters): flat arrays, as the
    env benchmarks step it; ``settings``: the backend's (``num_workers``,
    ``overwork``)."""
    import pufferlib.vector
    return pufferlib.vector.make(functools.partial(_puffer_env, env_id, env_kw or {}), backend=backend,
                                 num_envs=num_envs, **settings)


class PufferVec(_Shaped):
    """PufferLib's ``backend`` over single SEER envs.  Copy i of
    ``reset(seed=s)`` is reset with ``s + i``; an ended copy resets at its
    next step (the trainers reset every copy at each rollout, and their
    episodes here end only at the rollout's last step).  The
    ``Multiprocessing`` backend resets once: in pufferlib-core 3.0.23 its
    ``reset`` after steps waits forever for its workers, so a later
    ``reset`` returns the last observations and the copies go on through
    PufferLib's own autoreset (unseeded; the same steps and work, one
    step of each rollout a reset)."""

    def __init__(self, env_id, num_envs, backend, **kw):
        import pufferlib.vector
        self._spaces(env_id, kw)
        self.num_envs = num_envs
        self._mp, self._obs = backend == "mp", None
        extra = {}
        if backend == "mp":
            extra = dict(num_workers=workers(num_envs), overwork=True)
        self._v = puffer_vec(env_id, num_envs, pufferlib.vector.Serial if backend == "serial"
                             else pufferlib.vector.Multiprocessing, kw, **extra)

    def reset(self, seed=None):
        if self._obs is not None:        # Multiprocessing: reset once (see the class)
            return self._obs, {}
        obs, info = self._v.reset(seed=0 if seed is None else seed)
        obs = self._shape(obs)
        if self._mp:
            self._obs = obs
        return obs, {}

    def step(self, actions):
        out = super().step(actions)
        if self._mp:
            self._obs = out[0]
        return out

    def close(self):
        self._v.close()
        for p in getattr(self._v, "processes", ()):     # Multiprocessing.close only signals them
            p.join(10)


def workers(copies):
    """Worker processes of the multiprocessing paths: the cores, at most the
    copies, and a divisor of them (PufferLib's requirement)."""
    w = max(1, min(os.cpu_count() or 1, copies))
    while copies % w:
        w -= 1
    return w


def puffer_available():
    try:
        import pufferlib.emulation  # noqa: F401
        import pufferlib.vector  # noqa: F401
    except Exception:
        return False
    return True
