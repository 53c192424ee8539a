# SPDX-License-Identifier: BSD-3-Clause
"""Glue shared by SEER's PettingZoo ParallelEnvs: agent bookkeeping, cached
spaces, seeding, thread-count resolution and action validation."""

import dataclasses
import numbers
import warnings

import numpy as np
from pettingzoo import ParallelEnv

from seer_runtime import effective_n_threads, openmp_enabled


def resolve_num_threads(num_threads, workload=None, params=None):
    """``"auto"`` or an int >= 1 -> (count, explanation dict).

    ``"auto"`` asks STPA (preflight + model, cached per configuration and
    hardware) when ``workload`` is given; otherwise, and when STPA fails, it
    is the affinity mask capped by OMP_NUM_THREADS.
    """
    if num_threads == "auto":
        if workload is not None and openmp_enabled():
            try:
                import stpa
            except ImportError as e:
                warnings.warn(f"STPA unavailable ({e}); num_threads='auto' uses all allowed CPUs",
                              RuntimeWarning, stacklevel=3)
            else:
                return stpa.choose(workload, params or {})
        n = effective_n_threads("auto")
        return n, {"chosen": n, "method": "affinity mask capped by OMP_NUM_THREADS"}
    n = effective_n_threads(num_threads)
    return n, {"chosen": n, "method": "user"}


# num_threads="auto" runs under seer_runtime.tuner.ThreadTuner after every
# step (closed loop, contention step-down, upward probes); its thresholds
# live there.  Kept here for callers that read them.
from seer_runtime import tuner as _tuner  # noqa: E402

ADAPT_IDLE_SHARE = _tuner.IDLE_SHARE
ADAPT_WINDOW = _tuner.CONTENTION_WINDOW


class SeerParallelEnv(ParallelEnv):
    """Base of SEER envs: subclasses set ``possible_agents`` and the spaces,
    and implement ``_reset_arrays`` / ``_step_arrays``."""

    metadata = {"render_modes": ["human", "rgb_array"], "is_parallelizable": True}

    def _init_common(self, render_mode, num_threads):
        if render_mode not in (None, "human", "rgb_array"):
            raise ValueError(f'render_mode must be None, "human" or "rgb_array", got {render_mode!r}')
        self.render_mode = render_mode
        if num_threads != "auto":
            effective_n_threads(num_threads)      # validate now, not at the first reset
        self._num_threads_setting = num_threads
        self.num_threads = None                   # chosen at reset()
        self.thread_choice = None
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self._set_agents([])
        self._seed_rng = np.random.default_rng()
        self._closed = False

    def _choose_threads(self, workload, params):
        """Resolve ``num_threads`` for this configuration (STPA when "auto";
        cached, so a later reset costs nothing)."""
        self.num_threads, self.thread_choice = resolve_num_threads(
            self._num_threads_setting, workload, params)
        return self.num_threads

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def _episode_seed(self, seed):
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
                raise ValueError(f"seed must be an int >= 0 or None, got {seed!r}")
            self._seed_rng = np.random.default_rng(int(seed))
        return int(self._seed_rng.integers(0, 2**63))

    @staticmethod
    def _check_options(options):
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"reset options must be a dict or None, got {type(options).__name__}")

    def _check_open(self):
        if self._closed:
            raise RuntimeError("this env was closed; create a new one")

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

    @staticmethod
    def _check_box_array(actions, n_agents, shape, low, high, names):
        """Validate an array of Box actions, one row per agent in ``names``
        order (real dtype, finite, within ``[low, high]``); returns it as an
        array (not copied when already one)."""
        a = np.asarray(actions)
        if a.shape != (n_agents,) + tuple(shape):
            raise ValueError(f"actions must have shape {(n_agents,) + tuple(shape)}, got {a.shape}")
        if a.dtype.kind not in "fiu":
            raise ValueError(f"actions must be a real-valued (float) array, got dtype {a.dtype}")
        # One pass in the common case: NaN fails both comparisons.
        if ((a >= low) & (a <= high)).all():
            return a
        rows = a.reshape(n_agents, -1).astype(np.float64)
        bad = np.flatnonzero(~np.isfinite(rows).all(axis=1))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"action for agent {names[i]!r} is not finite (NaN or inf): {rows[i].tolist()}")
        i = int(np.flatnonzero(((rows < low) | (rows > high)).any(axis=1))[0])
        raise ValueError(f"action for agent {names[i]!r} must be in [{low}, {high}], got {rows[i].tolist()}")

    def _set_agents(self, agents):
        self.agents = agents
        self._live = set(agents)

    @staticmethod
    def _check_discrete_array(actions, n_agents, n_actions, names):
        a = np.asarray(actions)
        if a.shape != (n_agents,):
            raise ValueError(f"actions must have shape ({n_agents},), got {a.shape}")
        if a.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array, got dtype {a.dtype}")
        bad = np.flatnonzero((a < 0) | (a >= n_actions))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"action for agent {names[i]!r} must be in [0, {n_actions - 1}], got {a[i]}")
        return a

    # --- lifecycle shared by the envs ------------------------------------------

    _model = None
    _engine = None

    def _new_episode(self, seed, options, workload, model_cls):
        """Seed, choose threads, build the model and engine, run on_init;
        subclasses then compute the first boundary."""
        from seer_runtime import Engine
        self._check_open()
        self._check_options(options)
        self.seed_used = self._episode_seed(seed)
        self._choose_threads(workload, dataclasses.asdict(self.config))
        self._model = model_cls(self.config)
        self._engine = Engine(self._model, num_threads=self.num_threads, seed=self.seed_used)
        self._engine.init(0.0)
        self._cycle = 0
        self._set_agents(self.possible_agents[:])
        self._tuner = _tuner.tuner_for(self._engine, self._num_threads_setting, self.thread_choice,
                                       thread_times=lambda: self._thread_times())
        self._after_step(started=True)            # its first trial may be a smaller team

    def _thread_times(self):
        return self._engine.thread_times()

    def _after_step(self, started=False):
        """With ``num_threads="auto"``, let the tuner adjust the team between
        steps (seer_runtime.tuner): the closed loop over the first steps, a
        step down when other processes take the cores, upward probes when
        they leave.  Safe at any step: results do not depend on the thread
        count.  ``num_threads`` (also used by the boundary kernels) follows
        the engine; ``thread_choice`` reports every switch, and STPA's
        choice comes back at the next reset().  ``started``: the episode
        has just been set up (no step ran)."""
        if self._tuner is not None and (started or self._tuner.after_unit()):
            self.num_threads = self._engine.num_threads
            self.thread_choice = dict(self.thread_choice, **self._tuner.report())

    def render(self):
        """``"rgb_array"``: an H x W x 3 uint8 image; ``"human"``: a text map
        printed to stdout (returns None); None: nothing."""
        if self.render_mode is None:
            return None
        self._check_started()
        if self.render_mode == "rgb_array":
            return self._image()
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
        if self._model is None:
            raise RuntimeError("call reset() first")

    def close(self):
        self._model = None
        self._engine = None
        self._closed = True
