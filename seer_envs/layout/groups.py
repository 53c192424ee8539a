# SPDX-License-Identifier: BSD-3-Clause
"""Groups of copies, an engine each (:class:`Groups`): the layout of a
vector env with ``batch_size < num_envs`` or ``copy_parallel="engines"``
(docs/runtime.md, "Copies in groups"), with :class:`~seer_envs.layout.batch.Batch`'s
interface."""

import concurrent.futures
import functools

import numpy as np

from seer_envs.layout.batch import Batch
from seer_envs.layout.guard import _Guard


class Groups:
    """Copies split into groups of whole copies, each a :class:`Batch` with
    its own engine (``threads`` threads each).  A step of some copies steps
    only the groups that hold them (a group that is all in steps whole, with
    no copy frozen), and runs the groups concurrently on ``workers`` threads
    (the caller and ``workers - 1`` helpers), each taking the next group
    from a shared queue, with one join per step.

    Copies never meet, so nothing is synchronised across groups within a
    step.  Each copy's events run in its own serial order, so every output
    is the one a batch of that copy alone gives.  The interface is
    :class:`Batch`'s.
    """

    def __init__(self, copies_cls, config, bounds, rows, workers, threads=1,
                 copy_groups=False):
        self.bounds = list(bounds)
        self.num_copies = self.bounds[-1][1]
        self.groups = [Batch(copies_cls, config, hi - lo, None if rows is None else rows[lo:hi], threads,
                             None, copy_groups)
                       for lo, hi in self.bounds]
        self.copies = self.groups[0].copies
        self.num_agents = self.groups[0].num_agents
        self.config = config
        self.workers = int(workers)
        self.num_threads = self.workers * int(threads)
        self.thread_choice = None
        self.tuner = None
        self._pool = None
        self._helpers = ()              # helpers' futures of a run not joined yet
        self._guard = self._lock = _Guard()
        self._starts = np.array([lo for lo, _ in self.bounds])
        self.reported = False           # an agent ended at the last step

    def using(self):
        """:meth:`Batch.using`, once the helpers of an interrupted run have
        ended (:meth:`_join`): no helper changes a group under the call."""
        self._join()
        return self._guard

    check_free = Batch.check_free
    _busy = staticmethod(Batch._busy)

    # --- the layout protocol (Batch's) ------------------------------------------------

    #: Several engines: no engine-wide snapshot (a snapshot of every copy instead).
    whole_snapshots = False
    provisional = False
    layout = "groups"

    @property
    def engine(self):
        """None: every group has its own (:attr:`engines`)."""
        return None

    @property
    def engines(self):
        return [g.engine for g in self.groups]

    @property
    def model(self):
        """The groups' models, a list."""
        return [g.copies.model for g in self.groups]

    def locate(self, c):
        """``(group, copy within it)`` holding copy ``c``."""
        k = int(np.searchsorted(self._starts, c, side="right")) - 1
        return self.groups[k], c - self.bounds[k][0]

    def states(self):
        return np.concatenate([g.copies.states(0, g.num_copies) for g in self.groups])

    def after_fork_in_child(self):
        """A forked child has no pool of group workers (its threads stayed in the parent)."""
        self._pool = None

    # --- state, gathered from the groups --------------------------------------------

    def _cat(self, name):
        return np.concatenate([getattr(g, name) for g in self.groups])

    cycle = property(lambda self: self._cat("cycle"))
    seeds_used = property(lambda self: self._cat("seeds_used"))
    ep_return = property(lambda self: self._cat("ep_return"))
    ep_length = property(lambda self: self._cat("ep_length"))
    max_cycles = property(lambda self: self._cat("max_cycles"))
    done = property(lambda self: self._cat("done"))
    _any_done = property(lambda self: any(g._any_done for g in self.groups))

    param_base = property(lambda self: self._cat("param_base"))
    param_values = property(lambda self: self._cat("param_values"))
    param_pending = property(lambda self: self._cat("param_pending"))

    @property
    def worlds(self):
        """The first group's (fields, base config, sampler: the same in every group)."""
        return self.groups[0].worlds

    def set_pending(self, idx, rows):
        idx = np.asarray(idx)
        for g, (lo, hi) in zip(self.groups, self.bounds):
            sel = (idx >= lo) & (idx < hi)
            if sel.any():
                g.set_pending(idx[sel] - lo, np.asarray(rows)[sel])

    def _set_worlds(self, base, values, pending):
        for g, (lo, hi) in zip(self.groups, self.bounds):
            g._set_worlds(base[lo:hi], values[lo:hi], pending[lo:hi])

    def set_sampler(self, sampler):
        for g in self.groups:
            g.set_sampler(sampler)

    def set_max_cycles(self, values):
        values = np.broadcast_to(np.asarray(values, np.int64), (self.num_copies,))
        for g, (lo, hi) in zip(self.groups, self.bounds):
            g.set_max_cycles(values[lo:hi])

    def after_step(self, started=False):
        """No tuner: the groups' thread counts stay as laid out."""

    # --- seeds --------------------------------------------------------------------------

    def seed_copies(self, seeds):
        for g, (lo, hi) in zip(self.groups, self.bounds):
            g.seed_copies(seeds[lo:hi])

    def rng_states(self):
        return [st for g in self.groups for st in g.rng_states()]

    def set_rng_states(self, states):
        for g, (lo, hi) in zip(self.groups, self.bounds):
            g.set_rng_states(states[lo:hi])

    # --- running the groups -------------------------------------------------------------

    def _run(self, jobs):
        """Run ``jobs`` (callables) on the workers; the first error is raised
        after every job has finished.  The helpers' futures are kept until
        they are joined: a Ctrl-C in the caller's part or its wait leaves
        them there, and the next run (or close) waits for them first, so no
        helper still runs a group when the next call changes it."""
        self._join()
        if self.workers == 1 or len(jobs) == 1:
            for job in jobs:
                job()
            return
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(self.workers - 1,
                                                               thread_name_prefix="seer-groups")
        queue = iter(jobs)            # builtin iterators hand out each item once across threads
        errors = []

        def work():
            for job in queue:
                try:
                    job()
                except BaseException as e:          # noqa: B036 - re-raised below
                    errors.append(e)
        helpers = self._helpers = []
        for _ in range(min(self.workers, len(jobs)) - 1):
            helpers.append(self._pool.submit(work))
        work()
        concurrent.futures.wait(helpers)
        self._helpers = ()
        if errors:
            raise errors[0]

    def _join(self):
        """Wait for the helpers of a run a Ctrl-C cut short."""
        if self._helpers:
            concurrent.futures.wait(self._helpers)
            self._helpers = ()

    def _outputs(self, members=None):
        """Fresh full-size output arrays; the groups ``members`` (default:
        all) write their copies' rows (the other rows are undefined, and the
        other groups keep their own arrays: a step of theirs may be running)."""
        cp = self.copies
        E, A = self.num_copies, self.num_agents
        obs = np.empty((E * A,) + cp.obs.shape[1:], np.float32)
        rew = np.empty(E * A, np.float32)
        term = np.empty(E * A, np.uint8)
        for k in (range(len(self.groups)) if members is None else members):
            lo, hi = self.bounds[k]
            self.groups[k].copies.use_outputs(obs[lo * A:hi * A], rew[lo * A:hi * A], term[lo * A:hi * A])
        return obs, rew, term

    def view(self, arr):
        return arr.reshape((self.num_copies, self.num_agents) + arr.shape[1:])

    def start(self, episode_seeds=None):
        obs, _, _ = self._outputs()
        jobs = []
        for g, (lo, hi) in zip(self.groups, self.bounds):
            seeds = None if episode_seeds is None else episode_seeds[lo:hi]
            jobs.append(lambda g=g, seeds=seeds: g.start(seeds, fresh=False))
        self._run(jobs)
        return self.view(obs)

    def restart_obs(self, idx):
        out = np.empty((len(idx), self.num_agents) + self.copies.obs.shape[1:], np.float32)
        idx = np.asarray(idx)
        for g, (lo, hi) in zip(self.groups, self.bounds):
            sel = (idx >= lo) & (idx < hi)
            if sel.any():
                out[sel] = g.restart_obs(idx[sel] - lo)
        return out

    def members(self, active):
        """Indices of the groups holding copies ``active`` (sorted copy
        ids; None: all)."""
        if active is None:
            return list(range(len(self.groups)))
        first, last = np.searchsorted(self._starts, (active[0], active[-1]), side="right") - 1
        if first == last:               # a batch sent whole, the ping-pong's case
            return [int(first)]
        return np.unique(np.searchsorted(self._starts, active, side="right") - 1).tolist()

    def prepare(self, a, waiting=None, active=None):
        """:meth:`Batch.prepare` of each group holding copies ``active``."""
        pos = None if active is None else np.asarray(active)
        members = self.members(pos)
        outputs = self._outputs(members)
        plans = []
        for k in members:
            g, (lo, hi) = self.groups[k], self.bounds[k]
            if pos is None:
                rows, local = slice(lo, hi), None
            elif len(pos) == hi - lo and len(members) == 1:     # the whole group (ids are unique)
                rows, local = slice(None), None
            else:
                rows = np.flatnonzero((pos >= lo) & (pos < hi))
                local = None if len(rows) == hi - lo else pos[rows] - lo
            w = None if waiting is None else waiting[lo:hi]
            plans.append((k, g.prepare(a[rows], w, active=local, fresh=False)))
        return outputs, plans

    def run(self, plan):
        """The groups' engine parts, concurrently on the workers."""
        self._run([functools.partial(self.groups[k].run, p) for k, p in plan[1]])

    def finish(self, plan):
        (obs, rew, term), plans = plan
        E, A = self.num_copies, self.num_agents
        trunc = np.zeros((E, A), bool)
        ended = np.zeros(E, bool)
        for k, p in plans:
            _, _, _, t, e = self.groups[k].finish(p)
            lo, hi = self.bounds[k]
            if e is not None:
                ended[lo:hi] = e
                trunc[lo:hi] = t
            elif t.any():
                trunc[lo:hi] = t
        self.reported = any(self.groups[k].reported for k, _ in plans)
        return (self.view(obs), self.view(rew), self.view(term.view(bool)), trunc,
                ended if ended.any() else None)

    def frame(self, c, step, max_cycles):
        g, local = self.locate(c)
        return g.frame(local, step, max_cycles)

    def close(self):
        for g in self.groups:
            g.close()
        if self._pool is not None:
            self._pool.shutdown(wait=True)      # (every helper's job has ended)
            self._pool = None
        self._helpers = ()


def group_bounds(num_copies, batch_size, workers):
    """Contiguous groups of copies: within each batch of ``batch_size``
    (so a batch sent alone steps whole groups), enough groups for
    ``workers`` threads to balance (about four per worker)."""
    batches = [(lo, min(lo + batch_size, num_copies)) for lo in range(0, num_copies, batch_size)]
    target = min(num_copies, 4 * workers) if workers > 1 else len(batches)
    per = max(1, -(-target // len(batches)))
    out = []
    for lo, hi in batches:
        k = min(per, hi - lo)
        edges = [lo + (hi - lo) * i // k for i in range(k + 1)]
        out += list(zip(edges[:-1], edges[1:]))
    return out
