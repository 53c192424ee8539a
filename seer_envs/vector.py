# SPDX-License-Identifier: BSD-3-Clause
"""Many copies of one SEER env in one engine: :func:`vector_env`.

>>> import numpy as np, seer_envs
>>> venv = seer_envs.vector_env("pcs_v0", 64, grid_width=8, grid_height=8)
>>> obs, infos = venv.reset(seed=0)              # (64, 64, 11): copies x agents x obs
>>> obs, rew, term, trunc, infos = venv.step(np.zeros((64, 64), np.int64))

Why one engine: a small env (PCS 8x8) has too little parallel work in one
step for a second thread, and a Python loop over copies (SuperSuit) pays the
per-step overhead once per copy.  Here every copy's entities live in one
event loop, so one ``run_until`` per step advances all copies and the
threads share the work of all of them.

**Layout.** Each copy's LPs sit at fixed offsets of the engine (PCS: copy
``c``'s cell ``j`` is LP ``c * n + j``; Aircraft: all copies' UAVs, then
all copies' targets, each copy's in one block); the model keeps copies apart
(an event never crosses copies).
Batched arrays are shaped ``(num_envs, num_agents, ...)``, agents in the
single env's ``possible_agents`` order.

**Bit-identity.** Copy ``c`` gives exactly what a single env gives: its LP
``j`` draws from the stream ``(seed_c, j)`` (``Engine.set_stream_keys``),
its events keep their order (keys ``(time, src, seq)`` are monotone under
the LP offset, and injected events keep their relative order), and it runs
at its own step times: when copies are at different step counts (after an
auto-reset) the engine runs them one group of equal step count at a time,
each at its own times with the other copies frozen
(``Engine.freeze_all_but``, ``Engine.rewind``), so a copy restarted
mid-run still starts at simulated time 0.  Any ``num_threads`` gives the same results.

**Seeds.** ``reset(seed=s)`` seeds copy ``c`` as a single env's
``reset(seed=s + c)`` (Gymnasium's convention); each copy then draws its
later episode seeds from its own generator, as a single env's ``reset()``
without a seed does.  So copy ``c``'s episodes equal a single env reset with
``seed=s + c`` and then reset without a seed at each episode end.

**Auto-reset: Gymnasium's ``SAME_STEP`` mode** (the default).  When a copy's episode ends
(all its agents terminated or truncated), the same ``step`` restarts it: the
returned observation row is the new episode's first observation, rewards,
terminations and truncations are the finished step's, and ``infos`` holds
``"final_obs"`` (the full observation array of the step, rows of copies that
did not end are their ordinary observations) with the mask
``"_final_obs"`` (num_envs,), and ``"episode"``: ``{"r": returns
(num_envs, num_agents), "l": lengths (num_envs, num_agents)}`` with mask
``"_episode"``.  ``infos`` is ``{}`` on steps where no copy ended.

With ``autoreset_mode="next_step"`` (Gymnasium's ``NEXT_STEP``, what
RLlib's env runners expect) the ending step returns the final observation
(and ``"episode"``), and the copy restarts on the next ``step``: that step
ignores the copy's actions and returns its first observation with reward 0
and no termination or truncation; the other copies step as usual.

**Threads.** ``num_threads="auto"`` asks STPA once for the whole batch (its
preflight runs the vector env itself, cached per configuration and
hardware; the thread tuner then adjusts the team between steps, as in
the single env); an int is used as given.

Supported scenarios: ``pcs_v0`` and ``aircraft_v0`` (each copy with its own
arena, boundary grid and snapshot time).
"""

import dataclasses
import numbers

import numpy as np

from seer_runtime import tuner as _tuner
from seer_runtime._threads import check_num_threads, resolve_threads

__all__ = ["vector_env", "agent_vector_env", "rllib_env_creator", "SeerVectorEnv", "SeerAgentVectorEnv",
           "SUPPORTED"]


class _PcsCopies:
    """PCS's part of the vector env: the model with ``num_copies``, action
    writes, the boundary over a range of copies, restarting a copy's state."""

    def __init__(self, cfg, num_copies):
        from seer_envs.pcs.handlers import ACTION_KIND, COUNTERS, OBS_SIZE_PY, PcsModel
        from gymnasium import spaces
        self.cfg = cfg
        self.model = PcsModel(cfg, num_copies)
        self.lps_per_copy = cfg.num_cells
        self.agents_per_copy = cfg.num_cells
        self.action_kind = ACTION_KIND
        self.action_spec = ("discrete", cfg.num_guard_actions)
        self.possible_agents = [f"cell_{x}_{y}" for y in range(cfg.grid_height)
                                for x in range(cfg.grid_width)]
        self.observation_space = spaces.Box(0.0, np.inf, (OBS_SIZE_PY,), np.float32)
        self.action_space = spaces.Discrete(cfg.num_guard_actions)
        total = cfg.num_cells * num_copies
        self.obs = np.zeros((total, OBS_SIZE_PY), np.float32)
        self.rew = np.zeros(total, np.float32)
        self.prev = np.zeros((total, len(COUNTERS)), np.int64)
        self.delta = np.zeros((total, len(COUNTERS)), np.int64)
        self.term = np.zeros(total, bool)     # PCS never terminates

    def fresh_outputs(self):
        """Fresh output arrays for the next boundaries, which write every row
        of their range: a step hands the arrays out without copying them."""
        self.obs = np.empty_like(self.obs)
        self.rew = np.empty_like(self.rew)
        self.term = np.zeros_like(self.term)

    # Where copies live in the engine: copy c is LPs [c*n, (c+1)*n).
    def copy_blocks(self, c):
        """(lo, hi, first entity) of copy c's LP blocks (stream keys)."""
        n = self.lps_per_copy
        return [(c * n, (c + 1) * n, 0)]

    def range_blocks(self, c0, c1):
        """(lo, hi) LP ranges holding copies [c0, c1)."""
        return [(c0 * self.lps_per_copy, c1 * self.lps_per_copy)]

    def freeze_blocks(self, members):
        """(starts, counts) of the LP blocks of copies ``members``."""
        return members * self.lps_per_copy, self.lps_per_copy

    def agent_starts(self, members):
        """First agent LP of each copy in ``members`` (agents are contiguous)."""
        return members * self.lps_per_copy

    def write_actions(self, a):
        self.model.actions[:] = a.reshape(-1)

    def restart_state(self, c0, c1):
        lo, hi = c0 * self.lps_per_copy, c1 * self.lps_per_copy
        self.model.reset_cells(lo, hi)
        self.prev[lo:hi] = 0

    def boundary(self, c0, c1, times, num_threads):
        """Boundary of copies [c0, c1) (``times``: each copy's step-end time,
        unused by PCS); returns the terminated flags (all copies)."""
        from seer_envs.pcs.handlers import boundary
        n = self.lps_per_copy
        boundary(self.model, self.obs, self.rew, self.prev, self.delta,
                 self.cfg.handoff_penalty, num_threads, c0 * n, c1 * n)
        share = getattr(self.cfg, "team_reward_share", 0.0)
        if share:
            # The single env's team mixing (seer_envs.pcs.rewards) for every
            # copy at once: a row mean over contiguous (copies, n) sums each
            # row as np.mean sums the single env's array (bit-identical; the
            # per-copy test checks it), and share * mean is the same double
            # product rounded to float32.
            r = self.rew[c0 * n:c1 * n].reshape(c1 - c0, n)
            means = r.mean(axis=1, dtype=np.float64)
            r *= np.float32(1.0 - share)
            r += (share * means).astype(np.float32)[:, None]
        return self.term


class _AircraftCopies:
    """Aircraft's part of the vector env.  LPs: every copy's UAVs first
    (copy c's at [c*U, (c+1)*U)), then every copy's targets (copy c's at
    [C*U + c*T, C*U + (c+1)*T)): UAV arrays stay indexed by UAV LP, and
    within a copy the sources keep their order (event keys unchanged)."""

    def __init__(self, cfg, num_copies):
        from gymnasium import spaces
        from seer_envs.aircraft.env import N_DISCRETE, observation_bounds
        from seer_envs.aircraft.handlers import ACTION_KIND, OBS_SIZE_PY, AircraftModel
        self.cfg = cfg
        self.model = AircraftModel(cfg, num_copies)
        self.U, self.T = cfg.num_uavs, cfg.num_targets
        self.nu = self.U * num_copies
        self.agents_per_copy = self.U
        self.action_kind = ACTION_KIND
        self.possible_agents = [f"uav_{i}" for i in range(self.U)]
        if cfg.continuous_actions:
            self.action_spec = ("box", (2,), -1.0, 1.0)
            self.action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        else:
            self.action_spec = ("discrete", N_DISCRETE)
            self.action_space = spaces.Discrete(N_DISCRETE)
            self._table = cfg.action_table
        low, high = observation_bounds()
        self.observation_space = spaces.Box(low, high, (OBS_SIZE_PY,), np.float32)
        self.obs = np.zeros((self.nu, OBS_SIZE_PY), np.float32)
        self.rew = np.zeros(self.nu, np.float32)
        self._term = np.zeros(self.nu, np.uint8)

    @property
    def term(self):
        return self._term.view(bool)

    def fresh_outputs(self):
        self.obs = np.empty_like(self.obs)
        self.rew = np.empty_like(self.rew)
        self._term = np.empty_like(self._term)

    def copy_blocks(self, c):
        U, T, nu = self.U, self.T, self.nu
        return [(c * U, (c + 1) * U, 0), (nu + c * T, nu + (c + 1) * T, U)]

    def range_blocks(self, c0, c1):
        U, T, nu = self.U, self.T, self.nu
        return [(c0 * U, c1 * U), (nu + c0 * T, nu + c1 * T)]

    def freeze_blocks(self, members):
        starts = np.concatenate([members * self.U, self.nu + members * self.T])
        counts = np.concatenate([np.full(len(members), self.U), np.full(len(members), self.T)])
        return starts, counts

    def agent_starts(self, members):
        return members * self.U

    def write_actions(self, a):
        m = self.model
        if self.cfg.continuous_actions:
            np.multiply(a.reshape(-1, 2), self.cfg.max_accel, out=m.actions, dtype=np.float64)
        else:
            np.take(self._table, a.reshape(-1), axis=0, out=m.actions)

    def restart_state(self, c0, c1):
        self.model.reset_copies(c0, c1)

    def boundary(self, c0, c1, times, num_threads):
        from seer_envs.aircraft.handlers import boundary
        boundary(self.model, 0.0, self.obs, self.rew, self._term, num_threads, c0, c1,
                 np.asarray(times, np.float64))
        return self.term


_ADAPTERS = {"pcs_v0": _PcsCopies, "aircraft_v0": _AircraftCopies}
#: Scenario ids :func:`vector_env` supports.
SUPPORTED = tuple(_ADAPTERS)


def vector_env(env_id, num_envs, num_threads="auto", autoreset_mode="same_step", **params):
    """``num_envs`` copies of the registered env ``env_id`` in one engine
    (see :class:`SeerVectorEnv`); ``params`` are the env's config fields
    (``max_cycles`` may also be a sequence of ``num_envs`` ints, one per
    copy); ``autoreset_mode`` is ``"same_step"`` (default) or
    ``"next_step"``."""
    return SeerVectorEnv(env_id, num_envs, num_threads=num_threads,
                         autoreset_mode=autoreset_mode, **params)


class SeerVectorEnv:
    """``num_envs`` copies of one SEER env stepped together in one engine
    (module docstring: layout, bit-identity, seeds, auto-reset, threads).

    ``reset(seed=None)`` -> ``(obs, infos)``;
    ``step(actions)`` -> ``(obs, rewards, terminations, truncations, infos)``
    with ``obs`` ``(num_envs, num_agents, obs_dim)`` float32, ``rewards``
    ``(num_envs, num_agents)`` float32 and the flags ``(num_envs,
    num_agents)`` bool; all fresh arrays.  ``actions`` is ``(num_envs,
    num_agents)`` ints for a Discrete action space (``(num_envs, num_agents)
    + shape`` for a Box).  Agents that finished inside a running episode
    keep their rows (checked, ignored, reported terminated), as in the
    single env's ``step_arrays``.
    """

    _tuner = None

    def __init__(self, env_id, num_envs, num_threads="auto", autoreset_mode="same_step", **params):
        from seer_envs import get
        mode = str(getattr(autoreset_mode, "value", autoreset_mode)).lower().replace("_", "")
        if mode not in ("samestep", "nextstep"):
            raise ValueError(f'autoreset_mode must be "same_step" or "next_step", got {autoreset_mode!r}')
        self._same_step = mode == "samestep"
        self.metadata = {"autoreset_mode": "SAME_STEP" if self._same_step else "NEXT_STEP"}
        if env_id not in _ADAPTERS:
            raise ValueError(f"vector_env supports {', '.join(SUPPORTED)}; got {env_id!r}")
        if isinstance(num_envs, bool) or not isinstance(num_envs, numbers.Integral) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        num_envs = int(num_envs)
        check_num_threads(num_threads)
        self.env_id = env_id
        self.num_envs = num_envs
        self._spec = get(env_id)
        mc = params.get("max_cycles")
        per_copy_mc = mc is not None and not isinstance(mc, numbers.Integral) and np.ndim(mc) == 1
        if per_copy_mc:
            mcs = list(mc)
            if len(mcs) != num_envs:
                raise ValueError(f"max_cycles must be an int or {num_envs} ints (one per copy), "
                                 f"got {len(mcs)} values")
            for v in mcs:   # each checked by the config's own bounds
                self._spec.build_config(dict(params, max_cycles=v))
            params = dict(params, max_cycles=max(mcs))
        self.config = self._spec.build_config(params)
        self._params = dataclasses.asdict(self.config)
        self.max_cycles = (np.array(mcs, np.int64) if per_copy_mc
                           else np.full(num_envs, self.config.max_cycles, np.int64))
        self._num_threads_setting = num_threads
        self.num_threads = None
        self._chosen = None
        self.thread_choice = None
        self._copies = _ADAPTERS[env_id](self.config, num_envs)
        cp = self._copies
        self._all_starts = cp.agent_starts(np.arange(num_envs))
        self.possible_agents = list(cp.possible_agents)
        self.num_agents = cp.agents_per_copy
        self.single_observation_space = cp.observation_space
        self.single_action_space = cp.action_space
        A = cp.agents_per_copy
        self._engine = None
        self._seed_rngs = [np.random.default_rng() for _ in range(num_envs)]
        self.seeds_used = np.zeros(num_envs, np.uint64)
        self._cycle = np.zeros(num_envs, np.int64)
        self._done = np.zeros((num_envs, A), bool)
        self._ep_return = np.zeros((num_envs, A), np.float64)
        self._ep_length = np.zeros((num_envs, A), np.int64)
        self._waiting = np.zeros(num_envs, bool)
        self._closed = False
        self._broken = None

    # --- threads -------------------------------------------------------------

    def _stpa_key(self):
        return [self.env_id, "vector", self.num_envs, self._params,
                self.max_cycles.tolist()]

    def _choose_threads(self):
        """Resolve ``num_threads`` once (STPA for "auto"); every reset
        starts from that choice again."""
        if self._chosen is not None:
            self.num_threads, self.thread_choice = self._chosen
            return self.num_threads
        setting = self._num_threads_setting

        def choose():
            import stpa      # ImportError -> the hard caps
            kw = dict(self._params, max_cycles=self.max_cycles.tolist())
            return stpa.choose(self._stpa_key(), lambda t, s: vector_run(self.env_id, self.num_envs, t, s, kw))
        self.num_threads, self.thread_choice = resolve_threads(setting, choose)
        self._chosen = (self.num_threads, self.thread_choice)
        return self.num_threads

    # --- API -------------------------------------------------------------------

    @property
    def engine(self):
        """The engine holding every copy (statistics, pending events)."""
        return self._engine

    @property
    def model(self):
        """The scenario model holding every copy (NumPy views of its state)."""
        return self._copies.model

    @property
    def cycles(self):
        """Steps taken in each copy's current episode."""
        return self._cycle.copy()

    def reset(self, seed=None, options=None):
        """Start a fresh episode in every copy; ``seed`` (int >= 0) seeds copy
        ``c`` with ``seed + c``.  Returns ``(obs, {})``."""
        from seer_runtime import Engine
        self._check_open()
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"reset options must be a dict or None, got {type(options).__name__}")
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
                raise ValueError(f"seed must be an int >= 0 or None, got {seed!r}")
            self._seed_rngs = [np.random.default_rng(int(seed) + c) for c in range(self.num_envs)]
        self._broken = "the reset"
        threads = self._choose_threads()
        cp = self._copies
        cp.restart_state(0, self.num_envs)
        cp.fresh_outputs()
        eng = Engine(cp.model, num_threads=threads, seed=0)
        for c in range(self.num_envs):
            s = int(self._seed_rngs[c].integers(0, 2**63))
            self.seeds_used[c] = s
            for lo, hi, first in cp.copy_blocks(c):
                eng.set_stream_keys(lo, hi, s, first)
        eng.init(0.0)
        self._engine = eng
        self._tuner = _tuner.tuner_for(eng, self._num_threads_setting, self.thread_choice)
        self._after_step(started=True)            # its first trial may be a smaller team
        threads = self.num_threads
        self._cycle[:] = 0
        self._waiting[:] = False
        self._done[:] = False
        self._ep_return[:] = 0.0
        self._ep_length[:] = 0
        cp.boundary(0, self.num_envs, np.zeros(self.num_envs), threads)
        self._broken = None
        return self._agent_view(cp.obs), {}

    def step(self, actions):
        """One step of every copy (see the class docstring)."""
        self._check_steppable()
        a = self._check_actions(actions)
        cp, eng, dt = self._copies, self._engine, self.config.dt
        A, E = cp.agents_per_copy, self.num_envs
        self._broken = "a step"
        cp.write_actions(a)
        # Every copy's rows are written below, by its restart or the step's
        # boundary, into fresh arrays that the caller then owns: no copy out
        # (a serial copy of rows that the team's threads just wrote).
        cp.fresh_outputs()
        waiting = self._waiting          # NEXT_STEP: copies that ended last step
        everyone = not waiting.any()
        if not everyone:
            self._restart(np.flatnonzero(waiting))
        stepping = ~waiting
        cycles = self._cycle
        if everyone and cycles.min() == cycles.max():
            # The common case: every copy at the same step, one run.
            k = int(cycles[0])
            if k * dt < eng.now:
                eng.rewind(k * dt)
            eng.inject_blocks(k * dt, cp.action_kind, self._all_starts, A, execute=True)
            eng.run_until((k + 1) * dt)
            live_idx = None
        else:
            # Copies at equal step counts run together; groups in increasing
            # order of step count, each at its own times.
            live_idx = np.flatnonzero(stepping)
            groups = np.unique(cycles[live_idx])
            # A run to (k + 1) * dt would also run the events of copies that
            # are behind (or restarting): the other copies are frozen while
            # a group runs.
            for k in groups.tolist():
                members = live_idx[cycles[live_idx] == k]
                eng.freeze_all_but(*cp.freeze_blocks(members))
                try:
                    if k * dt < eng.now:
                        eng.rewind(k * dt)
                    eng.inject_blocks(k * dt, cp.action_kind, cp.agent_starts(members), A, execute=True)
                    eng.run_until((k + 1) * dt)
                finally:
                    eng.thaw()
        if everyone:
            self._cycle += 1
        else:
            self._cycle[stepping] += 1
        times = self._cycle * dt
        if everyone:
            cp.boundary(0, E, times, self.num_threads)
        else:
            for lo, hi in _runs(live_idx):
                cp.boundary(lo, hi, times, self.num_threads)
        term = self._agent_view(cp.term)
        rew = self._agent_view(cp.rew)
        obs = self._agent_view(cp.obs)
        if everyone:
            over = self._cycle >= self.max_cycles
            if not (over.any() or term.any() or self._done.any()):
                # The common step: no agent stopped before or now, no copy
                # truncated (the general path gives the same, in more passes).
                np.add(self._ep_return, rew, out=self._ep_return)
                self._ep_length += 1
                self._broken = None
                self._after_step()
                return obs, rew, term, np.zeros_like(term), {}
            live = ~self._done
            trunc = over[:, None] & ~term
        else:                   # restarted copies: their reset observation, nothing else
            rew[waiting] = 0.0
            term[waiting] = False
            live = ~self._done & stepping[:, None]
            trunc = (self._cycle >= self.max_cycles)[:, None] & ~term & stepping[:, None]
        np.add(self._ep_return, rew, out=self._ep_return, where=live)
        self._ep_length += live
        done = term | trunc
        ended = trunc.any(axis=1) | done.all(axis=1)
        if not everyone:
            ended &= stepping
        self._done = done
        if not everyone:
            self._waiting = np.zeros(E, bool)
        infos = {}
        if ended.any():
            if self._same_step:
                infos = self._autoreset(ended, obs)
            else:
                infos = {"episode": {"r": self._ep_return.copy(), "l": self._ep_length.copy()},
                         "_episode": ended.copy()}
                self._waiting = ended
        self._broken = None
        self._after_step()
        return obs, rew, term, trunc, infos

    def _after_step(self, started=False):
        """With ``num_threads="auto"``, let the thread tuner adjust the team
        between steps, as the single env does (``SeerParallelEnv._after_step``):
        the closed loop over the first steps, a step down under contention,
        upward probes.  Safe at any step: results do not depend on the thread
        count."""
        if self._tuner is not None and (started or self._tuner.after_unit()):
            self.num_threads = self._engine.num_threads
            self.thread_choice = dict(self.thread_choice, **self._tuner.report())

    def close(self):
        """Release the engine; later calls raise RuntimeError."""
        self._engine = None
        self._closed = True

    # --- internals -------------------------------------------------------------

    def _autoreset(self, ended, obs):
        idx = np.flatnonzero(ended)
        infos = {"final_obs": obs.copy(), "_final_obs": ended.copy(),
                 "episode": {"r": self._ep_return.copy(), "l": self._ep_length.copy()},
                 "_episode": ended.copy()}
        self._copies.fresh_outputs()      # the restarts must not overwrite what this step returns
        self._restart(idx)
        obs[idx] = self._agent_view(self._copies.obs)[idx]
        return infos

    def _restart(self, idx):
        """Start a new episode in copies ``idx`` (next seed of each copy's
        generator), as a single env's ``reset()`` does."""
        cp, eng = self._copies, self._engine
        # Restart runs of adjacent copies as one range each.
        for lo, hi in _runs(idx):
            cp.restart_state(lo, hi)
            for c in range(lo, hi):
                s = int(self._seed_rngs[c].integers(0, 2**63))
                self.seeds_used[c] = s
                for blo, bhi, first in cp.copy_blocks(c):
                    eng.set_stream_keys(blo, bhi, s, first)
            for blo, bhi in cp.range_blocks(lo, hi):
                eng.reset_lps(blo, bhi, 0.0)
            self._cycle[lo:hi] = 0
            self._done[lo:hi] = False
            self._ep_return[lo:hi] = 0.0
            self._ep_length[lo:hi] = 0
            cp.boundary(lo, hi, np.zeros(self.num_envs), self.num_threads)

    def _agent_view(self, arr):
        """(num_envs, num_agents, ...) view of a per-agent array (copy-major)."""
        return arr.reshape((self.num_envs, self.num_agents) + arr.shape[1:])

    def _check_actions(self, actions):
        spec, E, A = self._copies.action_spec, self.num_envs, self.num_agents
        a = np.asarray(actions)
        if spec[0] == "discrete":
            if a.shape != (E, A):
                raise ValueError(f"actions must have shape ({E}, {A}) (copies, agents), got {a.shape}")
            if a.dtype.kind not in "iu":
                raise ValueError(f"actions must be an integer array, got dtype {a.dtype}")
            # Two reductions, no temporaries; the mask only to name the culprit.
            if a.size and (a.min() < 0 or a.max() >= spec[1]):
                c, i = (int(v) for v in np.argwhere((a < 0) | (a >= spec[1]))[0])
                raise ValueError(f"action for copy {c}, agent {self.possible_agents[i]!r} must be in "
                                 f"[0, {spec[1] - 1}], got {a[c, i]}")
            return a
        shape, low, high = spec[1:]
        if a.shape != (E, A) + tuple(shape):
            raise ValueError(f"actions must have shape {(E, A) + tuple(shape)} (copies, agents, ...), "
                             f"got {a.shape}")
        if a.dtype.kind not in "fiu":
            raise ValueError(f"actions must be a real-valued (float) array, got dtype {a.dtype}")
        if ((a >= low) & (a <= high)).all():
            return a
        rows = a.reshape(E, A, -1).astype(np.float64)
        bad = ~np.isfinite(rows).all(axis=2)
        what = "is not finite (NaN or inf)"
        if not bad.any():
            bad = ((rows < low) | (rows > high)).any(axis=2)
            what = f"must be in [{low}, {high}]"
        c, i = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"action for copy {c}, agent {self.possible_agents[i]!r} {what}, "
                         f"got {rows[c, i].tolist()}")

    def _check_open(self):
        if self._closed:
            raise RuntimeError("this vector env was closed; create a new one")

    def _check_steppable(self):
        self._check_open()
        if self._broken is not None:
            raise RuntimeError(f"{self._broken} was interrupted (KeyboardInterrupt or an error inside "
                               "the engine), so the copies' state is incomplete; call reset()")
        if self._engine is None:
            raise RuntimeError("call reset() first")


def _runs(idx):
    """Sorted indices -> [(lo, hi)) runs of consecutive values."""
    if len(idx) == 0:
        return []
    cut = np.flatnonzero(np.diff(idx) != 1) + 1
    return list(zip(idx[np.r_[0, cut]].tolist(), (idx[np.r_[cut - 1, len(idx) - 1]] + 1).tolist()))


def vector_run(env_id, num_envs, num_threads, seed, params):
    """A :class:`seer_runtime.Run` of a vector env (STPA's preflight and the
    benchmarks): each unit is one step of every copy with zero actions."""
    from seer_runtime import Run
    venv = SeerVectorEnv(env_id, num_envs, num_threads=num_threads, **params)
    venv.reset(seed=seed)
    shape = (num_envs, venv.num_agents) + tuple(venv.single_action_space.shape or ())
    acts = np.zeros(shape, venv.single_action_space.dtype)

    def step():
        venv.step(acts)
    return Run(step, lambda: venv.engine, venv.engine.num_lps, num_envs * venv.num_agents, owner=venv)


def agent_vector_env(env_id, num_envs, num_threads="auto", autoreset_mode="same_step", **params):
    """A Gymnasium ``VectorEnv`` over every (copy, agent) pair of
    ``num_envs`` copies of ``env_id`` (see :class:`SeerAgentVectorEnv`)."""
    return SeerAgentVectorEnv(SeerVectorEnv(env_id, num_envs, num_threads=num_threads,
                                            autoreset_mode=autoreset_mode, **params))


try:
    import gymnasium as _gym
    from gymnasium.vector import AutoresetMode as _AutoresetMode
    from gymnasium.vector.utils import batch_space as _batch_space
    _VectorEnvBase = _gym.vector.VectorEnv
except ImportError:       # pragma: no cover - gymnasium is a dependency of pettingzoo
    _VectorEnvBase = object
    _AutoresetMode = None


class SeerAgentVectorEnv(_VectorEnvBase):
    """Gymnasium ``VectorEnv`` for one policy shared by every agent: each
    (copy, agent) pair is one sub-env, so ``num_envs = copies x agents``,
    observations are ``(num_envs, obs_dim)`` (copy-major: copy ``c``'s agent
    ``i`` is row ``c * agents + i``) and actions ``(num_envs,)`` (or
    ``(num_envs,) + shape`` for a Box).

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

    Autoreset mode ``SAME_STEP`` (``metadata["autoreset_mode"]``): when a
    copy's episode ends, every row of that copy gets the new episode's first
    observation in the same step; ``infos["final_obs"]`` (``(num_envs,
    obs_dim)``, mask ``infos["_final_obs"]``) has the final ones and
    ``infos["episode"]`` ``{"r", "l"}`` (mask ``"_episode"``) each row's
    return and its episode's length (the copy's).  ``NEXT_STEP``: the ending
    step returns the final observations (and ``"episode"``); the next step
    returns the copy's first observations, reward 0 and no flags, ignoring
    the copy's actions.  A bad action names its copy and agent.

    ``vec`` is the underlying :class:`SeerVectorEnv` (engine, model,
    statistics).
    """

    def __init__(self, vec):
        self.vec = vec
        self.copies, self.agents_per_copy = vec.num_envs, vec.num_agents
        self.num_envs = vec.num_envs * vec.num_agents
        self.single_observation_space = vec.single_observation_space
        self.single_action_space = vec.single_action_space
        self.observation_space = _batch_space(self.single_observation_space, self.num_envs)
        self.action_space = _batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": _AutoresetMode.SAME_STEP if vec._same_step
                         else _AutoresetMode.NEXT_STEP}
        self.render_mode = None
        self.closed = False
        # (copies, agents): agents that stopped in their copy's running episode
        self._stopped = np.zeros((vec.num_envs, vec.num_agents), bool)

    def reset(self, *, seed=None, options=None):
        """``seed`` (an int) seeds copy ``c`` with ``seed + c``; returns ``(obs, {})``."""
        if isinstance(seed, (list, tuple)):
            raise ValueError("seed must be an int or None (copy c gets seed + c), not a list")
        obs, _ = self.vec.reset(seed=seed, options=options)
        self._stopped[:] = False
        return obs.reshape(self.num_envs, -1), {}

    def step(self, actions):
        a = np.asarray(actions)
        a = a.reshape((self.copies, self.agents_per_copy) + a.shape[1:]) if a.ndim >= 1 \
            and a.shape[0] == self.num_envs else a
        obs, rew, term, trunc, info = self.vec.step(a)
        N, A = self.num_envs, self.agents_per_copy
        infos = {}
        # Rows end with their copy (class docstring): an agent that stopped
        # earlier shows no flags, and reward 0, until then.
        stopped = self._stopped
        rew[stopped] = 0.0
        if info:
            ended = info["_episode"][:, None]
            self._stopped = (term | trunc) & ~ended
            term &= ended
            trunc &= ended
            rep = np.repeat(info["_episode"], A)
            infos = {"episode": {"r": info["episode"]["r"].reshape(N),
                                 "l": np.repeat(info["episode"]["l"].max(axis=1), A)},
                     "_episode": rep}
            if "final_obs" in info:
                infos["final_obs"] = info["final_obs"].reshape(N, -1)
                infos["_final_obs"] = rep.copy()
        else:
            self._stopped = term | trunc
            term = np.zeros_like(term)
            trunc = np.zeros_like(trunc)
        return obs.reshape(N, -1), rew.reshape(N), term.reshape(N), trunc.reshape(N), infos

    def close_extras(self, **kwargs):
        self.vec.close()


def rllib_env_creator(env_id, autoreset_mode="next_step"):
    """An RLlib env creator for one policy shared by every agent of
    ``env_id``: register it (``ray.tune.registry.register_env(name,
    rllib_env_creator("pcs_v0"))``) and use it with RLlib's single-agent env
    runner in ``gym_env_vectorize_mode="vector_entry_point"``; RLlib then
    asks for ``num_envs_per_env_runner`` sub-envs, which must be a multiple
    of the agents per copy (copies = sub-envs / agents).  ``env_config`` holds
    the env's parameters and optionally ``num_threads`` and ``seed`` (read by
    nothing here: RLlib seeds through ``reset(seed=...)``).

    Autoreset: ``NEXT_STEP``, the only mode RLlib 2.60 consumes: its
    ``SingleAgentEnvRunner`` takes the step after a sub-env's done flag as
    that sub-env's reset (``add_env_reset``), and its own vector envs
    implement no other mode (``SAME_STEP`` would end each episode on the new
    episode's first observation).  Every row ends and restarts with its
    copy (:class:`SeerAgentVectorEnv`), so each recorded episode is a whole
    copy episode of one agent."""
    def creator(ctx):
        cfg = dict(ctx)
        num = int(cfg.pop("num_envs", 1))
        cfg.pop("seed", None)
        threads = cfg.pop("num_threads", "auto")
        probe = SeerVectorEnv(env_id, 1, num_threads=1, **cfg)
        agents = probe.num_agents
        if num % agents:
            raise ValueError(f"num_envs_per_env_runner must be a multiple of the {agents} agents "
                             f"per copy of {env_id}, got {num}")
        return agent_vector_env(env_id, num // agents, num_threads=threads,
                                autoreset_mode=autoreset_mode, **cfg)
    return creator
