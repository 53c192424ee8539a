# SPDX-License-Identifier: BSD-3-Clause
"""Many copies of one SEER env in one engine: :func:`vector_env` (copy
level, batched multi-agent arrays) and :func:`agent_vector_env` (a
Gymnasium ``VectorEnv`` with one sub-env per (copy, agent) pair).

>>> import numpy as np, seer_envs
>>> venv = seer_envs.vector_env("pcs_v0", 64, grid_width=8, grid_height=8)
>>> obs, infos = venv.reset(seed=0)              # (64, 64, 11): copies x agents x obs
>>> obs, rew, term, trunc, infos = venv.step(np.zeros((64, 64), np.int64))

Why one engine: a small env (PCS 8x8) has too little parallel work in one
step for a second thread, and a Python loop over copies (SuperSuit) pays the
per-step overhead once per copy.  Here every copy's entities live in one
event loop, so one ``run_until`` per step advances all copies and the
threads share the work of all of them.  Both env kinds are one
:class:`~seer_envs._batch.Batch` of the scenario's copies (a single env is a
batch of one), so copy ``c`` gives exactly what a single env seeded as
below gives, bit for bit, at any thread count.

**Every scenario** that declares its copies (``ScenarioSpec.copies``) has a
vector env; no scenario is named here.

**Layout.**  Batched arrays are shaped ``(num_envs, num_agents, ...)``,
agents in the single env's ``possible_agents`` order.

**Seeds** (Gymnasium's convention).  ``reset(seed=s)`` seeds copy ``c`` as a
single env's ``reset(seed=s + c)``; ``reset(seed=[s0, s1, ...])`` gives each
copy its own (``None`` entries draw a fresh one).  Each copy then draws its
later episode seeds from its own generator, as a single env's ``reset()``
without a seed does.

**Auto-reset** (``autoreset_mode``, Gymnasium's ``AutoresetMode``; also in
``metadata["autoreset_mode"]``):

- ``NEXT_STEP`` (the default, as in Gymnasium and RLlib): the ending step
  returns the final observation; the copy restarts at its next ``step``,
  which ignores the copy's actions and returns its first observation with
  reward 0 and no termination or truncation;
- ``SAME_STEP``: the ending step restarts the copy at once: its observation
  row is the new episode's first, ``infos["final_obs"]`` (mask
  ``"_final_obs"``) holds the full observation array of the step;
- ``DISABLED``: ended copies stay ended; ``reset(options={"reset_mask":
  mask})`` restarts the copies in ``mask``, and stepping a copy that ended
  is an error.

``infos`` is ``{}`` on steps where no copy ended.  When copies end it has
``"seer_episode": {"r": returns (num_envs, num_agents), "l": lengths}``
with the mask ``"_seer_episode"`` (SEER's own key: Gymnasium's
``RecordEpisodeStatistics`` writes ``"episode"``).

**Asynchronous stepping** (EnvPool's semantics): ``send(actions, env_ids)``
starts stepping those copies on the engine's own thread and returns at once;
``recv()`` returns the earliest sent group's outputs with
``infos["env_id"]``; ``async_reset()`` queues the copies in groups of
``batch_size``.  Each copy's trajectory is the synchronous env's.  Only the
engine's part of a step runs on that thread; its Python part runs in
``send`` and ``recv``, on the caller's.

**Layout** (``layout``): one engine for every copy, which runs each step
either in copy groups (``"copy_groups"``: each thread takes whole copies
and runs each to the step's end, one join per step; chosen automatically
on two threads or more when there are at least four copies per thread, or
with ``copy_parallel=True``) or
round by round over every copy (``"team"``; ``copy_parallel=False``); or
groups of copies with an engine each (``"groups"``): one group per batch when
``batch_size < num_envs``, or about four per thread, stepped concurrently,
with ``copy_parallel="engines"`` (docs/runtime.md, "Copies in groups").

**Threads.**  ``num_threads="auto"`` asks STPA once for the whole batch
(its preflight runs the vector env itself, cached per configuration and
hardware; the thread tuner then adjusts the team between steps, as in the
single env); an int is used as given.
"""

import atexit
import collections
import dataclasses
import numbers
import os
import queue
import threading
import time
import weakref

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from seer_envs._actions import check_actions
from seer_envs._batch import Batch, CopiesByReduce, Groups, group_bounds
from seer_envs._parallel import check_seed
from seer_runtime._threads import check_num_threads, resolve_threads

__all__ = ["vector_env", "agent_vector_env", "rllib_env_creator", "SeerVectorEnv",
           "SeerAgentVectorEnv", "supported"]

#: SEER's key for its episode statistics in a vector env's ``infos``.
EPISODE_KEY = "seer_episode"


def supported():
    """Ids of the registered scenarios that have a vector env (all that declare copies)."""
    from seer_envs import envs
    return tuple(k for k, s in envs().items() if s.copies is not None)


def _autoreset_mode(mode):
    """An ``AutoresetMode`` from the enum or its name in any case."""
    if isinstance(mode, AutoresetMode):
        return mode
    key = str(mode).lower().replace("_", "").replace("-", "")
    for m in AutoresetMode:
        if m.value.lower().replace("_", "") == key or m.name.lower().replace("_", "") == key:
            return m
    raise ValueError(f'autoreset_mode must be "next_step", "same_step" or "disabled" '
                     f"(or a gymnasium AutoresetMode), got {mode!r}")


def _batch_agents(space, num_envs, num_agents):
    """One agent's space batched to ``(num_envs, num_agents, ...)``."""
    if isinstance(space, spaces.Discrete):
        return spaces.MultiDiscrete(np.full((num_envs, num_agents), space.n), start=np.full(
            (num_envs, num_agents), space.start))
    return batch_space(batch_space(space, num_agents), num_envs)


def vector_env(env_id, num_envs, num_threads="auto", autoreset_mode="next_step", **params):
    """``num_envs`` copies of the registered env ``env_id`` in one engine
    (see :class:`SeerVectorEnv`); ``params`` are the env's config fields
    (``max_cycles`` may also be a sequence of ``num_envs`` ints, one per
    copy); ``autoreset_mode`` is ``"next_step"`` (default), ``"same_step"``
    or ``"disabled"``."""
    return SeerVectorEnv(env_id, num_envs, num_threads=num_threads,
                         autoreset_mode=autoreset_mode, **params)


class SeerVectorEnv(CopiesByReduce, VectorEnv):
    """``num_envs`` copies of one SEER env stepped together in one engine
    (module docstring: seeds, auto-reset, threads), with Gymnasium's vector
    conventions the multi-agent way.

    ``single_observation_space`` / ``single_action_space`` are one agent's;
    ``observation_space`` / ``action_space`` the batch's, ``(num_envs,
    num_agents, ...)``.  ``reset(seed=None, options=None)`` -> ``(obs,
    infos)``; ``step(actions)`` -> ``(obs, rewards, terminations,
    truncations, infos)`` with ``obs`` ``(num_envs, num_agents, obs_dim)``
    float32, ``rewards`` ``(num_envs, num_agents)`` float32 and the flags
    ``(num_envs, num_agents)`` bool; all fresh arrays, the caller's.
    ``actions`` is ``(num_envs, num_agents)`` ints for a Discrete action
    space (``(num_envs, num_agents) + shape`` for a Box).  Agents that
    finished inside a running episode keep their rows (checked, ignored,
    reported terminated), as in the single env's ``step_arrays``.

    Copies and pickling: ``copy.copy`` is refused (it would share the
    engine); ``pickle`` and ``copy.deepcopy`` work before ``reset()``, right
    after it (the copy re-runs the reset with the same seeds), after
    ``close()``, and mid-episode through a snapshot (:meth:`snapshot`); not
    while copies are in flight.
    """

    def __init__(self, env_id, num_envs, num_threads="auto", autoreset_mode="next_step",
                 render_mode=None, batch_size=None, copy_parallel=None, **params):
        from seer_envs import get
        self.closed = True              # until built: nothing for __del__ to close
        mode = _autoreset_mode(autoreset_mode)
        spec = get(env_id)
        if spec.copies is None:
            raise ValueError(f"vector_env supports {', '.join(supported())}; got {env_id!r}")
        if isinstance(num_envs, bool) or not isinstance(num_envs, numbers.Integral) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f'render_mode must be None or "rgb_array", got {render_mode!r}')
        num_envs = int(num_envs)
        if batch_size is None:
            batch_size = num_envs
        if (isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral)
                or not 1 <= batch_size <= num_envs):
            raise ValueError(f"batch_size must be an int in [1, num_envs = {num_envs}], got {batch_size!r}")
        check_num_threads(num_threads)
        if not any(copy_parallel is v for v in (None, True, False)) and copy_parallel != "engines":
            raise ValueError(f'copy_parallel must be None (automatic), True, False or "engines", '
                             f'got {copy_parallel!r}')
        self._init_kwargs = dict(params, num_threads=num_threads, autoreset_mode=mode.value,
                                 render_mode=render_mode, batch_size=int(batch_size),
                                 copy_parallel=copy_parallel)
        self.batch_size = int(batch_size)
        self._copy_parallel = copy_parallel
        self.env_id = env_id
        mc = params.get("max_cycles")
        per_copy_mc = mc is not None and not isinstance(mc, numbers.Integral) and np.ndim(mc) == 1
        if per_copy_mc:
            mcs = list(mc)
            if len(mcs) != num_envs:
                raise ValueError(f"max_cycles must be an int or {num_envs} ints (one per copy), "
                                 f"got {len(mcs)} values")
            for v in mcs:   # each checked by the config's own bounds
                spec.build_config(dict(params, max_cycles=v))
            params = dict(params, max_cycles=max(mcs))
        self.config = spec.build_config(params)
        if hasattr(self.config, "check_memory"):        # before any per-copy array
            self.config.check_memory(num_envs)
        self._params = dataclasses.asdict(self.config)
        mcs = mcs if per_copy_mc else self.config.max_cycles     # the batch checks sizes first
        self._spec = spec
        self.num_envs = num_envs
        self._laid_out = num_threads != "auto"
        if self._laid_out:
            b = self._lay_out(resolve_threads(num_threads), mcs)
        else:       # laid out at the first reset, once STPA has chosen the thread count
            b = Batch(spec.copies, self.config, num_envs, mcs, num_threads, self._stpa_chooser)
        self._batch = b
        cp = b.copies
        self.autoreset_mode = mode
        self.metadata = {"autoreset_mode": mode, "render_modes": ["rgb_array"]}
        self.render_mode = render_mode
        self.possible_agents = list(cp.possible_agents)
        self.num_agents = cp.num_agents
        self.single_observation_space = cp.observation_space
        self.single_action_space = cp.action_space
        state_space = cp.state_space(self.config)
        if state_space is not None:        # one copy's global state, and the batch's
            self.single_state_space = state_space
            self.state_space = batch_space(state_space, num_envs)
        self.observation_space = _batch_agents(cp.observation_space, num_envs, self.num_agents)
        self.action_space = _batch_agents(cp.action_space, num_envs, self.num_agents)
        self._waiting = np.zeros(num_envs, bool)      # NEXT_STEP: restart at the next step
        self._ended = np.zeros(num_envs, bool)        # DISABLED: ended, not reset yet
        self._started = False
        self._jobs = collections.deque()             # _Sent steps, in send order
        self._in_flight = np.zeros(num_envs, bool)
        self._thread = None                          # the engine's thread (_EngineThread) for send()
        self.closed = False

    # --- layout and threads -------------------------------------------------------

    def _lay_out(self, choice, max_cycles, rng_states=None, team=None):
        """One engine for every copy (its ``threads`` threads run each step
        in copy groups, or round by round on all copies: :meth:`_copy_groups`),
        or groups of copies with an engine each: one group per batch of
        ``batch_size`` copies (each engine with ``threads`` threads; a batch
        sent alone steps whole, nothing frozen), or with
        ``copy_parallel="engines"`` about four groups per thread, each engine
        on one thread, the groups stepped concurrently.  See docs/runtime.md,
        "Copies in groups"."""
        threads, info = choice
        E = self.num_envs
        if self._copy_parallel == "engines":
            bounds = group_bounds(E, self.batch_size, threads)
            b = Groups(self._spec.copies, self.config, bounds, max_cycles, threads, 1)
        elif self.batch_size < E:
            bounds = group_bounds(E, self.batch_size, 1)
            b = Groups(self._spec.copies, self.config, bounds, max_cycles, 1, threads,
                       self._copy_groups(self.batch_size, threads))
        elif team is not None:            # "auto": the batch it has, with its tuner
            team.copy_groups = self._copy_groups(E, threads)
            return team
        else:
            return Batch(self._spec.copies, self.config, E, max_cycles, threads, lambda: None,
                         self._copy_groups(E, threads))
        b.thread_choice = info.replace(groups=len(bounds), workers=b.workers)
        if rng_states is not None:
            b.set_rng_states(rng_states)
        return b

    def _copy_groups(self, copies, threads):
        """Whether an engine of ``copies`` copies on ``threads`` threads runs
        its steps in copy groups: as ``copy_parallel`` says, else (None)
        from two threads on, with enough copies to share out evenly (at
        least four per thread).  On two cores they measured level with the
        team on PCS when the machine was idle, ahead of it beside a busy
        process and on Aircraft (docs/runtime.md, "Copies in groups"); the
        synchronisations they save grow with the team.  One thread keeps
        the team's path (no phase to share)."""
        if self._copy_parallel is not None:
            return bool(self._copy_parallel)
        return threads >= 2 and copies >= 4 * threads

    def _ensure_layout(self):
        if not self._laid_out:
            team = self._batch
            choice = (team.choose_threads(), team.thread_choice)
            self._batch = self._lay_out(choice, team.max_cycles, team.rng_states(), team)
            if self._batch is not team:
                team.close()
            self._laid_out = True


    def _stpa_chooser(self):
        def choose():
            import stpa      # ImportError -> the hard caps
            kw = dict(self._params, max_cycles=self.max_cycles.tolist())
            key = [self.env_id, "vector", self.num_envs, self._params, self.max_cycles.tolist()]
            return stpa.choose(key, lambda t, s: vector_run(self.env_id, self.num_envs, t, s, kw))
        return choose

    @property
    def num_threads(self):
        """Threads of the engine (None before the first reset)."""
        return self._batch.num_threads

    @property
    def thread_choice(self):
        """How the thread count was chosen (STPA, the tuner) and the layout
        (``"layout"``: ``"copy_groups"``, ``"team"`` or ``"groups"``), or None
        before a reset."""
        c = self._batch.thread_choice
        return None if c is None else c.replace(layout=self.layout)

    @property
    def layout(self):
        """``"copy_groups"``: one engine, each of its threads taking whole
        copies and running each to the step's end; ``"team"``: one engine,
        its threads working round by round on every copy; ``"groups"``:
        groups of copies, an engine each, stepped concurrently
        (docs/runtime.md, "Copies in groups")."""
        b = self._batch
        if isinstance(b, Groups):
            return "groups"
        return "copy_groups" if b.copy_groups and self.num_envs > 1 else "team"

    # --- state -------------------------------------------------------------------

    @property
    def engine(self):
        """The engine holding every copy (statistics, pending events); None
        when the copies run in groups (:attr:`engines`)."""
        return self._batch.engine

    @property
    def engines(self):
        """Every engine: one, or one per group of copies."""
        b = self._batch
        return b.engines if isinstance(b, Groups) else [b.engine]

    @property
    def model(self):
        """The scenario model holding every copy (NumPy views of its state);
        with groups of copies, the list of the groups' models."""
        b = self._batch
        return b.models if isinstance(b, Groups) else b.copies.model

    @property
    def max_cycles(self):
        """Each copy's truncation step count."""
        return self._batch.max_cycles

    @property
    def cycles(self):
        """Steps taken in each copy's current episode."""
        return self._batch.cycle.copy()

    @property
    def seeds_used(self):
        """Each copy's current episode seed."""
        return self._batch.seeds_used

    # --- API -------------------------------------------------------------------

    def reset(self, *, seed=None, options=None):
        """Start a fresh episode in every copy (``seed``: an int, copy ``c``
        gets ``seed + c``; or one int or None per copy).  Under ``DISABLED``,
        ``options={"reset_mask": mask}`` restarts only the copies in ``mask``.
        Returns ``(obs, {})``."""
        self._check_open()
        self._check_nothing_in_flight("reset()")
        if self._thread is not None:
            self._thread.failed = False         # every copy starts afresh below
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"reset options must be a dict or None, got {type(options).__name__}")
        mask = None if options is None else options.get("reset_mask")
        if mask is not None:
            mask = self._reset_mask(mask)
        seeds = self._seeds(seed)
        b = self._batch
        with b.using():
            if mask is not None and self._started and b.broken is None:
                idx = np.flatnonzero(mask)
                if seeds is not None:
                    b.seed_copies([s if m else None for s, m in zip(seeds, mask)])
                self._ended[idx] = False
                self._waiting[idx] = False
                obs = self._last_obs.copy()         # the other copies' rows: as last returned
                obs[idx] = b.restart_obs(idx)
                self._last_obs = obs
                return obs, {}
            self._ensure_layout()
            b = self._batch
            if seeds is not None:
                b.seed_copies(seeds)
            self._started = False
            obs = b.start()
            self._started = True
            self._waiting[:] = False
            self._ended[:] = False
            self._last_obs = obs
            b.after_step(started=True)
        return obs, {}

    def _seeds(self, seed):
        """None, or one int-or-None per copy."""
        if seed is None:
            return None
        if isinstance(seed, (list, tuple, np.ndarray)):
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed must be an int, None or {self.num_envs} seeds (one per copy), "
                                 f"got {len(seeds)}")
            for s in seeds:
                if s is not None:
                    check_seed(s)
            return [None if s is None else int(s) for s in seeds]
        check_seed(seed)
        return [int(seed) + c for c in range(self.num_envs)]

    def _reset_mask(self, mask):
        m = np.asarray(mask)
        if m.dtype != bool or m.shape != (self.num_envs,):
            raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},), "
                             f"got {m.dtype} {m.shape}")
        if self.autoreset_mode != AutoresetMode.DISABLED:
            raise ValueError("options['reset_mask'] is for autoreset_mode DISABLED; this env "
                             f"auto-resets ({self.autoreset_mode.name})")
        return m

    def step(self, actions):
        """One step of every copy (see the class and module docstrings)."""
        self._check_nothing_in_flight("step()")
        self._check_steppable()
        a = self._check_actions(actions)
        self._check_not_ended(None)
        return self._step(a, None)

    def _step(self, a, ids):
        """Step copies ``ids`` (sorted; None: all) with validated actions;
        returns their rows of the outputs."""
        with self._batch.using():      # a second thread is refused before it changes anything
            step = self._begin(a, ids)
            step.run()
            return self._end(step)

    def _begin(self, a, ids):
        """The caller's part of a step before the engine runs: the copies
        waiting for their restart, the batch's :meth:`~Batch.prepare`
        (inside ``batch.using()``, as :meth:`_end`)."""
        b = self._batch
        sel = slice(None) if ids is None else _as_index(ids)
        waiting = None
        if self._waiting[sel].any():
            waiting = np.zeros(self.num_envs, bool)
            waiting[sel] = self._waiting[sel]
        plan = b.prepare(a, waiting, active=ids)
        self._waiting[sel] = False
        return _Step(ids, sel, b, plan)

    def _end(self, step):
        """The caller's part of a step after the engine ran: the batch's
        :meth:`~Batch.finish`, auto-reset and infos; returns the copies' rows."""
        b, sel = step.batch, step.sel
        obs, rew, term, trunc, ended = b.finish(step.plan)
        infos = {}
        if ended is not None:
            infos = {EPISODE_KEY: {"r": b.ep_return[sel].copy(), "l": b.ep_length[sel].copy()},
                     "_" + EPISODE_KEY: ended[sel].copy()}
            if self.autoreset_mode == AutoresetMode.SAME_STEP:
                infos["final_obs"] = obs[sel].copy()
                infos["_final_obs"] = ended[sel].copy()
                idx = np.flatnonzero(ended)  # in arrays of their own: not over what this step returns
                obs[idx] = b.restart_obs(idx)
            elif self.autoreset_mode == AutoresetMode.NEXT_STEP:
                self._waiting |= ended
            else:
                self._ended |= ended
        b.after_step()
        out = obs[sel], rew[sel], term[sel], trunc[sel]
        if self.autoreset_mode == AutoresetMode.DISABLED:      # a reset mask's other rows
            if step.ids is None:
                self._last_obs = out[0]
            else:
                self._last_obs = self._last_obs.copy()
                self._last_obs[sel] = out[0]
        return out + (infos,)

    # --- asynchronous stepping (EnvPool's send / recv) ----------------------------
    #
    # A sent step is split in three (Batch.prepare / run / finish): the
    # caller's thread prepares it in send() (actions in, restarts, output
    # arrays) and finishes it in recv() (episode statistics, flags, auto-reset,
    # infos); only the engine's part (inject, run, boundary: native calls that
    # release the GIL) runs on the engine's thread.  That thread then takes
    # the GIL for a few lines per step, so the caller's Python (its policy)
    # and the engine overlap instead of queueing for the GIL, and while the
    # caller waits in recv() the engine's thread is all engine: where the env
    # is the slower side, its Python part is no longer on the critical path
    # (docs/training.md, "Overlapping the env and the policy").  Steps
    # touching one batch (the whole engine, or a group of copies with its
    # engine) are done in
    # send order, each prepared only once the one before it on that batch is
    # finished: a send that shares a batch with a step still in flight first
    # waits for that step and finishes it (its recv() then returns it), so
    # every batch sees the synchronous env's sequence of calls.

    def async_reset(self, seed=None, options=None):
        """Reset every copy, then queue the copies for :meth:`recv` in
        groups of ``batch_size`` (copy ids in order), as EnvPool's
        ``async_reset``: each ``recv()`` returns one group's first
        observations (reward 0, no flags, ``infos["env_id"]``)."""
        obs, _ = self.reset(seed=seed, options=options)
        B = self.batch_size
        for lo in range(0, self.num_envs, B):
            ids = np.arange(lo, min(lo + B, self.num_envs))
            zeros = np.zeros((len(ids), self.num_agents), bool)
            first = (obs[lo:lo + B], np.zeros(zeros.shape, np.float32), zeros, zeros.copy(), {})
            self._jobs.append(_Sent(ids, frozenset(), result=first))
            self._in_flight[ids] = True

    def send(self, actions, env_ids=None):
        """Start stepping copies ``env_ids`` (default: all) with ``actions``
        ``(len(env_ids), num_agents, ...)`` on the engine's own thread and
        return at once; :meth:`recv` returns the outputs.  The caller may run
        its policy (NumPy, torch) on other copies meanwhile, and reuse the
        ``actions`` buffer.  Copies still in flight (sent and not received)
        cannot be sent again.  A send of copies that share an engine with
        copies in flight (``batch_size=num_envs``, sent in parts) waits for
        those first."""
        if self._jobs:          # the engine's thread may be busy with them: its state is in motion
            self._check_open()
        else:
            self._check_steppable()
        ids = self._env_ids(env_ids)
        if self._in_flight[ids].any():
            c = int(ids[self._in_flight[ids]][0])
            raise RuntimeError(f"copy {c} is still in flight (sent and not received): recv() it first")
        a = self._check_actions(actions, ids)
        self._check_not_ended(ids)
        step_ids = None if len(ids) == self.num_envs else ids
        b = self._batch
        keys = frozenset(b.members(step_ids)) if isinstance(b, Groups) else frozenset((0,))
        for job in self._jobs:          # steps in flight on the same batches: finished first
            if job.keys & keys:
                self._settle(job)
        if self._thread is not None and self._thread.failed:    # an earlier step sent failed
            raise _interrupted()
        with b.using():
            step = self._begin(a, step_ids)
        if self._thread is None or self._thread.pid != os.getpid():    # none yet, or a fork's child
            self._thread = _EngineThread()
        job = _Sent(ids, keys, step=step)
        self._thread.submit(job)
        self._jobs.append(job)
        self._in_flight[ids] = True

    def recv(self):
        """The outputs of the earliest sent group still unreceived (waiting
        for it): ``(obs, rewards, terminations, truncations, infos)`` over
        its copies, in ``env_ids`` order, with ``infos["env_id"]``; the error
        its step raised, if it did."""
        self._check_open()
        if not self._jobs:
            raise RuntimeError("recv() with nothing in flight: send() actions (or async_reset()) first")
        job = self._jobs[0]
        self._settle(job)           # a Ctrl-C while waiting leaves it in flight
        self._jobs.popleft()
        self._in_flight[job.ids] = False
        if job.error is not None:
            raise job.error
        obs, rew, term, trunc, infos = job.result
        infos["env_id"] = job.ids
        return obs, rew, term, trunc, infos

    def _settle(self, job):
        """Wait for a sent step's engine part, then finish it (once),
        keeping its outputs or the error it raised for its :meth:`recv`."""
        if job.step is None:
            return
        job.wait()
        step, job.step = job.step, None
        if job.error is None:
            try:
                with step.batch.using():
                    job.result = self._end(step)
            except BaseException as e:      # noqa: B036 - raised by its recv()
                job.error = e

    @property
    def in_flight(self):
        """Groups sent (or queued by :meth:`async_reset`) and not received yet."""
        return len(self._jobs)

    def _env_ids(self, env_ids):
        if env_ids is None:
            return np.arange(self.num_envs)
        ids = np.asarray(env_ids)
        if ids.ndim != 1 or ids.dtype.kind not in "iu" or len(ids) == 0:
            raise ValueError(f"env_ids must be a non-empty 1-d array of copy ids, got {env_ids!r}")
        if ids.min() < 0 or ids.max() >= self.num_envs:
            raise ValueError(f"env_ids must be in [0, {self.num_envs - 1}], got {ids.tolist()}")
        if (np.diff(ids) <= 0).any():
            raise ValueError(f"env_ids must be increasing without repeats, got {ids.tolist()}")
        return ids.astype(np.int64)

    def _check_nothing_in_flight(self, what):
        if self._jobs:
            raise RuntimeError(f"{what} while copies are in flight: recv() them first "
                               f"({len(self._jobs)} group(s) sent and not received)")

    def _check_not_ended(self, ids):
        ended = self._ended if ids is None else self._ended[ids]
        if ended.any():
            c = int(np.flatnonzero(self._ended)[0]) if ids is None else int(ids[ended][0])
            raise RuntimeError(f"copy {c} has ended (autoreset_mode DISABLED); call "
                               "reset(options={'reset_mask': mask}) for the ended copies first")

    def state(self):
        """Every copy's global state at its last boundary, ``(num_envs,) +
        single_state_space.shape`` (``state_space``; what a single env's
        ``state()`` gives for that copy): the input of a centralised critic.
        Under ``NEXT_STEP`` a copy that just ended shows its final state until
        its restart; under ``SAME_STEP`` its new episode's first."""
        self._check_nothing_in_flight("state()")
        self._check_steppable()
        if not hasattr(self, "state_space"):
            raise NotImplementedError(f"{self.env_id} declares no global state")
        b = self._batch
        if isinstance(b, Groups):
            return np.concatenate([g.copies.states(0, g.num_copies) for g in b.groups])
        return b.copies.states(0, self.num_envs)

    def render(self):
        """``render_mode="rgb_array"``: one H x W x 3 frame per copy, as a
        tuple (Gymnasium's vector convention); None without a render mode."""
        if self.render_mode is None:
            return None
        self._check_nothing_in_flight("render()")
        self._check_steppable()
        cycle, mc = self._batch.cycle, self.max_cycles
        return tuple(self._batch.frame(c, int(cycle[c]), int(mc[c])) for c in range(self.num_envs))

    def __del__(self):
        # Gymnasium's VectorEnv closed itself when collected up to 1.2 and no
        # longer does (1.4): a dropped env must still stop its engine's thread.
        if not getattr(self, "closed", True):
            self.close()

    def close_extras(self, **kwargs):
        """Wait for the copies in flight, stop the engine's thread and release
        the engine; later calls raise RuntimeError."""
        for job in self._jobs:
            job.wait()
        self._jobs.clear()
        self._in_flight[:] = False
        if self._thread is not None:
            self._thread.stop()
            self._thread = None
        self._batch.close()
        self._started = False

    # --- copies and pickling ---------------------------------------------------

    def __reduce__(self):
        b = self._batch
        if self._jobs:
            raise TypeError(f"cannot copy or pickle {type(self).__name__} while copies are in flight: "
                            "recv() them first")
        if self.closed:
            state = ("closed",)
        elif b.broken is not None:
            raise TypeError(f"cannot copy or pickle {type(self).__name__}: {b.broken} was "
                            "interrupted; call reset() first")
        elif not self._started:
            state = ("new", b.rng_states())
        elif not b.cycle.any() and not self._waiting.any() and not self._ended.any():
            state = ("reset", b.rng_states(), b.seeds_used.copy())
        else:                           # mid-episode: through a snapshot
            state = ("snapshot", self.snapshot().to_bytes())
        return (_restore_vector, (type(self), self.env_id, self.num_envs, self._init_kwargs,
                                  self.max_cycles.tolist(), state))

    # --- snapshots --------------------------------------------------------------

    def _snapshot_params(self):
        import json
        return json.loads(json.dumps(self._params))

    def _copy_ids(self, copies, what):
        """Validated copy ids (a list, in the given order)."""
        if isinstance(copies, (str, bytes)) or not hasattr(copies, "__len__"):
            raise TypeError(f"{what} must be a sequence of copy ids, got {type(copies).__name__}")
        ids = np.asarray(copies)
        if ids.ndim != 1 or len(ids) == 0 or ids.dtype.kind not in "iu":
            raise ValueError(f"{what} must be a non-empty 1-d sequence of int copy ids, got {copies!r}")
        if ids.min() < 0 or ids.max() >= self.num_envs:
            raise ValueError(f"{what} must be in [0, {self.num_envs - 1}], got {ids.tolist()}")
        if len(np.unique(ids)) != len(ids):
            dup = int(np.flatnonzero(np.bincount(ids) > 1)[0])
            raise ValueError(f"{what} has duplicates (copy {dup} twice), got {ids.tolist()}")
        return [int(c) for c in ids]

    def _locate(self, c):
        """(batch, copy within it) holding copy ``c``: the team, or its group."""
        b = self._batch
        if isinstance(b, Groups):
            k = int(np.searchsorted(b._starts, c, side="right")) - 1
            return b.groups[k], c - b.bounds[k][0]
        return b, c

    def snapshot(self, copies=None):
        """The state now of every copy, or of copies ``copies`` (a sequence
        of copy ids), as a :class:`~seer_envs.Snapshot`.  :meth:`restore`
        continues from it bit for bit, at any thread count and layout.

        Every copy of one engine (the team or copy groups): one engine-wide
        snapshot, which restores into a one-engine vector env of the same
        copies.  With ``copies``, or from groups of engines: a snapshot of
        single copies, each in a single env's coordinates, which restores
        into any slots of a vector env of the scenario and parameters
        (``max_cycles`` aside: a copy keeps its own), in any layout, or, one
        copy, into a single env."""
        from seer_envs._snapshot import capture, capture_copies, capture_copy
        self._check_nothing_in_flight("snapshot()")
        self._check_steppable()
        b = self._batch
        if copies is None and not isinstance(b, Groups):
            with b.using():
                return capture(b, self.env_id, self._snapshot_params(), "vector",
                               {"waiting": self._waiting, "ended": self._ended, "last_obs": self._last_obs})
        ids = list(range(self.num_envs)) if copies is None else self._copy_ids(copies, "copies")
        with b.using():
            parts, rngs, extras = [], [], []
            for c in ids:
                gb, local = self._locate(c)
                parts.append(capture_copy(gb, local))
                rngs.append(gb.rngs()[local].bit_generator.state)
                extras.append({"last_obs": self._last_obs[c]})
            return capture_copies(parts, self.env_id, self._snapshot_params(), ids, rngs, extras)

    def restore(self, snapshot, copies=None):
        """Continue from ``snapshot`` (a :class:`~seer_envs.Snapshot` or its
        bytes): an engine-wide one restores every copy; a snapshot of
        single copies (or a single env's) restores its copies into the slots
        ``copies`` (default: slots ``0 ..``, when it holds every copy), each
        slot then continuing as its source copy would have, bit for bit.
        Copies outside ``copies`` are untouched (in an env never reset, or
        interrupted, they start episodes as ``reset()`` without a seed
        does).  ``ValueError`` naming what differs, the env left as it was."""
        from seer_envs._snapshot import (Snapshot, check_params, copy_states, generators, prepare_copy,
                                         restore_copies)
        self._check_open()
        self._check_nothing_in_flight("restore()")
        if isinstance(snapshot, (bytes, bytearray, memoryview)):
            snapshot = Snapshot.from_bytes(snapshot)
        if not isinstance(snapshot, Snapshot):
            raise TypeError(f"restore() takes a Snapshot (Snapshot.from_bytes(b) for bytes), "
                            f"got {type(snapshot).__name__}")
        if snapshot.kind == "vector":
            if copies is not None:
                raise ValueError("an engine-wide vector snapshot restores every copy at once; take "
                                 "snapshot(copies=...) for single copies")
            return self._restore_whole(snapshot)
        if snapshot.kind not in ("copies", "env"):
            raise ValueError(f"a snapshot of a {snapshot.kind!r} cannot be restored into a vector env")
        n = 1 if snapshot.kind == "env" else snapshot.num_copies
        if copies is None:
            if n != self.num_envs:
                raise ValueError(f"a snapshot of {n} copies cannot fill the {self.num_envs} copies of "
                                 "this env: pass copies=[...], the slots to restore them into")
            slots = list(range(n))
        else:
            slots = self._copy_ids(copies, "copies")
            if len(slots) != n:
                raise ValueError(f"copies names {len(slots)} slots for a snapshot of {n} copies")
        self._ensure_layout()
        b = self._batch
        with b.using():
            check_params(snapshot, self.env_id, self._snapshot_params())
            gens = generators(snapshot, n)
            running = self._started and b.broken is None and all(
                e is not None for e in (b.engines if isinstance(b, Groups) else [b.engine]))
            where = [self._locate(d) for d in slots]
            states = copy_states(snapshot, b.copies)
            prepared = [prepare_copy(st, gb, local, f"copy {i} (into slot {d})")
                        for i, (st, (gb, local), d) in enumerate(zip(states, where, slots))]
            last = []
            for st, d in zip(states, slots):
                lo = st.get("env/last_obs", st["copies/obs"])
                if lo.shape != self._last_obs_shape() or lo.dtype != np.float32:
                    raise ValueError(f"snapshot array 'env/last_obs' of slot {d}: {lo.dtype} {lo.shape}")
                last.append(lo)
            if not running:       # never reset (or interrupted): the others start as reset() does
                self._last_obs = b.start()
                self._started = True
                self._waiting[:] = False
                self._ended[:] = False
                b.after_step(started=True)
            by_batch = {}
            for p, (gb, local), g in zip(prepared, where, gens):
                by_batch.setdefault(id(gb), (gb, [], [], []))
                entry = by_batch[id(gb)]
                entry[1].append(p)
                entry[2].append(local)
                entry[3].append(g)
            for gb, ps, locs, gs in by_batch.values():
                restore_copies(gb, ps, locs, gs)
            self._after_copies_restored(slots, last)
        return None

    def _last_obs_shape(self):
        return (self.num_agents,) + tuple(self.single_observation_space.shape)

    def _after_copies_restored(self, slots, last):
        """The env's own rows of restored slots: an ended copy waits for its
        restart (``NEXT_STEP``), stays ended (``DISABLED``) or restarts now
        (``SAME_STEP``, as its ending step would have done)."""
        b = self._batch
        full = np.empty((self.num_envs,) + self._last_obs_shape(), np.float32)
        if self._last_obs is not None and np.shape(self._last_obs) == full.shape:
            full[...] = self._last_obs
        idx = np.asarray(slots)
        full[idx] = np.stack(last)
        over = np.array([gb.done[c].all() for gb, c in map(self._locate, slots)])
        self._waiting[idx] = False
        self._ended[idx] = False
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._waiting[idx] = over
        elif self.autoreset_mode == AutoresetMode.DISABLED:
            self._ended[idx] = over
        elif over.any():
            restart = np.sort(idx[over])
            full[restart] = b.restart_obs(restart)
        self._last_obs = full

    def _restore_whole(self, snapshot):
        """An engine-wide snapshot into a one-engine layout (the team or copy
        groups) of the same copies."""
        from seer_envs._snapshot import check_array, check, check_events, restore
        self._ensure_layout()
        b = self._batch
        if isinstance(b, Groups):
            raise ValueError("an engine-wide snapshot (one engine: the team or copy groups) cannot be "
                             "restored into groups of engines: take snapshot(copies=range(num_envs)) "
                             "instead, which restores into every layout")
        with b.using():
            gens = check(snapshot, b, self.env_id, self._snapshot_params(), "vector")
            extra = {}
            E = self.num_envs
            for k, dtype, shape in (("waiting", bool, (E,)), ("ended", bool, (E,)),
                                    ("last_obs", np.float32, (E,) + self._last_obs_shape())):
                extra[k] = check_array(snapshot._arrays, f"env/{k}", dtype, shape).copy()
            if not self._started or b.engine is None:
                check_events(snapshot)          # before anything changes
                b.start()
            restore(snapshot, b, gens)
            self._waiting, self._ended, self._last_obs = extra["waiting"], extra["ended"], extra["last_obs"]
            self._started = True
        return None

    # --- checks ------------------------------------------------------------------

    def _check_actions(self, actions, ids=None):
        """Validated actions of every copy, or of copies ``ids`` (errors name the copy id)."""
        E = self.num_envs if ids is None else len(ids)
        names = self.possible_agents
        copy = (lambda c: c) if ids is None else (lambda c: int(ids[c]))
        spec = self._batch.copies.action_spec
        return check_actions(actions, spec, (E, self.num_agents),
                             lambda c, i: f"copy {copy(c)}, agent {names[i]!r}",
                             " (copies, agents)" if spec[0] == "discrete" else " (copies, agents, ...)")

    def _check_open(self):
        if self.closed:
            raise RuntimeError("this vector env was closed; create a new one")

    def _check_steppable(self):
        self._check_open()
        self._batch.check_free()
        if self._batch.broken is not None:
            raise RuntimeError(f"{self._batch.broken} was interrupted (KeyboardInterrupt or an error "
                               "inside the engine), so the copies' state is incomplete; call reset()")
        if not self._started:
            raise RuntimeError("call reset() first")


def _interrupted(what="a step"):
    return RuntimeError(f"{what} was interrupted (KeyboardInterrupt or an error inside the engine), "
                        "so the copies' state is incomplete; call reset()")


class _Step:
    """A step of copies ``ids`` (None: all; ``sel`` their rows) of ``batch``
    between its prepare and its finish."""

    __slots__ = ("ids", "sel", "batch", "plan")

    def __init__(self, ids, sel, batch, plan):
        self.ids, self.sel, self.batch, self.plan = ids, sel, batch, plan

    def run(self):
        self.batch.run(self.plan)


class _Sent:
    """A group in flight: copies ``ids`` on the batches ``keys``; ``step``
    until it is finished, then ``result`` or ``error``.  ``done`` is held
    until the engine's thread has run the step's engine part."""

    __slots__ = ("ids", "keys", "step", "run", "result", "error", "done")

    def __init__(self, ids, keys, step=None, result=None):
        self.ids, self.keys, self.step, self.result, self.error = ids, keys, step, result, None
        self.run = None if step is None else step.run
        self.done = threading.Lock()
        if step is not None:
            self.done.acquire()

    def wait(self):
        """Until the engine's part has run (the lock's wait releases the GIL)."""
        self.done.acquire()
        self.done.release()


def _stop_engine_threads():
    """At exit, before the interpreter stops daemon threads: each engine's
    thread finishes the steps sent to it and ends, so an env collected
    later (its close() waits for its steps) never waits for a thread that
    can no longer run."""
    for t in list(_ENGINE_THREADS):
        t.stop()


_ENGINE_THREADS = weakref.WeakSet()
atexit.register(_stop_engine_threads)


class _EngineThread:
    """The engine's own thread for ``send``: runs the engine parts of the
    sent steps in order.  Its loop is the few Python lines below around
    native calls that release the GIL (a C-level queue and locks, no
    ``concurrent.futures`` bookkeeping), so it seldom wants the GIL while
    the caller runs its policy.  After a step raises it runs no more
    (``failed``) until the env is reset.  It holds no reference to the env;
    ``stop()`` (the env's close, or its collection) ends it."""

    def __init__(self):
        self.failed = False
        # for benchmarks/async_step.py: seconds spent waiting for a send (not
        # counting the wait under way, since idle_since) and running steps' engine parts
        self.waited_s = 0.0
        self.idle_since = None
        self.ran_s = 0.0
        self.pid = os.getpid()          # a forked child has no such thread: it starts its own
        self._queue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name="seer-vector", daemon=True)
        self._thread.start()
        _ENGINE_THREADS.add(self)

    def submit(self, job):
        self._queue.put(job)

    def _serve(self):
        clock = time.perf_counter
        while True:
            self.idle_since = t0 = clock()
            job = self._queue.get()
            t1 = clock()
            self.waited_s += t1 - t0
            self.idle_since = None
            if job is None:
                return
            try:
                if self.failed:
                    raise _interrupted()
                job.run()
            except BaseException as e:      # noqa: B036 - raised by its recv()
                job.error = e
                self.failed = True
            job.run = None
            self.ran_s += clock() - t1
            job.done.release()

    def stop(self):
        self._queue.put(None)
        if threading.current_thread() is not self._thread and self.pid == os.getpid():
            self._thread.join()


def _as_index(ids):
    """A slice for a run of consecutive copy ids (views, no copy), else the ids."""
    if ids[-1] - ids[0] + 1 == len(ids):
        return slice(int(ids[0]), int(ids[-1]) + 1)
    return ids


def _restore_vector(cls, env_id, num_envs, kwargs, max_cycles, state):
    """Rebuild a pickled or deep-copied vector env (see :class:`SeerVectorEnv`)."""
    env = cls(env_id, num_envs, **kwargs)
    env._batch.set_max_cycles(max_cycles)
    if state[0] == "closed":
        env.close()
        return env
    if state[0] == "snapshot":
        env.restore(state[1])
        return env
    if state[0] == "reset":
        env._ensure_layout()
    b = env._batch
    b.set_rng_states(state[1])
    if state[0] == "reset":
        with b.using():
            env._last_obs = b.start([int(s) for s in state[2]])
            env._started = True
            b.after_step(started=True)
    return env


def vector_run(env_id, num_envs, num_threads, seed, params):
    """A :class:`seer_runtime.Run` of a vector env (STPA's preflight and the
    benchmarks): each unit is one step of every copy with zero actions."""
    from seer_runtime import Run
    # one engine (not groups of engines): STPA's preflight reads its statistics;
    # it runs in copy groups or round by round as the env at this thread count
    venv = SeerVectorEnv(env_id, num_envs, num_threads=num_threads, **params)
    venv.reset(seed=seed)
    shape = (num_envs, venv.num_agents) + tuple(venv.single_action_space.shape or ())
    acts = np.zeros(shape, venv.single_action_space.dtype)

    def step():
        venv.step(acts)
    return Run(step, lambda: venv.engine, venv.engine.num_lps, num_envs * venv.num_agents, owner=venv)


def agent_vector_env(env_id, num_envs, num_threads="auto", autoreset_mode="next_step", **params):
    """A Gymnasium ``VectorEnv`` over every (copy, agent) pair of
    ``num_envs`` copies of ``env_id`` (see :class:`SeerAgentVectorEnv`)."""
    return SeerAgentVectorEnv(SeerVectorEnv(env_id, num_envs, num_threads=num_threads,
                                            autoreset_mode=autoreset_mode, **params))


class SeerAgentVectorEnv(CopiesByReduce, VectorEnv):
    """Gymnasium ``VectorEnv`` for one policy shared by every agent: each
    (copy, agent) pair is one sub-env, so ``num_envs = copies x agents``,
    observations are ``(num_envs, obs_dim)`` (copy-major: copy ``c``'s agent
    ``i`` is row ``c * agents + i``) and actions ``(num_envs,)`` (or
    ``(num_envs,) + shape`` for a Box).  Gymnasium's vector wrappers
    (``RecordEpisodeStatistics``, ``NormalizeObservation``,
    ``NormalizeReward``, ``DictInfoToList``) and TorchRL's ``GymWrapper``
    take it as it is.

    **A row's episode is its copy's episode.**  Every row of a copy ends at
    the step where the copy ends and restarts with it, so each sub-env
    follows Gymnasium's autoreset rules exactly.  An agent that stops
    earlier (an Aircraft UAV out of battery) keeps its row until then, with
    reward 0 and no flags (its actions are ignored, as in the single env),
    and is reported ``terminated`` at the copy's end.  Its return is
    unchanged, and no step after its stop is bootstrapped from.  Reporting
    the stop at once would make the row a sub-env that ended while its copy
    runs on, which no copy restart can follow: under ``NEXT_STEP`` RLlib
    would cut the row into one-step episodes and see the copy's restart one
    step late.

    Autoreset: the copy-level env's mode (``NEXT_STEP`` by default,
    ``SAME_STEP`` with ``infos["final_obs"]`` ``(num_envs, obs_dim)`` and
    mask ``"_final_obs"``, or ``DISABLED`` with ``reset(options=
    {"reset_mask": rows})``, whole copies at a time).  When copies end,
    ``infos["seer_episode"]`` ``{"r", "l"}`` (mask ``"_seer_episode"``) has
    each row's return and its episode's length (the copy's).  A bad action
    names its copy and agent.  ``reset(seed=s)`` seeds copy ``c`` with
    ``s + c``; a list of seeds is one per row (a copy takes its first
    row's) or one per copy.

    ``vec`` is the underlying :class:`SeerVectorEnv` (engine, model,
    statistics).
    """

    def __init__(self, vec):
        self.closed = True              # until built: nothing for __del__ to close
        self.vec = vec
        self.copies, self.agents_per_copy = vec.num_envs, vec.num_agents
        self.num_envs = vec.num_envs * vec.num_agents
        self.single_observation_space = vec.single_observation_space
        self.single_action_space = vec.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.autoreset_mode = vec.autoreset_mode
        self.metadata = {"autoreset_mode": vec.autoreset_mode, "render_modes": ["rgb_array"]}
        self.render_mode = vec.render_mode
        self.closed = False
        self.seed_stride = None         # reset(seed=s): copy c takes s * stride + c (RLlib's runners)
        # (copies, agents): agents that stopped in their copy's running episode
        self._stopped = np.zeros((vec.num_envs, vec.num_agents), bool)

    def reset(self, *, seed=None, options=None):
        """``seed``: an int (copy ``c`` gets ``seed + c``), or one per row or
        per copy; ``options={"reset_mask": rows}`` under ``DISABLED``
        (whole copies).  Returns ``(obs, {})``."""
        C, A = self.copies, self.agents_per_copy
        if isinstance(seed, (list, tuple, np.ndarray)) and len(seed) == self.num_envs and A > 1:
            seed = list(seed)[::A]
        elif self.seed_stride and seed is not None and not isinstance(seed, (list, tuple, np.ndarray)):
            check_seed(seed)
            seed = [int(seed) * self.seed_stride + c for c in range(C)]
        if options is not None and isinstance(options, dict) and options.get("reset_mask") is not None:
            m = np.asarray(options["reset_mask"])
            if m.dtype != bool or m.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask'] must be a bool array of shape "
                                 f"({self.num_envs},), got {m.dtype} {m.shape}")
            rows = m.reshape(C, A)
            if (rows.any(axis=1) != rows.all(axis=1)).any():
                c = int(np.flatnonzero(rows.any(axis=1) != rows.all(axis=1))[0])
                raise ValueError(f"options['reset_mask'] must hold whole copies (rows of a copy end "
                                 f"and restart together); copy {c} is partly masked")
            options = dict(options, reset_mask=rows.any(axis=1))
            obs, _ = self.vec.reset(seed=seed, options=options)
            self._stopped[options["reset_mask"]] = False
            return obs.reshape(self.num_envs, -1), {}
        obs, _ = self.vec.reset(seed=seed, options=options)
        self._stopped[:] = False
        return obs.reshape(self.num_envs, -1), {}

    def step(self, actions):
        C, A, N = self.copies, self.agents_per_copy, self.num_envs
        names = self.vec.possible_agents
        a = check_actions(actions, self.vec._batch.copies.action_spec, (N,),
                          lambda j: f"copy {j // A}, agent {names[j % A]!r}", " (one row per copy and agent)")
        obs, rew, term, trunc, info = self.vec.step(a.reshape((C, A) + a.shape[1:]))
        infos = {}
        # Rows end with their copy (class docstring): an agent that stopped
        # earlier shows no flags, and reward 0, until then.
        rew[self._stopped] = 0.0
        if info:
            ended = info["_" + EPISODE_KEY][:, None]
            self._stopped = (term | trunc) & ~ended
            term &= ended
            trunc &= ended
            rep = np.repeat(info["_" + EPISODE_KEY], A)
            stats = info[EPISODE_KEY]
            infos = {EPISODE_KEY: {"r": stats["r"].reshape(N),
                                   "l": np.repeat(stats["l"].max(axis=1), A)},
                     "_" + EPISODE_KEY: rep}
            if "final_obs" in info:
                infos["final_obs"] = info["final_obs"].reshape(N, -1)
                infos["_final_obs"] = rep.copy()
        else:
            self._stopped = term | trunc
            term = np.zeros_like(term)
            trunc = np.zeros_like(trunc)
        return obs.reshape(N, -1), rew.reshape(N), term.reshape(N), trunc.reshape(N), infos

    def render(self):
        """The copies' frames (one per copy, not per row)."""
        return self.vec.render()

    def close_extras(self, **kwargs):
        self.vec.close()

    def __reduce__(self):
        return (_restore_agent_vector, (type(self), self.vec, self.closed, self._stopped.copy(),
                                        self.seed_stride))


def _restore_agent_vector(cls, vec, closed, stopped=None, seed_stride=None):
    env = cls(vec)
    env.seed_stride = seed_stride
    if stopped is not None:
        env._stopped = stopped
    if closed:
        env.close()
    return env


def rllib_env_creator(env_id, autoreset_mode="next_step"):
    """An RLlib env creator for one policy shared by every agent of
    ``env_id``: register it (``ray.tune.registry.register_env(name,
    rllib_env_creator("pcs_v0"))``) and use it with RLlib's single-agent env
    runner in ``gym_env_vectorize_mode="vector_entry_point"``; RLlib then
    asks for ``num_envs_per_env_runner`` sub-envs, which must be a multiple
    of the agents per copy (copies = sub-envs / agents).  ``env_config`` holds
    the env's parameters and optionally ``num_threads`` and ``seed`` (read by
    nothing here: RLlib seeds through ``reset(seed=...)``).

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
        agents = len(spec.copies.agent_names(spec.build_config(cfg)))
        if num % agents:
            raise ValueError(f"num_envs_per_env_runner must be a multiple of the {agents} agents "
                             f"per copy of {env_id}, got {num}")
        env = agent_vector_env(env_id, num // agents, num_threads=threads,
                               autoreset_mode=autoreset_mode, **cfg)
        env.seed_stride = env.copies
        return env
    return creator
