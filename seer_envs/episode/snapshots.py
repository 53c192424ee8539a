# SPDX-License-Identifier: BSD-3-Clause
"""Snapshots and pickling of the episode core (:class:`Snapshots`, mixed
into :class:`seer_envs.episode.core.EpisodeCore`): whole (engine-wide) and per-copy
snapshots, restores into any slots and layout, and the state a pickle of a
view holds.  The snapshot data itself (capture, checks, the bytes format)
is :mod:`seer_envs.snapshot.whole`'s."""

import json

import numpy as np
from gymnasium.vector import AutoresetMode


class Snapshots:
    """The snapshot part of the core: needs the core's ``batch``, episode
    flags (``waiting``, ``ended``, ``last_obs``) and checks."""

    # --- snapshots -------------------------------------------------------------------

    def snapshot_params(self):
        return json.loads(self._params_json)

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
        return self.batch.locate(c)

    def snapshot(self, copies=None):
        """Every copy's state (engine-wide, one engine), or copies ``copies``
        (a snapshot of single copies, restorable into any slots and layout)."""
        from seer_envs.snapshot.whole import capture
        from seer_envs.snapshot.copies import capture_copies, capture_copy
        self.check_steppable()
        b = self.batch
        if copies is None and b.whole_snapshots:
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

    def restore(self, snapshot, copies=None, hold=False):
        """Continue from ``snapshot`` (a :class:`~seer_envs.Snapshot` or its
        bytes): an engine-wide one restores every copy; one of single copies
        (or a single env's) restores into the slots ``copies`` (default
        ``0 ..``).  ValueError naming what differs; the core is then left as
        it was.  Copies that ended are set up for this core's autoreset mode,
        whatever the source's was.  ``hold``: the interrupt mark stays until
        the view's ``done()`` (as :meth:`~seer_envs.episode.core.EpisodeCore.reset`)."""
        from seer_envs.snapshot.whole import Snapshot, copies_text
        self.check_open()
        if isinstance(snapshot, (bytes, bytearray, memoryview)):
            snapshot = Snapshot.from_bytes(snapshot)
        if not isinstance(snapshot, Snapshot):
            raise TypeError(f"restore() takes a Snapshot (Snapshot.from_bytes(b) for bytes), "
                            f"got {type(snapshot).__name__}")
        # The kinds are the views' (``self.kind``), whatever the number of
        # copies: a single env's snapshot ("env") is one copy's state, and
        # restores as a snapshot of one copy into a vector env of any size;
        # a vector env's ("vector") restores whole into a vector env of as
        # many copies, and, of one copy, into a single env as one copy.
        single_vector = snapshot.kind == "vector" and self.kind == "env" and snapshot.num_copies == 1
        if snapshot.kind == self.kind:
            if copies is not None:
                raise ValueError("an engine-wide snapshot restores every copy at once; take "
                                 "snapshot(copies=...) for single copies")
            return self._restore_whole(snapshot, hold)     # (check() names another number of copies)
        if snapshot.kind not in ("copies", "env") and not single_vector:
            if snapshot.kind == "vector":
                raise ValueError(f"a snapshot of {copies_text(snapshot.num_copies)} cannot be restored into a "
                                 "single env (take snapshot(copies=[c]) of one copy)")
            raise ValueError(f"a snapshot of a {snapshot.kind!r} cannot be restored here")
        n = 1 if snapshot.kind == "env" else snapshot.num_copies
        if copies is None:
            if n != self.num_copies:
                if self.kind == "env":
                    raise ValueError(f"a snapshot of {copies_text(n)} cannot be restored into a single env "
                                     "(take snapshot(copies=[c]) of one copy)")
                raise ValueError(f"a snapshot of {copies_text(n)} cannot fill the {self.num_copies} copies of "
                                 "this env: pass copies=[...], the slots to restore them into")
            slots = list(range(n))
        else:
            slots = self.copy_ids(copies)
            if len(slots) != n:
                raise ValueError(f"copies names {len(slots)} slots for a snapshot of {copies_text(n)}")
        return self._restore_copies(snapshot, n, slots, hold)

    def _restore_copies(self, snapshot, n, slots, hold=False):
        from seer_envs.snapshot.whole import check_array, generators
        from seer_envs.snapshot.copies import check_params, copy_states, prepare_copy, restore_copies
        self.ensure_layout()
        b = self.batch
        with b.using():
            check_params(snapshot, self.env_id, self.snapshot_params(), self.per_copy_fields)
            gens = generators(snapshot, n)
            running = self.started and self.broken is None and all(e is not None for e in self.engines)
            where = [self.locate(d) for d in slots]
            states = copy_states(snapshot, b.copies)
            prepared = [prepare_copy(st, gb, local, f"copy {i} (into slot {d})")
                        for i, (st, (gb, local), d) in enumerate(zip(states, where, slots))]
            last = []
            for i, (st, d) in enumerate(zip(states, slots)):
                name = "env/last_obs" if "env/last_obs" in st else "copies/obs"     # (a single env's: its obs)
                try:
                    last.append(check_array(st, name, np.float32, self._obs_shape))
                except ValueError as e:
                    raise ValueError(f"copy {i} (into slot {d}): {e}") from None
            self.broken = "a restore"       # checked: from here the mark stays until the last change
            if not running:       # never reset (or interrupted): the others start as reset() does
                self.start_fresh()
            by_batch = {}
            for p, (gb, local), g in zip(prepared, where, gens):
                entry = by_batch.setdefault(id(gb), (gb, [], [], []))
                entry[1].append(p)
                entry[2].append(local)
                entry[3].append(g)
            try:
                for gb, ps, locs, gs in by_batch.values():
                    restore_copies(gb, ps, locs, gs)
            except ValueError:
                # An engine refuses before changing anything: with one engine
                # the core is as before (or freshly started, above).
                if len(by_batch) == 1:
                    self.broken = None
                raise
            full = self.last_obs.copy()
            idx = np.asarray(slots)
            full[idx] = np.stack(last)
            self.last_obs = full
            self._settle_ended(idx)
            if not hold:
                self.broken = None
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

    def _restore_whole(self, snapshot, hold=False):
        """An engine-wide snapshot into a one-engine layout of the same copies."""
        from seer_envs.snapshot.whole import check, check_array, restore
        self.ensure_layout()
        b = self.batch
        if not b.whole_snapshots:
            raise ValueError("an engine-wide snapshot (one engine: the team or copy groups) cannot be "
                             "restored into groups of engines: take snapshot(copies=range(num_envs)) "
                             "instead, which restores into every layout")
        with b.using():
            gens = check(snapshot, b, self.env_id, self.snapshot_params(), self.kind)
            last = None
            if self.kind == "vector":
                E = self.num_copies
                for k, dtype, shape in (("waiting", bool, (E,)), ("ended", bool, (E,))):
                    check_array(snapshot.arrays, f"env/{k}", dtype, shape)
                last = check_array(snapshot.arrays, "env/last_obs", np.float32,
                                   (E,) + self._obs_shape).copy()
            intact = self.broken is None
            self.broken = "a restore"       # checked: from here the mark stays until the last change
            if not self.started or b.engine is None or not intact:
                b.start()                       # (check() has checked every event)
            try:
                restore(snapshot, b, gens)
            except ValueError:      # the engine refuses before changing anything
                if intact:
                    self.broken = None
                raise
            self.started = True
            self.last_obs = last if last is not None else b.view(b.copies.obs).copy()
            self._settle_ended(np.arange(self.num_copies))
            if not hold:
                self.broken = None
        return None

    # --- pickling --------------------------------------------------------------------

    def reduce_state(self, what):
        """What a pickle of a view holds of the core (``what``: the view's
        name for errors)."""
        b = self.batch
        if self.closed:
            return ("closed",)
        if self.broken is not None:
            raise TypeError(f"cannot copy or pickle {what}: {self.interrupted} was interrupted; "
                            "call reset() first")
        worlds = (b.param_base.copy(), b.param_values.copy(), b.param_pending.copy())
        if not self.started:
            return ("new", b.rng_states(), worlds)
        if (not b.cycle.any() and not self.waiting.any() and not self.ended.any()
                and np.isnan(worlds[2]).all()):
            return ("reset", b.rng_states(), b.seeds_used.copy(), worlds)
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
            self.batch._set_worlds(*state[-1])
            if state[0] == "reset":
                self.start([int(s) for s in state[2]])
