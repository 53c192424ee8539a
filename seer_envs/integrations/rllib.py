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

**The multi-agent runner on the vector env.**  RLlib 2.60's
``MultiAgentEnvRunner.make_env`` builds its envs with
``ray.rllib.env.vector.registration.make_vec``, which implements only
``VectorizeMode.SYNC``: a ``SyncVectorMultiAgentEnv``, a Python loop over
``num_envs_per_env_runner`` single envs (any other mode raises "For
`MultiAgentEnv` only synchronous environment vectorization is
implemented").  No config option passes a vector env of one's own, but the
runner class is a config option (``.env_runners(env_runner_cls=...)``):
:class:`SeerMultiAgentEnvRunner` overrides ``make_env`` with
:class:`SeerVectorMultiAgentEnv`, every sub-env a copy in one SEER vector
env, with RLlib's per-copy dict interface.

**Per-copy worlds.**  ``env_config`` takes ``param_sampler`` (a dict of
ranges ``{field: {"uniform": [lo, hi]}}`` / choices ``{field: {"choice":
[...]}}``, or a callable ``f(rng) -> dict``), drawn at every reset of every
copy from that copy's episode seed: copies and runners get distinct seeds
(above), so they draw distinct worlds, and the same seeds give the same
worlds.  With :class:`SeerMultiAgentEnvRunner` a per-copy field may also be
a list of ``num_envs_per_env_runner`` values (copy ``c`` of every runner
takes value ``c``).  :func:`set_params` sets values on every runner of an
algorithm for each copy's next reset, autoresets included (RLlib's
curriculum hook: ``foreach_env_runner`` from a callback's
``on_train_result``), without rebuilding the envs (docs/training.md,
"Per-copy worlds").
"""

import collections
import numbers

import gymnasium as gym
import numpy as np
from ray.rllib.env.env_context import EnvContext
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
from ray.rllib.callbacks.utils import make_callback
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
        lists = [k for k, v in cfg.items() if isinstance(v, (list, tuple))]
        if lists:
            raise ValueError(f"env_config[{lists[0]!r}] is a list (one value per copy), but {name!r} under RLlib's "
                             "default runner builds single envs: use SeerMultiAgentEnvRunner (copies of one vector "
                             "env), or a param_sampler")
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

    @property
    def params(self):
        """The per-copy fields' values in force: field -> value."""
        return {k: v[0].item() for k, v in self.par_env.core.param_values.items()}

    def set_params(self, copies=None, **values):
        """Values of per-copy fields for this env's next reset (RLlib's
        autoreset included); ``copies`` is ignored (a single env is one
        copy; :func:`set_params` passes each sub-env its place)."""
        self.par_env.core.set_params(None, **values)

    def step(self, action_dict):
        obs, rew, term, trunc, infos = self.par_env.step(action_dict)
        ended = np.array([not self.par_env.agents])
        all_term, all_trunc = self.par_env.core.end_kind(ended, np.array([list(trunc.values())], bool))
        term["__all__"], trunc["__all__"] = bool(all_term[0]), bool(all_trunc[0])
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


class _CopyAgents(MultiAgentEnv):
    """One copy's agents and spaces: what RLlib's multi-agent runner reads
    from ``env.envs[i].unwrapped`` (episodes' spaces, random actions).  It
    holds no engine: the copies are stepped by the vector env."""

    def __init__(self, venv):
        super().__init__()
        self.possible_agents = list(venv.possible_agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: venv.single_observation_space for a in self.possible_agents}
        self.action_spaces = {a: venv.single_action_space for a in self.possible_agents}
        self.observation_space = gym.spaces.Dict(self.observation_spaces)
        self.action_space = gym.spaces.Dict(self.action_spaces)


class SeerVectorMultiAgentEnv(VectorMultiAgentEnv):
    """``num_envs`` copies of a SEER env in one engine
    (:func:`seer_envs.vector_env`, ``NEXT_STEP``) behind RLlib 2.60's
    ``VectorMultiAgentEnv`` interface, as its ``SyncVectorMultiAgentEnv``
    gives it over single envs: ``reset`` -> (a dict of observations per
    copy, an info dict per copy); ``step(actions)``, a dict of actions per
    copy -> (observations, rewards, terminateds, truncateds, infos), one
    dict per copy, ``"__all__"`` in the flags.

    An agent is in its copy's dicts from the copy's reset until the step
    that ends it (terminated or truncated), as in the PettingZoo env; a copy
    ends when it has no agent left or is truncated (``"__all__"``: True in
    ``terminateds`` if every agent ending then terminated, else in
    ``truncateds``), and restarts at its next step (its actions ignored,
    rewards 0, no flags), as the synchronous vector env's ``next_step``.

    Seeds: ``reset(seed=s)`` seeds copy ``c`` with ``s * num_envs + c``
    (RLlib seeds runner ``w`` with ``seed + w``: no two copies of any runners
    share a stream, as :func:`rllib_env_creator`);
    ``first_seed`` is used for the first reset when RLlib passes none."""

    def __init__(self, env_id, num_envs, first_seed=None, **params):
        super().__init__()
        self.vec = seer_envs.vector_env(env_id, num_envs, autoreset_mode="next_step", **params)
        self.vec.seed_stride = self.vec.num_envs
        self.core = self.vec.core
        self.num_envs = E = self.vec.num_envs
        view = _CopyAgents(self.vec)
        self.envs = [view] * E
        self.possible_agents = view.possible_agents
        self.single_observation_spaces = dict(view.observation_spaces)
        self.single_action_spaces = dict(view.action_spaces)
        self.single_observation_space = gym.spaces.Dict(self.single_observation_spaces)
        self.single_action_space = gym.spaces.Dict(self.single_action_spaces)
        self.metadata = {"autoreset_mode": "next_step",      # the frames the scenario declares
                         "render_modes": [m for m in self.vec.metadata.get("render_modes", ()) if m == "rgb_array"]}
        self.render_mode = self.vec.render_mode
        self._mask = None                           # agents in play at the last observations
        self._first_seed = first_seed
        sp = self.vec.single_action_space
        self._actions = np.zeros((E, len(self.possible_agents)) + tuple(sp.shape), sp.dtype)

    @property
    def params(self):
        """Each copy's values of the per-copy fields in force: field -> array ``(num_envs,)``."""
        return self.vec.params

    def set_params(self, copies=None, **values):
        """Values of per-copy fields for the next reset of each copy in
        ``copies`` (None: every copy), its ``next_step`` autoreset included
        (:meth:`seer_envs.views.vector.SeerVectorEnv.set_params`)."""
        self.vec.set_params(copies, **values)

    def reset(self, *, seed=None, options=None):
        if seed is None and self._first_seed is not None:
            seed = self._first_seed
        self._first_seed = None
        obs, info = self.vec.reset(seed=seed, options=options)
        self._mask = info["mask"]
        return [self._in_play(o, m) for o, m in zip(obs, self._mask)], [{} for _ in range(self.num_envs)]

    def _in_play(self, obs, mask):
        """One copy's observation dict: the agents in play (a copy with
        fewer agents than the batch's width leaves the other rows out)."""
        agents = self.possible_agents
        if mask.all():
            return dict(zip(agents, obs))
        return {agents[j]: obs[j] for j in np.flatnonzero(mask)}

    def step(self, actions):
        core = self.core
        restart = core.waiting.copy()            # these copies restart at this step: their dicts ignored
        before = core.mask                       # in play at the last observations (from the core: Ctrl-C safe)
        # RLlib's dicts, one entry per agent in play, through the one validator of the dict views
        a = core.check_step(actions, check=lambda d: core.check_action_dicts(d, self._actions, restart))
        s = core.step(a)
        self._mask = s.mask
        all_term, all_trunc = core.end_kind(s.ended, s.trunc)
        agents = self.possible_agents
        out_obs, out_rew, out_term, out_trunc = [], [], [], []
        for c in range(self.num_envs):
            if restart[c]:                       # its first observation, as next_step gives
                o = self._in_play(s.obs[c], s.mask[c])
                out_obs.append(o)
                out_rew.append(dict.fromkeys(o, 0.0))
                out_term.append(dict.fromkeys(o, False) | {"__all__": False})
                out_trunc.append(dict.fromkeys(o, False) | {"__all__": False})
                continue
            live = np.flatnonzero(before[c])     # in the dicts: the agents that acted
            names = [agents[j] for j in live]
            t, u = s.term[c, live].tolist(), s.trunc[c, live].tolist()
            out_obs.append(dict(zip(names, s.obs[c, live])))
            out_rew.append(dict(zip(names, s.rew[c, live].tolist())))
            out_term.append(dict(zip(names, t)) | {"__all__": bool(all_term[c])})
            out_trunc.append(dict(zip(names, u)) | {"__all__": bool(all_trunc[c])})
        obj = lambda x: np.array(x, dtype=object)   # noqa: E731  (as SyncVectorMultiAgentEnv returns)
        return out_obs, obj(out_rew), obj(out_term), obj(out_trunc), obj([{} for _ in range(self.num_envs)])

    def render(self):
        return self.vec.render()

    def close_extras(self, **kwargs):
        self.vec.close()


class SeerMultiAgentEnvRunner(MultiAgentEnvRunner):
    """RLlib's multi-agent env runner (a policy per agent or per group,
    ``policy_mapping_fn``) with its ``num_envs_per_env_runner`` sub-envs as
    copies of one SEER vector env (:class:`SeerVectorMultiAgentEnv`)
    instead of a loop of single envs::

        config.environment("seer/pcs_v0", env_config={...})
              .env_runners(env_runner_cls=SeerMultiAgentEnvRunner, num_envs_per_env_runner=16)

    ``config.env`` is ``"seer/<id>"`` or a registered SEER id;
    ``env_config`` holds the env's parameters, ``num_threads`` (capped at
    the runner's CPUs) and ``seed`` (the first reset's when RLlib's
    ``.debugging(seed=...)`` is not set, offset by the worker index)."""

    def make_env(self):
        if self.env is not None:
            self.env.close()
            self.env = None
        ctx = self.config.env_config
        if not isinstance(ctx, EnvContext):
            ctx = EnvContext(ctx, worker_index=self.worker_index, num_workers=self.config.num_env_runners,
                             remote=self.config.remote_worker_envs)
        name = self.config.env
        if not isinstance(name, str):
            raise TypeError(f"SeerMultiAgentEnvRunner needs config.env as a SEER id, got {name!r}")
        name = name[len("seer/"):] if name.startswith("seer/") else name
        cfg = dict(ctx)
        seed = cfg.pop("seed", 0)
        threads = cfg.get("num_threads", "auto")
        if threads != "auto":
            cfg["num_threads"] = resolve_threads(threads, cap=_runner_cpus())[0]
        first = None if seed is None else seed * 1000 + (ctx.worker_index or 0)
        self.env = SeerVectorMultiAgentEnv(name, self.config.num_envs_per_env_runner, first_seed=first, **cfg)
        self.num_envs = self.env.num_envs
        make_callback("on_environment_created", callbacks_objects=self._callbacks,
                      callbacks_functions=self.config.callbacks_on_environment_created,
                      kwargs=dict(env_runner=self, metrics_logger=self.metrics, env=self.env.unwrapped,
                                  env_context=ctx))

    def set_params(self, copies=None, **values):
        """Per-copy values for the next reset of each copy in ``copies`` of
        this runner (:meth:`SeerVectorMultiAgentEnv.set_params`); for every
        runner of an algorithm, :func:`set_params`."""
        self.env.set_params(copies, **values)


def _runner_set_params(runner, copies, values):
    """:func:`set_params` on one env runner: its SEER vector env, or each of
    its sub-envs (``copies``: their places in the runner)."""
    env = getattr(runner, "env", None)
    if env is None:
        return 0
    target = getattr(env, "unwrapped", env)
    if isinstance(target, SeerVectorMultiAgentEnv):
        target.set_params(copies, **values)
        return target.num_envs
    vec = getattr(target, "vec", None)               # the agent-level vector env (rllib_env_creator)
    if vec is not None and hasattr(vec, "set_params"):
        vec.set_params(copies, **values)
        return vec.num_envs
    subs = [getattr(e, "unwrapped", e) for e in getattr(env, "envs", [])]
    subs = [e for e in subs if isinstance(e, SeerRLlibEnv)]
    if not subs:
        raise TypeError(f"set_params: env runner {type(runner).__name__} holds no SEER env ({type(env).__name__})")
    ids = range(len(subs)) if copies is None else _copy_ids(copies, len(subs))
    for i in ids:
        subs[i].set_params(**values)
    return len(subs)


def _copy_ids(copies, n):
    ids = [copies] if isinstance(copies, numbers.Integral) else list(copies)
    for c in ids:
        if isinstance(c, bool) or not isinstance(c, numbers.Integral) or not 0 <= c < n:
            raise ValueError(f"copies must name sub-envs in [0, {n - 1}], got {c!r}")
    return ids


def set_params(algo, copies=None, **values):
    """Per-copy values for the next reset of copies ``copies`` (None: all)
    of every env runner of ``algo`` (an RLlib ``Algorithm``, or its
    ``env_runner_group``): a copy of a :class:`SeerMultiAgentEnvRunner`'s
    vector env, a sub-env of RLlib's default runner, or a copy of the
    agent-level vector env (:func:`rllib_env_creator`); autoresets apply
    them too.  Values are checked on each runner with the config's own
    errors (a refusal raises here, and no runner changes); returns the
    number of copies per runner.  Call it from a
    callback's ``on_train_result(algorithm=...)`` for a curriculum::

        set_params(algorithm, wind_sigma=0.5)
    """
    group = getattr(algo, "env_runner_group", algo)
    results = group.foreach_env_runner(lambda r: _refusal_as_value(r, copies, values), local_env_runner=True)
    for r in results:              # every runner checks the same values: all refuse, or none
        if isinstance(r, tuple):
            raise r[0](r[1])
    return results


def _refusal_as_value(runner, copies, values):
    """:func:`_runner_set_params`, its refusal returned rather than raised:
    an exception inside a remote runner's ``apply`` makes RLlib kill the
    runner (``restart_failed_env_runners``) instead of reporting it."""
    try:
        return _runner_set_params(runner, copies, values)
    except (ValueError, TypeError) as e:
        return (type(e), str(e))


def rllib_env_creator(env_id, autoreset_mode="next_step"):
    """An RLlib env creator for one policy shared by every agent of
    ``env_id``: register it (``ray.tune.registry.register_env(name,
    rllib_env_creator("pcs_v0"))``) and use it with RLlib's single-agent env
    runner in ``gym_env_vectorize_mode="vector_entry_point"``; RLlib then
    asks for ``num_envs_per_env_runner`` sub-envs, which must be a multiple
    of the agents per copy (copies = sub-envs / agents).  ``env_config`` holds
    the env's parameters (a per-copy field may be a list of one value per
    copy), ``param_sampler``, and optionally ``num_threads`` and ``seed``
    (read by nothing here: RLlib seeds through ``reset(seed=...)``).

    Seeds: RLlib resets runner ``w`` with ``seed + w``; copy ``c`` of a runner
    reset with ``s`` takes ``s * copies + c`` (``seed_stride``), so no two
    copies of any runners share a stream (with ``seed + c`` runner 1's copies
    1.. would replay runner 2's 0..).

    Autoreset: ``NEXT_STEP``, the only mode RLlib 2.60 consumes: its
    ``SingleAgentEnvRunner`` takes the step after a sub-env's done flag as
    that sub-env's reset (``add_env_reset``), and its own vector envs
    implement no other mode (``SAME_STEP`` would end each episode on the new
    episode's first observation).  Every row ends and restarts with its
    copy (:class:`SeerAgentVectorEnv`), so each recorded episode is a whole
    copy episode of one agent."""
    def creator(ctx):
        from seer_envs import get
        cfg = dict(ctx)
        num = int(cfg.pop("num_envs", 1))
        cfg.pop("seed", None)
        threads = cfg.pop("num_threads", "auto")
        spec = get(env_id)
        counts = getattr(spec.copies, "per_copy_counts", ())
        one = {k: (max(v) if k in counts else v[0]) if isinstance(v, (list, tuple)) and v else v
               for k, v in cfg.items() if k != "param_sampler"}    # the batch's width: the largest counts
        agents = len(spec.copies.agent_names(spec.build_config(one)))
        if num % agents:
            raise ValueError(f"num_envs_per_env_runner must be a multiple of the {agents} agents "
                             f"per copy of {env_id}, got {num}")
        env = seer_envs.agent_vector_env(env_id, num // agents, num_threads=threads,
                               autoreset_mode=autoreset_mode, **cfg)
        env.seed_stride = env.copies
        return env
    return creator
