# SPDX-License-Identifier: BSD-3-Clause
"""Exceptions raised by the runtime."""


class ContractViolation(RuntimeError):
    """A model broke the event-locality contract (DESIGN.md section 2), or a
    bounded buffer overflowed.

    Attributes
    ----------
    reason : str
        ``"past"``, ``"lookahead"``, ``"bad_target"``, ``"outbox_full"``,
        ``"queue_full"``, ``"messages_full"`` or ``"model"`` (the handler
        returned its own error code).
    time : float
        Time of the offending event.
    now : float
        Simulated time of the handler that caused it.
    source : int or None
        LP that emitted it (None for events injected by the environment).
    target : int
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
