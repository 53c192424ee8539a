# SPDX-License-Identifier: BSD-3-Clause
"""The template of SEER's PettingZoo ParallelEnvs (:class:`SeerParallelEnv`),
one copy of the batch (:mod:`seer_envs._batch`): the dict and array step
paths, action validation, the live agent list, per-agent infos, rendering,
copies and pickling."""

import dataclasses
import json
import numbers
import operator

import numpy as np
from pettingzoo import ParallelEnv

from seer_envs._actions import check_actions
from seer_envs._batch import CopiesByReduce
from seer_runtime._threads import check_num_threads


class UnknownAgentError(KeyError, ValueError):
    """An agent id the env does not have (a ``KeyError`` for mapping-style
    callers, a ``ValueError`` for the rest) with a readable message."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


_INT_TYPES = (int, np.integer)
_DTYPE = operator.attrgetter("dtype")
_SHAPE = operator.attrgetter("shape")


def _int_types_only(types):
    return all(issubclass(t, _INT_TYPES) and t is not bool for t in types)


class SeerParallelEnv(CopiesByReduce, ParallelEnv):
    """Template of SEER's PettingZoo ParallelEnvs: one copy of the batch.

    The env is a :class:`~seer_envs._batch.Batch` of one copy of the
    scenario's :class:`~seer_envs.copies.Copies` (the same reset path,
    seed rule, validation and thread tuner as the vector env), plus what a
    PettingZoo env adds: ``reset`` / ``step`` (dicts) and ``reset_arrays`` /
    ``step_arrays`` (arrays in ``possible_agents`` order), the live agent
    list, per-agent infos, rendering, copying and pickling.  The step loop
    injects the actions at ``k * dt`` and runs the engine to ``(k + 1) *
    dt``; boundary times are computed from the step count, never
    accumulated.

    A scenario subclass sets the class attributes ``_scenario_id`` (the
    registry id), ``_config_cls`` and ``_copies_cls``, and may add
    ``summary()``, ``state()`` and the ``human`` renderer ``_print_map()``;
    everything else, the ``rgb_array`` frame included, is declared once on
    its ``Copies``.

    **Dict path.**  ``step(actions)`` validates all actions as one stacked
    array (the same clear errors as the per-agent checks, naming the first
    bad agent), runs the array step, and builds the dicts with one
    ``tolist()`` per output.  The observations in the returned dict are
    views of the step's own array: they are not overwritten by later steps.
    ``infos[agent]`` is a fresh empty dict on ordinary steps; on the step
    where an agent terminates or truncates it holds the agent's details
    (``Copies.agent_infos``) and its episode statistics ``"episode": {"r":
    return, "l": length}``.  Build with ``full_infos=True`` to get the
    details on every step (slower: about 0.5 us per agent).

    **Interrupts.**  If a step raises inside the engine (a ``KeyboardInterrupt``
    or any other error after validation passed) the env is marked
    interrupted: the next ``step`` raises ``RuntimeError("... interrupted;
    call reset()")`` instead of continuing from a half-run step; ``reset()``
    starts a fresh episode.  A call from a second Python thread while one
    runs is refused with "in use by another thread" and changes nothing.

    **Copies and snapshots.**  ``copy.copy(env)`` is refused (it would share
    the engine).  ``copy.deepcopy(env)`` and ``pickle`` work at any point: an
    env never reset or right after ``reset()`` is rebuilt from its
    constructor arguments (the copy re-runs the reset with the same episode
    seed), one in the middle of an episode through a snapshot
    (:meth:`snapshot`, :meth:`restore`): the copy continues bit for bit.
    """

    metadata = {"render_modes": ["human", "rgb_array"], "is_parallelizable": True}

    _scenario_id = None
    _config_cls = None
    _copies_cls = None

    def __init__(self, render_mode=None, num_threads="auto", full_infos=False, **params):
        from seer_envs._batch import Batch
        from seer_runtime.config import build
        if render_mode not in (None, "human", "rgb_array"):
            raise ValueError(f'render_mode must be None, "human" or "rgb_array", got {render_mode!r}')
        if not isinstance(full_infos, (bool, np.bool_)):
            raise ValueError(f"full_infos must be True or False, got {full_infos!r}")
        check_num_threads(num_threads)            # validate now, not at the first reset
        self.config = cfg = build(self._config_cls, params)
        self.render_mode = render_mode
        self.full_infos = bool(full_infos)
        self._init_kwargs = dict(params, render_mode=render_mode, num_threads=num_threads,
                                 full_infos=self.full_infos)
        self._batch = b = Batch(self._copies_cls, cfg, 1, [cfg.max_cycles], num_threads,
                                self._stpa_chooser)
        cp = b.copies
        self.possible_agents = list(cp.possible_agents)
        self.observation_spaces = {a: cp.observation_space for a in self.possible_agents}
        self.action_spaces = {a: cp.action_space for a in self.possible_agents}
        state_space = cp.state_space(cfg)
        if state_space is not None:
            self.state_space = state_space
        self._action_spec = cp.action_spec
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        n = len(self.possible_agents)
        self._n = n
        self._all_rows = np.arange(n)
        self._set_agents([])
        self._started = False
        self._closed = False
        kind = self._action_spec[0]
        self._actions_buf = (np.zeros(n, np.int64) if kind == "discrete"
                             else np.zeros((n,) + tuple(self._action_spec[1]), np.float64))

    def _stpa_chooser(self):
        """STPA's ``choose`` for this configuration (preflight + model,
        cached per configuration and hardware)."""
        from seer_envs import get, stpa_chooser
        return stpa_chooser(get(self._scenario_id), self.config)

    # --- the batch of one ------------------------------------------------------

    @property
    def max_cycles(self):
        """Steps until truncation (settable between episodes)."""
        return int(self._batch.max_cycles[0])

    @max_cycles.setter
    def max_cycles(self, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"max_cycles must be an int >= 1, got {value!r}")
        self._batch.set_max_cycles([value])

    @property
    def num_threads(self):
        """Threads of the current episode (None before the first reset)."""
        return self._batch.num_threads

    @property
    def thread_choice(self):
        """How the thread count was chosen (STPA, the tuner), or None."""
        return self._batch.thread_choice

    @property
    def seed_used(self):
        """The episode seed of the current episode."""
        return int(self._batch.seeds_used[0])

    @property
    def _engine(self):
        return self._batch.engine

    @_engine.setter
    def _engine(self, engine):          # tests put a wrapper in front of the engine
        self._batch.engine = engine

    @property
    def _model(self):
        return self._batch.copies.model if self._started else None

    @property
    def _tuner(self):
        return self._batch.tuner

    @property
    def _interrupted(self):
        what = self._batch.broken
        return f"step {self._cycle + 1}" if what == "a step" else what

    @property
    def _cycle(self):
        return int(self._batch.cycle[0])

    @property
    def _done(self):
        return self._batch.done[0]

    @property
    def _ep_return(self):
        return self._batch.ep_return[0]

    @property
    def _ep_length(self):
        return self._batch.ep_length[0]

    def _agent_infos(self, rows):
        return self._batch.copies.agent_infos(0, rows, self._cycle * self.config.dt)

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
        return self._batch.copies.state(0)

    def summary(self):
        """Scenario-wide totals since reset (the scenario's ``Copies.summary``)."""
        self._check_started()
        return self._batch.copies.summary(0, self._engine, self._cycle)

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
        infos)`` dicts over the agents live at the step start (see the class
        docstring for what ``infos`` holds)."""
        self._check_steppable()
        a = self._actions_from_dict(actions)
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
            ended_rows = rows[ended]
            details = self._agent_infos(ended_rows) if not self.full_infos else None
            ret, length = self._ep_return[ended_rows].tolist(), self._ep_length[ended_rows].tolist()
            for k, e in enumerate(ended.tolist()):
                info = infos[agents[e]] if details is None else details[k]
                info["episode"] = {"r": ret[k], "l": length[k]}
                infos[agents[e]] = info
        return obs_d, rew_d, term_d, trunc_d, infos

    # --- array fast path ---------------------------------------------------

    def reset_arrays(self, seed=None, options=None):
        """Like :meth:`reset` but returns the ``(agents, obs_size)`` float32
        observation array (a fresh array, the caller's)."""
        self._check_open()
        self._check_options(options)
        if seed is not None:
            check_seed(seed)
        return self._start(seed=seed)

    def step_arrays(self, actions):
        """Step with one array of actions, one row per possible agent in
        ``possible_agents`` order (rows of finished agents are checked but
        ignored).  Returns ``(obs, rewards, terminations, truncations)``
        arrays over all possible agents, fresh each step (the caller's: later
        steps do not change them); ``terminations`` is True for every stopped
        agent."""
        self._check_steppable()
        names = self.possible_agents
        a = check_actions(actions, self._action_spec, (self._n,), lambda i: f"agent {names[i]!r}")
        return self._advance(a)

    def _start(self, episode_seed=None, seed=None):
        """A fresh engine and episode (``episode_seed``, else the next seed of
        the generator, seeded anew with ``seed`` when given)."""
        b = self._batch
        with b.using():
            if seed is not None:
                b.seed([seed])
            self._started = False
            obs = b.start(None if episode_seed is None else [episode_seed])
            self._started = True
            self._set_agents(self.possible_agents[:])
        if self.render_mode == "human":
            self.render()
        return obs[0]

    def _advance(self, a):
        """Run one step with a validated action array; returns ``(obs,
        rewards, terminations, truncations)``: the step's own arrays, which
        the env does not write again."""
        b = self._batch
        with b.using():
            obs, rew, term, trunc, ended = b.advance_one(a)
            if ended:
                self._set_agents([])
            elif b._any_done and len(self.agents) != self._n - int(b.done[0].sum()):
                self._set_agents([self.possible_agents[i]
                                  for i in np.flatnonzero(~b.done[0]).tolist()])
            if b.tuner is not None:
                b.after_step()
        if self.render_mode == "human":      # PettingZoo's convention: human mode draws each step
            self.render()
        return obs, rew, term, trunc

    # --- checks ---------------------------------------------------------------

    @staticmethod
    def _check_options(options):
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"reset options must be a dict or None, got {type(options).__name__}")

    def _check_open(self):
        if self._closed:
            raise RuntimeError("this env was closed; create a new one")

    def _check_steppable(self):
        self._check_open()
        self._batch.check_free()
        if self._interrupted is not None:
            raise RuntimeError(f"{self._interrupted} was interrupted (KeyboardInterrupt or an error "
                               "inside the engine), so the episode state is incomplete; call reset()")
        if not self._started:
            raise RuntimeError("call reset() first")
        if not self.agents:
            raise RuntimeError("the episode has ended (all agents are done); call reset() first")

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
        action buffer (rows in ``possible_agents`` order; finished agents'
        rows are 0).  One stacked array check in the common case; the
        per-agent checks name the first bad agent otherwise."""
        if not isinstance(actions, dict):
            raise ValueError(f"actions must be a dict agent -> action, got {type(actions).__name__}")
        agents = self.agents
        if len(actions) == len(agents) and list(actions) == agents:
            rows = self._live_rows
        else:
            self._live_actions(actions)           # names the unknown, finished or missing agent
            rows = np.fromiter(map(self._index.__getitem__, actions), np.intp, len(actions))
        out = self._actions_buf
        if len(agents) != self._n:
            out[...] = 0
        vals = list(actions.values())
        spec = self._action_spec
        if spec[0] == "discrete":
            if _int_types_only(set(map(type, vals))):
                try:
                    arr = np.array(vals, np.int64)
                except OverflowError:
                    arr = None
                if arr is not None and ((arr >= 0) & (arr < spec[1])).all():
                    out[rows] = arr
                    return out
            return self._check_discrete_actions(actions, spec[1], out)
        shape, low, high = spec[1:]
        # Fast path: arrays of one real dtype (stacking would promote a bool
        # or a mixed entry silently; lists go through the per-agent checks).
        if set(map(type, vals)) == {np.ndarray}:
            dtypes = set(map(_DTYPE, vals))
            dtype = dtypes.pop() if len(dtypes) == 1 else None
            if dtype is not None and dtype.kind in "fiu" and set(map(_SHAPE, vals)) == {tuple(shape)}:
                try:        # the raw buffers joined: ~8x faster than np.array(vals)
                    arr = np.frombuffer(b"".join(vals), dtype).reshape((len(vals),) + tuple(shape))
                except (TypeError, BufferError):                # a non-contiguous view
                    arr = np.array(vals)
                if ((arr >= low) & (arr <= high)).all():      # NaN fails both comparisons
                    out[rows] = arr
                    return out
        return self._check_box_actions(actions, shape, low, high, out)

    def _check_discrete_actions(self, actions, n_actions, out):
        """Validate a dict of Discrete actions for the live agents into ``out``."""
        for agent, act in self._live_actions(actions):
            if isinstance(act, np.ndarray):
                if act.size != 1:
                    raise ValueError(f"action for agent {agent!r} must be a scalar, got shape {act.shape}")
                act = act.reshape(())[()]
            if isinstance(act, (bool, np.bool_)) or not isinstance(act, numbers.Integral):
                raise ValueError(f"action for agent {agent!r} must be an integer, got {act!r}")
            if not 0 <= act < n_actions:
                raise ValueError(f"action for agent {agent!r} must be in [0, {n_actions - 1}], got {act!r}")
            out[self._index[agent]] = act
        return out

    def _live_actions(self, actions):
        """(agent, action) pairs of a dict that has exactly the live agents."""
        if not self.agents:
            raise RuntimeError("the episode has ended (all agents are done); call reset() first")
        if not isinstance(actions, dict):
            raise ValueError(f"actions must be a dict agent -> action, got {type(actions).__name__}")
        live = self._live
        for agent in actions:
            if agent not in live:
                kind = "finished" if agent in self._index else "unknown"
                raise ValueError(f"action for {kind} agent {agent!r}")
        if len(actions) != len(live):
            missing = [a for a in self.agents if a not in actions]
            raise ValueError(f"missing action for agent {missing[0]!r}"
                             + (f" and {len(missing) - 1} more" if len(missing) > 1 else ""))
        return actions.items()

    def _check_box_actions(self, actions, shape, low, high, out):
        """Validate a dict of Box actions (real arrays of ``shape`` within
        ``[low, high]``, finite) for the live agents into ``out`` (rows in
        ``possible_agents`` order)."""
        for agent, act in self._live_actions(actions):
            out[self._index[agent]] = self._check_box_value(agent, act, shape, low, high)
        return out

    @staticmethod
    def _check_box_value(agent, act, shape, low, high):
        if not isinstance(act, (np.ndarray, list, tuple)):
            raise ValueError(f"action for agent {agent!r} must be an array of shape {shape}, got {act!r}")
        try:
            a = np.asarray(act)
        except ValueError:
            raise ValueError(f"action for agent {agent!r} must be an array of shape {shape}, "
                             f"got {act!r}") from None
        if a.dtype.kind not in "fiu":
            raise ValueError(f"action for agent {agent!r} must be real numbers, got dtype {a.dtype}")
        if a.shape != shape:
            raise ValueError(f"action for agent {agent!r} must have shape {shape}, got {a.shape}")
        a = a.astype(np.float64)
        if not np.isfinite(a).all():
            raise ValueError(f"action for agent {agent!r} is not finite (NaN or inf): {act!r}")
        if (a < low).any() or (a > high).any():
            raise ValueError(f"action for agent {agent!r} must be in [{low}, {high}], got {a.tolist()}")
        return a

    # --- copies and pickling ---------------------------------------------------

    def __reduce__(self):
        if self._closed:
            state = ("closed",)
        elif self._interrupted is not None:
            raise TypeError(f"cannot copy or pickle {type(self).__name__}: {self._interrupted} was "
                            "interrupted; call reset() first")
        elif not self._started:
            state = ("new", self._batch.rng_states())
        elif self._cycle == 0:
            state = ("reset", self._batch.rng_states(), self.seed_used)
        else:                           # mid-episode: through a snapshot
            state = ("snapshot", self.snapshot().to_bytes())
        return (_restore, (type(self), self._init_kwargs, self.max_cycles, state))

    # --- snapshots ------------------------------------------------------------

    def _snapshot_params(self):
        # (a fresh dict each call, from the JSON kept for this config: it is frozen)
        cached = getattr(self, "_params_json", None)
        if cached is None or cached[0] is not self.config:
            self._params_json = cached = (self.config, json.dumps(dataclasses.asdict(self.config)))
        return json.loads(cached[1])

    def snapshot(self):
        """The env's whole state now, as a :class:`~seer_envs.Snapshot`
        (``to_bytes()`` for a file): :meth:`restore` into an env of the same
        scenario and parameters, at any thread count, continues bit for bit
        (docs/training.md, "Snapshots")."""
        from seer_envs._snapshot import capture
        self._check_started()
        if self._interrupted is not None:
            raise RuntimeError(f"{self._interrupted} was interrupted: there is no consistent state "
                               "to save; call reset()")
        with self._batch.using():
            return capture(self._batch, self._scenario_id, self._snapshot_params(), "env")

    def restore(self, snapshot):
        """Continue from ``snapshot`` (a :class:`~seer_envs.Snapshot`, or its
        bytes).  ``ValueError`` naming what differs when it is another
        scenario, other parameters or not a whole snapshot; the env is then
        left as it was."""
        from seer_envs._snapshot import Snapshot, check, check_events, restore
        self._check_open()
        if isinstance(snapshot, (bytes, bytearray, memoryview)):
            snapshot = Snapshot.from_bytes(snapshot)
        b = self._batch
        with b.using():
            if isinstance(snapshot, Snapshot) and snapshot.kind == "copies":
                self._restore_copy(snapshot)
            else:
                gens = check(snapshot, b, self._scenario_id, self._snapshot_params(), "env")
                if not self._started or b.engine is None:
                    check_events(snapshot)      # before anything changes
                    b.start()                   # an engine to put the state into
                restore(snapshot, b, gens)
            self._started = True
            done = b.done[0]
            self._set_agents(self.possible_agents[:] if not b._any_done else
                             [a for a, d in zip(self.possible_agents, done.tolist()) if not d])
        return None

    def _restore_copy(self, snapshot):
        """A vector env's snapshot of one copy (``snapshot(copies=[c])``):
        the LP layouts agree, a single env being a batch of one."""
        from seer_envs._snapshot import check_params, copy_states, generators, prepare_copy, restore_copies
        if snapshot.num_copies != 1:
            raise ValueError(f"a snapshot of {snapshot.num_copies} copies cannot be restored into a "
                             "single env (take snapshot(copies=[c]) of one copy)")
        b = self._batch
        check_params(snapshot, self._scenario_id, self._snapshot_params())
        gens = generators(snapshot, 1)
        prepared = prepare_copy(copy_states(snapshot, b.copies)[0], b, 0, "copy 0")
        if not self._started or b.engine is None or b.broken is not None:
            b.start()
        restore_copies(b, [prepared], [0], gens)

    # --- rendering and lifecycle ---------------------------------------------

    def render(self):
        """``"rgb_array"``: an H x W x 3 uint8 image (a colour scale or
        legend, the time and a scale; plain pixels without matplotlib);
        ``"human"``: a text map printed to stdout, paced to
        ``metadata["render_fps"]`` frames per second (returns None; in this
        mode ``reset`` and every step draw it themselves, as PettingZoo's envs
        do); None: nothing."""
        if self.render_mode is None:
            return None
        self._check_started()
        if self.render_mode == "rgb_array":
            return self._batch.copies.image(self)
        from seer_envs._render import pace
        pace(self)                       # at most metadata["render_fps"] frames per second
        self._print_map()
        return None

    @property
    def engine(self):
        """The runtime engine of the current episode (statistics, pending events)."""
        return self._engine

    @property
    def model(self):
        """The scenario state of the current episode (NumPy views of its arrays)."""
        return self._model

    def _check_started(self):
        self._check_open()
        if not self._started:
            raise RuntimeError("call reset() first")

    def close(self):
        """Release the engine; later calls raise ``RuntimeError``."""
        self._started = False
        self._batch.close()
        self._closed = True


def check_seed(seed):
    """A seed is an int >= 0 (or None, checked by the caller)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be an int >= 0 or None, got {seed!r}")


def _restore(cls, kwargs, max_cycles, state):
    """Rebuild a pickled or deep-copied env (see ``SeerParallelEnv``)."""
    env = cls(**kwargs)
    env.max_cycles = max_cycles
    if state[0] == "closed":
        env.close()
        return env
    if state[0] == "snapshot":
        env.restore(state[1])
        return env
    env._batch.set_rng_states(state[1])
    if state[0] == "reset":
        env._start(state[2])
    return env
