# SPDX-License-Identifier: BSD-3-Clause
"""How the episode core lays its copies out (:class:`Layout`, mixed into
:class:`seer_envs.episode.core.EpisodeCore`): one engine for every copy, run in
copy groups or round by round, or groups of copies with an engine each
(docs/runtime.md, "Copies in groups"); with ``num_threads="auto"`` the
layout waits for STPA's choice at the first start."""

import numpy as np

from seer_envs.layout.batch import Batch
from seer_envs.layout.groups import Groups, group_bounds


class Layout:
    """The layout part of the core: needs ``num_copies``, ``batch_size``,
    ``copy_parallel``, ``spec``, ``config``, ``params``, ``env_id`` and
    ``batch``."""

    def _lay_out(self, choice, rows, rng_states=None, team=None):
        """One engine for every copy (its threads run each step in copy
        groups, or round by round: :meth:`_copy_groups`), or groups of
        copies with an engine each: one group per batch of ``batch_size``, or
        with ``copy_parallel="engines"`` about four groups per thread
        (docs/runtime.md, "Copies in groups")."""
        threads, info = choice
        E, copies_cls = self.num_copies, self.spec.copies
        if self.copy_parallel == "engines":
            bounds = group_bounds(E, self.batch_size, threads)
            b = Groups(copies_cls, self.config, bounds, rows, threads, 1)
        elif self.batch_size < E:
            bounds = group_bounds(E, self.batch_size, 1)
            b = Groups(copies_cls, self.config, bounds, rows, 1, threads,
                       self._copy_groups(self.batch_size, threads))
        elif team is not None:                # "auto": the batch it has, with its tuner
            team.copy_groups = self._copy_groups(E, threads)
            return team
        else:
            return Batch(copies_cls, self.config, E, rows, threads, lambda: None,
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
        """With ``"auto"``: lay the copies out once STPA has chosen (at the
        first start).  Laid out in one change (the provisional team's flag
        cleared, or the new layout stored), so a Ctrl-C leaves the core
        either still provisional or laid out."""
        team = self.batch
        if not team.provisional:
            return
        choice = (team.choose_threads(), team.thread_choice)
        b = self._lay_out(choice, team.param_base, team.rng_states(), team)
        if b is team:
            team.provisional = False
            return
        b.set_pending(range(self.num_copies), team.param_pending)     # the team's worlds go with it
        b.set_sampler(team.worlds.sampler)
        self.batch = b
        team.close()

    def _stpa_chooser(self):
        env_id, E = self.env_id, self.num_copies
        if E == 1:                   # one chooser per env: its STPA key is built once
            if getattr(self, "_single_choose", None) is None:
                from seer_envs import stpa_chooser
                self._single_choose = stpa_chooser(self.spec, self.config)
            return self._single_choose

        def choose():
            import stpa      # ImportError -> the hard caps
            per_copy = {f: v.tolist() for f, v in self.param_values.items()}
            kw = dict(self.params, **per_copy)
            key = [env_id, "vector", E, self.params, per_copy]
            return stpa.choose(key, lambda t, s: core_run(type(self), env_id, E, t, s, kw))
        return choose


def core_run(cls, env_id, num_copies, num_threads, seed, params):
    """A :class:`seer_runtime.Run` of ``num_copies`` copies in one engine
    (``cls``: the episode core; STPA's preflight): each unit is one step of
    every copy with zero actions.  The core itself, not a view: the layout
    layer imports no view."""
    from seer_runtime import Run
    # one engine (not groups of engines): STPA's preflight reads its statistics
    core = cls(env_id, num_copies, num_threads=num_threads, **params)
    core.reset(seed)
    shape = (num_copies, core.num_agents) + tuple(core.action_space.shape or ())
    acts = core.check_actions(np.zeros(shape, core.action_space.dtype))

    def step():
        core.step(acts)
    return Run(step, lambda: core.batch.engine, core.batch.engine.num_lps, num_copies * core.num_agents,
               owner=core)
