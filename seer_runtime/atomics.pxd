# SPDX-License-Identifier: BSD-3-Clause
# The runtime's atomic operations (src/atomics.h); each names its memory
# order there, and every caller says in a comment what it pairs with.

from libc.stdint cimport int32_t, int64_t

# (The pointer operations are used only in C, by src/inbox.h.)
cdef extern from "src/atomics.h" nogil:
    int64_t seer_fetch_add_i64_relaxed(int64_t* obj, int64_t v)
    int64_t seer_fetch_add_i64_release(int64_t* obj, int64_t v)
    int64_t seer_load_i64_acquire(int64_t* obj)
    int64_t seer_fetch_min_i64_relaxed(int64_t* obj, int64_t v)
    int64_t seer_load_i64_relaxed(int64_t* obj)
    int64_t seer_claim_front(int64_t* obj, int64_t n, int64_t* first)
    int64_t seer_claim_back(int64_t* obj, int64_t* first)
    void seer_store_i32_relaxed(int32_t* obj, int32_t v)
    int32_t seer_load_i32_relaxed(int32_t* obj)
    void seer_cpu_relax()
    void seer_prefetch(const void* p)
    void seer_prefetch_w(const void* p)
