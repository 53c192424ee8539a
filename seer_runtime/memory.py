# SPDX-License-Identifier: BSD-3-Clause
"""The memory a configuration needs, checked before anything is allocated.

A scenario's config estimates its need from its sizes
(``memory_estimate(num_copies=1)``: the engine's per-LP arrays and event
queues plus the model's arrays) and its model's ``__init__`` calls
:func:`check_memory`, so every path that builds a model (an env's reset, a
vector env of many copies, a headless run, STPA's preflight) refuses a
configuration larger than the machine's available memory at once, with a
``MemoryError`` naming both, instead of running for a minute and dying in
the allocator.

The estimate is a lower bound calibrated against measured RSS (PCS and
Aircraft, 64-512 side grids and 4k-64k UAVs on glibc: 0.6-0.97 of the RSS
after a reset and a few steps, the env layer's agent lists not counted), so
a configuration that fits is never refused.
"""

import math

from seer_runtime.loop import ENGINE_LP_BYTES, EVENT_BYTES

#: A queue doubles from 4 slots; realloc's earlier blocks are not always
#: reused, and measured RSS was 1.3-1.7 x the queued events' bytes (PCS,
#: 1-200 events per LP): the estimate counts at least this many slots per
#: queued event.
SLACK = 1.25


def queue_slots(pending):
    """Slots a queue holding ``pending`` events has at least: its capacity
    (a power of two >= 4), or SLACK x ``pending``."""
    if pending <= 0:
        return 0
    cap = max(4, 1 << (math.ceil(pending) - 1).bit_length())
    return max(cap, math.ceil(SLACK * pending))


def engine_bytes(num_lps, pending_per_lp):
    """Bytes an Engine over ``num_lps`` LPs needs with ``pending_per_lp``
    events queued at each (its per-LP arrays and queues)."""
    return int(num_lps) * (ENGINE_LP_BYTES + queue_slots(pending_per_lp) * EVENT_BYTES)


def available_bytes():
    """Memory available to a new allocation (``psutil.virtual_memory().available``)."""
    import psutil
    return int(psutil.virtual_memory().available)


def _gib(n):
    return f"{n / 2**30:.3g} GiB"


def check_memory(need, what, hint=""):
    """``MemoryError`` when ``need`` bytes exceed the available memory; the
    message names ``what`` (the configuration), the need and what is
    available (and ``hint``: the parameters that would lower it)."""
    avail = available_bytes()
    if need > avail:
        raise MemoryError(f"{what} needs about {_gib(need)} of memory (at least: the engine's event "
                          f"queues and the model's arrays), more than the {_gib(avail)} available "
                          f"on this machine (psutil.virtual_memory().available)"
                          + (f"; {hint}" if hint else ""))
    return need
