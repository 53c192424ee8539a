# SPDX-License-Identifier: BSD-3-Clause
"""Test harness for the inbox (the queue code itself is inline in queue.pxd,
so the engine and this harness compile the same functions)."""

from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, malloc, free


ctypedef void (*seer_team_fn)(void* arg, void* team, int tid, int nt) noexcept nogil

# The harness has its own copy of the team code (a team per module and
# calling thread): cimporting the engine's would make the two modules'
# declarations circular.
cdef extern from "src/team.h" nogil:
    int seer_team_run(int nt, seer_team_fn fn, void* arg)
from seer_runtime.atomics cimport (seer_fetch_add_i64_relaxed, seer_fetch_add_i64_release,
                                   seer_load_i64_acquire, seer_cpu_relax)
from seer_runtime.queue cimport InboxNode, inbox_push, inbox_take_all

cdef extern from "src/clock.h" nogil:
    int64_t seer_clock_ns()


ctypedef struct StressShared:
    void* head                  # the inbox under test
    int64_t producers_done
    int64_t cas_retries
    int64_t delivered
    int64_t lost
    int64_t duplicated
    int64_t reordered
    int64_t batches
    int64_t max_batch


cdef void _produce(StressShared* sh, InboxNode* nodes, int64_t producer, int64_t per) noexcept nogil:
    cdef int64_t k, retries = 0
    cdef bint was_empty
    cdef InboxNode* base = nodes + producer * per
    for k in range(per):
        base[k].producer = <uint64_t>producer
        base[k].ev.seq = <uint64_t>k
        retries += inbox_push(&sh.head, &base[k], &was_empty)
    seer_fetch_add_i64_relaxed(&sh.cas_retries, retries)
    # release: orders this producer's pushes before the count the consumer
    # reads with acquire.
    seer_fetch_add_i64_release(&sh.producers_done, 1)


cdef void _consume(StressShared* sh, int64_t producers, int64_t per, uint32_t* seen,
                   int64_t* last) noexcept nogil:
    cdef InboxNode* node
    cdef int64_t done, n, p, k
    while True:
        # acquire: pairs with the release increment in _produce, so a take
        # after seeing every producer done sees every push.
        done = seer_load_i64_acquire(&sh.producers_done)
        node = inbox_take_all(&sh.head)
        n = 0
        while node != NULL:
            p = <int64_t>node.producer
            k = <int64_t>node.ev.seq
            seen[p * per + k] += 1
            if k <= last[p]:
                sh.reordered += 1
            last[p] = k
            n += 1
            node = node.next
        if n > 0:
            sh.batches += 1
            sh.delivered += n
            if n > sh.max_batch:
                sh.max_batch = n
        elif done == producers:
            return
        else:
            seer_cpu_relax()


ctypedef struct _StressJob:
    StressShared* sh
    InboxNode* nodes
    int64_t producers
    int64_t per
    uint32_t* seen
    int64_t* last
    int64_t team


# Member 0 of the team consumes, the others produce (round-robin over
# producers); a team of one (a serial build) produces everything first.
cdef void _stress_main(void* arg, void* team, int tid, int nt) noexcept nogil:
    cdef _StressJob* j = <_StressJob*>arg
    cdef int64_t p
    seer_fetch_add_i64_relaxed(&j.team, 1)
    if nt == 1:
        for p in range(j.producers):
            _produce(j.sh, j.nodes, p, j.per)
        _consume(j.sh, j.producers, j.per, j.seen, j.last)
    elif tid == 0:
        _consume(j.sh, j.producers, j.per, j.seen, j.last)
    else:
        p = tid - 1
        while p < j.producers:
            _produce(j.sh, j.nodes, p, j.per)
            p = p + nt - 1


def stress_inbox(int producers=3, int64_t per_producer=200000, int num_threads=0):
    """Push ``per_producer`` tagged nodes from each of ``producers`` producers
    into one inbox while a consumer takes batches concurrently.

    Every node carries its producer and a per-producer sequence number; the
    consumer counts deliveries per node and checks each producer's sequence
    only grows.  ``num_threads`` (default producers + 1) sizes the team
    (SEER's worker team, as the engine's): thread 0 consumes, the others
    produce (round-robin over producers).

    Returns a dict: ``delivered``, ``lost``, ``duplicated``, ``reordered``,
    ``cas_retries``, ``batches``, ``max_batch``, ``team`` (threads that ran),
    ``seconds``.
    """
    if producers < 1 or per_producer < 1:
        raise ValueError("producers and per_producer must be >= 1")
    cdef int nt_req = num_threads if num_threads > 0 else producers + 1
    cdef int64_t total = producers * per_producer, i
    cdef InboxNode* nodes = <InboxNode*>malloc(total * sizeof(InboxNode))
    cdef uint32_t* seen = <uint32_t*>calloc(total, sizeof(uint32_t))
    cdef int64_t* last = <int64_t*>malloc(producers * sizeof(int64_t))
    cdef StressShared sh
    cdef StressShared* shp = &sh
    cdef int team = 0, rc
    cdef _StressJob job
    cdef int64_t t0, t1
    if nodes == NULL or seen == NULL or last == NULL:
        free(nodes); free(seen); free(last)
        raise MemoryError()
    for i in range(producers):
        last[i] = -1
    sh.head = NULL
    sh.producers_done = 0
    sh.cas_retries = sh.delivered = sh.lost = sh.duplicated = 0
    sh.reordered = sh.batches = sh.max_batch = 0
    job.sh = shp
    job.nodes = nodes
    job.producers = producers
    job.per = per_producer
    job.seen = seen
    job.last = last
    job.team = 0
    t0 = seer_clock_ns()
    with nogil:
        rc = seer_team_run(nt_req, _stress_main, &job)
    if rc < 0:
        free(nodes); free(seen); free(last)
        raise RuntimeError(f"could not start {nt_req} threads")
    team = job.team
    t1 = seer_clock_ns()
    for i in range(total):
        if seen[i] == 0:
            sh.lost += 1
        elif seen[i] > 1:
            sh.duplicated += seen[i] - 1
    free(nodes)
    free(seen)
    free(last)
    return {"delivered": sh.delivered, "lost": sh.lost, "duplicated": sh.duplicated,
            "reordered": sh.reordered, "cas_retries": sh.cas_retries,
            "batches": sh.batches, "max_batch": sh.max_batch, "team": team,
            "seconds": (t1 - t0) * 1e-9}
