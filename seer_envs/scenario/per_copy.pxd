# SPDX-License-Identifier: BSD-3-Clause
# The per-copy parameters of a model, once for every scenario
# (docs/new_scenario.md, "Per-copy parameters"): num_copies entries of the
# scenario's own parameter struct and each LP's copy.  The model points its
# state struct at `params` and `copy_of` once, at construction; a handler
# then reads its copy's parameters as `&s.params[s.copy_of[lp]]`: two
# loads, no division, no branch, nothing of this class on the hot path.

from libc.stdint cimport int32_t, int64_t


cdef class PerCopy:
    # Python side, with the GIL; the buffers live as long as this object,
    # which the model keeps in a `cdef` attribute (private: snapshots carry
    # each copy's config, not these bytes).
    cdef object _params, _copy_of    # the NumPy buffers behind the pointers
    cdef void* params                # num_copies entries of item_size bytes, zeroed
    cdef const int32_t* copy_of      # per LP of the model, in engine order: its copy
    cdef readonly int64_t num_copies
    cdef readonly Py_ssize_t item_size   # sizeof the scenario's parameter struct (bytes)
    # Copy c's entry (cast it to the scenario's struct); ValueError naming
    # the range when c is not a copy of the model.
    cdef void* entry(self, object c) except NULL
