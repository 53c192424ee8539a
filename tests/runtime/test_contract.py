# SPDX-License-Identifier: BSD-3-Clause
"""A model that breaks the event-locality contract gets a clear
ContractViolation naming the event, never a crash or a silent corruption."""

import pytest

from seer_runtime import ContractViolation, Engine
from seer_runtime.models._faulty import FaultyModel
from seer_runtime.models import phold


def _run(mode, threads, n=16, **engine_kwargs):
    eng = Engine(FaultyModel(n, mode, fault_lp=5, fault_time=3.0), num_threads=threads, **engine_kwargs)
    eng.run_until(10.0)
    return eng


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("mode, reason, target, time", [
    ("past", "past", 5, 2.5),
    ("lookahead", "lookahead", 6, 3.5),
    ("bad_target", "bad_target", 21, 4.0),
    ("nan", "past", 5, None),
])
def test_violations_name_time_source_target_kind(mode, reason, target, time, threads):
    with pytest.raises(ContractViolation) as info:
        _run(mode, threads)
    e = info.value
    assert e.reason == reason
    assert e.source == 5 and e.target == target and e.now == 3.0
    if time is not None:
        assert e.time == time
    msg = str(e)
    assert "LP 5" in msg and f"target LP {target}" in msg and "t=3.0" in msg and "kind" in msg


def test_lookahead_message_states_the_bound():
    with pytest.raises(ContractViolation, match=r"lookahead=1\.0 .*t >= 4\.0"):
        _run("lookahead", 2)


def test_bad_target_message_states_the_id_range():
    with pytest.raises(ContractViolation, match="LP ids run from 0 to 15"):
        _run("bad_target", 1)


def test_outbox_overflow():
    with pytest.raises(ContractViolation) as info:
        _run("outbox", 2)
    assert info.value.reason == "model" or info.value.reason == "outbox_full"
    assert info.value.target == 5


def test_model_error_code_is_reported():
    with pytest.raises(ContractViolation, match="error code -123") as info:
        _run("model_error", 2)
    assert info.value.reason == "model" and info.value.code == -123 and info.value.target == 5


def test_queue_cap_gives_clear_error():
    with pytest.raises(ContractViolation, match="max_pending_per_lp") as info:
        _run("flood", 2, max_pending_per_lp=100)
    assert info.value.reason == "queue_full"


def test_message_cap_gives_clear_error():
    model, eng = phold.make(4096, num_threads=2, seed=1, remote_fraction=1.0,
                            max_messages_per_round=100)
    with pytest.raises(ContractViolation, match="max_messages_per_round") as info:
        eng.run_until(5.0)
    assert info.value.reason == "messages_full"


def test_engine_refuses_to_continue_after_a_violation():
    eng = Engine(FaultyModel(16, "past", fault_lp=5, fault_time=3.0), num_threads=2)
    with pytest.raises(ContractViolation):
        eng.run_until(10.0)
    with pytest.raises(RuntimeError, match="create a new one"):
        eng.run_until(11.0)


@pytest.mark.parametrize("threads", [1, 3])
def test_well_behaved_faulty_model_runs_clean(threads):
    eng = _run("none", threads)
    # one event per LP per time unit from t=1, t < 10
    assert eng.stats()["events"] == 16 * 9
