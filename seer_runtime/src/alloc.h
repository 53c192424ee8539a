/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Growth of the runtime's per-LP heaps, with a test-only failure switch.
 *
 * seer_test_heap_slot_limit (0: off) makes any heap growth beyond that many
 * slots fail as if realloc had returned NULL, so the tests exercise the
 * out-of-memory path without exhausting the machine's memory.  It is static:
 * each extension module has its own copy, and only the engine's (loop.pyx)
 * is ever set, with the GIL held and no run in progress.
 */
#ifndef SEER_ALLOC_H
#define SEER_ALLOC_H

#include <stdint.h>
#include <stdlib.h>

static int64_t seer_test_heap_slot_limit = 0;

static inline void *seer_heap_realloc(void *p, int64_t slots, size_t slot_size) {
    if (seer_test_heap_slot_limit > 0 && slots > seer_test_heap_slot_limit)
        return NULL;
    return realloc(p, (size_t)slots * slot_size);
}

#endif
