# SPDX-License-Identifier: BSD-3-Clause
"""The copies interface: what one scenario declares, once, for every env
kind (:class:`Copies`).  This is public API, the contract a scenario author
fills in (docs/new_scenario.md): subclass :class:`Copies` in the scenario's
own ``copies.py``.

A scenario's ``Copies`` subclass (in its own folder, named on its
``ScenarioSpec`` as ``copies``) holds ``num_copies`` independent copies of
the scenario in one model and says, for a range of copies at a time, how
actions are written, how copies restart, and what the step boundary
returns.  The single env is one copy and the vector env many
(:mod:`seer_envs.layout.batch` drives both); the CLI's action checks, RLlib and
STPA read the same declarations.  No layer above names a scenario.
"""

import types

import numpy as np


def action_spec(space):
    """What the env layers validate actions against:
    ``("discrete", n, start)`` of a ``Discrete`` space (the actions
    ``start .. start + n - 1``) or ``("box", shape, low, high)`` of a
    ``Box``, with ``low`` and ``high`` read-only arrays of ``shape`` (one
    bound per element), or 0-d arrays where every element has the same
    bounds (a comparison then runs as fast as with a scalar); in the
    space's dtype when it is a float type, so that a float32 action is
    compared exactly."""
    if hasattr(space, "n"):
        return ("discrete", int(space.n), int(getattr(space, "start", 0)))
    shape = tuple(space.shape)
    dtype = space.dtype if np.dtype(space.dtype).kind == "f" else np.float64
    low, high = (np.array(np.broadcast_to(b, shape), dtype) for b in (space.low, space.high))
    if low.size and (low == low.flat[0]).all() and (high == high.flat[0]).all():
        low, high = np.array(low.flat[0]), np.array(high.flat[0])
    low.flags.writeable = high.flags.writeable = False
    return ("box", shape, low, high)


class Copies:
    """``num_copies`` copies of one scenario in one model.

    **Class-level declarations** (read without building a model):

    - ``agent_names(config)`` -> the agents of one copy, in row order;
    - ``spaces(config)`` -> ``(observation_space, action_space)`` of one agent;
    - ``state_space(config)`` -> the global state's space (or None);
    - ``action_kind``: the event kind of an injected action.

    **Layout.**  ``blocks(config)`` lists the copy's LP blocks in engine
    order as ``(lps per copy, first entity)`` pairs: block ``b`` of every
    copy sits in one region of the engine, copy ``c``'s at ``c * lps``
    within it, and its LPs draw from the entity streams ``first ..``.  The
    agents are the first ``len(agents)`` LPs of block 0 of each copy.  From
    this the engine-side ranges (stream keys, restarts, freezing) follow
    with no scenario code.

    **Per range of copies** (the scenario implements):

    - ``write_actions(a, done)``: ``a`` is every copy's validated actions,
      ``(num_copies * agents, ...)``; ``done`` marks agents that stopped in
      a running episode (their rows are to be ignored);
    - ``restart(c0, c1)``: restore copies ``[c0, c1)`` to their state at
      construction (the engine then restarts their LPs);
    - ``boundary(c0, c1, times, num_threads)``: write every row of copies
      ``[c0, c1)`` of ``self.obs``, ``self.rew`` and ``self.term`` at each
      copy's step-end time ``times[c]``;
    - ``agent_infos(c, rows, now)``, ``summary(c, engine, steps)``,
      ``state(c)``: details of copy ``c`` (``now``: its simulated time);
      ``states(c0, c1)`` stacks ``state`` (override it where one array
      operation does);
    - ``image(view)`` (a static method): the ``rgb_array`` frame of ``view``,
      which has ``config``, ``model`` (one copy's arrays: a single env's
      model, or :meth:`copy_model`), ``_cycle`` and ``max_cycles``;
    - ``print_map(env)`` (a static method): the ``human`` frame, text
      printed to stdout for the single env ``env``.

    ``image`` and ``print_map`` are optional: a render mode the scenario
    does not declare is refused when an env is built
    (:func:`seer_envs.scenario.render.render_modes`).

    ``obs`` / ``rew`` / ``term`` are replaced by fresh arrays before each
    boundary (:meth:`fresh_outputs`), so what a step hands out stays the
    caller's without a copy.

    **One copy's state** (snapshots of single copies, :mod:`seer_envs.snapshot.whole`):
    copy ``c``'s rows of each model array are given by :meth:`array_layout`
    (default: one LP block, every array split evenly by copy); the
    scenario declares which of its own per-agent arrays are state
    (``agent_arrays``), which model arrays hold entity indices that move
    with the copy (``index_arrays``) and which event payload words hold LP
    ids (``payload_lps``).  Events' sources and targets are moved by the
    generic code.
    """

    action_kind = None
    model_cls = None
    #: Optional: where each part of an agent's observation lives (name ->
    #: slice or index), as the env's ``obs_layout`` (heuristics, docs).
    obs_layout = None
    #: Config fields that may take one value per copy (docs/training.md,
    #: "Per-copy worlds"): those that change neither array shapes, spaces,
    #: the LP blocks, ``dt`` nor the engine's lookahead.  ``max_cycles``
    #: always may.  The model reads them per copy (:meth:`configure`).
    per_copy = ()
    #: Those of ``per_copy`` that count entities (agents, targets): the batch
    #: is built for the largest value of each, and a copy with fewer has
    #: rows that are never in play (:meth:`agent_count`).
    per_copy_counts = ()
    #: This object's own per-agent arrays (rows ``c * agents ..``) that are
    #: state, besides ``obs``, ``rew`` and ``_term``.
    agent_arrays = ()
    #: Model arrays whose values are entity indices within an LP block's
    #: region (copy ``c``'s entity ``j`` of block ``b`` is ``c * n_b + j``):
    #: name -> ``b``.  A copy restored into another slot has them shifted.
    index_arrays = {}
    #: Event kinds whose payload words ``data.i[w]`` hold engine LP ids:
    #: kind -> tuple of ``w``; moved like an event's source and target.
    payload_lps = {}

    def __init__(self, config, num_copies=1):
        self.config = config
        self.num_copies = C = int(num_copies)
        self.model = self.new_model(config, C)
        self.possible_agents = list(self.agent_names(config))
        self.num_agents = A = len(self.possible_agents)
        self.observation_space, self.action_space = self.spaces(config)
        self.action_spec = action_spec(self.action_space)
        blocks = list(self.blocks(config))
        self._blocks = []               # (region base, lps per copy, first entity)
        base = 0
        for n, first in blocks:
            self._blocks.append((base, n, first))
            base += n * C
        self.num_lps = base
        self.lps_per_copy = blocks[0][0]
        obs_shape = self.observation_space.shape
        self.obs = np.zeros((C * A,) + tuple(obs_shape), np.float32)
        self.rew = np.zeros(C * A, np.float32)
        self._term = np.zeros(C * A, np.uint8)
        #: Each copy's config (:meth:`configure`): ``config`` with the copy's
        #: values of the ``per_copy`` fields.
        self.configs = [config] * C

    # --- declarations (scenario) ----------------------------------------------

    @classmethod
    def agent_names(cls, config):
        """The agents of one copy under ``config``, in row order (the
        scenario implements it)."""
        raise NotImplementedError

    @classmethod
    def spaces(cls, config):
        """``(observation_space, action_space)`` of one agent under
        ``config`` (the scenario implements it)."""
        raise NotImplementedError

    @classmethod
    def state_space(cls, config):
        """The global state's space, or None (the default) where the
        scenario has no global state."""
        return None

    @classmethod
    def blocks(cls, config):
        """The copy's LP blocks as ``(lps per copy, first entity)`` pairs;
        the default is one block of the agents."""
        return [(len(cls.agent_names(config)), 0)]

    def new_model(self, config, num_copies):
        """The model of ``num_copies`` copies; the default builds
        ``model_cls(config, num_copies)``."""
        return self.model_cls(config, num_copies)

    def array_layout(self, name, shape, num_copies):
        """Copy ``c``'s rows of the model array ``name`` (of ``shape``, in a
        model of ``num_copies`` copies) along axis 0: a list of ``(base,
        per_copy)`` segments, the rows ``[base + c * per_copy, base + (c + 1)
        * per_copy)`` of each, in this order.  The default serves a scenario
        of one LP block whose arrays are copy-major and split evenly; a
        scenario with several blocks declares its arrays."""
        if len(self._blocks) != 1 or not shape or shape[0] % num_copies:
            raise NotImplementedError(
                f"{type(self).__name__} must declare the per-copy rows of its model array "
                f"{name!r} (shape {shape}) in array_layout() for snapshots of single copies")
        return [(0, shape[0] // num_copies)]

    def configure(self, c, config):
        """Copy ``c``'s world from its next restart on: ``config`` is a
        validated config whose fields outside ``per_copy`` (and
        ``max_cycles``) equal :attr:`config`'s.  The batch calls it before
        it restarts a copy whose config changed.  The default keeps it in
        :attr:`configs` and hands it to ``model.configure(c, config)`` when
        the scenario has per-copy fields."""
        self.configs[c] = config
        if self.per_copy:
            self.model.configure(c, config)

    def agent_count(self, config):
        """How many of the batch's agent rows copy ``config`` has: all
        (:attr:`num_agents`) unless the scenario's agent count is a per-copy
        field, when a copy may have fewer (its first rows; the others are
        never in play)."""
        return self.num_agents

    # --- outputs -------------------------------------------------------------

    @property
    def term(self):
        """Stopped agents at the last boundary (bool view of a uint8 array,
        which the Cython boundaries write)."""
        return self._term.view(bool)

    def use_outputs(self, obs, rew, term):
        """Write the next boundaries into these arrays (rows of a larger
        batch's outputs: ``obs`` float32, ``rew`` float32, ``term`` uint8)."""
        self.obs, self.rew, self._term = obs, rew, term

    def fresh_outputs(self):
        """New output arrays for the next boundaries, which write every row
        of their range: the arrays handed out before stay the caller's."""
        self.obs = np.empty_like(self.obs)
        self.rew = np.empty_like(self.rew)
        self._term = np.empty_like(self._term)

    # --- layout (generic) ----------------------------------------------------

    def key_blocks(self, members):
        """``(starts, lps per copy, first entities)`` of each LP block of
        copies ``members``: LP ``starts[i] + j`` draws as entity
        ``firsts[i] + j`` of a single env (``Engine.set_stream_keys_at``)."""
        m = np.asarray(members, np.int64)
        return [(b + m * n, n, np.full(len(m), first, np.int64)) for b, n, first in self._blocks]

    def copy_blocks(self, c):
        """``(lo, hi, first entity)`` of each LP block of copy ``c``."""
        return [(int(s[0]), int(s[0]) + n, int(f[0])) for s, n, f in self.key_blocks([c])]

    def engine_blocks(self):
        """``(base, lps per copy)`` of each LP block: the layout
        ``Engine.set_copy_groups`` takes."""
        return [(b, n) for b, n, _ in self._blocks]

    def range_blocks(self, c0, c1):
        """``(lo, hi)`` LP ranges holding copies ``[c0, c1)``."""
        return [(b + c0 * n, b + c1 * n) for b, n, _ in self._blocks]

    def freeze_blocks(self, members):
        """``(starts, counts)`` of the LP blocks of copies ``members``."""
        members = np.asarray(members, np.int64)
        if len(self._blocks) == 1:
            b, n, _ = self._blocks[0]
            return b + members * n, n
        starts = np.concatenate([b + members * n for b, n, _ in self._blocks])
        counts = np.concatenate([np.full(len(members), n, np.int64) for _, n, _ in self._blocks])
        return starts, counts

    def agent_starts(self, members):
        """First agent LP of each copy in ``members`` (a copy's agents are contiguous)."""
        b, n, _ = self._blocks[0]
        return b + np.asarray(members, np.int64) * n

    def agent_rows(self, c):
        """Slice of copy ``c``'s agents in the per-agent arrays."""
        A = self.num_agents
        return slice(c * A, (c + 1) * A)

    # --- per range (scenario) -----------------------------------------------

    def write_actions(self, a, done):
        """Write every copy's validated actions ``a`` (``(num_copies *
        agents, ...)``) into the model; rows where ``done`` is True belong
        to agents that stopped in a running episode and are to be ignored
        (the scenario implements it)."""
        raise NotImplementedError

    def restart(self, c0, c1):
        """Restore copies ``[c0, c1)`` to their state at construction; the
        engine then restarts their LPs (the scenario implements it)."""
        raise NotImplementedError

    def boundary(self, c0, c1, times, num_threads):
        """The step boundary of copies ``[c0, c1)``: write every row of
        their range of ``self.obs``, ``self.rew`` and ``self.term`` at each
        copy's step-end time ``times[c]``, with up to ``num_threads``
        threads and a result that does not depend on them (the scenario
        implements it)."""
        raise NotImplementedError

    def copy_end(self, times):
        """None, or the native part of :meth:`boundary` as a
        ``seer_runtime.scenario.CopyEnd`` over the current output arrays:
        an engine in copy groups then runs it for each copy inside the run,
        as the copy reaches the step's end, and the batch calls
        :meth:`finish_boundary` in place of :meth:`boundary`."""
        return None

    def finish_boundary(self, c0, c1):
        """What :meth:`boundary` does after its :meth:`copy_end` part
        (scenarios with a ``copy_end`` only)."""
        raise NotImplementedError

    def agent_infos(self, c, rows, now):
        """One dict of details per agent row in ``rows`` of copy ``c`` at
        its simulated time ``now`` (default: empty dicts)."""
        return [{} for _ in rows]

    def summary(self, c, engine, steps):
        """Copy ``c``'s totals since its reset (default: ``steps`` and the
        engine's ``events``)."""
        return {"steps": steps, "events": engine.stats()["events"]}

    def state(self, c):
        """Copy ``c``'s global state, a point of :meth:`state_space`."""
        raise NotImplementedError(f"{type(self).__name__} has no global state")

    def states(self, c0, c1):
        """The global states of copies ``[c0, c1)``, one row each (a
        scenario may override this with one array operation)."""
        return np.stack([self.state(c) for c in range(c0, c1)])

    @staticmethod
    def image(view):
        """The ``rgb_array`` frame (H x W x 3 uint8) of ``view`` (see the
        class docstring)."""
        raise NotImplementedError("this scenario has no rgb_array frames")

    @staticmethod
    def print_map(env):
        """The ``human`` frame of the single env ``env``: text printed to
        stdout (see the class docstring)."""
        raise NotImplementedError("this scenario has no human frames")

    def copy_model(self, c):
        """Copy ``c``'s model arrays, as :meth:`image` reads them (the
        model itself when there is one copy)."""
        raise NotImplementedError

    def frame(self, c, step, max_cycles):
        """Copy ``c``'s ``rgb_array`` frame at its step ``step``."""
        model = self.model if self.num_copies == 1 else self.copy_model(c)
        view = types.SimpleNamespace(config=self.configs[c], model=model, _cycle=step, max_cycles=max_cycles)
        return self.image(view)
