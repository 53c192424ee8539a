# SPDX-License-Identifier: BSD-3-Clause
"""SEER envs in RLlib (``pip install -e ".[rllib]"``).

>>> from seer_envs.integrations.rllib import register
>>> register()                               # "seer/pcs_v0", "seer/aircraft_v0"
>>> config = PPOConfig().environment("seer/pcs_v0", env_config={"grid_width": 8, "grid_height": 8})

What the wrapper fixes in RLlib's ``ParallelPettingZooEnv`` (RLlib 2.60):

- its constructor resets the env without a seed; here the constructor reset
  uses ``env_config["seed"]`` (offset by the env runner's worker and vector
  index, so runners differ but a run is reproducible), and ``reset(seed=...)``
  passes RLlib's seed through;
- its ``render()`` calls ``env.render(mode)``, which the PettingZoo
  signature does not take; here it calls ``env.render()``;
- threads: RLlib sets ``OMP_NUM_THREADS`` in each env runner to the runner's
  CPUs, and STPA (``num_threads="auto"``) never exceeds it; an explicit
  ``num_threads`` is also capped at the runner's CPUs so runners do not
  oversubscribe the node.
"""

from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
from ray.tune.registry import register_env

import seer_envs
from seer_runtime._threads import omp_num_threads_cap, resolve_threads


def env_ids():
    """Registered env id -> RLlib id (``seer/<id>``), from the scenario registry."""
    return {name: f"seer/{name}" for name in seer_envs.envs()}


def _runner_cpus():
    try:
        import ray
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
        # EnvContext carries the runner's indices; offset the seed by them.
        idx = getattr(env_config, "worker_index", 0) * 1000 + getattr(env_config, "vector_index", 0)
        threads = cfg.get("num_threads", "auto")
        if threads != "auto":
            cfg["num_threads"] = resolve_threads(threads, cap=_runner_cpus())[0]
        par_env = seer_envs.make(name, **cfg)
        self._seed = None if seed is None else seed + idx
        par_env.reset(seed=self._seed)
        # The parent's __init__ resets without a seed: let it, then reseed.
        super().__init__(par_env)
        self.par_env.reset(seed=self._seed)
        self.render_mode = par_env.render_mode

    def reset(self, *, seed=None, options=None):
        obs, info = self.par_env.reset(seed=seed, options=options)
        return obs, info or {}

    def render(self):
        return self.par_env.render()


def register():
    """Register every SEER env with RLlib under ``seer/<name>``; returns the ids."""
    out = []
    for name, env_id in env_ids().items():
        register_env(env_id, lambda config, name=name: SeerRLlibEnv(name, config))
        out.append(env_id)
    return out
