# SPDX-License-Identifier: BSD-3-Clause
"""The lock-free MPSC inbox under concurrent producers and a concurrent
consumer: nothing lost, nothing duplicated, each producer's order kept."""

import pytest

import seer_runtime
from seer_runtime.queue import stress_inbox


def _check(r, producers, per):
    assert r["lost"] == 0, r
    assert r["duplicated"] == 0, r
    assert r["reordered"] == 0, r
    assert r["delivered"] == producers * per, r


@pytest.mark.parametrize("producers", [1, 2, 3, 7])
def test_inbox_concurrent_producers(producers):
    per = 300_000 // producers
    r = stress_inbox(producers=producers, per_producer=per)
    _check(r, producers, per)
    if seer_runtime.openmp_enabled():
        assert r["team"] == producers + 1


def test_inbox_consumer_runs_concurrently():
    """The consumer really takes batches while producers push (otherwise the
    test would only check a serial hand-over)."""
    if not seer_runtime.openmp_enabled():
        pytest.skip("serial build: no concurrency to observe")
    batches = 0
    for _ in range(5):
        r = stress_inbox(producers=1, per_producer=400_000)
        _check(r, 1, 400_000)
        batches = max(batches, r["batches"])
    assert batches > 1


def test_inbox_single_thread_team():
    r = stress_inbox(producers=3, per_producer=1000, num_threads=1)
    _check(r, 3, 1000)


@pytest.mark.slow
def test_inbox_1e8_events():
    total = 0
    for _ in range(20):
        r = stress_inbox(producers=3, per_producer=1_700_000)
        _check(r, 3, 1_700_000)
        total += r["delivered"]
    assert total >= 1e8
