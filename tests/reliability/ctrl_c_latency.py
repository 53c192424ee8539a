# SPDX-License-Identifier: BSD-3-Clause
"""Measure how long a Ctrl-C (SIGINT) sent mid-step takes to raise
KeyboardInterrupt in an Aircraft env (docs/aircraft.md, "Bounds").  A
measurement tool, not a test: timings depend on the machine and its load.

    python tests/reliability/ctrl_c_latency.py NUM_UAVS SUBSTEPS [TRIES]
"""

import os
import signal
import sys
import threading
import time

import numpy as np

import seer_envs


def latency(step, delay=0.3):
    sent = [None]

    def fire():
        time.sleep(delay)
        sent[0] = time.perf_counter()
        os.kill(os.getpid(), signal.SIGINT)

    th = threading.Thread(target=fire)
    th.start()
    try:
        while True:
            step()
    except KeyboardInterrupt:
        return time.perf_counter() - sent[0]
    finally:
        th.join()


def main(argv):
    nu, sub = int(argv[0]), int(argv[1])
    tries = int(argv[2]) if len(argv) > 2 else 3
    out = []
    for k in range(tries):
        # A fresh env per try: an interrupted step leaves the env to be reset.
        env = seer_envs.make("aircraft_v0", num_threads=1, num_uavs=nu, dynamics_substeps=sub,
                             max_cycles=10**6)
        env.reset_arrays(seed=k)
        a = np.zeros((nu, 2), np.float32)
        out.append(latency(lambda: env.step_arrays(a)))
    print(f"aircraft {nu} UAVs x {sub} substeps: Ctrl-C seen after " + ", ".join(f"{x:.3f}" for x in out) + " s")


if __name__ == "__main__":
    main(sys.argv[1:])
