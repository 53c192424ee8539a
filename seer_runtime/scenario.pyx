# SPDX-License-Identifier: BSD-3-Clause
"""The base class of models on the runtime, and the parallel loop a
scenario's boundary kernels use; what a scenario builds against besides
``contract.pxd`` (see scenario.pxd)."""

from libc.math cimport isinf
from libc.stdint cimport int64_t
from seer_runtime.contract cimport Ctx, Event, SEER_OK, SEER_ENV_SOURCE, event_fn, init_fn


cdef int _noop_init(void* model, Ctx* ctx) noexcept nogil:
    return SEER_OK

cdef int _noop_event(void* model, Ctx* ctx, const Event* ev) noexcept nogil:
    return SEER_OK


cdef class Scenario:
    """Base class of models on the runtime.

    A Cython subclass installs its hooks and points at its state in
    ``__cinit__`` with ``self.set_hooks(on_init, on_event, &self.s)``; the
    hooks it leaves alone stay no-ops.  Its ``__init__`` calls
    ``Scenario.__init__(self, lps_per_copy, lookahead, num_copies)`` first,
    which checks the shape and fixes ``num_lps`` (``lps_per_copy *
    num_copies``), ``num_copies`` and ``lookahead`` (> 0, time units).  A
    model of several copies lays them one after another and keeps each
    copy's events inside it (docs/new_scenario.md).
    """

    def __cinit__(self, *args, **kwargs):
        self.lptype.on_init = _noop_init
        self.lptype.on_event = _noop_event
        self.model = NULL
        self.num_copies = 1

    cdef void set_hooks(self, init_fn on_init, event_fn on_event, void* state) noexcept:
        self.lptype.on_init = on_init
        self.lptype.on_event = on_event
        self.model = state

    def __init__(self, lps_per_copy, lookahead, num_copies=1):
        if isinstance(num_copies, bool) or not isinstance(num_copies, int) or num_copies < 1:
            raise ValueError(f"num_copies must be an int >= 1, got {num_copies!r}")
        top = SEER_ENV_SOURCE - 1
        if (isinstance(lps_per_copy, bool) or not isinstance(lps_per_copy, int)
                or not 1 <= lps_per_copy <= top):
            raise ValueError(f"num_lps must be an int in [1, {top}], got {lps_per_copy!r}")
        if lps_per_copy * num_copies > top:
            raise ValueError(f"num_copies * LPs per copy must be <= {top}, got "
                             f"{num_copies} * {lps_per_copy} = {lps_per_copy * num_copies}")
        lookahead = float(lookahead)
        if not lookahead > 0 or isinf(lookahead):
            raise ValueError(f"lookahead must be a finite number > 0, got {lookahead!r}")
        self.num_lps = lps_per_copy * num_copies
        self.num_copies = num_copies
        self.lookahead = lookahead


def enum_names(named, size):
    """The names of ``named`` (name -> value of a ``cdef enum``) ordered by
    value, after checking the values are exactly ``0 .. size - 1``: how a
    model exports its counter columns and observation slots to Python once,
    so a gap or a doubled value fails at import."""
    if sorted(named.values()) != list(range(size)):
        raise AssertionError(f"enum values {sorted(named.values())} are not 0..{size - 1}")
    return tuple(sorted(named, key=named.get))


cdef class CopyEnd:
    """Work over copies that an engine in copy groups runs inside
    :meth:`Engine.run_until` (``copy_end=``): once per copy, right after the
    copy reaches the run's end, by the thread that ran it.  A scenario's
    Cython subclass sets the C function and its argument (scenario.pxd);
    this base has none, and the engine refuses it."""

    def __cinit__(self, *args, **kwargs):
        self.fn = NULL
        self.arg = NULL


cdef seer_for_fn _parallel_for = NULL


cdef void seer_install_parallel_for(seer_for_fn fn) noexcept:
    global _parallel_for
    _parallel_for = fn


cdef void seer_parallel_for(int num_threads, int64_t n, seer_range_fn body,
                            void* arg) noexcept nogil:
    if _parallel_for != NULL:
        _parallel_for(num_threads, n, body, arg)
    elif n > 0:
        body(arg, 0, n)
