# SPDX-License-Identifier: BSD-3-Clause
# Included by loop.pyx (one extension module); the engine's state export and
# import (snapshots: seer_envs.snapshot), apart from the hot loop: the
# Engine's export_state / import_state / export_lps / import_lps call these.
#
# An import trusts nothing it is given: before anything of the engine changes,
# every event is checked against what the loop relies on (src/contract.h's
# rules for a queued event): it lies in its own LP's queue (target == that
# LP), comes from an LP of the engine or the environment, has a finite time
# no earlier than its LP's clock (so a run never has to climb from a time far
# below its window), and the LP's queue is in heap order.  A snapshot's
# checksum catches accidents; these checks keep a hand-built or tampered
# state from crashing or stalling the engine: it gets a ValueError naming
# the event and the field.

# Why an event was refused (_check_queue), for the message.
cdef enum:
    BAD_NONE = 0
    BAD_TARGET = 1
    BAD_SOURCE = 2
    BAD_TIME = 3
    BAD_ORDER = 4


# The first event of LP lp's queue ``ev[0:k]`` the loop could not trust, or
# -1 (``why[0]`` says which rule it breaks; ``lo``: the LP's clock).
cdef int64_t _check_queue(const Event* ev, int64_t k, lp_id_t lp, lp_id_t n, double lo,
                          int* why) noexcept nogil:
    cdef int64_t j
    cdef const Event* e
    for j in range(k):
        e = &ev[j]
        if e.target != lp:
            why[0] = BAD_TARGET
        elif e.src != SEER_ENV_SOURCE and e.src >= n:
            why[0] = BAD_SOURCE
        elif not (e.time >= lo) or e.time == INFINITY:     # NaN fails the first
            why[0] = BAD_TIME
        elif j > 0 and event_before(e, &ev[(j - 1) >> 1]):
            why[0] = BAD_ORDER
        else:
            continue
        return j
    why[0] = BAD_NONE
    return -1


def _queue_error(who, lp, j, why, target, src, time, lo):
    """The ValueError for event ``j`` of LP ``lp``'s queue (rule ``why``)."""
    what = {BAD_TARGET: f"its target is LP {target}, not LP {lp} whose queue holds it",
            BAD_SOURCE: f"its source is LP {src}, not an LP of this engine nor the environment",
            BAD_TIME: f"its time {time!r} is not a finite time at or after its LP's clock {lo!r}",
            BAD_ORDER: "the queue is not in heap order (time, source, sequence) there"}[why]
    return ValueError(f"{who}: snapshot array 'engine/events': event {j} of LP {lp}: {what}")


# Every LP's heap, LP by LP, into ``dst``.
cdef void _gather_events(const EngineCore* c, char* dst) noexcept nogil:
    cdef lp_id_t i
    cdef int64_t off = 0, nb
    for i in range(c.n):
        seer_prefetch(c.heaps[i + 2 if i + 2 < c.n else i].data)    # each heap is its own allocation
        nb = c.heaps[i].size * <int64_t>sizeof(Event)
        if nb:
            memcpy(dst + off, c.heaps[i].data, nb)
            off += nb


# ``src`` (events LP by LP, ``cnt`` per LP) into ``heaps`` (room made), each
# LP's events checked (_check_queue, clock ``lo[i]``) right after their copy,
# while they are in the cache.  Stops at the first bad event: returns its LP
# (``bad[0]`` its index in the queue, ``why[0]`` the rule), else -1.
cdef int64_t _scatter_checked(LocalHeap* heaps, lp_id_t n, const int64_t* cnt, const char* src,
                              const double* lo, int64_t* bad, int* why) noexcept nogil:
    cdef lp_id_t i
    cdef int64_t off = 0, nb, j
    for i in range(n):
        seer_prefetch_w(heaps[i + 2 if i + 2 < n else i].data)
        nb = cnt[i] * <int64_t>sizeof(Event)
        heaps[i].size = 0
        if nb:
            memcpy(heaps[i].data, src + off, nb)
            off += nb
            j = _check_queue(heaps[i].data, cnt[i], i, n, lo[i], why)
            if j >= 0:
                bad[0] = j
                return i
        heaps[i].size = cnt[i]
    return -1


# Make LP i's queue hold at least `need` events (its contents kept), or
# raise MemoryError naming `who` with the queue as it was.
cdef int _heap_room(EngineCore* c, lp_id_t i, int64_t need, str who) except -1:
    cdef Event* grown
    if need > c.heaps[i].cap:
        grown = <Event*>seer_heap_realloc(c.heaps[i].data, need, sizeof(Event))
        if grown == NULL:
            raise MemoryError(f"{who}: no memory for LP {i}'s {need} events")
        c.heaps[i].data = grown
        c.heaps[i].cap = need
    return 0


def _clocks(min_time, now, m, who):
    """Each of ``m`` LPs' clock (a float64 array): ``min_time`` (a number,
    or one per LP), or ``now``."""
    import numpy as np
    if min_time is None:
        min_time = now
    try:
        lo = np.ascontiguousarray(np.broadcast_to(np.asarray(min_time, np.float64), (m,)))
    except (TypeError, ValueError):
        raise ValueError(f"{who}: min_time must be a number or one per LP, got {min_time!r}") from None
    if m and not np.isfinite(lo).all():
        raise ValueError(f"{who}: min_time must be finite")
    return lo


def _export_state(Engine self, out):
    import numpy as np
    cdef EngineCore* c = &self.core
    cdef lp_id_t i
    cdef int64_t total = 0
    cdef char* dst
    self._check_idle()
    if not self._initialized:
        raise RuntimeError("export_state() before init(): there is no state yet")
    if self._frozen:
        raise RuntimeError("export_state() while LPs are frozen (between freeze_all_but and thaw)")
    for i in range(c.n):
        if c.inbox[i] != NULL:
            raise RuntimeError(f"export_state(): LP {i} has messages in flight (call it between runs)")
    for i in range(c.n):
        total += c.heaps[i].size
    shapes = {"counts": (c.n, np.int64), "rng_key": (c.n, np.uint64), "rng_ctr": (c.n, np.uint64),
              "emit_seq": (c.n, np.uint64), "next_time": (c.n, np.float64), "now": (1, np.float64),
              "tallies": (2, np.uint64), "event_size": (1, np.int64),
              "events": (total * sizeof(Event), np.uint8)}
    a = {}
    for k, v in (out or {}).items():
        if k not in shapes:
            raise ValueError(f"export_state(): out[{k!r}] is not a part it writes")
        n, dt = shapes[k]
        if (not isinstance(v, np.ndarray) or v.dtype != dt or v.shape != (n,)
                or not v.flags.c_contiguous or not v.flags.writeable):
            raise ValueError(f"export_state(): out[{k!r}] must be a writable C-contiguous "
                             f"{np.dtype(dt)} array of shape ({n},)")
        a[k] = v
    for k, (n, dt) in shapes.items():
        if k not in a:
            a[k] = np.empty(n, dt)
    counts = a["counts"]
    cdef int64_t[::1] cnt = counts
    for i in range(c.n):
        cnt[i] = c.heaps[i].size
    events = a["events"]
    if total:
        dst = <char*><size_t>events.ctypes.data
        self._enter()               # the GIL goes: one caller at a time
        try:
            with nogil:
                _gather_events(c, dst)
        finally:
            self._busy = False
    rng_key, rng_ctr, emit_seq, next_time = a["rng_key"], a["rng_ctr"], a["emit_seq"], a["next_time"]
    a["now"][0] = self._now
    a["tallies"][0] = self._inject_seq
    a["tallies"][1] = self._total_events()
    a["event_size"][0] = sizeof(Event)
    if c.n:
        memcpy(<char*><size_t>rng_key.ctypes.data, c.rng_key, c.n * sizeof(uint64_t))
        memcpy(<char*><size_t>rng_ctr.ctypes.data, c.rng_ctr, c.n * sizeof(uint64_t))
        memcpy(<char*><size_t>emit_seq.ctypes.data, c.emit_seq, c.n * sizeof(uint64_t))
        memcpy(<char*><size_t>next_time.ctypes.data, c.next_time, c.n * sizeof(double))
    return {"counts": counts, "events": events, "rng_key": rng_key, "rng_ctr": rng_ctr,
            "emit_seq": emit_seq, "next_time": next_time,
            "now": a["now"], "tallies": a["tallies"], "event_size": a["event_size"]}


def _import_state(Engine self, state, min_time):
    import numpy as np
    cdef EngineCore* c = &self.core
    cdef lp_id_t i
    cdef int64_t need, bad_lp, bad_j = 0
    cdef int why = 0
    cdef const char* src
    cdef const Event* e
    cdef LocalHeap h
    self._check_idle()
    if not self._initialized:
        raise RuntimeError("import_state() before init()")
    if self._frozen:
        raise RuntimeError("import_state() while LPs are frozen")
    if not isinstance(state, dict):
        raise ValueError(f"import_state(): not an engine state (a {type(state).__name__}, not a dict)")
    want = {"counts": np.int64, "events": np.uint8, "rng_key": np.uint64, "rng_ctr": np.uint64,
            "emit_seq": np.uint64, "next_time": np.float64, "now": np.float64, "tallies": np.uint64,
            "event_size": np.int64}
    for k, dt in want.items():          # as they are: nothing converted
        v = state.get(k)
        if not isinstance(v, np.ndarray) or v.dtype != dt or v.ndim != 1:
            what = ("missing" if v is None else f"a {type(v).__name__}" if not isinstance(v, np.ndarray)
                    else f"{v.dtype} of {v.ndim} dimensions")
            raise ValueError(f"import_state(): not an engine state: snapshot array 'engine/{k}': {what}, want a 1-d "
                             f"{np.dtype(dt)} array")
    if state["event_size"].shape != (1,) or int(state["event_size"][0]) != sizeof(Event):
        raise ValueError(f"import_state(): snapshot array 'engine/event_size': events of "
                         f"{state['event_size'].tolist()} bytes, this build's are {sizeof(Event)}")
    for k in ("counts", "rng_key", "rng_ctr", "emit_seq", "next_time"):
        if state[k].shape != (c.n,):
            raise ValueError(f"import_state(): snapshot array 'engine/{k}': a state of "
                             f"{state[k].shape[0]} LPs, this engine has {c.n}")
    for k, m in (("now", 1), ("tallies", 2)):
        if state[k].shape != (m,):
            raise ValueError(f"import_state(): snapshot array 'engine/{k}': shape {state[k].shape}, want ({m},)")
    counts = np.ascontiguousarray(state["counts"])
    events = np.ascontiguousarray(state["events"])
    arrays = {k: np.ascontiguousarray(state[k]) for k in ("rng_key", "rng_ctr", "emit_seq")}
    now = float(state["now"][0])
    if not np.isfinite(now):
        raise ValueError(f"import_state(): snapshot array 'engine/now': {now!r} is not a finite time")
    tallies = state["tallies"]
    if int(tallies[1]) > 2**62:
        raise ValueError(f"import_state(): snapshot array 'engine/tallies': {int(tallies[1])} events executed")
    if (counts < 0).any() or (counts > c.max_pending_per_lp).any():
        raise ValueError("import_state(): snapshot array 'engine/counts': pending-event counts out of range")
    if events.shape != (int(counts.sum()) * sizeof(Event),):
        raise ValueError(f"import_state(): snapshot array 'engine/events': {events.shape[0]} bytes, the "
                         f"counts say {int(counts.sum())} events of {sizeof(Event)}")
    lo = _clocks(min_time, now, c.n, "import_state()")
    for i in range(c.n):
        if c.inbox[i] != NULL:
            raise RuntimeError(f"import_state(): LP {i} has messages in flight")
    cdef const int64_t[::1] cnt = counts
    cdef const double[::1] lov = lo
    src = <const char*><size_t>events.ctypes.data
    # Into the spares (their old contents are not needed: no realloc copy),
    # each LP's events checked as they go; swapped in once all are.
    if c.spare == NULL:
        c.spare = <LocalHeap*>calloc(c.n, sizeof(LocalHeap))
        if c.spare == NULL:
            raise MemoryError("import_state(): no memory for the spare heaps")
    for i in range(c.n):
        need = cnt[i]
        if need > c.spare[i].cap:
            free(c.spare[i].data)
            c.spare[i].size = 0
            c.spare[i].data = <Event*>seer_heap_realloc(NULL, need, sizeof(Event))
            c.spare[i].cap = 0 if c.spare[i].data == NULL else need
            if c.spare[i].data == NULL:
                raise MemoryError(f"import_state(): no memory for LP {i}'s {need} events")
    if c.n:
        self._enter()               # the GIL goes: one caller at a time
        try:
            with nogil:
                bad_lp = _scatter_checked(c.spare, c.n, &cnt[0], src, &lov[0], &bad_j, &why)
        finally:
            self._busy = False
        if bad_lp >= 0:
            e = &c.spare[bad_lp].data[bad_j]
            err = _queue_error("import_state()", bad_lp, bad_j, why, e.target, e.src, e.time, lov[bad_lp])
            for i in range(c.n):
                c.spare[i].size = 0
            raise err
    for i in range(c.n):
        h = c.heaps[i]
        c.heaps[i] = c.spare[i]
        c.spare[i] = h
        c.spare[i].size = 0
        # the queue's own top, not the state's word for it
        c.next_time[i] = heap_top_time(&c.heaps[i], INFINITY)
    if c.n:
        memcpy(c.rng_key, <const char*><size_t>arrays["rng_key"].ctypes.data, c.n * sizeof(uint64_t))
        memcpy(c.rng_ctr, <const char*><size_t>arrays["rng_ctr"].ctypes.data, c.n * sizeof(uint64_t))
        memcpy(c.emit_seq, <const char*><size_t>arrays["emit_seq"].ctypes.data, c.n * sizeof(uint64_t))
    self._now = now
    self._inject_seq = <uint64_t>tallies[0]
    for i in range(c.max_threads):
        c.ts[i].events = 0
    c.ts[0].events = <int64_t>tallies[1]
    self._retired_events = 0            # (a team of another size before: its total is replaced too)
    return None


def _lp_list(Engine self, lps, what):
    import numpy as np
    a = np.asarray(lps)
    if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
        raise ValueError(f"{what}: lps must be a 1-d array of LP ids, got {lps!r}")
    a = a.astype(np.int64)
    if a.size and (a.min() < 0 or a.max() >= self.core.n):
        raise ValueError(f"{what}: LP ids must be in [0, {self.core.n}), got {a.min()}..{a.max()}")
    if np.unique(a).size != a.size:
        raise ValueError(f"{what}: LP ids repeat")
    return np.ascontiguousarray(a)


def _export_lps(Engine self, lps):
    import numpy as np
    cdef EngineCore* c = &self.core
    cdef int64_t j, k, total = 0, off = 0, m
    cdef lp_id_t i
    cdef char* out
    self._check_idle()
    if not self._initialized:
        raise RuntimeError("export_lps() before init(): there is no state yet")
    if self._frozen:
        raise RuntimeError("export_lps() while LPs are frozen (between freeze_all_but and thaw)")
    ids = _lp_list(self, lps, "export_lps()")
    cdef const int64_t[::1] lp = ids
    m = ids.shape[0]
    counts = np.empty(m, np.int64)
    rng_key = np.empty(m, np.uint64)
    rng_ctr = np.empty(m, np.uint64)
    emit_seq = np.empty(m, np.uint64)
    cdef int64_t[::1] cnt = counts
    cdef uint64_t[::1] rk = rng_key, rc = rng_ctr, es = emit_seq
    for j in range(m):
        i = <lp_id_t>lp[j]
        if c.inbox[i] != NULL:
            raise RuntimeError(f"export_lps(): LP {i} has messages in flight (call it between runs)")
        cnt[j] = c.heaps[i].size
        total += c.heaps[i].size
        rk[j] = c.rng_key[i]
        rc[j] = c.rng_ctr[i]
        es[j] = c.emit_seq[i]
    events = np.empty(total * sizeof(Event), np.uint8)
    if total:
        out = <char*><size_t>events.ctypes.data
        for j in range(m):
            k = cnt[j]
            if k:
                memcpy(out + off, c.heaps[lp[j]].data, k * sizeof(Event))
                off += k * sizeof(Event)
    return {"counts": counts, "events": events, "rng_key": rng_key, "rng_ctr": rng_ctr,
            "emit_seq": emit_seq, "inject_seq": np.array([self._inject_seq], np.uint64)}


def _import_lps(Engine self, lps, state, now, inject_seq, min_time):
    import numpy as np
    cdef EngineCore* c = &self.core
    cdef int64_t j, k, m, off = 0, bad
    cdef int why = 0
    cdef lp_id_t i
    cdef const char* src
    cdef const Event* e
    self._check_idle()
    if not self._initialized:
        raise RuntimeError("import_lps() before init()")
    if self._frozen:
        raise RuntimeError("import_lps() while LPs are frozen")
    ids = _lp_list(self, lps, "import_lps()")
    m = ids.shape[0]
    if not isinstance(state, dict):
        raise ValueError(f"import_lps(): not an LP state (a {type(state).__name__}, not a dict)")
    for k2, dt in (("counts", np.int64), ("events", np.uint8), ("rng_key", np.uint64),
                   ("rng_ctr", np.uint64), ("emit_seq", np.uint64)):
        v = state.get(k2)
        if not isinstance(v, np.ndarray) or v.dtype != dt or v.ndim != 1:
            what = ("missing" if v is None else f"a {type(v).__name__}" if not isinstance(v, np.ndarray)
                    else f"{v.dtype} of {v.ndim} dimensions")
            raise ValueError(f"import_lps(): not an LP state: snapshot array 'engine/{k2}': {what}, want a 1-d "
                             f"{np.dtype(dt)} array")
    counts = np.ascontiguousarray(state["counts"])
    events = np.ascontiguousarray(state["events"])
    arrays = [np.ascontiguousarray(state[k2]) for k2 in ("rng_key", "rng_ctr", "emit_seq")]
    if counts.shape != (m,) or any(a.shape != (m,) for a in arrays):
        raise ValueError(f"import_lps(): a state of {counts.shape[0]} LPs for {m} LP ids")
    if m and ((counts < 0).any() or (counts > c.max_pending_per_lp).any()):
        raise ValueError("import_lps(): snapshot array 'engine/counts': pending-event counts out of range")
    if events.shape != (int(counts.sum()) * sizeof(Event),):
        raise ValueError("import_lps(): snapshot array 'engine/events': the event bytes do not match the counts")
    t_now = self._now if now is None else float(now)
    if not np.isfinite(t_now):
        raise ValueError(f"import_lps(): now {t_now!r} is not a finite time")
    if isinstance(inject_seq, bool) or not isinstance(inject_seq, (int, np.integer)) or \
            not 0 <= inject_seq < 2**64:
        raise ValueError(f"import_lps(): inject_seq must be an int in [0, 2**64), got {inject_seq!r}")
    lo = _clocks(min_time, t_now, m, "import_lps()")
    cdef const int64_t[::1] lp = ids
    cdef const int64_t[::1] cnt = counts
    cdef const double[::1] lov = lo
    for j in range(m):
        if c.inbox[lp[j]] != NULL:
            raise RuntimeError(f"import_lps(): LP {lp[j]} has messages in flight")
    src = <const char*><size_t>events.ctypes.data
    for j in range(m):                  # every event checked first: nothing changes if one is bad
        k = cnt[j]
        if k:
            bad = _check_queue(<const Event*>(src + off), k, <lp_id_t>lp[j], c.n, lov[j], &why)
            if bad >= 0:
                e = <const Event*>(src + off) + bad
                raise _queue_error("import_lps()", lp[j], bad, why, e.target, e.src, e.time, lov[j])
            off += k * sizeof(Event)
    for j in range(m):                  # room next: nothing changes if memory runs out
        _heap_room(c, <lp_id_t>lp[j], cnt[j], "import_lps()")
    off = 0
    cdef const uint64_t[::1] rk = arrays[0], rc = arrays[1], es = arrays[2]
    for j in range(m):
        i = <lp_id_t>lp[j]
        k = cnt[j]
        if k:
            memcpy(c.heaps[i].data, src + off, k * sizeof(Event))
            off += k * sizeof(Event)
        c.heaps[i].size = k
        c.next_time[i] = heap_top_time(&c.heaps[i], INFINITY)
        c.rng_key[i] = rk[j]
        c.rng_ctr[i] = rc[j]
        c.emit_seq[i] = es[j]
    if m == c.n or t_now < self._now:
        self._now = t_now
    if <uint64_t>inject_seq > self._inject_seq:
        self._inject_seq = <uint64_t>inject_seq
    return None
