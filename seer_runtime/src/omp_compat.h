/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The only place that includes omp.h.  The engine's workers are SEER's own
 * team (team.h); OpenMP is asked only whether the build is parallel and for
 * its thread cap.  Without OpenMP both have a serial meaning, so the runtime
 * compiles and runs unchanged in a serial build.
 */
#ifndef SEER_OMP_COMPAT_H
#define SEER_OMP_COMPAT_H

#ifdef _OPENMP
#include <omp.h>
static inline int seer_openmp_enabled(void) { return 1; }
static inline int seer_omp_get_max_threads(void) { return omp_get_max_threads(); }
#else
static inline int seer_openmp_enabled(void) { return 0; }
static inline int seer_omp_get_max_threads(void) { return 1; }
#endif

#endif
