# SPDX-License-Identifier: BSD-3-Clause
"""Asynchronous stepping of a vector env (EnvPool's ``send`` / ``recv``):
:class:`AsyncSteps`, mixed into :class:`~seer_envs.views.vector.SeerVectorEnv`.

``send(actions, env_ids)`` starts stepping those copies on the engine's own
thread and returns at once; ``recv()`` returns the earliest sent group's
outputs with ``infos["env_id"]``; ``async_reset()`` queues the copies in
groups of ``batch_size``.  Each copy's trajectory is the synchronous env's.

A sent step is split in three (the core's ``begin``, the engine's run, the
core's ``end``): the caller's thread begins it in ``send()`` (actions in,
restarts, output arrays) and ends it in ``recv()`` (flags, statistics,
autoreset, infos); only the engine's part (inject, run, boundary: native
calls that release the GIL) runs on the engine's thread.  That thread takes
the GIL for a few lines per step, so the caller's Python (its policy) and
the engine overlap instead of queueing for the GIL (docs/training.md,
"Overlapping the env and the policy").  Steps touching one batch (the whole
engine, or a group of copies with its engine) are done in send order, each
begun only once the one before it on that batch has ended: a send that
shares a batch with a step in flight first waits for that step and ends it
(its ``recv()`` then returns it), so every batch sees the synchronous
env's sequence of calls.
"""

import atexit
import collections
import os
import queue
import threading
import weakref

import numpy as np


def _interrupted(what="a step"):
    return RuntimeError(f"{what} was interrupted (KeyboardInterrupt or an error inside the engine), "
                        "so the copies' state is incomplete; call reset()")


class AsyncSteps:
    """``send`` / ``recv`` / ``async_reset`` over the env's ``core``.

    Ctrl-C safe: the core's interrupt mark (``core.broken``) is set before
    a call changes anything and cleared after its last change, and a group
    in flight is one entry of ``_jobs`` (the copies in flight are derived
    from it).  A call that finds the env marked drops its groups after
    draining the engine's thread (:meth:`_drop_jobs`: every step submitted
    has run, so none runs untracked), and refuses until ``reset()``.  Waits
    change nothing: a Ctrl-C inside ``recv()``'s wait leaves the group in
    flight, and a later ``recv()`` returns it."""

    def _init_async(self):
        self._jobs = collections.deque()             # _Sent steps, in send order
        self._thread = None                          # the engine's thread, made at the first send
        _ASYNC_ENVS.add(self)

    @property
    def _in_flight(self):
        """The copies sent (or queued) and not received, from ``_jobs``."""
        out = np.zeros(self.core.num_copies, bool)
        for job in self._jobs:
            out[job.ids] = True
        return out

    def async_reset(self, seed=None, options=None):
        """Reset every copy, then queue the copies for :meth:`recv` in
        groups of ``batch_size`` (copy ids in order), as EnvPool's
        ``async_reset``: each ``recv()`` returns one group's first
        observations (reward 0, no flags, ``infos["env_id"]``)."""
        obs, infos = self.reset(seed=seed, options=options)
        mask = infos["mask"]                 # padding rows (per-copy agent counts) are out of play
        core = self.core
        E, A, B = core.num_copies, core.num_agents, core.batch_size
        core.broken = "an async reset"       # until every group is queued
        for lo in range(0, E, B):
            ids = np.arange(lo, min(lo + B, E))
            zeros = np.zeros((len(ids), A), bool)
            first = (obs[lo:lo + B], np.zeros(zeros.shape, np.float32), zeros, zeros.copy(),
                     {"mask": mask[lo:lo + B].copy()})
            self._jobs.append(_Sent(ids, frozenset(), result=first))
        core.broken = None

    def send(self, actions, env_ids=None):
        """Start stepping copies ``env_ids`` (default: all) with ``actions``
        ``(len(env_ids), num_agents, ...)`` on the engine's own thread and
        return at once; :meth:`recv` returns the outputs.  The caller may run
        its policy on other copies meanwhile and reuse the ``actions``
        buffer.  Copies in flight (sent and not received) cannot be sent
        again; a send of copies that share an engine with copies in flight
        waits for those first."""
        core = self.core
        self._check_nothing_in_flight(None)       # an interrupted env drops its groups, then refuses
        ids = self._env_ids(env_ids)
        a = core.check_step(actions, ids)
        flying = self._in_flight[ids]
        if flying.any():
            c = int(ids[flying][0])
            raise RuntimeError(f"copy {c} is still in flight (sent and not received): recv() it first")
        step_ids = None if len(ids) == core.num_copies else ids
        b = core.batch
        keys = frozenset(b.members(step_ids))      # the engines it runs
        for job in list(self._jobs):    # steps in flight on the same batches: ended first
            if job.keys & keys:
                self._settle(job)
        if core.broken is not None or (self._thread is not None and self._thread.failed):
            raise _interrupted()        # a step sent earlier failed
        if self._thread is None or self._thread.pid != os.getpid():    # none yet, or a fork's child
            self._thread = _EngineThread()
        core.broken = "a send"          # from here until the step is tracked and submitted
        with b.using():
            pending = core.begin(a, step_ids)
        job = _Sent(ids, keys, pending=pending)
        self._jobs.append(job)          # tracked before it is submitted: never run untracked
        self._thread.submit(job)
        core.broken = None

    def recv(self):
        """The outputs of the earliest sent group still unreceived (waiting
        for it): ``(obs, rewards, terminations, truncations, infos)`` over
        its copies, in ``env_ids`` order, with ``infos["env_id"]``; the error
        its step raised, if it did."""
        core = self.core
        core.check_open()
        if core.broken is not None:
            what = core.interrupted
            self._drop_jobs()
            raise _interrupted(what)
        if not self._jobs:
            raise RuntimeError("recv() with nothing in flight: send() actions (or async_reset()) first")
        job = self._jobs[0]
        self._settle(job)           # a Ctrl-C while waiting leaves it in flight
        if job.pending is not None:         # a fork's child: the step ran in the parent
            self._drop_jobs()
            raise _interrupted(core.interrupted)
        self._jobs.popleft()        # the one change that receives it
        if job.error is not None:
            raise job.error
        obs, rew, term, trunc, infos = job.result
        infos["env_id"] = job.ids
        return obs, rew, term, trunc, infos

    def _settle(self, job):
        """Wait for a sent step's engine part, then end it (once), keeping
        its outputs for its :meth:`recv`; a step whose engine part failed
        leaves the env marked interrupted (its :meth:`recv` raises the error)."""
        if job.pending is None:
            return
        if self._thread is not None and self._thread.pid != os.getpid() and not job.finished:
            self.core.broken = "a step in flight when the process forked"
            return
        job.wait()                  # changes nothing: a Ctrl-C here leaves the job in flight
        core = self.core
        core.broken = "a step"      # from here until the job holds its outputs
        if job.error is None:
            try:
                with job.pending.batch.using():
                    s = core.end(job.pending)
                job.result = (s.obs, s.rew, s.term, s.trunc, s.infos())
            except Exception as e:          # noqa: BLE001 - raised by its recv(); the mark stays
                job.error = e
                job.pending = None
                return
            job.pending = None
            core.broken = None
        else:
            job.pending = None      # the engine's part failed: the mark stays

    def _drop_jobs(self):
        """Forget the groups in flight of an interrupted env, once the
        engine's thread has run every step submitted to it."""
        if self._thread is not None:
            self._thread.drain()
        self._jobs.clear()

    @property
    def in_flight(self):
        """Groups sent (or queued by :meth:`async_reset`) and not received yet."""
        return len(self._jobs)

    def _env_ids(self, env_ids):
        E = self.core.num_copies
        if env_ids is None:
            return np.arange(E)
        ids = np.asarray(env_ids)
        if ids.ndim != 1 or ids.dtype.kind not in "iu" or len(ids) == 0:
            raise ValueError(f"env_ids must be a non-empty 1-d array of copy ids, got {env_ids!r}")
        if ids.min() < 0 or ids.max() >= E:
            raise ValueError(f"env_ids must be in [0, {E - 1}], got {ids.tolist()}")
        if (np.diff(ids) <= 0).any():
            raise ValueError(f"env_ids must be increasing without repeats, got {ids.tolist()}")
        return ids.astype(np.int64)

    def _check_nothing_in_flight(self, what):
        """Refuse ``what`` while groups are in flight; an interrupted env's
        groups are dropped instead (the call then refuses, or resets)."""
        if self._jobs:
            if self.core.broken is not None:
                self._drop_jobs()
            elif what is not None:
                raise RuntimeError(f"{what} while copies are in flight: recv() them first "
                                   f"({len(self._jobs)} group(s) sent and not received)")

    def _check_nothing_in_flight_pickle(self):
        if self._jobs:
            raise TypeError(f"cannot copy or pickle {type(self).__name__} while copies are in flight: "
                            "recv() them first")

    def _async_reset_state(self):
        """A reset starts every copy afresh: an earlier failed send is forgotten."""
        if self._thread is not None:
            self._thread.drain()
            self._thread.failed = False

    def _close_async(self):
        """Never blocks for good: waits only for steps submitted to a live
        engine thread of this process."""
        t = self._thread
        if t is not None:
            t.drain()
        self._jobs.clear()
        if t is not None:
            t.stop()
            self._thread = None


class _Sent:
    """A group in flight: copies ``ids`` on the batches ``keys``; ``pending``
    until it is ended, then ``result`` or ``error``.  ``finished`` is set
    (and ``done`` released) by the engine's thread once the step's engine
    part has run."""

    __slots__ = ("ids", "keys", "pending", "run", "result", "error", "done", "finished")

    def __init__(self, ids, keys, pending=None, result=None):
        self.ids, self.keys, self.pending, self.result, self.error = ids, keys, pending, result, None
        self.run = None if pending is None else pending.run
        self.done = threading.Lock()
        self.finished = pending is None
        if pending is not None:
            self.done.acquire()

    def wait(self):
        """Until the engine's part has run (the lock's wait releases the GIL).
        A Ctrl-C between the acquire and the release leaves ``done`` held,
        but ``finished`` is already True then, so no later wait blocks."""
        if not self.finished:
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
    sent steps in order.  Its loop is a few Python lines around native
    calls that release the GIL, so it seldom wants the GIL while the caller
    runs its policy.  After a step raises it runs no more (``failed``)
    until the env is reset.  It holds no reference to the env; ``stop()``
    (the env's close, or its collection) ends it."""

    def __init__(self):
        self.failed = False
        self.stopped = False
        self.pid = os.getpid()          # a forked child has no such thread: it starts its own
        self._queue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name="seer-vector", daemon=True)
        self._thread.start()
        _ENGINE_THREADS.add(self)

    def submit(self, job):
        self._queue.put(job)

    def _serve(self):
        while True:
            job = self._queue.get()
            if job is None:
                return
            if job.run is not None:
                try:
                    if self.failed:
                        raise _interrupted()
                    job.run()
                except BaseException as e:      # noqa: B036 - raised by its recv()
                    job.error = e
                    self.failed = True
                job.run = None
            job.finished = True         # before the release: see _Sent.wait
            job.done.release()

    def drain(self):
        """Wait until every step submitted so far has run (a marker through
        the queue); at once when this thread cannot run (stopped, or in a
        fork's parent)."""
        if self.stopped or self.pid != os.getpid() or not self._thread.is_alive():
            return
        marker = _Sent(None, frozenset(), pending=_NOTHING)
        self._queue.put(marker)
        marker.wait()

    def stop(self):
        if self.stopped:
            return
        self.stopped = True
        self._queue.put(None)
        if threading.current_thread() is not self._thread and self.pid == os.getpid():
            self._thread.join()


class _Nothing:
    """The step of a drain marker: nothing to run."""

    @staticmethod
    def run():
        pass


_NOTHING = _Nothing()
_ASYNC_ENVS = weakref.WeakSet()


def _after_fork_in_child():
    """A child forked while steps were in flight: its engine's thread stayed
    in the parent and the engine's memory was copied mid-run, so an env
    with a step not finished is marked interrupted (its calls refuse until
    ``reset()``, and nothing waits for the missing thread)."""
    for env in list(_ASYNC_ENVS):
        jobs = getattr(env, "_jobs", None)
        if jobs and any(not job.finished for job in jobs):
            env.core.broken = "a step in flight when the process forked"


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
