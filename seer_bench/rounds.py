# SPDX-License-Identifier: BSD-3-Clause
"""Runners timed in interleaved rounds, their rates and paired ratios."""

import statistics
import time


def interleave(runners, rounds):
    """Time each runner once per round, runners interleaved (load on the
    machine hits all alike); {runner: [seconds per round]}."""
    times = {k: [] for k in runners}
    for _ in range(rounds):
        for k, fn in runners.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return times


def median_rates(times, work):
    """Work per second of each runner's median round."""
    return {k: work / statistics.median(v) for k, v in times.items()}


def paired(times, a, b):
    """Speed of ``a`` over ``b`` from rounds side by side: the median of the
    per-round ratios, with their range.  A round measures both runners within
    a second, so a slow spell on a shared machine hits both; a ratio of
    two medians would mix different spells."""
    r = sorted(tb / ta for ta, tb in zip(times[a], times[b]))
    return f"{statistics.median(r):.2f}x (rounds {r[0]:.2f}-{r[-1]:.2f})"


def interleaved(configs, repeats):
    """Call each config once per repeat, in turn, and keep every result:
    {key: [result, ...]} (``configs`` maps a key to a function of no
    arguments)."""
    out = {k: [] for k in configs}
    for _ in range(repeats):
        for k, fn in configs.items():
            out[k].append(fn())
    return out


def median_of(results, key):
    """The median of ``result[key]`` over ``results``."""
    return statistics.median(r[key] for r in results)


def spread(results, key):
    """(max - min) / median of ``result[key]`` over ``results`` (0 for a zero median)."""
    vals = [r[key] for r in results]
    m = statistics.median(vals)
    return (max(vals) - min(vals)) / m if m else 0.0
