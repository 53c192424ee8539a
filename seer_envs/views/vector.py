# SPDX-License-Identifier: BSD-3-Clause
"""Many copies of one SEER env in one engine, as batched multi-agent
arrays: :func:`vector_env`.

>>> import numpy as np, seer_envs
>>> venv = seer_envs.vector_env("pcs_v0", 64, grid_width=8, grid_height=8)
>>> obs, infos = venv.reset(seed=0)              # (64, 64, 11): copies x agents x obs
>>> obs, rew, term, trunc, infos = venv.step(np.zeros((64, 64), np.int64))

Why one engine: a small env (PCS 8x8) has too little parallel work in one
step for a second thread, and a Python loop over copies (SuperSuit) pays the
per-step overhead once per copy.  Here every copy's entities live in one
event loop, so one ``run_until`` per step advances all copies and the
threads share the work of all of them.  Copy ``c`` gives exactly what a
single env seeded as below gives, bit for bit, at any thread count.

The episode rules (seeds, autoreset, agents in play, episode statistics,
snapshots) are the core's (:mod:`seer_envs.episode.core`); this view hands out its
arrays with Gymnasium's vector conventions, the multi-agent way:
observations ``(num_envs, num_agents, obs_dim)``, rewards and flags
``(num_envs, num_agents)``, ``infos["mask"]`` (agents in play) at every
step and ``infos["seer_episode"]`` ``{"r", "l"}`` (mask
``"_seer_episode"``, ``(num_envs, num_agents)``) when agents end.

It is not a ``gymnasium.vector.VectorEnv``: that interface has one reward
per sub-env, and Gymnasium's vector wrappers (``RecordEpisodeStatistics``,
``NormalizeReward``, ``RecordVideo``) refuse it at wrapping time, naming
:func:`seer_envs.agent_vector_env`, the Gymnasium ``VectorEnv`` with one
sub-env per (copy, agent).

**Layout** (``layout``): one engine for every copy, which runs each step in
copy groups (``"copy_groups"``: each thread takes whole copies; automatic
from two threads with at least four copies per thread, or
``copy_parallel=True``) or round by round (``"team"``;
``copy_parallel=False``); or groups of copies with an engine each
(``"groups"``: one group per batch when ``batch_size < num_envs``, or about
four per thread with ``copy_parallel="engines"``; docs/runtime.md).

**Threads.**  ``num_threads="auto"`` asks STPA once for the whole batch
(its preflight runs the vector env itself, cached per configuration and
hardware; the thread tuner then adjusts the team between steps); an int is
used as given.

**Asynchronous stepping** (EnvPool's ``send`` / ``recv``):
:mod:`seer_envs.views.asynchronous`.
"""

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from seer_envs.episode.copying import CopiesByReduce
from seer_envs.episode.core import EpisodeCore
from seer_envs.episode.step import EPISODE_KEY, MASK_KEY, PARAMS_KEY
from seer_envs.scenario.render import render_modes
from seer_envs.views.asynchronous import AsyncSteps
from seer_envs.views.attributes import CopyAttributes

__all__ = ["vector_env", "SeerVectorEnv", "supported", "EPISODE_KEY", "MASK_KEY"]


def supported():
    """Ids of the registered scenarios that have a vector env (all that declare copies)."""
    from seer_envs import envs
    return tuple(k for k, s in envs().items() if s.copies is not None)


def vector_env(env_id, num_envs, num_threads="auto", autoreset_mode="next_step", param_sampler=None,
               **params):
    """``num_envs`` copies of the registered env ``env_id`` in one engine
    (see :class:`SeerVectorEnv`); ``params`` are the env's config fields,
    where a per-copy field (``max_cycles`` and the scenario's ``per_copy``)
    may be a sequence of ``num_envs`` values, one per copy;
    ``param_sampler`` draws per-copy values at every reset of every copy
    (docs/training.md, "Per-copy worlds"); ``autoreset_mode`` is
    ``"next_step"`` (default), ``"same_step"`` or ``"disabled"``."""
    return SeerVectorEnv(env_id, num_envs, num_threads=num_threads, autoreset_mode=autoreset_mode,
                         param_sampler=param_sampler, **params)


def batch_agents(space, num_envs, num_agents):
    """One agent's space batched to ``(num_envs, num_agents, ...)``."""
    if isinstance(space, spaces.Discrete):
        return spaces.MultiDiscrete(np.full((num_envs, num_agents), space.n), start=np.full(
            (num_envs, num_agents), space.start))
    return batch_space(batch_space(space, num_agents), num_envs)


def _render_fps(spec):
    """The scenario's frame rate (its env's ``metadata["render_fps"]``, else 4)."""
    return int(getattr(spec.env, "metadata", {}).get("render_fps", 4))


class _MultiAgentClass(type):
    """The class's repr says what it is: Gymnasium's vector wrappers refuse a
    non-``VectorEnv`` with ``"... but got {type(env)}"``."""

    def __repr__(cls):
        return (f"<class '{cls.__module__}.{cls.__qualname__}': a multi-agent vector env with "
                "rewards (num_envs, num_agents), not a gymnasium.vector.VectorEnv; for Gymnasium's "
                "vector wrappers use seer_envs.agent_vector_env(...), one sub-env per (copy, agent)>")


class SeerVectorEnv(CopiesByReduce, AsyncSteps, CopyAttributes, metaclass=_MultiAgentClass):
    """``num_envs`` copies of one SEER env stepped together in one engine
    (module docstring).

    ``single_observation_space`` / ``single_action_space`` are one agent's;
    ``observation_space`` / ``action_space`` the batch's, ``(num_envs,
    num_agents, ...)``.  ``reset(seed=None, options=None)`` -> ``(obs,
    infos)``; ``step(actions)`` -> ``(obs, rewards, terminations,
    truncations, infos)``; all fresh arrays, the caller's.  ``actions`` is
    ``(num_envs, num_agents)`` ints for a Discrete action space
    (``(num_envs, num_agents) + shape`` for a Box); rows of agents out of
    play are checked and ignored.

    ``get_attr`` / ``set_attr`` / ``call``: Gymnasium's ``SyncVectorEnv``
    semantics, a sub-env being a copy (:mod:`seer_envs.views.attributes`).

    Copies and pickling: ``copy.copy`` is refused (it would share the
    engine); ``pickle`` and ``copy.deepcopy`` work before ``reset()``, right
    after it, after ``close()``, and mid-episode through a snapshot; not
    while copies are in flight.
    """

    def __init__(self, env_id, num_envs, num_threads="auto", autoreset_mode="next_step",
                 render_mode=None, batch_size=None, copy_parallel=None, **params):
        self.closed = True              # until built: nothing for __del__ to close
        from seer_envs import get
        modes = [m for m in render_modes(None, get(env_id).copies) if m == "rgb_array"]
        if render_mode is not None and render_mode not in modes:      # refused here, not at render()
            raise ValueError(f"render_mode must be None or one of this scenario's vector render modes "
                             f"{modes}, got {render_mode!r}")
        self.core = core = EpisodeCore(env_id, num_envs, num_threads=num_threads,
                                       autoreset_mode=autoreset_mode, batch_size=batch_size,
                                       copy_parallel=copy_parallel, **params)
        self._init_kwargs = dict(params, num_threads=num_threads, autoreset_mode=core.autoreset_mode.value,
                                 render_mode=render_mode, batch_size=core.batch_size,
                                 copy_parallel=copy_parallel)
        self.env_id, self.config = env_id, core.config
        self.num_envs, self.num_agents, self.batch_size = core.num_copies, core.num_agents, core.batch_size
        self.possible_agents = list(core.possible_agents)
        self.autoreset_mode = core.autoreset_mode
        self.metadata = {"autoreset_mode": core.autoreset_mode, "render_modes": modes,
                         "render_fps": _render_fps(core.spec)}
        self.render_mode = render_mode
        self.spec = None
        self.single_observation_space = core.observation_space
        self.single_action_space = core.action_space
        if core.state_space is not None:        # one copy's global state, and the batch's
            self.single_state_space = core.state_space
            self.state_space = batch_space(core.state_space, self.num_envs)
        self.observation_space = batch_agents(core.observation_space, self.num_envs, self.num_agents)
        self.action_space = batch_agents(core.action_space, self.num_envs, self.num_agents)
        self._init_async()
        self.closed = False

    # --- the core's state, read-only ---------------------------------------------

    _vec = property(lambda self: self)          # CopyAttributes: a sub-env is a copy
    _rows_per_copy = 1
    unwrapped = property(lambda self: self)
    _batch = property(lambda self: self.core.batch)
    num_threads = property(lambda self: self.core.num_threads, doc="Threads of the engine (None before a reset).")
    thread_choice = property(lambda self: self.core.thread_choice,
                             doc="How the thread count was chosen (STPA, the tuner) and the layout, or None.")
    layout = property(lambda self: self.core.layout,
                      doc='"copy_groups", "team" (one engine) or "groups" (an engine per group of copies).')
    max_cycles = property(lambda self: self.core.max_cycles, doc="Each copy's truncation step count.")
    params = property(lambda self: self.core.param_values,
                      doc="Each copy's values of the per-copy fields in force: field -> array (num_envs,).")
    per_copy_fields = property(lambda self: self.core.per_copy_fields,
                               doc="The config fields that may take one value per copy.")
    cycles = property(lambda self: self.core.batch.cycle.copy(), doc="Steps of each copy's current episode.")
    seeds_used = property(lambda self: self.core.batch.seeds_used, doc="Each copy's current episode seed.")

    @property
    def engine(self):
        """The engine holding every copy; None when the copies run in groups (:attr:`engines`)."""
        return self.core.batch.engine

    @property
    def engines(self):
        """Every engine: one, or one per group of copies."""
        return self.core.engines

    @property
    def model(self):
        """The scenario model holding every copy; with groups, the list of the groups' models."""
        return self.core.batch.model

    # --- API -------------------------------------------------------------------

    #: ``reset(seed=s)`` seeds copy ``c`` with ``s * seed_stride + c`` (RLlib's runners set it).
    seed_stride = 1

    def reset(self, *, seed=None, options=None):
        """Start a fresh episode in every copy (``seed``: an int, copy ``c``
        gets ``seed + c``; or one int or None per copy).  Under ``DISABLED``,
        ``options={"reset_mask": mask}`` restarts only the copies in
        ``mask``; ``options={"params": {field: value}}`` sets per-copy values
        for the copies it restarts (one value, or one per copy restarted).
        Returns ``(obs, {"mask": ..., "seer_params": ...})``."""
        self._check_nothing_in_flight("reset()")
        self._async_reset_state()
        obs = self.core.reset(seed, options, self.seed_stride)
        return obs, {MASK_KEY: self.core.mask, PARAMS_KEY: self.core.param_values}

    def set_params(self, copies=None, **values):
        """Per-copy values for the next reset of each copy in ``copies``
        (None: all), by ``reset`` or autoreset: one value or one per copy
        named.  Checked now by each copy's config; nothing changes on a
        refusal (docs/training.md, "Per-copy worlds")."""
        self._check_nothing_in_flight("set_params()")
        self.core.set_params(copies, **values)

    def set_param_sampler(self, sampler):
        """The parameter sampler drawn at every later reset of every copy (None: none)."""
        self._check_nothing_in_flight("set_param_sampler()")
        self.core.set_param_sampler(sampler)

    def step(self, actions):
        """One step of every copy; returns ``(obs, rewards, terminations,
        truncations, infos)``."""
        self._check_nothing_in_flight("step()")
        core = self.core
        s = core.step(core.check_step(actions))
        return s.obs, s.rew, s.term, s.trunc, s.infos()

    def state(self):
        """Every copy's global state at its last boundary, ``(num_envs,) +
        single_state_space.shape``: the input of a centralised critic."""
        self._check_nothing_in_flight("state()")
        return self.core.state()

    def render(self):
        """``render_mode="rgb_array"``: one H x W x 3 frame per copy, as a tuple."""
        if self.render_mode is None:
            return None
        self._check_nothing_in_flight("render()")
        return self.core.frames()

    def snapshot(self, copies=None):
        """Every copy's state now (one engine: an engine-wide snapshot), or
        copies ``copies`` (a snapshot of single copies, which restores into
        any slots, layout or a single env), as a :class:`~seer_envs.Snapshot`;
        :meth:`restore` continues from it bit for bit at any thread count."""
        self._check_nothing_in_flight("snapshot()")
        return self.core.snapshot(copies)

    def restore(self, snapshot, copies=None):
        """Continue from ``snapshot`` (a :class:`~seer_envs.Snapshot` or its
        bytes): see :meth:`seer_envs.episode.core.EpisodeCore.restore`."""
        self.core.check_open()
        self._check_nothing_in_flight("restore()")
        return self.core.restore(snapshot, copies)

    def close(self, **kwargs):
        """Wait for the copies in flight, stop the engine's thread and release
        the engine; later calls raise RuntimeError."""
        if self.closed:
            return
        self._close_async()
        self.core.close()
        self.closed = True

    def __del__(self):
        if not getattr(self, "closed", True):
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return f"SeerVectorEnv({self.env_id!r}, num_envs={self.num_envs})"

    def __reduce__(self):
        self._check_nothing_in_flight_pickle()
        return (_restore_vector, (type(self), self.env_id, self.num_envs, self._init_kwargs,
                                  self.core.reduce_state(type(self).__name__), self.seed_stride))


def _restore_vector(cls, env_id, num_envs, kwargs, state, seed_stride=1):
    """Rebuild a pickled or deep-copied vector env (see :class:`SeerVectorEnv`)."""
    env = cls(env_id, num_envs, **kwargs)
    env.seed_stride = seed_stride
    if state[0] == "closed":
        env.close()
    else:
        env.core.apply_state(state)
    return env
