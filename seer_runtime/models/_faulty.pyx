# SPDX-License-Identifier: BSD-3-Clause
"""A model that breaks the contract on purpose, for the runtime's tests.

Every LP starts one event at t = 1 and sends one to its right neighbour per
event, one lookahead later.  At ``fault_time`` LP ``fault_lp`` commits the
fault named by ``mode``:

``"past"``        schedules an event before now;
``"lookahead"``   sends a cross-LP event at now + lookahead / 2;
``"bad_target"``  sends to LP ``num_lps + 5``;
``"outbox"``      emits more events than the outbox holds;
``"flood"``       schedules 1000 self events per event (fills a capped queue);
``"model_error"`` returns its own error code -123;
``"nan"``         schedules an event at NaN;
``"none"``        never faults.
"""

from libc.math cimport NAN
from seer_runtime.contract cimport *
from seer_runtime.loop cimport Scenario

ctypedef struct FaultyState:
    lp_id_t num_lps
    lp_id_t fault_lp
    double fault_time
    double lookahead
    int mode

_MODES = {"none": 0, "past": 1, "lookahead": 2, "bad_target": 3, "outbox": 4,
          "flood": 5, "model_error": 6, "nan": 7}


cdef int on_init(void* model, Ctx* ctx) noexcept nogil:
    if seer_emit(ctx, 1.0, ctx.lp, 0) == NULL:
        return SEER_E_OUTBOX_FULL
    return SEER_OK


cdef int on_event(void* model, Ctx* ctx, const Event* ev) noexcept nogil:
    cdef FaultyState* s = <FaultyState*>model
    cdef lp_id_t right = (ctx.lp + 1) % s.num_lps
    cdef int i
    if ctx.lp == s.fault_lp and ctx.now >= s.fault_time:
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
    if seer_emit(ctx, ctx.now + s.lookahead, right, 0) == NULL:
        return SEER_E_OUTBOX_FULL
    return SEER_OK


cdef class FaultyModel(Scenario):
    cdef FaultyState s

    def __cinit__(self, *args, **kwargs):
        self.lptype.on_init = on_init
        self.lptype.on_event = on_event
        self.model = &self.s

    def __init__(self, num_lps, mode, fault_lp=0, fault_time=3.0, lookahead=1.0):
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {sorted(_MODES)}, got {mode!r}")
        Scenario.__init__(self, num_lps, lookahead)
        self.s.num_lps = num_lps
        self.s.fault_lp = fault_lp
        self.s.fault_time = fault_time
        self.s.lookahead = lookahead
        self.s.mode = _MODES[mode]
