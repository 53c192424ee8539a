# SPDX-License-Identifier: BSD-3-Clause
"""SEER envs in RLlib (``pip install -e ".[rllib]"``).

>>> from seer_envs.integrations.rllib import register
>>> register()                               # "seer/pcs_v0", "seer/aircraft_v0"
>>> config = PPOConfig().environment("seer/pcs_v0", env_config={"grid_width": 8, "grid_height": 8})

What the wrapper fixes in RLlib's ``ParallelPettingZooEnv`` (RLlib 2.60):

- its constructor resets the env without a seed; here the constructor reset
  uses ``env_config["seed"]`` offset by the env runner's worker index and by
  the sub-env's place in the runner (RLlib 2.60 gives every sub-env of
  ``num_envs_per_env_runner > 1`` the same ``vector_index``, so the wrapper
  counts the envs it builds per runner), so sub-envs and runners differ but a
  run is reproducible.  ``reset(seed=s)`` is offset by the same index
  (RLlib's env checker resets every sub-env with one seed, 42, which would
  otherwise make them all replay the same stream);
- its ``step`` sets ``__all__`` only when every agent is terminated, or
  every agent truncated; an episode where some agents terminate on the last
  step and the rest are truncated ended with both flags False, and RLlib's
  next step failed.  Here ``__all__`` follows the env: when no agent is
  left, ``terminateds["__all__"]`` is True if every agent terminated,
  otherwise ``truncateds["__all__"]`` is True;
- its ``render()`` calls ``env.render(mode)``, which the PettingZoo
  signature does not take; here it calls ``env.render()``;
- threads: RLlib sets ``OMP_NUM_THREADS`` in each env runner to the runner's
  CPUs, and STPA (``num_threads="auto"``) never exceeds it; an explicit
  ``num_threads`` is also capped at the runner's CPUs so runners do not
  oversubscribe the node.
"""

import collections

from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
from ray.tune.registry import register_env

import seer_envs
from seer_runtime._threads import omp_num_threads_cap, resolve_threads


def env_ids():
    """Registered env id -> RLlib id (``seer/<id>``), from the scenario registry."""
    return {name: f"seer/{name}" for name in seer_envs.envs()}

# envs built in this process per (name, worker_index, vector_index): the
# place of a sub-env in its runner, which RLlib's EnvContext does not carry
_BUILT = collections.Counter()


def _runner_cpus():
    try:
        import ray
        if not ray.is_initialized():     # get_runtime_context() would start Ray
            raise RuntimeError
        cpus = ray.get_runtime_context().get_assigned_resources().get("CPU")
        if cpus:
            return max(1, int(cpus))
    except Exception:  # not inside a Ray worker
        pass
    return omp_num_threads_cap()


class SeerRLlibEnv(ParallelPettingZooEnv):
    """RLlib multi-agent env around a SEER ParallelEnv (see module doc)."""

    def __init__(self, name, env_config=None):
        cfg = dict(env_config or {})
        seed = cfg.pop("seed", 0)
        # EnvContext carries the runner's indices; offset the seed by them, and
        # by how many envs this runner built before (sub-envs share an EnvContext).
        worker = getattr(env_config, "worker_index", 0) or 0
        vector = getattr(env_config, "vector_index", 0) or 0
        idx = worker * 1000 + vector
        if hasattr(env_config, "worker_index"):          # built by RLlib, not by hand
            idx += _BUILT[(name, worker, vector)]
            _BUILT[(name, worker, vector)] += 1
        threads = cfg.get("num_threads", "auto")
        if threads != "auto":
            cfg["num_threads"] = resolve_threads(threads, cap=_runner_cpus())[0]
        par_env = seer_envs.make(name, **cfg)
        self._offset = idx
        self._seed = None if seed is None else seed + idx
        par_env.reset(seed=self._seed)
        # The parent's __init__ resets without a seed: let it, then reseed.
        super().__init__(par_env)
        self.par_env.reset(seed=self._seed)
        self.render_mode = par_env.render_mode

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            seed = seed + self._offset
        obs, info = self.par_env.reset(seed=seed, options=options)
        return obs, info or {}

    def step(self, action_dict):
        obs, rew, term, trunc, infos = self.par_env.step(action_dict)
        ended = not self.par_env.agents
        all_term = ended and all(term.values())
        term["__all__"] = all_term
        trunc["__all__"] = ended and not all_term
        return obs, rew, term, trunc, infos

    def render(self):
        return self.par_env.render()


def register():
    """Register every SEER env with RLlib under ``seer/<name>``; returns the ids."""
    out = []
    for name, env_id in env_ids().items():
        register_env(env_id, lambda config, name=name: SeerRLlibEnv(name, config))
        out.append(env_id)
    return out
