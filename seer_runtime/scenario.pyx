# SPDX-License-Identifier: BSD-3-Clause
"""The base class of models on the runtime, and the parallel loop a
scenario's boundary kernels use; what a scenario builds against besides
``contract.pxd`` (see scenario.pxd)."""

from libc.math cimport isinf
from libc.stdint cimport int64_t
from seer_runtime.contract cimport Ctx, Event, SEER_OK, SEER_ENV_SOURCE


cdef int _noop_init(void* model, Ctx* ctx) noexcept nogil:
    return SEER_OK

cdef int _noop_event(void* model, Ctx* ctx, const Event* ev) noexcept nogil:
    return SEER_OK


cdef class Scenario:
    """Base class of models on the runtime.

    A Cython subclass fills ``self.lptype`` with its hooks and points
    ``self.model`` at its state in ``__cinit__``; the hooks it leaves alone
    stay no-ops.  ``num_lps`` and ``lookahead`` (> 0, time units) are fixed
    at construction.
    """

    def __cinit__(self, *args, **kwargs):
        self.lptype.on_init = _noop_init
        self.lptype.on_event = _noop_event
        self.model = NULL

    def __init__(self, num_lps, lookahead):
        self._set_shape(num_lps, lookahead)

    def _set_shape(self, num_lps, lookahead):
        if isinstance(num_lps, bool) or not isinstance(num_lps, int) or not 1 <= num_lps < SEER_ENV_SOURCE:
            raise ValueError(f"num_lps must be an int in [1, {SEER_ENV_SOURCE - 1}], got {num_lps!r}")
        lookahead = float(lookahead)
        if not lookahead > 0 or isinf(lookahead):
            raise ValueError(f"lookahead must be a finite number > 0, got {lookahead!r}")
        self.num_lps = num_lps
        self.lookahead = lookahead


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
