# SPDX-License-Identifier: BSD-3-Clause
"""The runtime's counter-based RNG in pure Python, draw for draw.

Reference implementations of scenarios use this so that they consume the
same random numbers as the compiled handlers; ``tests/runtime/test_rng.py``
checks it against the C version.
"""

import math

M64 = (1 << 64) - 1


def _fmix_a(z):
    z ^= z >> 33
    z = (z * 0xFF51AFD7ED558CCD) & M64
    z ^= z >> 33
    z = (z * 0xC4CEB9FE1A85EC53) & M64
    return z ^ (z >> 33)


def _fmix_b(z):
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & M64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def rng_key(seed, entity):
    """The stream key of ``entity`` under ``seed``."""
    return _fmix_b((_fmix_a(seed ^ 0x5EED5EED5EED5EED) + _fmix_a((entity + 0x9E3779B97F4A7C15) & M64)) & M64)


class Stream:
    """One entity's stream: ``Stream(seed, entity)``; ``ctr`` counts draws."""

    __slots__ = ("key", "ctr")

    def __init__(self, seed, entity):
        self.key = rng_key(seed, entity)
        self.ctr = 0

    def bits(self):
        self.ctr += 1
        return _fmix_b(_fmix_a(self.ctr) ^ self.key)

    def uniform(self):
        return (self.bits() >> 11) * 2.0**-53

    def exponential(self, mean):
        return -mean * math.log1p(-self.uniform())

    def integer(self, n):
        """Uniform in [0, n) (Lemire's method with rejection, as in C)."""
        if n == 0:
            return 0
        threshold = ((1 << 64) - n) % n
        while True:
            m = self.bits() * n
            if (m & M64) >= threshold:
                return m >> 64
