# SPDX-License-Identifier: BSD-3-Clause
# All a scenario cimports besides contract.pxd: the Scenario base class and
# the engine's parallel loop for boundary kernels (docs/new_scenario.md).
# The engine's own structures stay in loop.pxd, so a change there rebuilds
# the runtime, not every scenario.

from libc.stdint cimport int64_t
from seer_runtime.contract cimport LPType, event_fn, init_fn, lp_id_t

# A loop body over [lo, hi) for seer_parallel_for.
ctypedef void (*seer_range_fn)(void* arg, int64_t lo, int64_t hi) noexcept nogil
ctypedef void (*seer_for_fn)(int num_threads, int64_t n, seer_range_fn body,
                             void* arg) noexcept nogil


cdef class Scenario:
    """Base of every model: holds its hook table, its state pointer and its
    shape (LPs, copies, lookahead)."""
    cdef LPType lptype
    cdef void* model
    cdef readonly lp_id_t num_lps
    cdef readonly double lookahead
    cdef readonly int64_t num_copies
    # In a subclass's __cinit__: install its hooks and point at its state
    # (construction only; the engine copies both when it is built).
    cdef void set_hooks(self, init_fn on_init, event_fn on_event, void* state) noexcept


# Work over copies that an engine in copy groups runs inside its run
# (Engine.run_until(copy_end=...)): fn(arg, c, c + 1) once per copy c, by
# the thread that ran the copy, as soon as the copy reaches the run's end
# (its LPs are final; other copies may still be running).  A scenario
# subclasses it to hold arg's struct, so its step boundary runs in the run's
# one phase, on the copy's cache-hot state, with no join of its own.
cdef class CopyEnd:
    cdef seer_range_fn fn
    cdef void* arg


# Run body over [0, n) in chunks claimed by up to num_threads members of the
# calling thread's SEER team (the team the engines use; an elastic phase, so
# a member that is not running holds nothing up), so boundary loops need no
# OpenMP pool.  Iterations must be independent; the result does not depend
# on num_threads.  Short loops, and a team that cannot grow, run serially.
cdef void seer_parallel_for(int num_threads, int64_t n, seer_range_fn body,
                            void* arg) noexcept nogil

# The engine module installs its team's loop here when it is imported
# (before that, seer_parallel_for runs serially).
cdef void seer_install_parallel_for(seer_for_fn fn) noexcept
