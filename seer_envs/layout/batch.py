# SPDX-License-Identifier: BSD-3-Clause
"""The batch: ``num_copies`` copies of one scenario in one engine, the core
that the single env (one copy) and the vector env (many) both drive.

:class:`Batch` owns the engine, the per-copy seeds, step counts and episode
statistics and the thread count (STPA and the tuner); the scenario's
:class:`~seer_envs.scenario.copies.Copies` owns the model.  It runs one
step of every copy (or of the copies not restarting), restarts ranges of
copies, and reports which copies' episodes ended.  What happens then (a
single env's agent list, a vector env's auto-reset) is the env kind's.

**Bit-identity.**  Copy ``c`` gives exactly what a batch of one gives: its
LP ``j`` draws from the stream ``(seed_c, j)`` (``Engine.set_stream_keys_at``),
its events keep their order (keys ``(time, src, seq)`` are monotone under
the LP offset, and injected events keep their relative order), and it runs
at its own step times: when copies are at different step counts (after an
auto-reset) the engine runs them one group of equal step count at a time,
with the other copies frozen (``Engine.freeze_all_but``, ``Engine.rewind``),
so a copy restarted mid-run still starts at simulated time 0.
"""


import numpy as np

from seer_envs.episode.actions import resting_action
from seer_envs.episode.worlds import Worlds, per_copy_fields
from seer_envs.layout.guard import _Guard, refuse_busy
from seer_envs.layout.plans import _AlignedPlan, _Plan, runs
from seer_runtime import tuner as _tuner
from seer_runtime._threads import resolve_threads


class Batch:
    """``num_copies`` copies (``copies_cls``, the scenario's
    :class:`~seer_envs.scenario.copies.Copies`) under ``config``.

    ``rows``: each copy's values of the per-copy fields (``(copies, fields)``,
    :mod:`seer_envs.episode.worlds`), or None: the config's.  ``num_threads``: the user's setting
    (validated by the caller); ``chooser()`` returns STPA's ``choose`` for
    "auto" (called once, at the first start).  ``copy_groups``: the engine
    runs each step in copy groups (``Engine.set_copy_groups``: each thread
    takes whole copies and runs each to the step's end) rather than round
    by round over every copy; the same results (docs/runtime.md, "Copy
    groups").  Settable until the next :meth:`start`.
    """

    #: Actions run at injection when they are their LP's next event
    #: (``Engine.inject(..., execute=True)``); the same results either way.
    execute_actions = True

    def __init__(self, copies_cls, config, num_copies, rows, num_threads, chooser,
                 copy_groups=False):
        self.config = config
        self.copy_groups = bool(copy_groups)
        self.copies = cp = copies_cls(config, num_copies)
        self.num_copies = E = int(num_copies)
        self.num_agents = A = cp.num_agents
        self.worlds = Worlds(config, per_copy_fields(copies_cls), E, cp.configs, copies_cls.per_copy_counts)
        self.max_cycles = np.full(E, config.max_cycles, np.int64)
        self._any_pending = False
        self._counts = np.full(E, A, np.int64)      # each copy's agent count (_worlds_changed)
        self._absent = None             # rows beyond a copy's agent count
        if rows is not None:
            n = len(self.worlds.fields)
            self._set_worlds(*(np.array(rows, np.float64).reshape(E, n) for _ in range(2)),
                             np.full((E, n), np.nan))
        self.num_threads_setting = num_threads
        self._chooser = chooser
        self.num_threads = None
        self.thread_choice = None
        self.engine = None
        self.tuner = None
        self._tuned = None                       # the closed loop's result (tuner.learned)
        # copy c's actions are one contiguous LP range after the one before
        self._contiguous = cp.lps_per_copy == A
        self._all_starts = cp.agent_starts(np.arange(E))
        self.seed_rngs = None
        self.seeds_used = np.zeros(E, np.uint64)
        self.cycle = np.zeros(E, np.int64)
        self.done = np.zeros((E, A), bool)            # agents stopped in the running episode
        self.reported = False                         # an agent ended at the last step
        self.ep_return = np.zeros((E, A), np.float64)
        self.ep_length = np.zeros((E, A), np.int64)
        self._guard = self._lock = _Guard()
        # Cheap facts for the common step: the smallest max_cycles, whether
        # an agent has stopped, whether every copy is at one step count.
        self._mc_min = int(self.max_cycles.min())
        self._any_done = False
        self._aligned = True
        self._shapes = ((E, A) + tuple(cp.obs.shape[1:]), (E, A))
        self._flat = (E * A,)
        self._times = np.zeros(E)

    def using(self):
        """One caller at a time (``with batch.using():``): a second Python
        thread is refused before it changes anything, so the first one's
        episode goes on untouched."""
        return self._guard

    def check_free(self):
        """Refuse now when another thread is inside a call (checked before
        the state checks, which that call's own progress would fail)."""
        self._guard.check()

    _busy = staticmethod(refuse_busy)

    # --- the layout protocol (Groups' too: the core never tells them apart by class) ---

    #: An engine-wide snapshot (one engine for every copy) is possible.
    whole_snapshots = True
    #: Awaiting STPA's thread choice (``num_threads="auto"`` before the first
    #: start; :meth:`~seer_envs.layout.core_layout.Layout.ensure_layout`).
    provisional = False

    @property
    def layout(self):
        """``"copy_groups"`` (each step run in copy groups) or ``"team"``."""
        return "copy_groups" if self.copy_groups and self.num_copies > 1 else "team"

    engines = property(lambda self: [self.engine], doc="Every engine: this batch's one.")
    model = property(lambda self: self.copies.model, doc="The scenario model holding every copy.")

    def members(self, active):
        """The engines (indices into :attr:`engines`) a step of copies ``active`` runs."""
        return [0]

    def locate(self, c):
        """``(batch, copy within it)`` holding copy ``c``."""
        return self, c

    def states(self):
        """Every copy's global state at its last boundary."""
        return self.copies.states(0, self.num_copies)

    def after_fork_in_child(self):
        """A forked child: nothing of this batch's stayed in the parent."""

    # --- threads ---------------------------------------------------------------

    def choose_threads(self):
        """Resolve the thread setting at each start (STPA for "auto": its
        preflight runs once per configuration and hardware, later starts
        read its cache), so every episode begins from STPA's choice."""
        choose = self._chooser() if self._chooser is not None else None
        self.num_threads, self.thread_choice = resolve_threads(self.num_threads_setting, choose)
        return self.num_threads

    def after_step(self, started=False):
        """With ``num_threads="auto"``, let the thread tuner adjust the team
        between steps (seer_runtime.tuner): the closed loop over the first
        steps, a step down when other processes take the cores, upward
        probes when they leave.  Safe at any step: results do not depend on
        the thread count.  ``num_threads`` (also used by the boundary
        kernels) follows the engine; ``thread_choice`` reports every switch,
        and STPA's choice comes back at the next start."""
        if self.tuner is not None and (started or self.tuner.after_unit()):
            self.num_threads = self.engine.num_threads
            self.thread_choice = self.thread_choice.replace(**self.tuner.report())

    # --- episodes ----------------------------------------------------------------

    def seed(self, seeds):
        """New per-copy seed generators: ``seeds`` is one int per copy."""
        self.seed_rngs = [np.random.default_rng(int(s)) for s in seeds]

    def rngs(self):
        """Each copy's seed generator (made on first use: unseeded)."""
        if self.seed_rngs is None:
            self.seed_rngs = [np.random.default_rng() for _ in range(self.num_copies)]
        return self.seed_rngs

    def _next_seeds(self, idx):
        self.rngs()
        return [int(self.seed_rngs[c].integers(0, 2**63)) for c in idx]

    def seed_copies(self, seeds):
        """New seed generators for the copies whose entry of ``seeds`` (one
        per copy) is an int; None keeps a copy's generator."""
        rngs = self.rngs()
        for c, s in enumerate(seeds):
            if s is not None:
                rngs[c] = np.random.default_rng(int(s))

    def rng_states(self):
        return [g.bit_generator.state for g in self.rngs()]

    def set_rng_states(self, states):
        self.seed([0] * len(states))
        for g, st in zip(self.seed_rngs, states):
            g.bit_generator.state = st

    # --- worlds (seer_envs.episode.worlds) ---------------------------------------------

    param_base = property(lambda self: self.worlds.base)
    param_values = property(lambda self: self.worlds.values)
    param_pending = property(lambda self: self.worlds.pending)

    def set_max_cycles(self, values):
        """Each copy's ``max_cycles``, now (validated by each copy's config)."""
        w = self.worlds
        base, vals = w.base.copy(), w.values.copy()
        base[:, 0] = vals[:, 0] = np.broadcast_to(np.asarray(values, np.int64), (self.num_copies,))
        self._set_worlds(base, vals, w.pending)

    def _set_worlds(self, base, values, pending, idx=None):
        """World arrays, whole or rows ``idx`` (a per-copy restore): checked
        before anything changes; only those copies' configs are built."""
        idx = np.arange(self.num_copies) if idx is None else np.asarray(idx, np.int64)
        for c, cfg in self.worlds.set_rows(idx, base, values, pending):
            self.copies.configure(c, cfg)
        self._worlds_changed(idx)

    def set_pending(self, idx, rows):
        """Values for copies ``idx``'s next reset (rows validated by the caller)."""
        self.worlds.pending[idx] = rows
        self._any_pending = True

    def set_sampler(self, sampler):
        self.worlds.sampler = sampler

    def _worlds_changed(self, idx):
        """Copies ``idx`` changed their worlds: the per-copy arrays the steps read."""
        self.max_cycles[:] = self.worlds.values[:, 0]
        self._mc_min = int(self.max_cycles.min())
        self._any_pending = not np.isnan(self.worlds.pending).all()
        # Copies with fewer agents than the batch's width (a per-copy agent
        # count): their other rows are out of play from each start on.
        cp, A = self.copies, self.num_agents
        self._counts[idx] = [cp.agent_count(cp.configs[c]) for c in idx]
        self._absent = None if (self._counts == A).all() else np.arange(A)[None, :] >= self._counts[:, None]

    def _new_worlds(self, idx, seeds):
        """Copies ``idx`` start episodes of ``seeds``: their worlds
        (pending values, the sampler's draws), each checked before any
        changes, then configured."""
        w = self.worlds
        if w.sampler is None and not self._any_pending:
            return
        for c, cfg in w.commit(idx, *w.next_worlds(idx, seeds)):
            self.copies.configure(c, cfg)
        self._worlds_changed(idx)

    def start(self, episode_seeds=None, fresh=True):
        """A fresh engine and a first episode in every copy (``episode_seeds``:
        each copy's episode seed, else the next of its generator).  Returns
        the first observations ``(copies, agents, ...)``."""
        from seer_runtime import Engine
        E = self.num_copies
        if episode_seeds is None:
            episode_seeds = self._next_seeds(range(E))
        self._new_worlds(range(E), episode_seeds)
        threads = self.choose_threads()
        cp = self.copies
        cp.restart(0, E)
        if fresh:
            cp.fresh_outputs()
        self.engine = None
        eng = Engine(cp.model, num_threads=threads, seed=0)
        if self.copy_groups and E > 1:
            eng.set_copy_groups(cp.engine_blocks(), E)
        self.seeds_used[:] = episode_seeds
        self._key_streams(eng, np.arange(E), episode_seeds)
        eng.init(0.0)
        self.engine = eng
        if self.tuner is not None:         # its closed loop is not rerun every episode
            self._tuned = self.tuner.learned() or self._tuned
        self.tuner = _tuner.tuner_for(eng, self.num_threads_setting, self.thread_choice, learned=self._tuned)
        self.after_step(started=True)            # its first trial may be a smaller team
        self.cycle[:] = 0
        self.done[:] = False if self._absent is None else self._absent
        self.ep_return[:] = 0.0
        self.ep_length[:] = 0
        self._any_done = self._absent is not None
        self._aligned = True
        cp.boundary(0, E, np.zeros(E), self.num_threads)
        return self.view(cp.obs)

    def restart(self, idx):
        """Start a new episode in copies ``idx`` (sorted; the next seed of
        each copy's generator) on the running engine."""
        cp, eng = self.copies, self.engine
        idx = np.asarray(idx, np.int64)
        seeds = self._next_seeds(idx)
        self._new_worlds(idx.tolist(), seeds)
        self.seeds_used[idx] = seeds
        self._key_streams(eng, idx, seeds)
        for lo, hi in runs(idx):
            cp.restart(lo, hi)
            for blo, bhi in cp.range_blocks(lo, hi):
                eng.reset_lps(blo, bhi, 0.0)
            self.cycle[lo:hi] = 0
            self.done[lo:hi] = False if self._absent is None else self._absent[lo:hi]
            self.ep_return[lo:hi] = 0.0
            self.ep_length[lo:hi] = 0
            cp.boundary(lo, hi, np.zeros(self.num_copies), self.num_threads)
        self._any_done = bool(self.done.any())
        self._aligned = False

    def _key_streams(self, eng, idx, seeds):
        """Copy ``idx[i]``'s LPs draw from the streams of episode seed ``seeds[i]``."""
        seeds = np.asarray(seeds, np.uint64)
        for starts, n, firsts in self.copies.key_blocks(idx):
            eng.set_stream_keys_at(starts, n, seeds, firsts)

    def restart_obs(self, idx):
        """Restart copies ``idx`` (sorted) and return their first
        observations ``(len(idx), agents, ...)``, in arrays of their own."""
        self.copies.fresh_outputs()
        self.restart(idx)
        return self.view(self.copies.obs)[np.asarray(idx)]

    def frame(self, c, step, max_cycles):
        return self.copies.frame(c, step, max_cycles)

    def prepare(self, a, waiting=None, active=None, fresh=True):
        """One step of the copies ``active`` (sorted copy ids; None: every
        copy) with the validated actions ``a`` ``(len(active), agents,
        ...)``, in three parts: this one before the engine runs (Python:
        actions in, restarts, output arrays, step counts) returns the plan
        that :meth:`run` (the engine's part) and then :meth:`finish` take.
        The other copies stay frozen where they are.  Copies marked in
        ``waiting`` (a mask over all copies, within ``active``) restart
        instead: their actions are ignored, they get reward 0, no flags and
        their first observation.  Nothing else may use the batch from here
        until :meth:`finish` has returned."""
        cp, E = self.copies, self.num_copies
        if waiting is not None and not waiting.any():
            waiting = None
        if active is not None:
            # The other copies' rows keep earlier (valid) actions: a model
            # reads an agent's action only at its action event, which a
            # frozen copy does not have pending.
            buf = self._actions_buffer(a)
            buf[active] = a
            a = buf
        if E == 1:                  # the rows of one copy: no reshapes
            cp.write_actions(a[0], self.done[0])
        else:
            cp.write_actions(a.reshape(self._flat + a.shape[2:]), self.done.reshape(-1))
        # Every stepping copy's rows are written by its restart or the
        # step's boundary, into fresh arrays that the caller then owns.
        if fresh:
            cp.fresh_outputs()
        if waiting is not None:
            self.restart(np.flatnonzero(waiting))
        cycles = self.cycle
        if active is None and waiting is None:
            if not self._aligned:
                self._aligned = E == 1 or cycles.min() == cycles.max()
            if self._aligned:
                # The common case: every copy at the same step, one run.
                # (The times array is the batch's own: the next plan of this
                # batch is made only after this one's finish.)
                k = int(cycles[0])
                cycles.fill(k + 1)
                self._times.fill((k + 1) * self.config.dt)
                return _AlignedPlan(k, self._times)
        dt = self.config.dt
        stepping = np.ones(E, bool)
        if active is not None:
            stepping = np.zeros(E, bool)
            stepping[active] = True
        if waiting is not None:
            stepping &= ~waiting
        live_idx = np.flatnonzero(stepping)
        # one group of equal step count at a time, in increasing order
        ks = cycles[live_idx]
        runs_by_k = [(k, live_idx[ks == k]) for k in np.unique(ks).tolist()]
        cycles[live_idx] += 1
        self._aligned = False            # checked again at the next step
        return _Plan(None, live_idx, stepping, waiting, active, cycles * dt, runs_by_k)

    def run(self, plan):
        """The engine's part of a step (actions injected, events run, the
        boundary): native calls that release the GIL, and a few Python lines
        around them, so that the thread running it takes the GIL seldom."""
        cp, eng, dt = self.copies, self.engine, self.config.dt
        if plan.live_idx is None:
            # k * dt from the integer step count: an accumulated sum drifts
            # off the next injection time ("cannot inject at time ...").
            k = plan.k
            if k * dt < eng.now:
                eng.rewind(k * dt)
            if self._contiguous:
                eng.inject(k * dt, cp.action_kind, 0, self.num_copies * self.num_agents,
                           execute=self.execute_actions)
            elif self.num_copies == 1:      # one block: its range (the same events, fewer checks)
                lo = int(self._all_starts[0])
                eng.inject(k * dt, cp.action_kind, lo, lo + self.num_agents, execute=self.execute_actions)
            else:
                eng.inject_blocks(k * dt, cp.action_kind, self._all_starts, self.num_agents,
                                  execute=self.execute_actions)
            # In copy groups each copy's boundary runs inside the run, by
            # the thread that ran the copy, as soon as it reaches the end.
            end = None if eng.copy_groups is None else cp.copy_end(plan.times)
            if end is None:
                eng.run_until((k + 1) * dt)
                cp.boundary(0, self.num_copies, plan.times, self.num_threads)
            else:
                eng.run_until((k + 1) * dt, copy_end=end)
                cp.finish_boundary(0, self.num_copies)
            return
        self._run_groups(plan.runs_by_k)
        for lo, hi in runs(plan.live_idx):
            cp.boundary(lo, hi, plan.times, self.num_threads)

    def finish(self, plan):
        """The part of a step after the engine ran (episode statistics,
        flags): returns ``(obs, rewards, terminations, truncations,
        ended)``: the first four ``(copies, agents)`` arrays that the batch
        does not write again (the rows of copies outside the step's
        ``active`` are undefined), ``ended`` the copies whose episode ended
        at this step (None when none did).  Each
        agent's end is reported once, at the step it happens
        (:mod:`seer_envs.episode.core`): ``terminations`` and ``truncations`` are
        False on the rows of agents that stopped before this step, whose
        rewards are 0; :attr:`done` holds every agent stopped so far and
        :attr:`reported` whether an agent ended at this step."""
        cp = self.copies
        agents_shape = self._shapes[1]
        if self.num_copies == 1:            # (a new leading axis: cheaper than a reshape)
            obs, rew, term = cp.obs[None], cp.rew[None], cp._term.view(bool)[None]
        else:
            obs, rew = cp.obs.reshape(self._shapes[0]), cp.rew.reshape(agents_shape)
            term = cp._term.view(bool).reshape(agents_shape)
        live_idx, stepping = plan.live_idx, plan.stepping
        if live_idx is None:
            if plan.k + 1 < self._mc_min and not self._any_done and not np.count_nonzero(term):
                # The common step: no agent stopped before or now, no copy
                # truncated (the general path gives the same, in more passes).
                # Same-type additions (the rewards widened to float64 first,
                # exactly; a ones array): half the cost of a mixed-type ufunc
                # call or one with a Python scalar, the same sums.
                wide, ones = self._sum_operands or self._make_sum_operands()
                wide[...] = rew
                np.add(self.ep_return, wide, out=self.ep_return)
                np.add(self.ep_length, ones, out=self.ep_length)
                self.reported = False
                return obs, rew, term, np.zeros(agents_shape, bool), None
            over = self.cycle >= self.max_cycles
            live = ~self.done
        else:
            waiting = plan.waiting
            if waiting is not None:         # restarted: their first observation, nothing else
                rew[waiting] = 0.0
                term[waiting] = False
            over = (self.cycle >= self.max_cycles) & stepping
            live = ~self.done & stepping[:, None]
        if self._any_done:                  # stopped agents: reward 0, no flags
            rew[~live] = 0.0
        term &= live
        trunc = over[:, None] & live & ~term
        now = term | trunc
        done = self.done | now
        ended = over | (done.all(axis=1) & (stepping if stepping is not None else True))
        np.add(self.ep_return, rew, out=self.ep_return, where=live)
        self.ep_length += live
        self.done = done
        self._any_done = bool(done.any())
        self.reported = bool(now.any())
        return obs, rew, term, trunc, (ended if ended.any() else None)

    #: The common step's operands of the episode sums (:meth:`finish`), made at its first use.
    _sum_operands = None

    def _make_sum_operands(self):
        shape = self._shapes[1]
        self._sum_operands = (np.empty(shape, np.float64), np.ones(shape, np.int64))
        return self._sum_operands

    def _actions_buffer(self, a):
        """Every copy's last actions, for steps of some copies (a valid
        action of the space, :func:`resting_action`, until written)."""
        buf = getattr(self, "_act_buf", None)
        if buf is None:
            spec = self.copies.action_spec
            dtype = np.int64 if spec[0] == "discrete" else np.float64    # exact for any input
            buf = self._act_buf = np.empty((self.num_copies, self.num_agents) + a.shape[2:], dtype)
            buf[...] = resting_action(spec)
        return buf

    def _run_groups(self, runs_by_k):
        """Run each ``(k, members)`` of ``runs_by_k`` (copies at step count
        ``k``, in increasing order of ``k``) at its own times: a run to
        ``(k + 1) * dt`` would also run the events of copies that are behind
        (or restarting), so the other copies are frozen meanwhile."""
        cp, eng, dt, A = self.copies, self.engine, self.config.dt, self.num_agents
        for k, members in runs_by_k:
            eng.freeze_all_but(*cp.freeze_blocks(members))
            try:
                if k * dt < eng.now:
                    eng.rewind(k * dt)
                eng.inject_blocks(k * dt, cp.action_kind, cp.agent_starts(members), A,
                                  execute=self.execute_actions)
                eng.run_until((k + 1) * dt)
            finally:
                eng.thaw()

    def view(self, arr):
        """``(copies, agents, ...)`` view of a per-agent array (copy-major)."""
        return arr.reshape((self.num_copies, self.num_agents) + arr.shape[1:])

    def close(self):
        self.engine = None
        self.tuner = None
