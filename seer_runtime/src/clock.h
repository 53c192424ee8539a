/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SEER_CLOCK_H
#define SEER_CLOCK_H
#include <stdint.h>
#include <time.h>

/* Monotonic nanoseconds; for statistics and wall budgets only, never for
 * simulation results. */
static inline int64_t seer_clock_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
#endif
