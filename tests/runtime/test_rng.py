# SPDX-License-Identifier: BSD-3-Clause
"""The per-entity counter-based RNG: pure function of (seed, entity, draw
index), well distributed, distinct across entities and seeds."""

import math
import statistics

from seer_runtime.loop import rng_draws


def test_streams_are_reproducible_and_distinct():
    a = rng_draws(7, 3, 1000, "bits")
    assert a == rng_draws(7, 3, 1000, "bits")
    assert len(set(a)) == 1000
    others = set(rng_draws(7, 4, 1000, "bits")) | set(rng_draws(8, 3, 1000, "bits"))
    assert not others & set(a)


def test_uniform_moments_and_range():
    u = rng_draws(1, 0, 200_000)
    assert all(0.0 <= x < 1.0 for x in u)
    # mean 1/2 (sd 1/sqrt(12 n)), variance 1/12
    assert abs(statistics.fmean(u) - 0.5) < 5 / math.sqrt(12 * len(u))
    assert abs(statistics.pvariance(u) - 1 / 12) < 0.002


def test_exponential_mean():
    x = rng_draws(2, 9, 200_000, "exponential", 3.0)
    assert min(x) >= 0.0
    assert abs(statistics.fmean(x) - 3.0) < 5 * 3.0 / math.sqrt(len(x))
    assert rng_draws(2, 9, 5, "exponential", 0.0) == [0.0] * 5


def test_integer_is_uniform_over_its_range():
    n = 7
    x = rng_draws(3, 1, 70_000, "integer", n)
    counts = [x.count(k) for k in range(n)]
    assert set(x) == set(range(n))
    expected = len(x) / n
    chi2 = sum((c - expected) ** 2 / expected for c in counts)
    assert chi2 < 22.5   # chi-square, 6 dof, p = 0.001


def test_neighbouring_entities_are_uncorrelated():
    a = rng_draws(5, 100, 50_000)
    b = rng_draws(5, 101, 50_000)
    r = statistics.correlation(a, b)
    assert abs(r) < 5 / math.sqrt(len(a))


def test_python_mirror_matches_c_draw_for_draw():
    from seer_runtime.pyrng import Stream
    for seed, entity in [(0, 0), (1, 7), (2**64 - 1, 123456), (42, 2**32 - 2)]:
        s = Stream(seed, entity)
        assert [s.bits() for _ in range(50)] == rng_draws(seed, entity, 50, "bits")
        s = Stream(seed, entity)
        assert [s.uniform() for _ in range(50)] == rng_draws(seed, entity, 50)
        s = Stream(seed, entity)
        assert [s.exponential(2.5) for _ in range(50)] == rng_draws(seed, entity, 50, "exponential", 2.5)
        s = Stream(seed, entity)
        assert [s.integer(5) for _ in range(50)] == rng_draws(seed, entity, 50, "integer", 5)
