# SPDX-License-Identifier: BSD-3-Clause
"""Exceptions raised by the runtime."""


class ContractViolation(RuntimeError):
    """A model broke the event-locality contract (docs/runtime.md, "The contract a model keeps"), or a
    bounded buffer overflowed.

    Attributes
    ----------
    reason : str
        ``"past"``, ``"lookahead"``, ``"bad_target"``, ``"outbox_full"``,
        ``"queue_full"``, ``"messages_full"``, ``"out_of_memory"`` (raised as
        :class:`OutOfMemory`), ``"event_budget"``, ``"stuck_window"`` or
        ``"model"`` (the handler returned its own error code).
    time : float or None
        Time of the offending event (None for a round's limits).
    now : float or None
        Simulated time of the handler that caused it (None when no single
        handler did: a queue overflowing as a round's messages arrive).
    source : int or None
        LP that emitted it (None for events injected by the environment).
    target : int or None
        LP it was meant for.
    kind : int
        Its event kind (-1 for an init or final hook).
    code : int
        The runtime's error code.
    """

    def __init__(self, reason, message, *, time=None, now=None, source=None,
                 target=None, kind=None, code=None):
        super().__init__(message)
        self.reason = reason
        self.time = time
        self.now = now
        self.source = source
        self.target = target
        self.kind = kind
        self.code = code


class OutOfMemory(ContractViolation, MemoryError):
    """The C allocator refused to grow an event queue or message arena
    (reason ``"out_of_memory"``).  Also a :class:`MemoryError`, so code that
    already handles running out of memory catches it."""


class EngineBusyError(RuntimeError):
    """Another Python thread is using this Engine: a run, an inject, an init,
    a restart (``reset_lps``) or a team change is in progress there.  Raised
    before the refused call changes anything, so the other thread's work
    goes on exactly as without it.  A ``RuntimeError``, so existing handlers
    still catch it; env layers recognise it and pass it through without
    marking their episode as interrupted.  Give each thread its own engine
    (or env)."""
