# SPDX-License-Identifier: BSD-3-Clause
"""One caller at a time: :class:`_Guard`, the lock a batch (or a group of
batches) takes for each call, refusing a second thread at once
(:func:`refuse_busy`); after a fork the child's guards are new
(:func:`after_fork_in_child`)."""

import threading
import weakref


def refuse_busy():
    """Raise ``EngineBusyError``: another thread is inside a call of this env."""
    from seer_runtime import EngineBusyError
    raise EngineBusyError(
        "this env is in use by another thread (a reset or step is in progress); an env "
        "can be used by one thread at a time: give each thread its own env")


class _Guard:
    """``with``: take the env without waiting, or refuse (EngineBusyError).

    Ctrl-C safe: the lock is a re-entrant lock, whose owner the C code
    records in the same step as the acquire, and ``__exit__`` releases it
    wholly in one C call (``_release_save``, what ``threading.Condition``
    uses).  A KeyboardInterrupt landing in ``__exit__`` before that call
    leaves the lock with the calling thread: its next call takes it again
    (re-entrant) and releases it wholly, so the env never stays refused;
    another thread is refused only until then.  After a fork the child's
    guards are new (:func:`after_fork_in_child`)."""

    __slots__ = ("_lock", "__weakref__")

    def __init__(self):
        self._lock = threading.RLock()
        _GUARDS.add(self)

    def __enter__(self):
        if not self._lock.acquire(blocking=False):
            refuse_busy()

    def __exit__(self, *exc):
        self._lock._release_save()

    def check(self):
        """Refuse when another thread holds the env."""
        if not self._lock.acquire(blocking=False):
            refuse_busy()
        self._lock.release()

    def locked(self):
        """Whether another thread holds the env."""
        if self._lock.acquire(blocking=False):
            self._lock.release()
            return False
        return True


_GUARDS = weakref.WeakSet()


def after_fork_in_child():
    """A forked child has only the forking thread: a guard held by another
    thread of the parent would refuse forever, so every guard is new."""
    for g in list(_GUARDS):
        g._lock = threading.RLock()
