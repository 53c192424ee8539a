# SPDX-License-Identifier: BSD-3-Clause
"""The episode core: ``num_copies`` copies of one scenario and every
episode rule, written once for every view.

:class:`EpisodeCore` owns, for N copies: the layout (one engine or groups of
engines) and the thread choice, the seed rule, reset options, action
validation, autoreset in Gymnasium's three modes, which agents are in play,
episode returns and lengths, snapshots (whole and per copy), pickling and
the interrupt state.  The views convert its arrays into their ecosystem's
types and hold no episode rule of their own: the PettingZoo env
(:mod:`seer_envs.views.parallel`, one copy), the multi-agent vector env
(:mod:`seer_envs.views.vector`), the agent-level Gymnasium ``VectorEnv``
(:mod:`seer_envs.views.agent_vector`), TorchRL, RLlib and BenchMARL
(:mod:`seer_envs.integrations`).  Each view goes through the one view
protocol (:mod:`seer_envs.episode.protocol`): the step preamble
(``check_step``), the end kind of a copy (``end_kind``) and the reset
checks (``reset_mask``, ``whole_copies``).

**One episode, one report.**  An agent that stops inside a running
episode (an Aircraft UAV out of battery) is reported ``terminated`` at the
step it stops, and only then; truncation is reported once, at the copy's
``max_cycles``, for the agents still in play.  Its return and length are the
sums up to that step (``infos["seer_episode"]``).  From the next
observation on its rows are out of play until its copy restarts: reward 0,
no flags, actions ignored, and ``False`` in the mask ``infos["mask"]``
(True where the agent acts on the returned observation).  A copy's
episode ends when no agent is left in play (every agent terminated or the
copy truncated).

**Seeds** (Gymnasium's convention).  ``reset(seed=s)`` seeds copy ``c`` as
a single env's ``reset(seed=s + c)``; ``reset(seed=[s0, s1, ...])`` gives
each copy its own (``None`` entries keep the copy's generator).  Each copy
then draws its later episode seeds from its own generator.

**Autoreset** (``autoreset_mode``): ``NEXT_STEP`` restarts an ended copy at
its next step (its actions ignored, reward 0, no flags, its first
observation); ``SAME_STEP`` restarts it within the ending step (its row of
the observation is the new episode's first, ``infos["final_obs"]`` with the
mask ``"_final_obs"`` holds the step's observations); ``DISABLED`` leaves it
ended until ``reset(options={"reset_mask": mask})``.

**Worlds** (docs/training.md, "Per-copy worlds").  Each copy may have its
own values of the scenario's per-copy fields: one value per copy at
construction, ``set_params`` and the reset option ``"params"`` for a copy's
next reset (an autoreset included), and a ``param_sampler`` drawn at every
reset from the copy's episode seed (:mod:`seer_envs.episode.worlds`,
:mod:`seer_envs.episode.worlds`).

**Interrupts** (docs/guide.md, "What a Ctrl-C leaves").  :attr:`broken`
is set before a call changes anything and cleared after its last change
(a view with bookkeeping of its own passes ``hold=True`` and calls
:meth:`done`), so a KeyboardInterrupt at any line leaves the core as it
was, as after the call, or marked: every step then raises "... was
interrupted ...; call reset()", and ``reset()`` starts afresh (a masked
reset that keeps some copies is refused on a marked env, naming the full
reset: the other copies' state is not known to be whole).
"""

import dataclasses
import json
import os
import weakref

import numpy as np
from gymnasium.vector import AutoresetMode

from seer_envs.episode.arguments import _check_int, autoreset_mode, check_seed
from seer_envs.episode.copying import CopiesByReduce
from seer_envs.episode.protocol import RESET_OPTIONS, ViewProtocol
from seer_envs.episode.snapshots import Snapshots
from seer_envs.episode.step import EPISODE_KEY, MASK_KEY, PARAMS_KEY, Step
from seer_envs.episode.worlds import Sampler, WorldsAPI, per_copy_fields
from seer_envs.layout.batch import Batch
from seer_envs.layout.core_layout import Layout
from seer_envs.layout.guard import after_fork_in_child
from seer_runtime._threads import check_num_threads, resolve_threads

__all__ = ["EpisodeCore", "Step", "EPISODE_KEY", "MASK_KEY", "PARAMS_KEY", "RESET_OPTIONS", "check_seed",
           "autoreset_mode"]

class EpisodeCore(ViewProtocol, Layout, Snapshots, WorldsAPI, CopiesByReduce):
    """``num_copies`` copies of the registered scenario ``env_id`` with the
    episode rules (module docstring).  ``params`` are the scenario's config
    fields (a per-copy field may be one value per copy; ``param_sampler``
    draws them at every reset); ``kind`` is the view's, its snapshots'
    kind (``"env"``: a single env, one copy; ``"vector"``: a vector env of
    any number of copies, one included); ``num_threads`` is
    ``"auto"`` (STPA, then the tuner) or an int; ``batch_size`` and
    ``copy_parallel`` choose the layout (:attr:`layout`,
    :mod:`seer_envs.layout.core_layout`).  Snapshots and pickling:
    :mod:`seer_envs.episode.snapshots`."""

    def __init__(self, env_id, num_copies, num_threads="auto", autoreset_mode="next_step",
                 batch_size=None, copy_parallel=None, param_sampler=None, kind="vector", **params):
        from seer_envs import get
        self.closed = True                    # until built
        mode = globals()["autoreset_mode"](autoreset_mode)
        if kind not in ("env", "vector") or (kind == "env" and num_copies != 1):
            raise ValueError(f'kind must be "vector", or "env" for one copy, got {kind!r} ({num_copies!r} copies)')
        spec = get(env_id)
        if spec.copies is None:
            from seer_envs import envs
            have = ", ".join(k for k, s in envs().items() if s.copies is not None)
            raise ValueError(f"{env_id!r} declares no copies; the envs are {have}")
        E = _check_int("num_envs", num_copies, 1)
        B = E if batch_size is None else _check_int("batch_size", batch_size, 1, E)
        check_num_threads(num_threads)
        if not any(copy_parallel is v for v in (None, True, False)) and copy_parallel != "engines":
            raise ValueError(f'copy_parallel must be None (automatic), True, False or "engines", '
                             f'got {copy_parallel!r}')
        self.per_copy_fields = fields = per_copy_fields(spec.copies)
        params, rows = self._per_copy_values(spec, params, fields, E)
        self.config = cfg = spec.build_config(params)
        if hasattr(cfg, "check_memory"):      # before any per-copy array
            cfg.check_memory(E)
        sampler = None if param_sampler is None else Sampler(param_sampler, cfg, fields)
        self.env_id, self.spec, self.kind = env_id, spec, kind
        self.num_copies, self.batch_size, self.autoreset_mode = E, B, mode
        self.num_threads_setting, self.copy_parallel = num_threads, copy_parallel
        self.params = dataclasses.asdict(cfg)
        self._params_json = json.dumps(self.params)
        if num_threads != "auto":
            self.batch = self._lay_out(resolve_threads(num_threads), rows)
        else:                  # laid out at the first reset, once STPA has chosen
            self.batch = Batch(spec.copies, cfg, E, rows, num_threads, self._stpa_chooser)
            self.batch.provisional = True
        self.batch.set_sampler(sampler)
        cp = self.batch.copies
        self.possible_agents = list(cp.possible_agents)
        self._agent_index = {a: j for j, a in enumerate(self.possible_agents)}
        self.num_agents = A = cp.num_agents
        self.observation_space, self.action_space = cp.observation_space, cp.action_space
        self.action_spec = cp.action_spec
        self.state_space = cp.state_space(cfg)
        self.waiting = np.zeros(E, bool)      # NEXT_STEP: restarts at its next step
        self.ended = np.zeros(E, bool)        # DISABLED: ended, not reset yet
        self._any_waiting = self._any_ended = False       # (cheap facts for the common step)
        self._disabled = mode == AutoresetMode.DISABLED
        self._mask_shape = (E, A)
        self._restarting = None               # NEXT_STEP: the copies restarting in this step
        self.last_obs = None                  # the observations last handed out
        self.started = False
        self.broken = None                    # what was interrupted, or None (module docstring)
        _CORES.add(self)
        self._obs_shape = (A,) + tuple(self.observation_space.shape)
        self.closed = False

    @property
    def num_threads(self):
        """Threads of the engine (None before the first reset)."""
        return self.batch.num_threads

    @property
    def layout(self):
        """``"copy_groups"``, ``"team"`` (one engine) or ``"groups"`` (an engine per group)."""
        return self.batch.layout

    @property
    def thread_choice(self):
        """How the thread count was chosen (STPA, the tuner) and the layout, or None."""
        c = self.batch.thread_choice
        return None if c is None else c.replace(layout=self.layout)

    @property
    def engines(self):
        """Every engine: one, or one per group of copies."""
        return self.batch.engines

    @property
    def max_cycles(self):
        return self.batch.max_cycles

    def set_max_cycles(self, values):
        self.batch.set_max_cycles(values)

    @property
    def mask(self):
        """Agents in play at the last observation, ``(copies, agents)`` (a fresh array)."""
        return ~self.batch.done

    def _flags_changed(self):
        self._any_waiting = bool(self.waiting.any())
        self._any_ended = bool(self.ended.any())

    # --- episodes ------------------------------------------------------------------

    def reset(self, seed=None, options=None, seed_stride=1, hold=False):
        """Start fresh episodes (every copy, or those of ``options["reset_mask"]``);
        returns the observations ``(copies, agents, ...)``, the caller's.
        ``hold``: the interrupt mark stays until the view calls :meth:`done`
        (a view with bookkeeping of its own after the call)."""
        self.check_open()
        mask = self.reset_mask(options)
        seeds = self.seeds(seed, seed_stride)
        values = (options or {}).get("params")
        if values is not None:
            if not isinstance(values, dict):
                raise TypeError(f"options['params'] must be a dict of field values, got {type(values).__name__}")
            ids = list(range(self.num_copies)) if mask is None else np.flatnonzero(mask).tolist()
            rows = self._pending_rows(ids, values, "options['params']")
        b = self.batch
        with b.using():
            intact = self.broken is None
            if mask is not None and self.started and not intact and not mask.all():
                # The other copies' state may be incomplete (the interrupted
                # call may have changed any of them): a masked reset would
                # carry it on, a full reset in its place would drop their
                # episodes unasked.  Refused before anything changes (a mask
                # of every copy asks for the full reset, and gets it).
                raise RuntimeError(f"{self.interrupted} was interrupted (KeyboardInterrupt or an error inside "
                                   "the engine), so the other copies' episode state is incomplete and a "
                                   "masked reset (options['reset_mask']) cannot keep them; call reset() "
                                   "without a reset_mask: a full reset of every copy")
            self.broken = "a reset"               # first change: cleared after the last
            if values is not None:
                b.set_pending(ids, rows)
            if mask is not None and self.started and intact:
                idx = np.flatnonzero(mask)
                if seeds is not None:
                    b.seed_copies([s if m else None for s, m in zip(seeds, mask)])
                obs = self.last_obs.copy()           # the other copies' rows: as last returned
                obs[idx] = b.restart_obs(idx)
                self.ended[idx] = False
                self.waiting[idx] = False
                self._flags_changed()
                self.last_obs = obs
            else:
                self.ensure_layout()
                if seeds is not None:
                    self.batch.seed_copies(seeds)
                obs = self.start_fresh()
            if not hold:
                self.broken = None
        return obs

    def done(self):
        """The view's bookkeeping after a ``hold`` call is complete: clear the mark."""
        self.broken = None

    def start(self, episode_seeds=None):
        """A fresh engine and episode with these episode seeds (pickling)."""
        self.ensure_layout()
        with self.batch.using():
            self.broken = "the episode start"
            self.start_fresh(episode_seeds)
            self.broken = None
        return self.last_obs

    def start_fresh(self, episode_seeds=None):
        """The one way to start a fresh episode in every copy: a fresh engine
        (``episode_seeds``: each copy's, else the next of its generator), no
        copy waiting or ended; returns the first observations, also
        :attr:`last_obs`.  The caller holds the batch and the interrupt mark."""
        self.started = False
        self.last_obs = self.batch.start(episode_seeds)
        self.started = True
        self.waiting[:] = False
        self.ended[:] = False
        self._flags_changed()
        return self.last_obs

    def step(self, a, ids=None, hold=False):
        """One step of every copy (``ids`` None) or of copies ``ids``
        (sorted) with validated actions; returns a :class:`Step`.  The
        interrupt mark is set before anything changes and cleared after the
        last change (``hold``: by the view's :meth:`done`)."""
        b = self.batch
        with b.using():      # a second thread is refused before anything changes
            self.broken = "a step"
            sel, plan = self._prepare(b, a, ids)
            b.run(plan)
            out = self._finish(b, sel, ids, plan)
            if not hold:
                self.broken = None
            return out

    def begin(self, a, ids=None):
        """The caller's part of a step before the engine runs (the copies
        waiting for their restart, :meth:`Batch.prepare`): a pending step
        whose ``run()`` is the engine's part and :meth:`end` the rest."""
        b = self.batch
        sel, plan = self._prepare(b, a, ids)
        return _Pending(ids, sel, b, plan)

    def end(self, pending):
        """The caller's part after the engine ran: flags, statistics,
        autoreset; returns the :class:`Step` of the copies stepped."""
        return self._finish(pending.batch, pending.sel, pending.ids, pending.plan)

    def _prepare(self, b, a, ids):
        if ids is None:
            sel = _ALL
            if not self._any_waiting:                 # the common step
                self._restarting = None
                return sel, b.prepare(a)
        else:
            sel = _as_index(ids)
        waiting = None
        if self._any_waiting and self.waiting[sel].any():
            waiting = np.zeros(self.num_copies, bool)
            waiting[sel] = self.waiting[sel]
        plan = b.prepare(a, waiting, active=ids)
        self._restarting = waiting
        if waiting is not None:
            self.waiting[sel] = False
            self._flags_changed()
        return sel, plan

    def _finish(self, b, sel, ids, plan):
        obs, rew, term, trunc, ended = b.finish(plan)
        stats = final = None
        if ended is not None or b.reported:
            stats = (b.ep_return[sel].copy(), b.ep_length[sel].copy())
        if ended is not None:
            mode = self.autoreset_mode
            if mode == AutoresetMode.SAME_STEP:
                final = obs[sel].copy()
                idx = np.flatnonzero(ended)   # in arrays of their own: not over what this step returns
                obs[idx] = b.restart_obs(idx)
            elif mode == AutoresetMode.NEXT_STEP:
                self.waiting |= ended
            else:
                self.ended |= ended
            self._flags_changed()
        if b.tuner is not None:
            b.after_step()
        if ids is None:               # every copy (the common step): no slicing; the mask
            out = Step(obs, rew, term, trunc, ~b.done if b._any_done else None,    # made when read
                       ended, final, stats)
        else:
            out = Step(obs[sel], rew[sel], term[sel], trunc[sel], ~b.done[sel],
                       None if ended is None else ended[sel], final, stats)
        restarted = self._restarting if ended is None or final is None else ended
        if restarted is not None:     # new episodes within this step: their worlds
            out.restarted, out.params = restarted[sel].copy(), self.param_values
        if self._disabled:            # a reset mask's other rows
            if ids is None:
                self.last_obs = out.obs
            else:
                self.last_obs = self.last_obs.copy()
                self.last_obs[sel] = out.obs
        return out

    # --- state, frames ---------------------------------------------------------------

    def state(self):
        """Every copy's global state at its last boundary, ``(copies,) + state shape``."""
        self.check_steppable()
        if self.state_space is None:
            raise NotImplementedError(f"{self.env_id} declares no global state")
        return self.batch.states()

    def frames(self):
        """One ``rgb_array`` frame per copy."""
        self.check_steppable()
        cycle, mc = self.batch.cycle, self.max_cycles
        return tuple(self.batch.frame(c, int(cycle[c]), int(mc[c])) for c in range(self.num_copies))

    def close(self):
        """Release the engines; every later call refuses.  Closed first, so a
        Ctrl-C inside leaves a closed core (a second close releases the rest)."""
        self.closed = True
        self.started = False
        self.batch.close()


class _Pending:
    """A step of copies ``ids`` (None: all; ``sel`` their rows) of
    ``batch`` between :meth:`EpisodeCore.begin` and :meth:`EpisodeCore.end`."""

    __slots__ = ("ids", "sel", "batch", "plan")

    def __init__(self, ids, sel, batch, plan):
        self.ids, self.sel, self.batch, self.plan = ids, sel, batch, plan

    def run(self):
        self.batch.run(self.plan)


_CORES = weakref.WeakSet()


def _after_fork_in_child():
    """A forked child has only the forking thread: new guards, and no pool
    of group workers (its threads stayed in the parent)."""
    after_fork_in_child()
    for core in list(_CORES):
        core.batch.after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


_ALL = slice(None)


def _as_index(ids):
    """A slice for a run of consecutive copy ids (views, no copy), else the ids."""
    if ids[-1] - ids[0] + 1 == len(ids):
        return slice(int(ids[0]), int(ids[-1]) + 1)
    return ids

