# SPDX-License-Identifier: BSD-3-Clause
"""Background load for a measurement: busy-loop processes, the load average."""

import os
import subprocess
import sys


def start_busy(n):
    """Start ``n`` processes that each spin one core (``while True: pass``)
    until :func:`stop`; returns their handles.  They hold none of the
    caller's pipes: a caller captured by ``subprocess.run`` ends when it
    does, even if a loop outlived it."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(n)]


def stop(procs):
    """Kill and reap the processes :func:`start_busy` started."""
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def load1():
    """The 1-minute load average, NaN where the platform has none."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")
