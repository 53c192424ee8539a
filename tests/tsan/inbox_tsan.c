/* SPDX-License-Identifier: BSD-3-Clause
 *
 * ThreadSanitizer harness for the runtime's inbox (seer_runtime/src/inbox.h,
 * the very header the engine compiles), with plain pthreads: TSan cannot see
 * libgomp's synchronisation.  Run by scripts/tsan_queue.sh.
 *
 * PRODUCERS threads each push `per` tagged nodes into one inbox while one
 * consumer takes batches (oldest first) concurrently, in rounds: after each
 * round the consumer hands the nodes back for reuse, as the engine recycles
 * its arenas after a barrier.  The consumer counts deliveries per node and
 * checks that each producer's sequence only grows.  Prints the counts, then
 * "OK" when nothing was lost, duplicated or reordered; exit status 1 if not.
 *
 *   inbox_tsan [nodes_per_producer]
 */
#define _POSIX_C_SOURCE 200809L  /* pthread barriers under -std=c11 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "inbox.h"

#define PRODUCERS 3
#define ROUNDS 4

typedef struct node {
    seer_link link;             /* must stay first */
    int64_t producer;
    int64_t seq;
    int64_t payload;            /* written before the push, read after the take */
} node;

static void *head;              /* the inbox under test */
static int64_t producers_done;  /* per round: release increments, acquire reads */
static int64_t per;
static node *nodes;             /* PRODUCERS * per, reused every round */
static pthread_barrier_t round_start;

static void *produce(void *arg) {
    int64_t p = (int64_t)(intptr_t)arg, k;
    int empty;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_barrier_wait(&round_start);
        for (k = 0; k < per; k++) {
            node *n = &nodes[p * per + k];
            n->producer = p;
            n->seq = k;
            n->payload = r * 1000003 + k;
            seer_inbox_push(&head, &n->link, &empty);
        }
        /* release: orders this producer's pushes before the count the
         * consumer reads with acquire. */
        seer_fetch_add_i64_release(&producers_done, 1);
    }
    return NULL;
}

int main(int argc, char **argv) {
    pthread_t th[PRODUCERS];
    int64_t delivered = 0, lost = 0, duplicated = 0, reordered = 0, corrupt = 0, batches = 0;
    int64_t last[PRODUCERS], i;
    uint32_t *seen;
    per = argc > 1 ? atoll(argv[1]) : 200000;
    if (per < 1)
        return 2;
    nodes = calloc((size_t)(PRODUCERS * per), sizeof(node));
    seen = calloc((size_t)(PRODUCERS * per), sizeof(uint32_t));
    if (!nodes || !seen)
        return 2;
    pthread_barrier_init(&round_start, NULL, PRODUCERS + 1);
    for (i = 0; i < PRODUCERS; i++)
        pthread_create(&th[i], NULL, produce, (void *)(intptr_t)i);
    for (int r = 0; r < ROUNDS; r++) {
        for (i = 0; i < PRODUCERS; i++)
            last[i] = -1;
        for (i = 0; i < PRODUCERS * per; i++)
            seen[i] = 0;
        pthread_barrier_wait(&round_start);
        for (;;) {
            /* acquire: pairs with the release increments, so a take after
             * seeing every producer done sees every push of the round. */
            int64_t done = seer_load_i64_acquire(&producers_done);
            seer_link *l = seer_inbox_take_fifo(&head);
            int64_t n = 0;
            while (l != NULL) {
                node *x = (node *)l;
                seer_link *next = l->next;
                seen[x->producer * per + x->seq]++;
                if (x->seq <= last[x->producer])
                    reordered++;
                if (x->payload != r * 1000003 + x->seq)
                    corrupt++;
                last[x->producer] = x->seq;
                n++;
                l = next;
            }
            if (n > 0) {
                batches++;
                delivered += n;
            } else if (done == (int64_t)(r + 1) * PRODUCERS) {
                break;
            } else {
                seer_cpu_relax();
            }
        }
        for (i = 0; i < PRODUCERS * per; i++) {
            if (seen[i] == 0)
                lost++;
            else if (seen[i] > 1)
                duplicated += seen[i] - 1;
        }
    }
    for (i = 0; i < PRODUCERS; i++)
        pthread_join(th[i], NULL);
    printf("producers %d rounds %d delivered %lld batches %lld corrupt %lld\n", PRODUCERS,
           ROUNDS, (long long)delivered, (long long)batches, (long long)corrupt);
    printf("lost %lld duplicated %lld reordered %lld\n", (long long)lost,
           (long long)duplicated, (long long)reordered);
    if (lost || duplicated || reordered || corrupt || delivered != (int64_t)ROUNDS * PRODUCERS * per) {
        printf("FAILED\n");
        return 1;
    }
    printf("OK\n");
    free(nodes);
    free(seen);
    return 0;
}
