# SPDX-License-Identifier: BSD-3-Clause
"""The runtime's behaviour at its edges: errors that do not depend on the
thread count, out-of-memory, event budgets, windows that cannot advance."""

import pytest

from seer_runtime import ContractViolation, Engine
from seer_runtime.loop import _set_test_heap_slot_limit
from seer_runtime._errors import OutOfMemory
from seer_runtime.models import phold
from seer_runtime.models._faulty import FaultyModel

from seer_test_helpers import contract_error

THREADS = [1, 2, 3, 4]


def _phold_error(threads, seed, end=60.0, **kw):
    def go():
        model, eng = phold.make(kw.pop("num_lps", 64), num_threads=threads, seed=seed, **kw)
        eng.run_until(end)
    return contract_error(go)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("params", [
    # remote events pile up: LPs overflow as messages are delivered
    dict(start_events=6, max_pending_per_lp=8, remote_fraction=0.9, mean_delay=1.5),
    # self events: overflow while handling (start at the cap, more per event)
    dict(num_lps=256, start_events=4, max_pending_per_lp=5, remote_fraction=0.3,
         lookahead=0.5, mean_delay=0.6),
])
def test_phold_queue_overflow_is_the_same_error_at_every_thread_count(params, seed):
    errors = {t: _phold_error(t, seed, **dict(params)) for t in THREADS}
    assert errors[1][1] == "queue_full"
    assert all(errors[t] == errors[1] for t in THREADS), errors


@pytest.mark.parametrize("seed", [0, 7])
def test_message_cap_is_the_same_error_at_every_thread_count(seed):
    errors = {t: _phold_error(t, seed, num_lps=512, remote_fraction=1.0, start_events=2,
                              max_messages_per_round=600) for t in THREADS}
    assert errors[1][1] == "messages_full" and "cap is 600" in errors[1][2]
    assert all(errors[t] == errors[1] for t in THREADS), errors


def _faulty_error(threads, mode, fault_lps, **kw):
    def go():
        eng = Engine(FaultyModel(16, mode, fault_lps=fault_lps, fault_time=3.0),
                     num_threads=threads, **kw)
        eng.run_until(10.0)
    return contract_error(go)


@pytest.mark.parametrize("mode, reason", [("past", "past"), ("lookahead", "lookahead"),
                                          ("bad_target", "bad_target"), ("model_error", "model"),
                                          ("outbox", "outbox_full")])
def test_several_faults_in_one_window_raise_the_serially_first(mode, reason):
    # At t=3 LP i handles the event LP i-1 sent: the serially first of the
    # faulting LPs {0, 5, 9, 14} is LP 5 (its event comes from LP 4; LP 0's
    # from LP 15), not the smallest LP.
    errors = {t: _faulty_error(t, mode, [14, 0, 9, 5]) for t in THREADS}
    err = errors[1]
    assert err[1] == reason and err[4] == 3.0, err
    # emitted by LP 5 (a scheduling fault) or handled by it (a hook's error code)
    assert err[5] == 5 or (err[5] == 4 and err[6] == 5), err
    assert all(errors[t] == errors[1] for t in THREADS), errors


def test_init_errors_name_the_smallest_failing_lp_at_every_thread_count():
    errors = {t: _faulty_error(t, "init_error", [13, 6, 11]) for t in THREADS}
    assert errors[1][1] == "model" and errors[1][6] == 6 and "-7777" in errors[1][2]
    assert all(errors[t] == errors[1] for t in THREADS), errors


@pytest.mark.parametrize("threads", [1, 3])
def test_a_hook_that_ignores_a_full_outbox_still_gets_an_error(threads):
    err = _faulty_error(threads, "outbox_ignored", [5])
    assert err[1] == "outbox_full" and err[6] == 5


@pytest.mark.parametrize("threads", [1, 2])
def test_inject_range_overflow_is_raised_at_every_thread_count(threads):
    model, eng = phold.make(4, num_threads=threads, start_events=0, max_pending_per_lp=1)
    eng.inject(1.0, 0)          # one pending event per LP: at the cap
    with pytest.raises(ContractViolation) as info:
        eng.inject(2.0, 0)
    e = info.value
    assert e.reason == "queue_full" and e.target == 0 and e.source is None
    assert "into LP 0" in str(e) and "max_pending_per_lp (1)" in str(e)
    with pytest.raises(RuntimeError, match="create a new one"):
        eng.run_until(3.0)


def test_inject_range_reports_the_smallest_failing_lp():
    msgs = set()
    for threads in THREADS:
        model, eng = phold.make(64, num_threads=threads, start_events=0, max_pending_per_lp=1)
        eng.inject(1.0, 0, 40, 64)
        with pytest.raises(ContractViolation) as info:
            eng.inject(2.0, 0, 0, 64)
        assert info.value.target == 40
        msgs.add(str(info.value))
    assert len(msgs) == 1


@pytest.fixture
def heap_slot_limit():
    yield _set_test_heap_slot_limit
    _set_test_heap_slot_limit(0)


@pytest.mark.parametrize("threads", [1, 2])
def test_allocation_failure_is_out_of_memory_not_a_full_queue(heap_slot_limit, threads):
    heap_slot_limit(8)          # heaps grow 4, 8, then 16 is refused
    eng = Engine(FaultyModel(16, "flood", fault_lps=[5], fault_time=3.0), num_threads=threads)
    with pytest.raises(OutOfMemory) as info:
        eng.run_until(10.0)
    e = info.value
    assert isinstance(e, MemoryError) and isinstance(e, ContractViolation)
    assert e.reason == "out_of_memory" and e.target == 5
    assert str(e).startswith("out of memory: 8 pending events on LP 5")


def test_allocation_failure_when_injecting(heap_slot_limit):
    model, eng = phold.make(4, num_threads=2, start_events=0)
    heap_slot_limit(4)
    for k in range(4):
        eng.inject(1.0 + k, 0)
    with pytest.raises(OutOfMemory, match="out of memory: 4 pending events on LP 0"):
        eng.inject(9.0, 0)


def test_without_the_limit_the_same_run_succeeds(heap_slot_limit):
    heap_slot_limit(0)
    eng = Engine(FaultyModel(16, "none"), num_threads=2)
    eng.run_until(10.0)
    assert eng.stats()["events"] == 16 * 9


@pytest.mark.parametrize("seed", [0, 3])
def test_event_budget_trips_in_the_same_window_at_every_thread_count(seed):
    # about 1024 events per time unit: a budget of 5000 trips near t = 5
    out = {}
    for t in THREADS:
        model, eng = phold.make(1024, num_threads=t, seed=seed, max_events_per_run=5000)
        eng.run_until(3.0)      # within budget: ~2000 events
        err = contract_error(lambda: eng.run_until(20.0))
        out[t] = (err, eng.stats()["events"])
    assert out[1][0][1] == "event_budget" and "(5000)" in out[1][0][2]
    assert 2000 + 5000 < out[1][1] < 2000 + 5000 + 1024 * 2
    assert all(out[t] == out[1] for t in THREADS), out


def test_event_budget_stops_a_storm_inside_one_window():
    errors = {t: _faulty_error(t, "storm", [3, 7], max_events_per_run=10_000) for t in THREADS}
    assert errors[1][1] == "event_budget" and errors[1][6] == 3 and "LP 3 alone" in errors[1][2]
    assert all(errors[t] == errors[1] for t in THREADS), errors


def test_event_budget_validation_and_default():
    model, eng = phold.make(8, num_threads=1)
    assert eng.max_events_per_run is None
    eng.max_events_per_run = 100
    assert eng.max_events_per_run == 100
    for bad in (0, -1, 1.5, True, 2**63):
        with pytest.raises(ValueError, match="max_events_per_run"):
            eng.max_events_per_run = bad


@pytest.mark.parametrize("threads", THREADS)
def test_a_window_that_cannot_advance_is_an_error_not_a_spin(threads):
    # Events reach t ~ 1e3 at once; there 1e3 + 1e-17 == 1e3.
    model, eng = phold.make(64, num_threads=threads, seed=2, lookahead=1e-17, mean_delay=1000.0)
    err = contract_error(lambda: eng.run_until(1e6))
    assert err[1] == "stuck_window" and "rounds back" in err[2]
    assert err[3] + 1e-17 == err[3]
    ref = contract_error(lambda: phold.make(64, num_threads=1, seed=2, lookahead=1e-17,
                                    mean_delay=1000.0)[1].run_until(1e6))
    assert err == ref


def test_phold_parameters_out_of_c_range_are_value_errors():
    for kw, match in [(dict(work_iters=2**64), "work_iters must be <= 100000000"),
                      (dict(work_iters=10**13), "work_iters must be <= 100000000"),
                      (dict(start_events=256), "start_events"),
                      (dict(lookahead=float("inf")), "lookahead"),
                      (dict(lookahead=0.0), "lookahead"),
                      (dict(lookahead=2.0, mean_delay=1.0), "mean_delay")]:
        with pytest.raises(ValueError, match=match):
            phold.make(4, num_threads=1, **kw)
    with pytest.raises(ValueError, match="work_iters"):
        phold.PholdModel(4, 1.0, 1.0, 0.5, 1, 2**64)
    with pytest.raises(ValueError, match=r"lookahead must be >= end_time \* 2\*\*-50"):
        phold.run(num_lps=4, end_time=1e3, num_threads=1, lookahead=1e-17, mean_delay=1.0)


def test_envs_bound_their_emits_by_the_runtimes_outbox():
    # one source: the envs' bounds read the runtime's capacity
    from seer_runtime.loop import OUTBOX_CAPACITY
    from seer_envs.pcs.config import PCSConfig
    assert OUTBOX_CAPACITY == 256
    PCSConfig(portables_per_cell=OUTBOX_CAPACITY)
    with pytest.raises(ValueError, match="portables_per_cell"):
        PCSConfig(portables_per_cell=OUTBOX_CAPACITY + 1)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
def test_errors_match_across_many_thread_counts(seed):
    cases = [dict(num_lps=512, start_events=6, max_pending_per_lp=8, remote_fraction=0.9,
                  mean_delay=1.5),
             dict(num_lps=2048, start_events=4, max_pending_per_lp=5, remote_fraction=0.3,
                  lookahead=0.5, mean_delay=0.6),
             dict(num_lps=2048, remote_fraction=1.0, start_events=2, max_messages_per_round=1500),
             dict(num_lps=1024, max_events_per_run=20_000)]
    for params in cases:
        errors = {t: _phold_error(t, seed, **dict(params)) for t in (1, 2, 3, 5, 8)}
        assert all(errors[t] == errors[1] for t in errors), (params, errors)


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_inject_blocks_report_the_first_failing_entry_at_every_thread_count(threads):
    # inject_blocks runs as a phase of chunks claimed by any member: the entry
    # reported is still the first in block order, whichever member met it.
    model, eng = phold.make(64, num_threads=threads, start_events=0, max_pending_per_lp=1)
    eng.inject(1.0, 0, 36, 37)          # LP 36 at the cap (first block)
    eng.inject(1.0, 0, 12, 13)          # LP 12 too (second block, a smaller id)
    with pytest.raises(ContractViolation) as info:
        eng.inject_blocks(2.0, 0, [32, 8, 48], 8)     # block order: 32..39, 8..15, 48..55
    e = info.value
    assert e.reason == "queue_full" and e.target == 36 and "into LP 36" in str(e)


def test_inject_blocks_give_the_same_state_at_every_thread_count():
    digests = set()
    for threads in (1, 2, 3, 4):
        _, eng = phold.make(256, num_threads=threads, seed=3, start_events=0)
        for k in range(4):
            eng.inject_blocks(float(k), 0, [200, 0, 100, 40 + 10 * k], 30)
            eng.run_until(k + 1.0)
        digests.add(eng.state_digest())
    assert len(digests) == 1


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_overlapping_inject_blocks_are_refused_before_anything_is_injected(threads):
    # Two events with one key in an LP would have no defined order (and two
    # threads could push to its queue at once).
    _, eng = phold.make(256, num_threads=threads, seed=3, start_events=0)
    eng.init(0.0)
    with pytest.raises(ValueError, match=r"LP blocks \[90, 120\) and \[100, 130\) overlap"):
        eng.inject_blocks(0.0, 0, [200, 100, 0, 90], 30)
    assert eng.pending() == 0
    eng.inject_blocks(0.0, 0, [200, 100, 0, 70], 30)      # touching, not overlapping
    assert eng.pending() == 120
