/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The only place that includes omp.h.  Without OpenMP every call has a
 * serial meaning (one thread, barrier is a no-op), so the runtime compiles
 * and runs unchanged in a serial build.
 */
#ifndef SEER_OMP_COMPAT_H
#define SEER_OMP_COMPAT_H

#ifdef _OPENMP
#include <omp.h>
static inline int seer_openmp_enabled(void) { return 1; }
static inline int seer_omp_get_max_threads(void) { return omp_get_max_threads(); }
static inline int seer_omp_get_num_threads(void) { return omp_get_num_threads(); }
static inline int seer_omp_get_thread_num(void) { return omp_get_thread_num(); }
/* An orphaned barrier: it binds to the innermost enclosing parallel region,
 * which lets the engine keep one team alive across all phases of a run. */
static inline void seer_omp_barrier(void) { _Pragma("omp barrier") }
#else
static inline int seer_openmp_enabled(void) { return 0; }
static inline int seer_omp_get_max_threads(void) { return 1; }
static inline int seer_omp_get_num_threads(void) { return 1; }
static inline int seer_omp_get_thread_num(void) { return 0; }
static inline void seer_omp_barrier(void) { }
#endif

#endif
