# SPDX-License-Identifier: BSD-3-Clause
# Event queues of the runtime (docs/runtime.md, "How a run proceeds").
#
# Contract of each structure:
#
# LocalHeap -- one per LP, a binary min-heap of Events stored inline, ordered
#   by (time, src, seq).  Single-threaded: only the worker that is executing
#   or draining the LP touches it, and the phases are separated by barriers.
#   Growth doubles the array (amortised, never per event) up to a cap; over
#   the cap the push fails with SEER_E_QUEUE_FULL and nothing is written; a
#   refused allocation fails with SEER_E_NO_MEMORY (nothing written either).
#   Inline on purpose: a heap of 24-byte keys with the events in slots moves
#   less per sift, but the pop's read of the event body becomes a second,
#   dependent cache miss per LP visit; measured 0.69-0.96x of inline on PCS
#   (4096 LPs of ~16 pending events) and PHOLD, prefetching included.
#
# Inbox -- one per LP, a multi-producer single-consumer intrusive stack
#   (src/inbox.h): lock-free producers, wait-free consumer, per-producer
#   FIFO, ABA-immune (no single-node pop).  Nodes are owned by the
#   producer's MessageArena and are recycled only after every consumer has
#   copied them out (after the drain barrier).  Full: never; memory bounds
#   live in the arena.
#
# MessageArena -- one per worker thread, a bump allocator of InboxNodes in
#   fixed-size slabs (pointers stay valid while it grows).  Reset as a whole
#   once a round's messages are drained, so no node is freed individually and
#   no node crosses back between threads.  Capacity is capped; over the cap
#   allocation returns NULL (SEER_E_ARENA_FULL); a refused malloc returns
#   NULL with `oom` set (SEER_E_NO_MEMORY).

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport malloc, realloc, free
from seer_runtime.contract cimport (Event, sim_time_t, SEER_OK, SEER_E_QUEUE_FULL,
                                    SEER_E_NO_MEMORY)

cdef extern from "src/alloc.h" nogil:
    void* seer_heap_realloc(void* p, int64_t slots, size_t slot_size)

# --- LocalHeap --------------------------------------------------------------

ctypedef struct LocalHeap:
    Event* data                 # heap array, owned by the heap (malloc)
    int64_t size                # pending events
    int64_t cap                 # allocated slots


cdef inline bint event_before(const Event* a, const Event* b) noexcept nogil:
    # The total order of docs/runtime.md ("The contract a model keeps"): time, then the key (src, seq).
    if a.time != b.time:
        return a.time < b.time
    if a.src != b.src:
        return a.src < b.src
    return a.seq < b.seq


cdef inline int heap_push(LocalHeap* h, const Event* ev, int64_t max_size) noexcept nogil:
    cdef int64_t i, parent, new_cap
    cdef Event* grown
    if h.size >= h.cap:
        if h.size >= max_size:
            return SEER_E_QUEUE_FULL
        new_cap = 4 if h.cap == 0 else 2 * h.cap
        if new_cap > max_size:
            new_cap = max_size
        grown = <Event*>seer_heap_realloc(h.data, new_cap, sizeof(Event))
        if grown == NULL:
            return SEER_E_NO_MEMORY
        h.data = grown
        h.cap = new_cap
    # Sift up with a hole, moving parents down: one copy per level.
    i = h.size
    h.size += 1
    while i > 0:
        parent = (i - 1) >> 1
        if not event_before(ev, &h.data[parent]):
            break
        h.data[i] = h.data[parent]
        i = parent
    h.data[i] = ev[0]
    return SEER_OK


# Remove the earliest event into *out.  The heap must be non-empty.
cdef inline void heap_pop(LocalHeap* h, Event* out) noexcept nogil:
    cdef int64_t i = 0, child, n
    cdef Event* last
    out[0] = h.data[0]
    h.size -= 1
    n = h.size
    if n == 0:
        return
    last = &h.data[n]
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and event_before(&h.data[child + 1], &h.data[child]):
            child += 1
        if not event_before(&h.data[child], last):
            break
        h.data[i] = h.data[child]
        i = child
    h.data[i] = last[0]


cdef inline sim_time_t heap_top_time(const LocalHeap* h, sim_time_t empty) noexcept nogil:
    return h.data[0].time if h.size > 0 else empty


cdef inline void heap_free(LocalHeap* h) noexcept nogil:
    free(h.data)
    h.data = NULL
    h.size = 0
    h.cap = 0


# --- Inbox ------------------------------------------------------------------
# The algorithm lives in src/inbox.h (shared with the ThreadSanitizer
# harness); its contract is at the top of that file.

cdef extern from "src/inbox.h" nogil:
    ctypedef struct seer_link:
        seer_link* next
    int64_t seer_inbox_push(void** head, seer_link* node, int* was_empty)
    seer_link* seer_inbox_take_lifo(void** head)
    seer_link* seer_inbox_take_fifo(void** head)

ctypedef struct InboxNode:
    InboxNode* next             # stack link (the seer_link, must stay first)
    uint64_t producer           # free for the caller (the stress test tags nodes)
    Event ev


# Push one node; returns the number of failed CAS attempts (contention).
# *was_empty is set when the push made the inbox non-empty, which makes the
# caller the one producer responsible for announcing the inbox to the drainer.
cdef inline int64_t inbox_push(void** head, InboxNode* node, bint* was_empty) noexcept nogil:
    cdef int empty = 0
    cdef int64_t retries = seer_inbox_push(head, <seer_link*>node, &empty)
    was_empty[0] = empty != 0
    return retries


# Take everything pushed so far, oldest first (per-producer FIFO).
cdef inline InboxNode* inbox_take_all(void** head) noexcept nogil:
    return <InboxNode*>seer_inbox_take_fifo(head)


# Take everything pushed so far, newest first (no reversal; for consumers
# that re-sort anyway, like the local heap).
cdef inline InboxNode* inbox_take_all_lifo(void** head) noexcept nogil:
    return <InboxNode*>seer_inbox_take_lifo(head)


# --- MessageArena -------------------------------------------------------------

cdef enum:
    ARENA_SLAB_NODES = 4096

ctypedef struct MessageArena:
    InboxNode** slabs           # slab pointers, each ARENA_SLAB_NODES nodes
    int64_t nslabs              # slabs allocated (kept across resets)
    int64_t slabs_cap           # length of the slabs array
    int64_t slab                # slab being filled
    int64_t offset              # next free node in that slab
    int64_t max_nodes           # cap on nodes in use at once
    int64_t peak_nodes          # high-water mark (statistics)
    int32_t oom                 # set when malloc/realloc refused a slab


cdef inline InboxNode* arena_alloc(MessageArena* a) noexcept nogil:
    cdef InboxNode** grown
    cdef InboxNode* slab
    cdef int64_t used
    if a.offset == ARENA_SLAB_NODES:
        a.slab += 1
        a.offset = 0
    if a.slab >= a.nslabs:
        used = a.slab * <int64_t>ARENA_SLAB_NODES
        if used >= a.max_nodes:
            a.slab -= 1
            a.offset = ARENA_SLAB_NODES
            return NULL
        if a.nslabs == a.slabs_cap:
            grown = <InboxNode**>realloc(a.slabs, <size_t>(2 * a.slabs_cap + 4) * sizeof(InboxNode*))
            if grown == NULL:
                a.oom = 1
                return NULL
            a.slabs = grown
            a.slabs_cap = 2 * a.slabs_cap + 4
        slab = <InboxNode*>malloc(<size_t>ARENA_SLAB_NODES * sizeof(InboxNode))
        if slab == NULL:
            a.oom = 1
            return NULL
        a.slabs[a.nslabs] = slab
        a.nslabs += 1
    used = a.slab * <int64_t>ARENA_SLAB_NODES + a.offset
    if used >= a.max_nodes:
        return NULL
    a.offset += 1
    if used + 1 > a.peak_nodes:
        a.peak_nodes = used + 1
    return &a.slabs[a.slab][a.offset - 1]


cdef inline void arena_reset(MessageArena* a) noexcept nogil:
    a.slab = 0
    a.offset = 0


cdef inline void arena_free(MessageArena* a) noexcept nogil:
    cdef int64_t i
    for i in range(a.nslabs):
        free(a.slabs[i])
    free(a.slabs)
    a.slabs = NULL
    a.nslabs = 0
    a.slabs_cap = 0
    a.slab = 0
    a.offset = 0
