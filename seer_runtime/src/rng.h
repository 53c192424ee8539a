/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Counter-based random numbers.  A draw is a pure function of a 64-bit key
 * (one per entity, derived from the run seed and the entity id) and a
 * counter that only the entity's own events advance, so streams do not
 * depend on which thread runs an entity or when.
 *
 * bits(key, ctr) = fmix_b(fmix_a(ctr) ^ key).  Both mixers are bijections
 * (MurmurHash3's finaliser and Stafford's variant 13), so distinct counters
 * under one key never collide, and mixing the counter before the key avoids
 * the overlapping-streams problem of splitmix64 with per-stream offsets.
 */
#ifndef SEER_RNG_H
#define SEER_RNG_H

#include <stdint.h>
#include <math.h>

static inline uint64_t seer_fmix_a(uint64_t z) {
    z ^= z >> 33; z *= 0xff51afd7ed558ccdULL;
    z ^= z >> 33; z *= 0xc4ceb9fe1a85ec53ULL;
    z ^= z >> 33;
    return z;
}

static inline uint64_t seer_fmix_b(uint64_t z) {
    z ^= z >> 30; z *= 0xbf58476d1ce4e5b9ULL;
    z ^= z >> 27; z *= 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return z;
}

static inline uint64_t seer_rng_bits(uint64_t key, uint64_t ctr) {
    return seer_fmix_b(seer_fmix_a(ctr) ^ key);
}

/* The per-entity key: a function of (seed, entity) only. */
static inline uint64_t seer_rng_key(uint64_t seed, uint64_t entity) {
    return seer_fmix_b(seer_fmix_a(seed ^ 0x5eed5eed5eed5eedULL) + seer_fmix_a(entity + 0x9e3779b97f4a7c15ULL));
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double seer_bits_to_u01(uint64_t bits) {
    return (double)(bits >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n) without bias (Lemire's multiply-shift with
 * rejection).  n == 0 returns 0.  Advances *ctr once per attempt. */
static inline uint64_t seer_rng_bounded(uint64_t key, uint64_t *ctr, uint64_t n) {
    if (n == 0) return 0;
    uint64_t threshold = (0 - n) % n;
    for (;;) {
        *ctr += 1;
        uint64_t x = seer_rng_bits(key, *ctr);
        unsigned __int128 m = (unsigned __int128)x * n;
        if ((uint64_t)m >= threshold) return (uint64_t)(m >> 64);
    }
}

#endif
