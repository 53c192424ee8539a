# SPDX-License-Identifier: BSD-3-Clause
"""Copy groups (``Engine.set_copy_groups``): an engine of copies that never
meet runs each slice as one phase, every thread taking whole copies.  The
same state as the round-by-round team at every thread count, and the same
errors at every thread count (handling errors: the team's too)."""

import math
import time

import pytest

import seer_runtime

from seer_runtime import ContractViolation, Engine
from seer_runtime.models import phold
from seer_runtime.models._faulty import FaultyModel

from seer_test_helpers import contract_error

THREADS = [1, 2, 3, 4]
COPIES, LPS = 6, 16


def _faulty(threads, mode, fault_lps, groups=True, blocks=None, copies=COPIES, **kw):
    eng = Engine(FaultyModel(copies * LPS, mode, fault_lps=fault_lps, fault_time=3.0,
                             copy_lps=LPS),
                 num_threads=threads, **kw)
    if groups:
        eng.set_copy_groups(blocks or [(0, LPS)], copies)
    return eng


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("ends", [[10.0], [2.5, 2.5, 7.25, 30.0]])
def test_copy_groups_state_equals_the_team(threads, ends):
    team = _faulty(1, "none", [], groups=False)
    eng = _faulty(threads, "none", [])
    assert eng.copy_groups == (((0, LPS),), COPIES) and team.copy_groups is None
    for t in ends:
        assert eng.run_until(t) == team.run_until(t)
        assert eng.state_digest() == team.state_digest()
        assert eng.now == team.now == t
    # every copy's windows, summed (a window covers one copy's LPs)
    assert eng.stats()["rounds"] > team.stats()["rounds"]


@pytest.mark.skipif(not seer_runtime.openmp_enabled(), reason="serial build")
def test_a_member_that_falls_behind_has_its_copies_taken_and_nothing_changes():
    # Member 1 sleeps 2 ms after each copy it runs, as a member preempted by
    # another process does; the caller takes the rest of member 1's copies
    # and the state is the team's.
    ref_model, ref = phold.make(4096, num_threads=1, seed=4, remote_fraction=0.0)
    model, eng = phold.make(4096, num_threads=2, seed=4, remote_fraction=0.0)
    eng.set_copy_groups([(0, 64)], 64)
    eng._set_test_sleep(1, 0.002, True)
    for t in (10.0, 20.0, 40.0):
        ref.run_until(t)
        eng.run_until(t)
        assert model.digest(eng) == ref_model.digest(ref)
    caller, member = (s["events"] for s in eng._thread_stats()[:2])
    assert member > 0 and caller > 2 * member, (caller, member)


def test_two_blocks_per_copy_and_phold_copies_of_one_lp():
    # PHOLD without remote events: copy c is LPs c and 32 + c (two blocks)
    for t in THREADS:
        ref_model, ref = phold.make(64, num_threads=1, seed=4, remote_fraction=0.0)
        model, eng = phold.make(64, num_threads=t, seed=4, remote_fraction=0.0)
        eng.set_copy_groups([(0, 1), (32, 1)], 32)
        ref.run_until(40.0)
        eng.run_until(40.0)
        assert model.digest(eng) == ref_model.digest(ref)


@pytest.mark.parametrize("mode, reason", [("past", "past"), ("lookahead", "lookahead"),
                                          ("bad_target", "bad_target"), ("model_error", "model"),
                                          ("outbox", "outbox_full")])
def test_handling_errors_are_the_teams_at_every_thread_count(mode, reason):
    # faults in three copies; the serially first is LP 21 (copy 1), whose
    # event at t=3 comes from LP 20
    lps = [14 + 5 * LPS, 21, 9 + 3 * LPS, 0 + 5 * LPS]
    ref = contract_error(lambda: _faulty(1, mode, lps, groups=False).run_until(10.0))
    assert ref[1] == reason and ref[4] == 3.0
    for t in THREADS:
        assert contract_error(lambda: _faulty(t, mode, lps).run_until(10.0)) == ref


# Many copies: a member runs up to 8 of its copies side by side, one window
# of each per pass; copies 9 and 10 fail in one pass while the pass's other
# copies go on, and copy 37's fault comes later in the copy order.
MANY = 40


@pytest.mark.parametrize("mode", ["past", "model_error", "flood"])
def test_copies_side_by_side_fail_alone_and_report_the_teams_error(mode):
    lps = [9 * LPS + 4, 10 * LPS + 2, 37 * LPS + 7]
    kw = dict(max_pending_per_lp=50) if mode == "flood" else {}
    ref = contract_error(lambda: _faulty(1, mode, lps, groups=False, copies=MANY, **kw)
                         .run_until(10.0))
    for t in THREADS:
        assert contract_error(lambda: _faulty(t, mode, lps, copies=MANY, **kw)
                              .run_until(10.0)) == ref


@pytest.mark.parametrize("threads", THREADS)
def test_copies_side_by_side_count_messages_per_copy_and_keep_the_teams_state(threads):
    # one message per LP per window: 16 a copy window, 128 a pass of 8 copies
    _faulty(threads, "none", [], copies=MANY, max_messages_per_round=LPS).run_until(10.0)
    err = contract_error(lambda: _faulty(threads, "none", [], copies=MANY,
                                         max_messages_per_round=LPS - 1).run_until(10.0))
    assert err[1] == "messages_full" and "sent 16 " in err[2], err
    eng = _faulty(threads, "none", [], copies=MANY)
    ref = _faulty(1, "none", [], groups=False, copies=MANY)
    for t in (3.5, 10.0):
        assert eng.run_until(t) == ref.run_until(t)
        assert eng.state_digest() == ref.state_digest()


def test_a_message_to_another_copy_is_refused_at_every_thread_count():
    # the engine is told copies of 8 LPs, but the model's rings are 16 long
    errors = {t: _cross(t) for t in THREADS}
    err = errors[1]
    assert err[1] == "bad_target" and "their own copy" in err[2], err
    assert err[5] == 7 and err[6] == 8, err     # LP 7 (copy 0) sends to LP 8 (copy 1)
    assert all(errors[t] == err for t in THREADS), errors


def _cross(threads):
    eng = Engine(FaultyModel(COPIES * LPS, "none", fault_lps=[], copy_lps=LPS),
                 num_threads=threads)
    eng.set_copy_groups([(0, LPS // 2)], COPIES * 2)
    return contract_error(lambda: eng.run_until(10.0))


def test_flooded_queue_is_the_same_error_at_every_thread_count():
    errors = {t: contract_error(lambda: _faulty(t, "flood", [5, 3 * LPS + 2],
                                        max_pending_per_lp=50).run_until(10.0))
              for t in THREADS}
    assert errors[1][1] == "queue_full"
    assert all(errors[t] == errors[1] for t in THREADS), errors
    # here every copy's windows are the team's rounds ([k, k + 1): the LPs
    # keep in step), so the queues hold what the team's hold
    assert contract_error(lambda: _faulty(1, "flood", [5, 3 * LPS + 2], groups=False,
                                  max_pending_per_lp=50).run_until(10.0)) == errors[1]


def test_message_cap_counts_per_copy_window():
    # one message per LP per window: 16 a copy window; 96 a team round
    ok = _faulty(2, "none", [], max_messages_per_round=LPS)
    ok.run_until(10.0)                      # never over 16 in one copy's window
    with pytest.raises(ContractViolation, match="cap is 16"):
        _faulty(2, "none", [], groups=False, max_messages_per_round=LPS).run_until(10.0)
    errors = {t: contract_error(lambda: _faulty(t, "none", [], max_messages_per_round=LPS - 1)
                        .run_until(10.0)) for t in THREADS}
    assert errors[1][1] == "messages_full" and "sent 16 " in errors[1][2]
    assert all(errors[t] == errors[1] for t in THREADS), errors


def test_event_budget_at_every_thread_count():
    # one event per LP per time unit: 96 a unit over the copies
    def go(t, budget, end):
        eng = _faulty(t, "none", [], max_events_per_run=budget)
        return contract_error(lambda: eng.run_until(end))
    ref = contract_error(lambda: _faulty(1, "none", [], groups=False,
                                 max_events_per_run=500).run_until(20.0))
    for t in THREADS:
        # the sum over copies (each copy under it): the same error as the team's
        assert go(t, 500, 20.0) == ref
        # one copy over it alone
        assert go(t, 100, 20.0)[1] == "event_budget"
    eng = _faulty(2, "none", [], max_events_per_run=20 * COPIES * LPS)
    eng.run_until(20.0)                     # within it


def test_event_budget_stops_a_storm_at_every_thread_count():
    errors = {t: contract_error(lambda: _faulty(t, "storm", [3, 2 * LPS + 7],
                                        max_events_per_run=10_000).run_until(10.0))
              for t in THREADS}
    assert errors[1][1] == "event_budget" and "LP 3 alone" in errors[1][2], errors[1]
    assert all(errors[t] == errors[1] for t in THREADS), errors


@pytest.mark.parametrize("threads", THREADS)
def test_a_window_that_cannot_advance_is_the_teams_error(threads):
    def go(groups):
        model, eng = phold.make(64, num_threads=threads, seed=2, lookahead=1e-17,
                                mean_delay=1000.0, remote_fraction=0.0)
        if groups:
            eng.set_copy_groups([(0, 1)], 64)
        return contract_error(lambda: eng.run_until(1e6))
    err = go(True)
    assert err[1] == "stuck_window"
    assert err == go(False)


def test_set_copy_groups_validation():
    eng = _faulty(1, "none", [], groups=False)
    for blocks, copies, match in [([(0, LPS)], COPIES + 1, "cover"),
                                  ([(0, LPS - 1)], COPIES, "cover"),
                                  ([(1, LPS)], COPIES, "cover"),
                                  ([(0, 8), (COPIES * 8 + 1, 8)], COPIES, "cover"),
                                  ([], COPIES, "1 to 64"),
                                  ([(0, 1.5)], COPIES, "int pairs"),
                                  ("ab", COPIES, "int pairs"),
                                  ([(0, LPS)], 0, "num_copies"),
                                  ([(0, LPS)], True, "num_copies")]:
        with pytest.raises(ValueError, match=match):
            eng.set_copy_groups(blocks, copies)
        assert eng.copy_groups is None
    eng.set_copy_groups([(0, 8), (COPIES * 8, 8)], COPIES)
    assert eng.copy_groups == (((0, 8), (COPIES * 8, 8)), COPIES)
    eng.set_copy_groups(None)
    assert eng.copy_groups is None
    eng.run_until(5.0)


def test_ctrl_c_interrupts_promptly_and_the_run_continues_exactly(ctrl_c_after):
    copies, lps = 64, 256

    def make(t, groups):
        eng = Engine(FaultyModel(copies * lps, "none", fault_lps=[], copy_lps=lps),
                     num_threads=t, max_events_per_run=10**10)
        if groups:
            eng.set_copy_groups([(0, lps)], copies)
        return eng
    # a run of about a second at 2 threads on this machine now (a fixed length
    # finished before the signal on a quiet machine): 16384 events a time unit
    probe = make(2, True)
    t0 = time.perf_counter()
    probe.run_until(40.0)
    end = float(max(600, math.ceil(40.0 / (time.perf_counter() - t0))))
    eng = make(2, True)
    t0 = time.perf_counter()
    with ctrl_c_after(0.15):
        eng.run_until(end)
    # control returns to Python every 50 ms: each thread stops between two
    # of its copy's windows
    assert time.perf_counter() - t0 < 0.45
    assert 0 < eng.stats()["events"] < copies * lps * (end - 1)
    assert eng.now == 0.0
    eng.run_until(end)
    ref = make(1, False)
    ref.run_until(end)
    assert eng.state_digest() == ref.state_digest()
    assert eng.stats()["events"] == ref.stats()["events"]
