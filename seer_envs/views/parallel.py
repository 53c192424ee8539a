# SPDX-License-Identifier: BSD-3-Clause
"""SEER's PettingZoo ParallelEnvs (:class:`SeerParallelEnv`): a view of the
episode core (:mod:`seer_envs.episode.core`) with one copy.  It adds what a
PettingZoo env has: dicts keyed by agent, the live agent list, per-agent
infos and rendering; every episode rule is the core's."""

import numbers

import numpy as np
from pettingzoo import ParallelEnv

from seer_envs.episode.actions import check_action_dict, resting_action
from seer_envs.episode.copying import CopiesByReduce
from seer_envs.episode.core import EpisodeCore
from seer_envs.episode.step import EPISODE_KEY
from seer_envs.scenario.render import render_modes


class UnknownAgentError(KeyError, ValueError):
    """An agent id the env does not have (a ``KeyError`` for mapping-style
    callers, a ``ValueError`` for the rest) with a readable message."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


class SeerParallelEnv(CopiesByReduce, ParallelEnv):
    """Template of SEER's PettingZoo ParallelEnvs: the episode core with one copy.

    ``reset`` / ``step`` take and return dicts; ``reset_arrays`` /
    ``step_arrays`` arrays in ``possible_agents`` order.  Every episode
    rule (seeds, validation, which agents are in play, episode statistics,
    threads, snapshots, the interrupt state) is the core's
    (:class:`~seer_envs.episode.core.EpisodeCore`, the same as the vector env's).
    The step loop injects the actions at ``k * dt`` and runs the engine to
    ``(k + 1) * dt``; boundary times come from the step count.

    A scenario needs no subclass of its own: the registry makes one from
    its spec (:func:`env_class`).  A scenario that writes one (for its
    docstring, or variants with other defaults) sets the class attribute
    ``_scenario_id`` (the registry id); everything else is declared once on
    its :class:`~seer_envs.scenario.copies.Copies`.

    **Agents.**  An agent is in ``agents`` (and in the dicts) from the reset
    until the step that ends it (terminated or truncated), PettingZoo's
    convention.  ``infos[agent]`` is a fresh empty dict on ordinary steps;
    on the step where an agent ends it holds the agent's details
    (``Copies.agent_infos``) and its episode statistics ``"seer_episode":
    {"r": return, "l": length}``.  Build with ``full_infos=True`` to get
    the details on every step (slower: about 0.5 us per agent).

    **Interrupts.**  If a step raises inside the engine (a
    ``KeyboardInterrupt`` or any other error after validation passed) the
    env is marked interrupted: the next ``step`` raises ``RuntimeError("...
    interrupted; call reset()")``; ``reset()`` starts a fresh episode.  A
    call from a second Python thread while one runs is refused with "in use
    by another thread" and changes nothing.

    **Copies and snapshots.**  ``copy.copy(env)`` is refused (it would share
    the engine).  ``copy.deepcopy(env)`` and ``pickle`` work at any point;
    :meth:`snapshot` / :meth:`restore` continue bit for bit.
    """

    metadata = {"render_modes": ["human", "rgb_array"], "is_parallelizable": True}

    _scenario_id = None

    def __init__(self, render_mode=None, num_threads="auto", full_infos=False, **params):
        from seer_envs import get
        modes = render_modes(type(self), get(self._scenario_id).copies)
        if render_mode is not None and render_mode not in modes:   # refused here, not at reset()
            raise ValueError(f"render_mode must be None or one of this env's render modes {modes} "
                             f"(its metadata['render_modes'] that the scenario declares), "
                             f"got {render_mode!r}")
        self.metadata = dict(type(self).metadata, render_modes=modes)
        if not isinstance(full_infos, (bool, np.bool_)):
            raise ValueError(f"full_infos must be True or False, got {full_infos!r}")
        self.core = core = EpisodeCore(self._scenario_id, 1, num_threads=num_threads,
                                       autoreset_mode="disabled", kind="env", **params)
        self.render_mode = render_mode
        self.full_infos = bool(full_infos)
        self._init_kwargs = dict(params, render_mode=render_mode, num_threads=num_threads,
                                 full_infos=self.full_infos)
        self.possible_agents = list(core.possible_agents)
        self.observation_spaces = {a: core.observation_space for a in self.possible_agents}
        self.action_spaces = {a: core.action_space for a in self.possible_agents}
        if core.state_space is not None:
            self.state_space = core.state_space
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self._n = n = len(self.possible_agents)
        self._all_rows = np.arange(n)
        self._lead, self._label = (n,), lambda i: f"agent {self.possible_agents[i]!r}"
        self._set_agents([])
        self._closed = False
        spec = core.action_spec
        self._actions_buf = (np.empty(n, np.int64) if spec[0] == "discrete"
                             else np.empty((n,) + tuple(spec[1]), np.float64))
        self._actions_buf[...] = resting_action(spec)

    # --- the core's state -------------------------------------------------------

    _batch = property(lambda self: self.core.batch)
    _action_spec = property(lambda self: self.core.action_spec)
    _started = property(lambda self: self.core.started)
    _engine = property(lambda self: self.core.batch.engine)
    _tuner = property(lambda self: self.core.batch.tuner)
    _interrupted = property(lambda self: self.core.interrupted)
    _cycle = property(lambda self: int(self.core.batch.cycle[0]))
    _model = property(lambda self: self.core.batch.copies.model if self.core.started else None)
    _done = property(lambda self: self.core.batch.done[0])
    _ep_return = property(lambda self: self.core.batch.ep_return[0])
    _ep_length = property(lambda self: self.core.batch.ep_length[0])

    @property
    def config(self):
        """The config of the running episode (``reset(options={"params": ...})``
        and a ``param_sampler`` change its per-copy fields)."""
        return self.core.batch.copies.configs[0]

    @property
    def params(self):
        """The per-copy fields' values in force: field -> value."""
        return {k: v[0].item() for k, v in self.core.param_values.items()}

    @property
    def max_cycles(self):
        """Steps until truncation (settable between episodes)."""
        return int(self.core.max_cycles[0])

    @max_cycles.setter
    def max_cycles(self, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"max_cycles must be an int >= 1, got {value!r}")
        self.core.set_max_cycles([value])

    @property
    def num_threads(self):
        """Threads of the current episode (None before the first reset)."""
        return self.core.num_threads

    @property
    def thread_choice(self):
        """How the thread count was chosen (STPA, the tuner), or None."""
        return self.core.batch.thread_choice

    @property
    def seed_used(self):
        """The episode seed of the current episode."""
        return int(self.core.batch.seeds_used[0])

    @property
    def engine(self):
        """The runtime engine of the current episode (statistics, pending events)."""
        return self._engine

    @property
    def model(self):
        """The scenario state of the current episode (NumPy views of its arrays)."""
        return self._model

    def _agent_infos(self, rows):
        return self.core.batch.copies.agent_infos(0, rows, self._cycle * self.config.dt)

    # --- spaces --------------------------------------------------------------

    def _unknown_agent(self, agent):
        p = self.possible_agents
        span = f"{p[0]!r} .. {p[-1]!r}" if len(p) > 1 else repr(p[0])
        return UnknownAgentError(f"unknown agent {agent!r}; this env's agents are {span}")

    def observation_space(self, agent):
        try:
            return self.observation_spaces[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None

    def action_space(self, agent):
        try:
            return self.action_spaces[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None

    def state(self):
        """The global state (``state_space``) at the last boundary."""
        self._check_started()
        return self.core.batch.copies.state(0)

    def summary(self):
        """Scenario-wide totals since reset (the scenario's ``Copies.summary``)."""
        self._check_started()
        return self.core.batch.copies.summary(0, self._engine, self._cycle)

    # --- PettingZoo API --------------------------------------------------------

    def reset(self, seed=None, options=None):
        """Start an episode; returns ``(observations, infos)`` dicts."""
        obs = self.reset_arrays(seed=seed, options=options)
        agents = self.agents
        if self.full_infos:
            infos = dict(zip(agents, self._agent_infos(self._all_rows)))
        else:
            infos = {a: {} for a in agents}
        return dict(zip(agents, obs)), infos

    def step(self, actions):
        """Advance one step with a dict ``agent -> action`` of every live
        agent; returns ``(observations, rewards, terminations, truncations,
        infos)`` dicts over the agents live at the step start."""
        a = self.core.check_step(actions, check=self._actions_from_dict)
        agents, rows, all_live = self.agents, self._live_rows, len(self.agents) == self._n
        obs, rew, term, trunc = self._advance(a)
        if not all_live:
            obs, rew, term, trunc = obs[rows], rew[rows], term[rows], trunc[rows]
        obs_d = dict(zip(agents, obs))
        rew_d = dict(zip(agents, rew.tolist()))
        term_d = dict(zip(agents, term.tolist()))
        trunc_d = dict(zip(agents, trunc.tolist()))
        if self.full_infos:
            infos = dict(zip(agents, self._agent_infos(rows)))
        else:
            infos = {a: {} for a in agents}
        ended = np.flatnonzero(term | trunc)
        if ended.size:
            b = self.core.batch
            ended_rows = rows[ended]
            details = self._agent_infos(ended_rows) if not self.full_infos else None
            ret, length = b.ep_return[0][ended_rows].tolist(), b.ep_length[0][ended_rows].tolist()
            for k, e in enumerate(ended.tolist()):
                info = infos[agents[e]] if details is None else details[k]
                info[EPISODE_KEY] = {"r": ret[k], "l": length[k]}
                infos[agents[e]] = info
        return obs_d, rew_d, term_d, trunc_d, infos

    # --- array fast path ---------------------------------------------------

    def reset_arrays(self, seed=None, options=None):
        """Like :meth:`reset` but returns the ``(agents, obs_size)`` float32
        observation array (a fresh array, the caller's)."""
        self._check_open()
        obs = self.core.reset(seed, options, hold=True)     # marked until the agents are set
        self._set_agents(self.possible_agents[:])
        self.core.done()
        if self.render_mode == "human":
            self.render()
        return obs[0]

    def step_arrays(self, actions):
        """Step with one array of actions, one row per possible agent in
        ``possible_agents`` order (rows of agents out of play are checked but
        ignored).  Returns ``(obs, rewards, terminations, truncations)``
        arrays over all possible agents, fresh each step; an agent's flag is
        True at the step it ends, and its rows are out of play afterwards
        (not in ``agents``: reward 0, no flags)."""
        return self._advance(self.core.check_step(actions, lead=self._lead, label=self._label))

    def _advance(self, a):
        """Run one step with a validated action array; returns ``(obs,
        rewards, terminations, truncations)``: the step's own arrays."""
        core = self.core
        s = core.step(a[None], hold=True)      # (one copy); marked until the agents are set
        if s.ended is not None:
            self._set_agents([])
        elif s.stats is not None:
            self._set_agents([self.possible_agents[i] for i in np.flatnonzero(s.mask[0]).tolist()])
        core.done()
        if self.render_mode == "human":      # PettingZoo's convention: human mode draws each step
            self.render()
        return s.obs[0], s.rew[0], s.term[0], s.trunc[0]

    # --- checks ---------------------------------------------------------------

    def _check_open(self):
        self.core.check_open()

    def _check_started(self):
        self.core.check_open()
        if not self.core.started:
            raise RuntimeError("call reset() first")

    def _set_agents(self, agents):
        self.agents = agents
        if len(agents) == self._n:          # every agent (a reset, a restore): no lookups
            if len(getattr(self, "_live", ())) != self._n:  # (already every agent: kept)
                self._live = set(agents)
            self._live_rows = self._all_rows
        else:
            self._live = set(agents)
            self._live_rows = np.fromiter(map(self._index.__getitem__, agents), np.intp, len(agents))

    def _actions_from_dict(self, actions):
        """Validate a dict of actions for exactly the live agents into the
        action buffer (rows in ``possible_agents`` order; other rows 0)."""
        return check_action_dict(actions, self.agents, self._live, self._live_rows, self._index,
                                 self._n, self.core.action_spec, self._actions_buf)

    # --- copies and pickling ---------------------------------------------------

    def __reduce__(self):
        state = self.core.reduce_state(type(self).__name__)
        from seer_envs import get
        if get(self._scenario_id).env is type(self):
            # by id: the registry's class, made from the spec or written
            # in a module, loads wherever the scenario is registered
            return (_restore_registered, (self._scenario_id, self._init_kwargs, state))
        return (_restore, (type(self), self._init_kwargs, state))

    # --- snapshots ------------------------------------------------------------

    def snapshot(self):
        """The env's whole state now, as a :class:`~seer_envs.Snapshot`
        (``to_bytes()`` for a file): :meth:`restore` into an env of the same
        scenario and parameters, at any thread count, continues bit for bit
        (docs/training.md, "Snapshots")."""
        self._check_started()
        return self.core.snapshot()

    def restore(self, snapshot):
        """Continue from ``snapshot`` (a :class:`~seer_envs.Snapshot`, or its
        bytes: this env's, or a vector env's snapshot of one copy).
        ``ValueError`` naming what differs; the env is then left as it was."""
        self.core.restore(snapshot, hold=True)      # marked until the agents are set
        self._agents_from_core()
        self.core.done()

    def _agents_from_core(self):
        mask = self.core.mask[0]
        self._set_agents(self.possible_agents[:] if mask.all() else
                         [a for a, m in zip(self.possible_agents, mask.tolist()) if m])

    # --- rendering and lifecycle ---------------------------------------------

    def render(self):
        """``"rgb_array"``: an H x W x 3 uint8 image; ``"human"``: a text map
        printed to stdout, paced to ``metadata["render_fps"]`` frames per
        second (returns None; in this mode ``reset`` and every step draw it
        themselves, as PettingZoo's envs do); None: nothing."""
        if self.render_mode is None:
            return None
        self._check_started()
        if self.render_mode == "rgb_array":
            return self.core.batch.copies.image(self)
        from seer_envs.scenario.render import pace
        pace(self)                       # at most metadata["render_fps"] frames per second
        self.core.batch.copies.print_map(self)
        return None

    def close(self):
        """Release the engine; later calls raise ``RuntimeError``."""
        self.core.close()
        self._closed = True


def env_class(spec):
    """The ParallelEnv class of ``spec``, a scenario that names no ``env``:
    the template with its id, named after its copies class (``GossipCopies``
    -> ``GossipEnv``), its ``obs_layout`` from the copies class."""
    copies = spec.copies
    name = copies.__name__.removesuffix("Copies") + "Env"
    return type(name, (SeerParallelEnv,), {
        "__module__": copies.__module__,
        "__doc__": f"The ``{spec.id}`` ParallelEnv, made by the registry from its spec: "
                   f"the template :class:`SeerParallelEnv` with its id (build it with "
                   f"``seer_envs.make({spec.id!r}, ...)``).",
        "metadata": dict(SeerParallelEnv.metadata, name=spec.id, render_fps=4),
        "obs_layout": copies.obs_layout,
        "_scenario_id": spec.id})


def _restore_registered(scenario_id, kwargs, state):
    """Rebuild a pickled env of the registry's class for ``scenario_id``."""
    from seer_envs import get
    return _restore(get(scenario_id).env, kwargs, state)


def _restore(cls, kwargs, state):
    """Rebuild a pickled or deep-copied env (see ``SeerParallelEnv``)."""
    env = cls(**kwargs)
    env.core.apply_state(state)
    if env.core.started:
        env._agents_from_core()
    return env
