# SPDX-License-Identifier: BSD-3-Clause
"""Warm-up of an ``num_threads="auto"`` env before it is timed.

The thread tuner tries the counts next to STPA's pick over an env's first
steps (its closed loop) and keeps the best; a benchmark that reports the
steady rate steps until that loop has ended and reports its length beside
the figure.
"""

LOOP_MAX = 200     # warm-up steps at most (the loop takes a few dozen at most)


def closed_loop_running(env):
    """Is the thread tuner of ``env`` (any env with ``thread_choice``) still
    in its closed loop?  False for an explicit thread count."""
    ch = env.thread_choice
    return ch is not None and bool(ch.tuned) and ch.closed_loop is None
