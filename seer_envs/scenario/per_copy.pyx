# SPDX-License-Identifier: BSD-3-Clause
"""The per-copy parameters of a model (:class:`PerCopy`), public API of the
scenario kit: the buffer of the scenario's parameter struct, one entry per
copy, each LP's copy index, and the copy's range check, written once for
every scenario (docs/new_scenario.md, "Per-copy parameters").

In Cython (``from seer_envs.scenario.per_copy cimport PerCopy``)::

    self._per_copy = PerCopy(sizeof(GossipParams), num_copies, [cfg.num_agents])
    self.s.params = <GossipParams*>self._per_copy.params
    self.s.copy_of = self._per_copy.copy_of
    ...
    cdef GossipParams* p = <GossipParams*>self._per_copy.entry(c)   # in configure(c, cfg)
"""

from libc.stdint cimport int32_t, uint8_t


cdef class PerCopy:
    """``num_copies`` zeroed entries of ``item_size`` bytes (the scenario's
    parameter struct), and the copy of each LP of a model whose LP blocks
    hold ``blocks[b]`` LPs per copy (engine order: block ``b``'s copy ``c``
    is its region's LPs ``[c * blocks[b], (c + 1) * blocks[b])``)."""

    def __init__(self, Py_ssize_t item_size, num_copies, blocks):
        import numpy as np
        C = int(num_copies)
        if item_size < 1 or C < 1:
            raise ValueError(f"PerCopy needs item_size >= 1 and num_copies >= 1, "
                             f"got {item_size} and {num_copies!r}")
        self.num_copies, self.item_size = C, item_size
        self._params = np.zeros(C * item_size, np.uint8)
        self._copy_of = np.concatenate([np.repeat(np.arange(C, dtype=np.int32), int(n)) for n in blocks])
        cdef uint8_t[::1] p = self._params
        cdef int32_t[::1] co = self._copy_of
        self.params = &p[0]
        self.copy_of = &co[0] if len(self._copy_of) else NULL

    cdef void* entry(self, object c) except NULL:
        if not 0 <= c < self.num_copies:
            raise ValueError(f"configure: copy {c!r} out of range [0, {self.num_copies})")
        return <uint8_t*>self.params + <Py_ssize_t>c * self.item_size
