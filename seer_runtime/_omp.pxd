# SPDX-License-Identifier: BSD-3-Clause
# The only Cython file that touches OpenMP.  In a serial build each call has
# a one-thread meaning (see src/omp_compat.h).  The engine's workers are
# SEER's own team (src/team.h); only openmp_enabled() (is this a parallel
# build) and omp_max_threads() still ask OpenMP.

cdef extern from "src/omp_compat.h" nogil:
    int seer_openmp_enabled()
    int seer_omp_get_max_threads()
