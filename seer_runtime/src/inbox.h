/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The lock-free MPSC inbox: an intrusive Treiber stack that producers push
 * with CAS and the single consumer empties with one atomic exchange.
 * Shared by the engine (through queue.pxd) and by the ThreadSanitizer
 * harness (tests/tsan/inbox_tsan.c), so both exercise the same code.
 *
 * Producers: any number, lock-free (one CAS always succeeds).
 * Consumer:  one at a time, wait-free (exchange, then a local reversal).
 * Order:     a taken batch is in linearisation order of its pushes, hence
 *            per-producer FIFO.
 * ABA:       push compares only the head and has already written node->next,
 *            so a recycled head value is harmless; there is no single-node
 *            pop, the operation that suffers ABA in a Treiber stack.
 * Memory:    nodes are owned by the caller; the engine recycles them only
 *            after every consumer has copied them out (after a barrier).
 */
#ifndef SEER_INBOX_H
#define SEER_INBOX_H

#include <stdint.h>
#include "atomics.h"

/* The first member of every node type pushed into an inbox. */
typedef struct seer_link {
    struct seer_link *next;
} seer_link;

/* Push one node.  Returns the failed CAS attempts; *was_empty is set when
 * this push made the inbox non-empty. */
static inline int64_t seer_inbox_push(void **head, seer_link *node, int *was_empty) {
    void *old = seer_load_ptr_relaxed(head);
    int64_t retries = 0;
    for (;;) {
        node->next = (seer_link *)old;
        /* release: publishes node->next and the payload; pairs with the
         * acquire exchange in seer_inbox_take_*. */
        if (seer_cas_ptr_release(head, &old, node))
            break;
        retries++;
    }
    *was_empty = old == NULL;
    return retries;
}

/* Take everything, newest first. */
static inline seer_link *seer_inbox_take_lifo(void **head) {
    /* acquire: pairs with the release CAS of every push it takes. */
    return (seer_link *)seer_xchg_ptr_acquire(head, NULL);
}

/* Take everything, oldest first (per-producer FIFO). */
static inline seer_link *seer_inbox_take_fifo(void **head) {
    seer_link *node = seer_inbox_take_lifo(head), *rev = NULL, *nxt;
    while (node != NULL) {
        nxt = node->next;
        node->next = rev;
        rev = node;
        node = nxt;
    }
    return rev;
}

#endif
