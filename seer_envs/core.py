# SPDX-License-Identifier: BSD-3-Clause
"""The episode core: ``num_copies`` copies of one scenario and every
episode rule, written once for every view.

:class:`EpisodeCore` owns, for N copies: the layout (one engine or groups of
engines) and the thread choice, the seed rule, reset options, action
validation, autoreset in Gymnasium's three modes, which agents are in play,
episode returns and lengths, snapshots (whole and per copy), pickling and
the interrupt state.  The views convert its arrays into their ecosystem's
types and hold no episode rule of their own: the PettingZoo env
(:mod:`seer_envs.parallel`, one copy), the multi-agent vector env
(:mod:`seer_envs.vector`), the agent-level Gymnasium ``VectorEnv``
(:mod:`seer_envs.agent_vector`), TorchRL, RLlib and BenchMARL
(:mod:`seer_envs.integrations`).

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
"""

import dataclasses
import json
import numbers

import numpy as np
from gymnasium.vector import AutoresetMode

from seer_envs._actions import check_actions
from seer_envs._batch import Batch, CopiesByReduce, Groups, group_bounds
from seer_runtime._threads import check_num_threads, resolve_threads

__all__ = ["EpisodeCore", "Step", "EPISODE_KEY", "MASK_KEY", "RESET_OPTIONS", "check_seed",
           "autoreset_mode"]

#: The key of the episode statistics in every view's infos.
EPISODE_KEY = "seer_episode"
#: The key of the in-play mask in every view (True: the agent acts on the observation).
MASK_KEY = "mask"
#: The reset options the core accepts; any other key is a ValueError.
RESET_OPTIONS = ("reset_mask",)
#: Keys accepted and ignored: PettingZoo's conformance test
#: (``pettingzoo.test.parallel_api_test``) resets with ``{"options": 1}``.
_IGNORED_OPTIONS = ("options",)


def check_seed(seed):
    """A seed is an int >= 0 (or None, checked by the caller)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be an int >= 0 or None, got {seed!r}")


def autoreset_mode(mode):
    """An ``AutoresetMode`` from the enum or its name in any case."""
    if isinstance(mode, AutoresetMode):
        return mode
    key = str(mode).lower().replace("_", "").replace("-", "")
    for m in AutoresetMode:
        if m.value.lower().replace("_", "") == key or m.name.lower().replace("_", "") == key:
            return m
    raise ValueError(f'autoreset_mode must be "next_step", "same_step" or "disabled" '
                     f"(or a gymnasium AutoresetMode), got {mode!r}")


def _check_int(name, value, lo, hi=None):
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo
            or (hi is not None and value > hi)):
        span = f"an int >= {lo}" if hi is None else f"an int in [{lo}, {hi}]"
        raise ValueError(f"{name} must be {span}, got {value!r}")
    return int(value)


class Step:
    """What one step of the core hands a view: ``obs`` ``(copies, agents,
    ...)`` float32, ``rew`` float32, ``term`` / ``trunc`` bool ``(copies,
    agents)`` (each agent's end, reported once), ``mask`` (agents in play at
    ``obs``), ``ended`` (copies whose episode ended at this step, or None),
    ``final_obs`` (``SAME_STEP``: the ending copies' last observations, or
    None) and ``stats`` (``(returns, lengths)`` when an agent ended, else
    None): the rows of the copies stepped, arrays the view owns."""

    __slots__ = ("obs", "rew", "term", "trunc", "mask", "ended", "final_obs", "stats")

    def __init__(self, obs, rew, term, trunc, mask, ended, final_obs, stats):
        self.obs, self.rew, self.term, self.trunc, self.mask = obs, rew, term, trunc, mask
        self.ended, self.final_obs, self.stats = ended, final_obs, stats

    def infos(self):
        """Gymnasium-style infos of the multi-agent arrays: the mask always;
        when agents ended, ``"seer_episode"`` ``{"r", "l"}`` ``(copies,
        agents)`` (final for the agents whose flag is set) with
        ``"_seer_episode"`` (the copies holding such agents, Gymnasium's
        per-sub-env mask); ``"final_obs"`` / ``"_final_obs"`` under
        ``SAME_STEP``."""
        infos = {MASK_KEY: self.mask}
        if self.stats is not None:
            infos[EPISODE_KEY] = {"r": self.stats[0], "l": self.stats[1]}
            infos["_" + EPISODE_KEY] = (self.term | self.trunc).any(axis=1)
        if self.final_obs is not None:
            infos["final_obs"], infos["_final_obs"] = self.final_obs, self.ended.copy()
        return infos


class EpisodeCore(CopiesByReduce):
    """``num_copies`` copies of the registered scenario ``env_id`` with the
    episode rules (module docstring).  ``params`` are the scenario's config
    fields (``max_cycles`` may be one int per copy); ``num_threads`` is
    ``"auto"`` (STPA, then the tuner) or an int; ``batch_size`` and
    ``copy_parallel`` choose the layout (:attr:`layout`)."""

    def __init__(self, env_id, num_copies, num_threads="auto", autoreset_mode="next_step",
                 batch_size=None, copy_parallel=None, **params):
        from seer_envs import get
        self.closed = True                    # until built
        mode = globals()["autoreset_mode"](autoreset_mode)
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
        mc = params.get("max_cycles")
        per_copy = mc is not None and not isinstance(mc, numbers.Integral) and np.ndim(mc) == 1
        if per_copy:
            mcs = list(mc)
            if len(mcs) != E:
                raise ValueError(f"max_cycles must be an int or {E} ints (one per copy), got {len(mcs)} values")
            for v in mcs:                     # each checked by the config's own bounds
                spec.build_config(dict(params, max_cycles=v))
            params = dict(params, max_cycles=max(mcs))
        self.config = cfg = spec.build_config(params)
        if hasattr(cfg, "check_memory"):      # before any per-copy array
            cfg.check_memory(E)
        self.env_id, self.spec = env_id, spec
        self.num_copies, self.batch_size, self.autoreset_mode = E, B, mode
        self.num_threads_setting, self.copy_parallel = num_threads, copy_parallel
        self.params = dataclasses.asdict(cfg)
        self._params_json = json.dumps(self.params)
        mcs = mcs if per_copy else cfg.max_cycles
        self._laid_out = num_threads != "auto"
        if self._laid_out:
            self.batch = self._lay_out(resolve_threads(num_threads), mcs)
        else:                  # laid out at the first reset, once STPA has chosen
            self.batch = Batch(spec.copies, cfg, E, mcs, num_threads, self._stpa_chooser)
        cp = self.batch.copies
        self.possible_agents = list(cp.possible_agents)
        self.num_agents = A = cp.num_agents
        self.observation_space, self.action_space = cp.observation_space, cp.action_space
        self.action_spec = cp.action_spec
        self.state_space = cp.state_space(cfg)
        self.waiting = np.zeros(E, bool)      # NEXT_STEP: restarts at its next step
        self.ended = np.zeros(E, bool)        # DISABLED: ended, not reset yet
        self._any_waiting = self._any_ended = False       # (cheap facts for the common step)
        self._disabled = mode == AutoresetMode.DISABLED
        self._all_in_play = np.ones((E, A), bool)
        self._all_in_play.flags.writeable = False        # handed out as the mask: read-only
        self.last_obs = None                  # the observations last handed out
        self.started = False
        self._obs_shape = (A,) + tuple(self.observation_space.shape)
        self.closed = False

    # --- layout and threads ---------------------------------------------------------

    def _lay_out(self, choice, max_cycles, rng_states=None, team=None):
        """One engine for every copy (its threads run each step in copy
        groups, or round by round: :meth:`_copy_groups`), or groups of
        copies with an engine each: one group per batch of ``batch_size``, or
        with ``copy_parallel="engines"`` about four groups per thread
        (docs/runtime.md, "Copies in groups")."""
        threads, info = choice
        E, copies_cls = self.num_copies, self.spec.copies
        if self.copy_parallel == "engines":
            bounds = group_bounds(E, self.batch_size, threads)
            b = Groups(copies_cls, self.config, bounds, max_cycles, threads, 1)
        elif self.batch_size < E:
            bounds = group_bounds(E, self.batch_size, 1)
            b = Groups(copies_cls, self.config, bounds, max_cycles, 1, threads,
                       self._copy_groups(self.batch_size, threads))
        elif team is not None:                # "auto": the batch it has, with its tuner
            team.copy_groups = self._copy_groups(E, threads)
            return team
        else:
            return Batch(copies_cls, self.config, E, max_cycles, threads, lambda: None,
                         self._copy_groups(E, threads))
        b.thread_choice = info.replace(groups=len(bounds), workers=b.workers)
        if rng_states is not None:
            b.set_rng_states(rng_states)
        return b

    def _copy_groups(self, copies, threads):
        """Whether an engine of ``copies`` copies on ``threads`` threads runs
        in copy groups: as ``copy_parallel`` says, else from two threads on
        with at least four copies per thread (docs/runtime.md)."""
        if self.copy_parallel is not None:
            return bool(self.copy_parallel)
        return threads >= 2 and copies >= 4 * threads

    def ensure_layout(self):
        """With ``"auto"``: lay the copies out once STPA has chosen (at the first start)."""
        if not self._laid_out:
            team = self.batch
            choice = (team.choose_threads(), team.thread_choice)
            self.batch = self._lay_out(choice, team.max_cycles, team.rng_states(), team)
            if self.batch is not team:
                team.close()
            self._laid_out = True

    def _stpa_chooser(self):
        env_id, E = self.env_id, self.num_copies
        if E == 1:
            from seer_envs import stpa_chooser
            return stpa_chooser(self.spec, self.config)

        def choose():
            import stpa      # ImportError -> the hard caps
            from seer_envs.vector import vector_run
            kw = dict(self.params, max_cycles=self.max_cycles.tolist())
            key = [env_id, "vector", E, self.params, self.max_cycles.tolist()]
            return stpa.choose(key, lambda t, s: vector_run(env_id, E, t, s, kw))
        return choose

    @property
    def num_threads(self):
        """Threads of the engine (None before the first reset)."""
        return self.batch.num_threads

    @property
    def layout(self):
        """``"copy_groups"``, ``"team"`` (one engine) or ``"groups"`` (an engine per group)."""
        b = self.batch
        if isinstance(b, Groups):
            return "groups"
        return "copy_groups" if b.copy_groups and self.num_copies > 1 else "team"

    @property
    def thread_choice(self):
        """How the thread count was chosen (STPA, the tuner) and the layout, or None."""
        c = self.batch.thread_choice
        return None if c is None else c.replace(layout=self.layout)

    @property
    def engines(self):
        b = self.batch
        return b.engines if isinstance(b, Groups) else [b.engine]

    @property
    def max_cycles(self):
        return self.batch.max_cycles

    def set_max_cycles(self, values):
        self.batch.set_max_cycles(values)

    @property
    def mask(self):
        """Agents in play at the last observation, ``(copies, agents)`` (a fresh array)."""
        return ~self.batch.done

    # --- the rules -----------------------------------------------------------------

    def seeds(self, seed, stride=1):
        """The seed rule: None, or one int-or-None per copy.  An int ``s``
        seeds copy ``c`` with ``s * stride + c`` (``stride`` > 1: RLlib's
        runners, seeded ``seed + w``, so no two copies of any runners share
        a stream)."""
        if seed is None:
            return None
        E = self.num_copies
        if isinstance(seed, (list, tuple, np.ndarray)):
            seeds = list(seed)
            if len(seeds) != E:
                raise ValueError(f"seed must be an int, None or {E} seeds (one per copy), got {len(seeds)}")
            for s in seeds:
                if s is not None:
                    check_seed(s)
            return [None if s is None else int(s) for s in seeds]
        check_seed(seed)
        return [int(seed) * stride + c for c in range(E)]

    def reset_mask(self, options):
        """The reset options: None, or the copies a ``"reset_mask"`` names.
        An unknown key is a ValueError naming it and the accepted ones."""
        if options is None:
            return None
        if not isinstance(options, dict):
            raise TypeError(f"reset options must be a dict or None, got {type(options).__name__}")
        for key in options:
            if key not in RESET_OPTIONS and key not in _IGNORED_OPTIONS:
                raise ValueError(f"unknown reset option {key!r}; the accepted options are "
                                 + ", ".join(map(repr, RESET_OPTIONS)))
        mask = options.get("reset_mask")
        if mask is None:
            return None
        m = np.asarray(mask)
        if m.dtype != bool or m.shape != (self.num_copies,):
            raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_copies},), "
                             f"got {m.dtype} {m.shape}")
        if self.autoreset_mode != AutoresetMode.DISABLED:
            raise ValueError("options['reset_mask'] is for autoreset_mode DISABLED; this env "
                             f"auto-resets ({self.autoreset_mode.name})")
        return m.copy()

    def check_actions(self, actions, ids=None, lead=None, label=None, rows=None):
        """Validated actions of every copy ``(copies, agents, ...)``, or of copies ``ids``."""
        names, spec = self.possible_agents, self.action_spec
        if lead is None:
            E = self.num_copies if ids is None else len(ids)
            lead = (E, self.num_agents)
            copy = (lambda c: c) if ids is None else (lambda c: int(ids[c]))
            label = lambda c, i: f"copy {copy(c)}, agent {names[i]!r}"      # noqa: E731
            rows = " (copies, agents)" if spec[0] == "discrete" else " (copies, agents, ...)"
        return check_actions(actions, spec, lead, label, rows or "")

    # --- checks --------------------------------------------------------------------

    def check_open(self):
        if self.closed:
            raise RuntimeError("this env was closed; create a new one")

    def check_steppable(self, what="a step"):
        """Open, not in use by another thread, not interrupted, reset."""
        self.check_open()
        self.batch.check_free()
        if self.batch.broken is not None:
            raise RuntimeError(f"{self.interrupted} was interrupted (KeyboardInterrupt or an error "
                               "inside the engine), so the episode state is incomplete; call reset()")
        if not self.started:
            raise RuntimeError("call reset() first")

    @property
    def interrupted(self):
        """What was interrupted, or None."""
        what = self.batch.broken
        if what == "a step" and self.num_copies == 1:
            return f"step {int(self.batch.cycle[0]) + 1}"
        return what

    def _flags_changed(self):
        self._any_waiting = bool(self.waiting.any())
        self._any_ended = bool(self.ended.any())

    def check_not_ended(self, ids=None):
        if not self._any_ended:
            return
        ended = self.ended if ids is None else self.ended[ids]
        if ended.any():
            if self.num_copies == 1:
                raise RuntimeError("the episode has ended (all agents are done); call reset() first")
            c = int(np.flatnonzero(self.ended)[0]) if ids is None else int(ids[ended][0])
            raise RuntimeError(f"copy {c} has ended (autoreset_mode DISABLED); call "
                               "reset(options={'reset_mask': mask}) for the ended copies first")

    # --- episodes ------------------------------------------------------------------

    def reset(self, seed=None, options=None, seed_stride=1):
        """Start fresh episodes (every copy, or those of ``options["reset_mask"]``);
        returns the observations ``(copies, agents, ...)``, the caller's."""
        self.check_open()
        mask = self.reset_mask(options)
        seeds = self.seeds(seed, seed_stride)
        b = self.batch
        with b.using():
            if mask is not None and self.started and b.broken is None:
                idx = np.flatnonzero(mask)
                if seeds is not None:
                    b.seed_copies([s if m else None for s, m in zip(seeds, mask)])
                obs = self.last_obs.copy()           # the other copies' rows: as last returned
                obs[idx] = b.restart_obs(idx)
                self.ended[idx] = False
                self.waiting[idx] = False
                self._flags_changed()
                self.last_obs = obs
                return obs
            self.ensure_layout()
            b = self.batch
            if seeds is not None:
                b.seed_copies(seeds)
            self.started = False
            obs = b.start()
            self.started = True
            self.waiting[:] = False
            self.ended[:] = False
            self._flags_changed()
            self.last_obs = obs
        return obs

    def start(self, episode_seeds=None):
        """A fresh engine and episode with these episode seeds (pickling)."""
        self.ensure_layout()
        with self.batch.using():
            self.started = False
            self.last_obs = self.batch.start(episode_seeds)
            self.started = True
            self.waiting[:] = False
            self.ended[:] = False
            self._flags_changed()
        return self.last_obs

    def step(self, a, ids=None):
        """One step of every copy (``ids`` None) or of copies ``ids``
        (sorted) with validated actions; returns a :class:`Step`."""
        b = self.batch
        with b.using():      # a second thread is refused before anything changes
            sel, plan = self._prepare(b, a, ids)
            b.run(plan)
            return self._finish(b, sel, ids, plan)

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
            sel = slice(None)
            if not self._any_waiting:                 # the common step
                return sel, b.prepare(a)
        else:
            sel = _as_index(ids)
        waiting = None
        if self._any_waiting and self.waiting[sel].any():
            waiting = np.zeros(self.num_copies, bool)
            waiting[sel] = self.waiting[sel]
        plan = b.prepare(a, waiting, active=ids)
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
        if ids is None:               # every copy (the common step): no slicing
            out = Step(obs, rew, term, trunc, ~b.done if b._any_done else self._all_in_play,
                       ended, final, stats)
        else:
            out = Step(obs[sel], rew[sel], term[sel], trunc[sel], ~b.done[sel],
                       None if ended is None else ended[sel], final, stats)
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
        b = self.batch
        if isinstance(b, Groups):
            return np.concatenate([g.copies.states(0, g.num_copies) for g in b.groups])
        return b.copies.states(0, self.num_copies)

    def frames(self):
        """One ``rgb_array`` frame per copy."""
        self.check_steppable()
        cycle, mc = self.batch.cycle, self.max_cycles
        return tuple(self.batch.frame(c, int(cycle[c]), int(mc[c])) for c in range(self.num_copies))

    def close(self):
        self.batch.close()
        self.started = False
        self.closed = True

    # --- snapshots -------------------------------------------------------------------

    def snapshot_params(self):
        return json.loads(self._params_json)

    @property
    def kind(self):
        """The engine-wide snapshot kind: ``"env"`` (one copy) or ``"vector"``."""
        return "env" if self.num_copies == 1 else "vector"

    def copy_ids(self, copies, what="copies"):
        """Validated copy ids (a list, in the given order)."""
        if isinstance(copies, (str, bytes)) or not hasattr(copies, "__len__"):
            raise TypeError(f"{what} must be a sequence of copy ids, got {type(copies).__name__}")
        ids = np.asarray(copies)
        if ids.ndim != 1 or len(ids) == 0 or ids.dtype.kind not in "iu":
            raise ValueError(f"{what} must be a non-empty 1-d sequence of int copy ids, got {copies!r}")
        if ids.min() < 0 or ids.max() >= self.num_copies:
            raise ValueError(f"{what} must be in [0, {self.num_copies - 1}], got {ids.tolist()}")
        if len(np.unique(ids)) != len(ids):
            dup = int(np.flatnonzero(np.bincount(ids) > 1)[0])
            raise ValueError(f"{what} has duplicates (copy {dup} twice), got {ids.tolist()}")
        return [int(c) for c in ids]

    def locate(self, c):
        """(batch, copy within it) holding copy ``c``."""
        b = self.batch
        if isinstance(b, Groups):
            k = int(np.searchsorted(b._starts, c, side="right")) - 1
            return b.groups[k], c - b.bounds[k][0]
        return b, c

    def snapshot(self, copies=None):
        """Every copy's state (engine-wide, one engine), or copies ``copies``
        (a snapshot of single copies, restorable into any slots and layout)."""
        from seer_envs._snapshot import capture, capture_copies, capture_copy
        self.check_steppable()
        b = self.batch
        if copies is None and not isinstance(b, Groups):
            extra = None
            if self.kind == "vector":
                extra = {"waiting": self.waiting, "ended": self.ended, "last_obs": self.last_obs}
            with b.using():
                return capture(b, self.env_id, self.snapshot_params(), self.kind, extra)
        ids = list(range(self.num_copies)) if copies is None else self.copy_ids(copies)
        with b.using():
            parts, rngs, extras = [], [], []
            for c in ids:
                gb, local = self.locate(c)
                parts.append(capture_copy(gb, local))
                rngs.append(gb.rngs()[local].bit_generator.state)
                extras.append({"last_obs": self.last_obs[c]})
            return capture_copies(parts, self.env_id, self.snapshot_params(), ids, rngs, extras)

    def restore(self, snapshot, copies=None):
        """Continue from ``snapshot`` (a :class:`~seer_envs.Snapshot` or its
        bytes): an engine-wide one restores every copy; one of single copies
        (or a single env's) restores into the slots ``copies`` (default
        ``0 ..``).  ValueError naming what differs; the core is then left as
        it was.  Copies that ended are set up for this core's autoreset mode,
        whatever the source's was."""
        from seer_envs._snapshot import Snapshot
        self.check_open()
        if isinstance(snapshot, (bytes, bytearray, memoryview)):
            snapshot = Snapshot.from_bytes(snapshot)
        if not isinstance(snapshot, Snapshot):
            raise TypeError(f"restore() takes a Snapshot (Snapshot.from_bytes(b) for bytes), "
                            f"got {type(snapshot).__name__}")
        if snapshot.kind == self.kind or (snapshot.kind == "vector" and self.num_copies > 1):
            if copies is not None:
                raise ValueError("an engine-wide snapshot restores every copy at once; take "
                                 "snapshot(copies=...) for single copies")
            return self._restore_whole(snapshot)
        if snapshot.kind not in ("copies", "env"):
            raise ValueError(f"a snapshot of a {snapshot.kind!r} cannot be restored here")
        n = 1 if snapshot.kind == "env" else snapshot.num_copies
        if copies is None:
            if n != self.num_copies:
                if self.num_copies == 1:
                    raise ValueError(f"a snapshot of {n} copies cannot be restored into a single env "
                                     "(take snapshot(copies=[c]) of one copy)")
                raise ValueError(f"a snapshot of {n} copies cannot fill the {self.num_copies} copies of "
                                 "this env: pass copies=[...], the slots to restore them into")
            slots = list(range(n))
        else:
            slots = self.copy_ids(copies)
            if len(slots) != n:
                raise ValueError(f"copies names {len(slots)} slots for a snapshot of {n} copies")
        return self._restore_copies(snapshot, n, slots)

    def _restore_copies(self, snapshot, n, slots):
        from seer_envs._snapshot import check_params, copy_states, generators, prepare_copy, restore_copies
        self.ensure_layout()
        b = self.batch
        with b.using():
            check_params(snapshot, self.env_id, self.snapshot_params())
            gens = generators(snapshot, n)
            running = self.started and b.broken is None and all(e is not None for e in self.engines)
            where = [self.locate(d) for d in slots]
            states = copy_states(snapshot, b.copies)
            prepared = [prepare_copy(st, gb, local, f"copy {i} (into slot {d})")
                        for i, (st, (gb, local), d) in enumerate(zip(states, where, slots))]
            last = []
            for st, d in zip(states, slots):
                lo = st.get("env/last_obs", st["copies/obs"])
                if lo.shape != self._obs_shape or lo.dtype != np.float32:
                    raise ValueError(f"snapshot array 'env/last_obs' of slot {d}: {lo.dtype} {lo.shape}")
                last.append(lo)
            if not running:       # never reset (or interrupted): the others start as reset() does
                self.started = False
                self.last_obs = b.start()
                self.started = True
                self.waiting[:] = False
                self.ended[:] = False
                self._flags_changed()
            by_batch = {}
            for p, (gb, local), g in zip(prepared, where, gens):
                entry = by_batch.setdefault(id(gb), (gb, [], [], []))
                entry[1].append(p)
                entry[2].append(local)
                entry[3].append(g)
            for gb, ps, locs, gs in by_batch.values():
                restore_copies(gb, ps, locs, gs)
            full = self.last_obs.copy()
            idx = np.asarray(slots)
            full[idx] = np.stack(last)
            self.last_obs = full
            self._settle_ended(idx)
        return None

    def _settle_ended(self, idx):
        """Copies ``idx`` just restored: one whose episode is over waits for
        its restart (``NEXT_STEP``), stays ended (``DISABLED``) or restarts
        now (``SAME_STEP``, as its ending step would have done)."""
        over = np.array([gb.done[c].all() or gb.cycle[c] >= gb.max_cycles[c]
                         for gb, c in map(self.locate, idx.tolist())])
        self.waiting[idx] = False
        self.ended[idx] = False
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self.waiting[idx] = over
        elif self.autoreset_mode == AutoresetMode.DISABLED:
            self.ended[idx] = over
        elif over.any():
            restart = np.sort(idx[over])
            full = self.last_obs.copy()
            full[restart] = self.batch.restart_obs(restart)
            self.last_obs = full
        self._flags_changed()

    def _restore_whole(self, snapshot):
        """An engine-wide snapshot into a one-engine layout of the same copies."""
        from seer_envs._snapshot import check, check_array, check_events, restore
        self.ensure_layout()
        b = self.batch
        if isinstance(b, Groups):
            raise ValueError("an engine-wide snapshot (one engine: the team or copy groups) cannot be "
                             "restored into groups of engines: take snapshot(copies=range(num_envs)) "
                             "instead, which restores into every layout")
        with b.using():
            gens = check(snapshot, b, self.env_id, self.snapshot_params(), self.kind)
            last = None
            if self.kind == "vector":
                E = self.num_copies
                for k, dtype, shape in (("waiting", bool, (E,)), ("ended", bool, (E,))):
                    check_array(snapshot._arrays, f"env/{k}", dtype, shape)
                last = check_array(snapshot._arrays, "env/last_obs", np.float32,
                                   (E,) + self._obs_shape).copy()
            if not self.started or b.engine is None:
                check_events(snapshot)          # before anything changes
                b.start()
            restore(snapshot, b, gens)
            self.started = True
            self.last_obs = last if last is not None else b.view(b.copies.obs).copy()
            self._settle_ended(np.arange(self.num_copies))
        return None

    # --- pickling --------------------------------------------------------------------

    def reduce_state(self, what):
        """What a pickle of a view holds of the core (``what``: the view's
        name for errors)."""
        b = self.batch
        if self.closed:
            return ("closed",)
        if b.broken is not None:
            raise TypeError(f"cannot copy or pickle {what}: {self.interrupted} was interrupted; "
                            "call reset() first")
        if not self.started:
            return ("new", b.rng_states())
        if not b.cycle.any() and not self.waiting.any() and not self.ended.any():
            return ("reset", b.rng_states(), b.seeds_used.copy())
        return ("snapshot", self.snapshot().to_bytes())

    def apply_state(self, state):
        """The other half of :meth:`reduce_state`, on a new core."""
        if state[0] == "closed":
            self.close()
        elif state[0] == "snapshot":
            self.restore(state[1])
        else:
            if state[0] == "reset":
                self.ensure_layout()
            self.batch.set_rng_states(state[1])
            if state[0] == "reset":
                self.start([int(s) for s in state[2]])


class _Pending:
    """A step of copies ``ids`` (None: all; ``sel`` their rows) of
    ``batch`` between :meth:`EpisodeCore.begin` and :meth:`EpisodeCore.end`."""

    __slots__ = ("ids", "sel", "batch", "plan")

    def __init__(self, ids, sel, batch, plan):
        self.ids, self.sel, self.batch, self.plan = ids, sel, batch, plan

    def run(self):
        self.batch.run(self.plan)


def _as_index(ids):
    """A slice for a run of consecutive copy ids (views, no copy), else the ids."""
    if ids[-1] - ids[0] + 1 == len(ids):
        return slice(int(ids[0]), int(ids[-1]) + 1)
    return ids

