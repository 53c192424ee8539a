/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Atomic operations for the runtime, as tiny inline functions.
 *
 * Cython has no C11 atomics, and the structs it declares cannot carry
 * `_Atomic` qualifiers, so these use the GCC/Clang `__atomic` builtins, which
 * operate on plain objects with C11 memory-order semantics.  Every function
 * names its memory order; callers say in a comment what it pairs with.
 * MSVC is not supported (it would need the Interlocked* family).
 */
#ifndef SEER_ATOMICS_H
#define SEER_ATOMICS_H

#include <stdint.h>

#if !defined(__GNUC__) && !defined(__clang__)
#error "seer_runtime needs GCC or Clang __atomic builtins"
#endif

/* Pointer CAS: release on success (publishes what the caller wrote into the
 * new node), relaxed on failure (the caller just retries).  On failure the
 * current value is written back into *expected. */
static inline int seer_cas_ptr_release(void **obj, void **expected, void *desired) {
    return __atomic_compare_exchange_n(obj, expected, desired, 0,
                                       __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* Pointer exchange with acquire: the consumer takes a whole inbox; pairs
 * with the release of seer_cas_ptr_release in every producer. */
static inline void *seer_xchg_ptr_acquire(void **obj, void *value) {
    return __atomic_exchange_n(obj, value, __ATOMIC_ACQUIRE);
}

static inline void *seer_load_ptr_relaxed(void **obj) {
    return __atomic_load_n(obj, __ATOMIC_RELAXED);
}

/* Claim counter for the executive list: relaxed is enough, the list itself
 * was published by the barrier that precedes the claims. */
static inline int64_t seer_fetch_add_i64_relaxed(int64_t *obj, int64_t v) {
    return __atomic_fetch_add(obj, v, __ATOMIC_RELAXED);
}

/* Completion counters of the stress harness: release on increment (after a
 * producer's last push), acquire on read (before the consumer's last take). */
static inline int64_t seer_fetch_add_i64_release(int64_t *obj, int64_t v) {
    return __atomic_fetch_add(obj, v, __ATOMIC_RELEASE);
}

static inline int64_t seer_load_i64_acquire(int64_t *obj) {
    return __atomic_load_n(obj, __ATOMIC_ACQUIRE);
}

/* Lower *obj to v if v is smaller; returns the value it held before.
 * Relaxed: used for hints (an error bound, the smallest failing LP) that are
 * read for correctness only after the parallel region's closing barrier. */
static inline int64_t seer_fetch_min_i64_relaxed(int64_t *obj, int64_t v) {
    int64_t cur = __atomic_load_n(obj, __ATOMIC_RELAXED);
    while (v < cur &&
           !__atomic_compare_exchange_n(obj, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return cur;
}

static inline int64_t seer_load_i64_relaxed(int64_t *obj) {
    return __atomic_load_n(obj, __ATOMIC_RELAXED);
}

/* Copy claims (copy groups): one word per share packs the first unclaimed
 * copy (low 32 bits) and the end of the unclaimed ones (high 32 bits).  The
 * owner takes half of what is left from the front (at least one, at most
 * n), a thief one copy from the back, so what a late owner leaves goes from
 * its share's far end: mostly the same copies from one step to the next,
 * whose state is then in the thief's cache, rather than whichever the owner
 * was about to reach.  Relaxed, as the claim counter:
 * what the copies hold was published when the phase opened.  Each returns
 * how many it took (0: none left), the first at *first.  A share holds fewer
 * than 2**31 copies (Engine.set_copy_groups). */
static inline int64_t seer_claim_front(int64_t *obj, int64_t n, int64_t *first) {
    int64_t cur = __atomic_load_n(obj, __ATOMIC_RELAXED), lo, hi, k;
    do {
        lo = cur & 0xffffffff;
        hi = (int64_t)((uint64_t)cur >> 32);
        if (lo >= hi)
            return 0;
        k = (hi - lo) / 2 < n ? (hi - lo) / 2 : n;
        k = k > 0 ? k : 1;
    } while (!__atomic_compare_exchange_n(obj, &cur, cur + k, 1, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    *first = lo;
    return k;
}

static inline int64_t seer_claim_back(int64_t *obj, int64_t *first) {
    int64_t cur = __atomic_load_n(obj, __ATOMIC_RELAXED), lo, hi;
    do {
        lo = cur & 0xffffffff;
        hi = (int64_t)((uint64_t)cur >> 32);
        if (lo >= hi)
            return 0;
    } while (!__atomic_compare_exchange_n(obj, &cur, cur - ((int64_t)1 << 32), 1,
                                          __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    *first = hi - 1;
    return 1;
}

/* Abort flag: set by a worker that records an error, polled by the others so
 * they stop claiming new work early.  Both relaxed: the flag is only a hint,
 * the error records themselves are read by thread 0 after a barrier or by
 * Python after the region has joined, and those synchronise. */
static inline void seer_store_i32_relaxed(int32_t *obj, int32_t v) {
    __atomic_store_n(obj, v, __ATOMIC_RELAXED);
}

static inline int32_t seer_load_i32_relaxed(int32_t *obj) {
    return __atomic_load_n(obj, __ATOMIC_RELAXED);
}

/* Busy-wait hint for spin loops in the stress harness. */
static inline void seer_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Cache hint: the exec loop asks for the next ready LP's heap top while it
 * runs this one (each heap is its own allocation: a miss per LP otherwise). */
static inline void seer_prefetch(const void *p) {
    __builtin_prefetch(p, 0, 3);
}

/* A write hint: the next heap a state import fills (its first line). */
static inline void seer_prefetch_w(const void *p) {
    __builtin_prefetch(p, 1, 3);
}

#endif
