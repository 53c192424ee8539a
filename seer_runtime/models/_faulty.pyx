# SPDX-License-Identifier: BSD-3-Clause
"""A model that breaks the contract on purpose, for the runtime's tests.

Every LP starts one event at t = 1 and sends one to its right neighbour per
event, one lookahead later.  At ``fault_time`` LP ``fault_lp`` (or each LP
in ``fault_lps``) commits the fault named by ``mode``:

``"past"``        schedules an event before now;
``"lookahead"``   sends a cross-LP event at now + lookahead / 2;
``"bad_target"``  sends to LP ``num_lps + 5``;
``"outbox"``      emits more events than the outbox holds;
``"flood"``       schedules 1000 self events per event (fills a capped queue);
``"model_error"`` returns its own error code -123;
``"nan"``         schedules an event at NaN;
``"outbox_ignored"`` emits more events than the outbox holds, ignores the
                  NULL and returns SEER_OK;
``"storm"``       schedules a self event with no delay from every event (a
                  storm that never leaves the window);
``"init_error"``  returns error code -7777 from its init hook;
``"none"``        never faults.

``copy_lps`` (> 0): the LPs form rings of that many LPs (copies that never
exchange events, for the copy-groups tests) instead of one ring.
"""

from libc.math cimport NAN
from libc.stdint cimport uint8_t
from libc.stdlib cimport calloc, free
from seer_runtime.contract cimport (Ctx, Event, lp_id_t, seer_emit, SEER_OK,
                                    SEER_E_OUTBOX_FULL, SEER_OUTBOX_CAPACITY)
from seer_runtime.scenario cimport Scenario

ctypedef struct FaultyState:
    lp_id_t num_lps
    lp_id_t ring                # LPs per ring
    uint8_t* faulty             # per LP: 1 if it commits the fault
    double fault_time
    double lookahead
    int mode

_MODES = {"none": 0, "past": 1, "lookahead": 2, "bad_target": 3, "outbox": 4,
          "flood": 5, "model_error": 6, "nan": 7, "outbox_ignored": 8, "storm": 9,
          "init_error": 10}


cdef int on_init(void* model, Ctx* ctx) noexcept nogil:
    cdef FaultyState* s = <FaultyState*>model
    if s.mode == 10 and s.faulty[ctx.lp]:
        return -7777
    if seer_emit(ctx, 1.0, ctx.lp, 0) == NULL:
        return SEER_E_OUTBOX_FULL
    return SEER_OK


cdef int on_event(void* model, Ctx* ctx, const Event* ev) noexcept nogil:
    cdef FaultyState* s = <FaultyState*>model
    cdef lp_id_t right = ctx.lp - ctx.lp % s.ring + (ctx.lp % s.ring + 1) % s.ring
    cdef int i
    if s.faulty[ctx.lp] and ctx.now >= s.fault_time:
        if s.mode == 1:
            seer_emit(ctx, ctx.now - 0.5, ctx.lp, 1)
        elif s.mode == 2:
            seer_emit(ctx, ctx.now + s.lookahead / 2, right, 2)
        elif s.mode == 3:
            seer_emit(ctx, ctx.now + s.lookahead, s.num_lps + 5, 3)
        elif s.mode == 4:
            for i in range(SEER_OUTBOX_CAPACITY + 1):
                if seer_emit(ctx, ctx.now + 1.0, ctx.lp, 4) == NULL:
                    return SEER_E_OUTBOX_FULL
        elif s.mode == 5:
            for i in range(200):
                seer_emit(ctx, ctx.now + 0.01 * (i + 1), ctx.lp, 5)
        elif s.mode == 6:
            return -123
        elif s.mode == 7:
            seer_emit(ctx, NAN, ctx.lp, 7)
        elif s.mode == 8:
            for i in range(SEER_OUTBOX_CAPACITY + 1):
                seer_emit(ctx, ctx.now + 1.0, ctx.lp, 8)
            return SEER_OK
        elif s.mode == 9:
            seer_emit(ctx, ctx.now, ctx.lp, 9)
            if ev.kind == 9:
                return SEER_OK
    if seer_emit(ctx, ctx.now + s.lookahead, right, 0) == NULL:
        return SEER_E_OUTBOX_FULL
    return SEER_OK


cdef class FaultyModel(Scenario):
    cdef FaultyState s

    def __cinit__(self, *args, **kwargs):
        self.set_hooks(on_init, on_event, &self.s)

    def __init__(self, num_lps, mode, fault_lp=0, fault_time=3.0, lookahead=1.0,
                 fault_lps=None, copy_lps=0):
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {sorted(_MODES)}, got {mode!r}")
        Scenario.__init__(self, num_lps, lookahead)
        self.s.num_lps = num_lps
        if copy_lps and (copy_lps < 1 or num_lps % copy_lps):
            raise ValueError(f"copy_lps must divide num_lps = {num_lps}, got {copy_lps!r}")
        self.s.ring = copy_lps if copy_lps else num_lps
        self.s.faulty = <uint8_t*>calloc(num_lps, 1)
        if self.s.faulty == NULL:
            raise MemoryError()
        for lp in ([fault_lp] if fault_lps is None else fault_lps):
            if 0 <= lp < num_lps:
                self.s.faulty[lp] = 1
        self.s.fault_time = fault_time
        self.s.lookahead = lookahead
        self.s.mode = _MODES[mode]

    def __dealloc__(self):
        free(self.s.faulty)
