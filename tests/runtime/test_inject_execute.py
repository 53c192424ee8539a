# SPDX-License-Identifier: BSD-3-Clause
"""``Engine.inject(..., execute=True)``: an injected event that is its LP's
next one runs at once instead of going through the LP's queue.  Once the
engine has run past it, everything equals the queued injection, at every
thread count; where the event is not the LP's next, it is queued."""

import pytest

from seer_runtime import ContractViolation, Engine
from seer_runtime.models import phold
from seer_runtime.models._faulty import FaultyModel

THREADS = [1, 2, 3, 4]


def _ring(threads, mode="none", fault_time=3.0, **kw):
    # every LP has one event at each integer time and sends one message per
    # event to its right neighbour, one lookahead (1.0) later
    return Engine(FaultyModel(32, mode, fault_lps=[5, 9], fault_time=fault_time),
                  num_threads=threads, **kw)


def _inject(eng, *args, **kw):
    """Inject; returns how many of the events ran at once."""
    before = eng.stats()["events"]
    eng.inject(*args, **kw)
    return eng.stats()["events"] - before


def _steps(eng, execute, times):
    eng.run_until(1.5)
    executed = []
    for t in times:
        executed.append(_inject(eng, t, 0, execute=execute))
        eng.run_until(t + 0.55)
    return eng.state_digest(), eng.stats()["events"], executed


@pytest.mark.parametrize("threads", THREADS)
def test_executed_injections_equal_queued_ones_and_send_messages(threads):
    # Each time is before every LP's next event (the integer times, and the
    # chains the earlier injections started) and under now + lookahead: every
    # LP runs the event at once, and its handler sends a message (drained
    # after the phase).
    times = [1.8, 2.5, 3.2, 3.77]
    queued = _steps(_ring(1), False, times)
    got = _steps(_ring(threads), True, times)
    assert got[:2] == queued[:2]
    assert queued[2] == [0, 0, 0, 0]
    assert got[2] == [32, 32, 32, 32]


def test_an_event_that_is_not_the_lps_next_is_queued():
    eng = _ring(2)
    eng.run_until(3.0)                  # every LP has an event pending at t = 3.0
    n = eng.pending()
    # it sorts after them (same time, the environment's source)
    assert _inject(eng, 3.0, 0, execute=True) == 0
    assert eng.pending() == n + 32


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_nothing_runs_early_where_a_message_could_still_come_first(seed):
    # LP 1 has nothing pending, but LP 0's event at 0.2 may send it one
    # before 2.5 (delays 1.0 + Exp(0.2)): at or after now + lookahead the
    # event is queued.
    digests = []
    for execute in (False, True):
        model, eng = phold.make(2, num_threads=1, seed=seed, start_events=0, remote_fraction=1.0,
                                mean_delay=1.2)
        eng.inject(0.2, 0, 0, 1)
        assert _inject(eng, 2.5, 0, 1, 2, execute=execute) == 0
        eng.run_until(6.0)
        digests.append(eng.state_digest())
    assert digests[0] == digests[1]


def test_frozen_engines_queue_every_injection():
    eng = _ring(2)
    eng.run_until(2.5)
    eng.freeze_all_but([0], 8)
    assert _inject(eng, 2.75, 0, 0, 8, execute=True) == 0
    eng.thaw()
    assert _inject(eng, 2.75, 0, 8, 16, execute=True) == 8


def _error(threads, execute):
    eng = _ring(threads, "model_error", fault_time=2.5)
    eng.run_until(2.0)
    try:
        eng.inject(2.5, 0, execute=execute)     # LPs 5 and 9 fail from t = 2.5 on
        eng.run_until(5.0)
    except ContractViolation as e:
        return (e.reason, str(e), e.time, e.now, e.source, e.target, e.kind, e.code)
    raise AssertionError("no ContractViolation")


def test_a_failing_executed_handler_raises_the_queued_runs_error():
    queued = {t: _error(t, False) for t in THREADS}
    executed = {t: _error(t, True) for t in THREADS}
    assert queued[1][0] == "model" and queued[1][5] == 5 and queued[1][2] == 2.5
    assert "the environment" in queued[1][1]
    assert all(queued[t] == queued[1] for t in THREADS)
    assert all(executed[t] == queued[1] for t in THREADS)


def _cap_error(threads, execute):
    # one message per event, to a random LP: 64 injected events send 64
    model, eng = phold.make(64, num_threads=threads, start_events=0, remote_fraction=1.0,
                            max_messages_per_round=40)
    try:
        eng.inject(0.5, 0, execute=execute)
        eng.run_until(1.0)
    except ContractViolation as e:
        return (e.reason, str(e))
    raise AssertionError("no ContractViolation")


def test_an_executed_handlers_messages_count_against_the_message_cap():
    want = ("messages_full", "one round's cross-entity messages exceed max_messages_per_round: "
            "the round sent 64 cross-entity events, the cap is 40")
    for threads in THREADS:
        assert _cap_error(threads, True) == want
        assert _cap_error(threads, False) == want
