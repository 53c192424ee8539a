# SPDX-License-Identifier: BSD-3-Clause
"""Serial equivalence of the runtime on PHOLD: every thread count gives the
same digest (all LP states, RNG and emission counters, pending events)."""

import random

import pytest

import seer_runtime
from seer_runtime.models import phold


def _param_sets(n, seed=2026):
    rng = random.Random(seed)
    sets = []
    for i in range(n):
        lookahead = rng.choice([1.0, 0.5, 0.1, 0.03])
        sets.append(dict(
            num_lps=rng.choice([1, 2, 7, 64, 333, 1024, 4096]),
            end_time=rng.choice([5.0, 20.0, 60.0]) * lookahead / 0.5 if lookahead < 0.5 else rng.choice([10.0, 40.0]),
            seed=rng.randrange(2**64),
            start_events=rng.choice([0, 1, 1, 2, 5]),
            remote_fraction=rng.choice([0.0, 0.25, 0.5, 0.9, 1.0]),
            lookahead=lookahead,
            mean_delay=lookahead + rng.choice([0.0, 0.0, 0.3, 1.0, 4.0]),
            work_iters=rng.choice([0, 0, 0, 5, 50]),
        ))
    return sets


PARAMS = _param_sets(100)


@pytest.mark.parametrize("params", PARAMS, ids=[f"p{i}" for i in range(len(PARAMS))])
def test_digest_identical_across_thread_counts(params, thread_counts):
    results = [phold.run(num_threads=t, **params) for t in thread_counts]
    ref = results[0]
    for t, r in zip(thread_counts, results):
        assert r["digest"] == ref["digest"], f"threads={t} differs from threads=1 for {params}"
        assert r["events"] == ref["events"]
        assert r["remote_events"] == ref["remote_events"]
        assert r["pending"] == ref["pending"]
        assert r["rounds"] == ref["rounds"]


@pytest.mark.parametrize("remote_fraction", [0.0, 1.0])
def test_extreme_remote_fractions(remote_fraction, thread_counts):
    runs = [phold.run(num_lps=2048, end_time=30.0, num_threads=t, seed=9,
                      remote_fraction=remote_fraction, mean_delay=2.0) for t in thread_counts]
    assert len({r["digest"] for r in runs}) == 1
    assert runs[0]["events"] > 2048 * 10
    if remote_fraction == 0.0:
        assert runs[0]["remote_events"] == 0 and runs[0]["inbox_pushes"] == 0
    else:
        # Every event goes to a uniform LP: almost all leave their source.
        assert runs[0]["remote_events"] > 0.99 * runs[0]["events"]


def test_oversubscribed_teams_agree():
    """8 threads on 2 cores: workers are preempted mid-round all the time."""
    kw = dict(num_lps=3000, end_time=25.0, seed=77, remote_fraction=0.7, mean_delay=1.3)
    assert phold.run(num_threads=8, **kw)["digest"] == phold.run(num_threads=1, **kw)["digest"]


def test_small_lookahead_forces_many_rounds(thread_counts):
    runs = [phold.run(num_lps=512, end_time=5.0, num_threads=t, seed=3,
                      lookahead=0.01, mean_delay=0.5) for t in thread_counts]
    assert len({r["digest"] for r in runs}) == 1
    assert runs[0]["rounds"] > 300


def test_digest_depends_on_seed_and_params():
    a = phold.run(num_lps=256, end_time=20.0, seed=1)
    assert phold.run(num_lps=256, end_time=20.0, seed=1)["digest"] == a["digest"]
    assert phold.run(num_lps=256, end_time=20.0, seed=2)["digest"] != a["digest"]
    assert phold.run(num_lps=256, end_time=20.0, seed=1, remote_fraction=0.3)["digest"] != a["digest"]
    assert phold.run(num_lps=256, end_time=20.0, seed=1, work_iters=3)["digest"] != a["digest"]


def test_changing_threads_between_segments_changes_nothing():
    """run_until in pieces, switching the team size between pieces, equals
    one serial run to the same end."""
    ref_model, ref = phold.make(1000, num_threads=1, seed=5, mean_delay=1.7, remote_fraction=0.6)
    ref.run_until(40.0)
    model, eng = phold.make(1000, num_threads=1, seed=5, mean_delay=1.7, remote_fraction=0.6)
    for i, t in enumerate([3, 1, 2, 4, 2, 1, 3, 2]):
        eng.num_threads = t
        eng.run_until(5.0 * (i + 1))
    assert eng.stats()["events"] == ref.stats()["events"]
    assert model.digest(eng) == ref_model.digest(ref)


def test_injected_events_are_ordered_deterministically(thread_counts):
    digests = set()
    for t in thread_counts:
        model, eng = phold.make(300, num_threads=t, seed=11, mean_delay=1.5)
        for k in range(10):
            eng.inject(float(k), 0, lo=k * 10, hi=300)   # each handled like a PHOLD event
            eng.run_until(float(k + 1))
        digests.add(model.digest(eng))
    assert len(digests) == 1


def test_statistics_are_consistent():
    r = phold.run(num_lps=4096, end_time=20.0, num_threads=2, seed=4)
    assert r["events"] == sum(t["events"] for t in r["threads"])
    assert r["inbox_pushes"] == sum(t["inbox_pushes"] for t in r["threads"])
    assert r["rounds"] >= 19
    assert r["events_per_round"] == pytest.approx(r["events"] / r["rounds"])
    assert r["max_events_per_round"] >= r["events_per_round"]
    assert 1 <= r["ready_per_round"] <= 4096
    assert len(r["busy_s"]) == len(r["idle_s"]) == 2
    # a serial build (SEER_NO_OPENMP=1) runs everything on the caller
    assert all(b > 0 for b in r["busy_s"][:2 if seer_runtime.openmp_enabled() else 1])
    # With 25% remote and uniform targets about a quarter of the events
    # cross LPs (a few pick their own LP).
    assert 0.2 < r["inbox_pushes"] / r["events"] < 0.3


def test_event_count_matches_phold_algebra():
    """With mean_delay == lookahead every delay is exactly the lookahead, so
    each LP's single start event recurs at t = 1, 2, ... and the number of
    events to end_time is num_lps * (end_time - 1) exactly."""
    r = phold.run(num_lps=1000, end_time=50.0, seed=8)
    assert r["events"] == 1000 * 49
    assert r["rounds"] == 49
