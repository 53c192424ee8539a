# SPDX-License-Identifier: BSD-3-Clause
# The timestamped event loop and its worker threads (docs/runtime.md, "How a run proceeds").

from libc.stdint cimport int32_t, int64_t, uint64_t
from seer_runtime.contract cimport (Event, LPType, Ctx, lp_id_t, sim_time_t)
from seer_runtime.queue cimport LocalHeap, MessageArena
from seer_runtime.scenario cimport Scenario, seer_range_fn

# Everything one worker thread owns.  One per thread, padded so that two
# threads' hot counters never share a cache line.
ctypedef struct ThreadState:
    MessageArena arena          # this thread's in-flight cross-LP messages
    lp_id_t* dirty              # LPs whose inbox this thread made non-empty this round,
                                #   grouped by owner: owner k's at [part_lo(k), part_lo(k) + ndirty[k])
    int64_t* ndirty             # per owner thread (max_threads)
    int32_t team                # partitions of the current run (the engine's num_threads)
    lp_id_t* ready              # partition k's segment of the executive list (in ts[k])
    int64_t nready
    Event* outbox               # SEER_OUTBOX_CAPACITY scratch events for hook calls
    double local_min            # min pending time over partition k (in ts[k])
    # statistics (cumulative)
    int64_t events              # events executed
    int64_t lps_executed        # executive-list entries executed
    int64_t pushes              # inbox pushes (cross-LP events sent)
    int64_t cas_retries         # failed CAS attempts in inbox pushes
    int64_t busy_ns             # time working in phases (ns)
    int64_t idle_ns             # thread 0: time waiting for members to leave a phase (ns)
    int64_t phase_ns            # time in the last phase this thread ran (ns)
    int64_t drained             # drain-phase work items (messages and LPs planned)
    int64_t phases              # phases this thread worked in
    int64_t round_msgs          # cross-LP messages sent (or refused) this round
    int64_t windows             # copy groups: windows run (cumulative)
    int64_t cg_copy             # copy groups: 1 + the copy this thread is running (0: none)
    int32_t err_cross           # the recorded error is a message out of its copy (copy groups)
    int32_t nerr                # errors recorded (copy groups: did this window fail?)
    double err_last             # time key of the last class-0 error recorded (copy groups)
    # the error of this thread that comes first in serial order (err_code == 0:
    # none); ordered by the key (err_class, handled event's time, src, seq, LP)
    int32_t err_code
    int32_t err_class           # 0: while handling an event or init; 1: delivering messages
    int32_t err_kind            # event kind
    double err_time             # the offending event's time
    double err_now              # simulated time of the hook that caused it
    lp_id_t err_src             # source LP
    lp_id_t err_target          # target LP
    int64_t err_count           # pending events, for queue and memory errors
    double key_time             # the key of the event being handled
    lp_id_t key_src
    lp_id_t key_lp
    uint64_t key_seq
    char _pad[64]

# State shared by all workers of a run.  Written only between phases by
# thread 0, except the claim counters, abort and err_bound (atomics).
ctypedef struct RunShared:
    int64_t* cursor             # per segment, padded to 8 int64: next index to claim
    int64_t* pclaim             # per partition, padded to 8 int64: claimed when > 0
    double ns_exec              # thread 0's cost per executive-list entry (average)
    double ns_drain             # thread 0's cost per drain-phase item (average)
    int64_t last_run_ns         # wall time of the last run slice
    int64_t wanted              # phases of this run slice estimated at or over the wake threshold
    int64_t sized               # ... and at or over the grain
    int64_t opened              # phases opened to the team (cumulative)
    int32_t narrow              # run the next slice on one partition (see _team_call)
    int32_t width               # after a straggler: phases open to this many threads (0: all)
    int64_t width_until_ns      # ... until this monotonic time
    int64_t straggles           # phases whose caller waited long for a member (cumulative)
    int64_t straggle_mult       # how long a straggle narrows the team, in waits (escalates)
    int64_t straggle_span_ns    # the last narrowing's length
    int32_t abort               # set by any worker on error
    int32_t deadline_hit        # thread 0: wall budget of this region used up
    int32_t finished            # thread 0: no pending event before t_end
    int32_t _pad1
    double t_end                # run boundary: events with time < t_end execute
    int64_t deadline_ns         # monotonic clock deadline of this region
    int64_t rounds              # windows executed (cumulative)
    int64_t ready_total         # executive-list entries over all rounds
    int64_t max_round_events    # largest number of events in one round
    int64_t last_events         # events counted at the previous plan
    int64_t err_bound           # bits of the smallest error time recorded (a double >= 0;
                                #   the bits of non-negative doubles order like the values)
    int64_t max_events          # event budget of one run_until (-1: none)
    int64_t events_base         # events counted when this run_until started
    int64_t max_msgs            # max_messages_per_round
    int64_t msgs_over           # messages of the round that exceeded max_msgs (0: none)
    int32_t stuck               # a window could not advance (T + lookahead == T)
    int32_t budget_hit          # the run's events exceeded max_events
    double stuck_T              # the T of that window
    int64_t last_lps            # ready LPs executed, counted at the previous plan
    int64_t test_sleep_ns       # test hook: worker test_sleep_tid sleeps this long per round
    int32_t test_sleep_tid
    int32_t test_sleep_force    # the hook also opens and wakes every phase
    char _pad2[64]

# Copy groups (see "Copy groups" in loop.pyx): one copy's run within a
# run_until call, written only by the member running that copy.  64 bytes:
# copies run by different members never share a cache line.
ctypedef struct CopyRun:
    int64_t events              # events of this run_until call
    int64_t msgs_over           # a window's messages over max_messages_per_round (0: none)
    int64_t windows             # windows of this run_until call
    double stuck_T              # the T of a window that could not advance
    int32_t state               # 0: running, 1: finished (nothing before t_end), 2: stopped
    int32_t stuck
    int32_t budget              # its own events exceeded max_events_per_run
    char _pad[20]

ctypedef struct EngineCore:
    LPType lptype
    void* model
    lp_id_t n                   # number of LPs
    sim_time_t lookahead        # cross-LP minimum delay (time units)
    int32_t max_threads         # per-thread arrays are sized for this many
    int64_t max_pending_per_lp  # cap on one LP's local queue
    LocalHeap* heaps            # n local queues
    void** inbox                # n inbox heads (InboxNode*)
    sim_time_t* next_time       # n earliest pending times (inf when none)
    uint64_t* rng_key           # n stream keys
    uint64_t* rng_ctr           # n stream counters
    uint64_t* emit_seq          # n emission counters (the event key)
    ThreadState* ts             # max_threads thread states
    RunShared* sh
    # copy groups (cg_copies == 0: off): copy c's LPs are, for each block b,
    # [cg_base[b] + c * cg_size[b], cg_base[b] + (c + 1) * cg_size[b])
    int64_t cg_copies
    int32_t cg_nblocks
    int64_t* cg_base
    int64_t* cg_size
    CopyRun* cg_runs
    seer_range_fn cg_end_fn     # during a run with copy_end: called per copy at its end
    void* cg_end_arg
    # n spare heaps (NULL until the first import_state): an import writes
    # into them and swaps them in only once every event passed its checks;
    # the heaps it replaced are the next import's spares.
    LocalHeap* spare


cdef class Engine:
    cdef EngineCore core
    cdef readonly Scenario scenario
    cdef readonly uint64_t seed
    cdef int32_t _num_threads
    cdef int64_t max_messages_per_round
    cdef double _now
    cdef bint _initialized
    cdef bint _failed
    cdef bint _frozen               # between freeze_all_but and thaw
    cdef uint64_t _inject_seq
    cdef object _max_events_per_run
    cdef double _wall_s
    cdef double _slice_s
    # totals of thread teams replaced by a num_threads change
    cdef int64_t _retired_events
    cdef int64_t _retired_pushes
    cdef int64_t _retired_retries
    # set (with the GIL) while a call runs the team: one caller at a time
    cdef bint _busy
    cdef object _cg_layout          # copy groups: (blocks, num_copies)

    cdef int _alloc_threads(self, int32_t nthreads) except -1
    cdef void _free_threads(self) noexcept
    cdef int _first_error(self)
    cdef int _raise_errors(self) except -1
    cdef int64_t _total_events(self)
    # Inject one event of `kind` at `time` into every LP in [lo, hi), with
    # payload word i[0] = LP - lo (execute: see Engine.inject).  Called with
    # the GIL, between runs; it releases the GIL for the pushes.  Raises
    # RuntimeError when another thread is using the engine.
    cdef int inject_range(self, sim_time_t time, int32_t kind, lp_id_t lo,
                          lp_id_t hi, bint execute=*) except -1
    cdef int _inject_range_locked(self, sim_time_t time, int32_t kind, lp_id_t lo,
                                  lp_id_t hi, bint execute) except -1
    cdef bint _can_execute(self, double time)
    cdef int _enter(self) except -1
    cdef int _check_idle(self) except -1
