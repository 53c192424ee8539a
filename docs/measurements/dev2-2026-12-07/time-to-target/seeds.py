"""Which of SEER's copies each SuperSuit copy starts as, after ``reset(seed=100)`` of 4
copies: in-process (``num_cpus=0``) and multiprocessing on 2 workers (``num_cpus=2``).

    python docs/measurements/dev2-2026-12-07/time-to-target/seeds.py
    # in-process:      [0, 1, 2, 3]
    # multiprocessing: [0, 1, 1, 2]   (worker i seeds its copies from seed + i on)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * 3, "..", "benchmarks"))
import training_speed as ts  # noqa: E402

import seer_envs  # noqa: E402

kw = dict(num_uavs=4, max_cycles=10, continuous_actions=True)
seer = seer_envs.vector_env("aircraft_v0", 4, num_threads=1, autoreset_mode="same_step", **kw)
ref, _ = seer.reset(seed=100)
for name, cpus in (("in-process", 0), ("multiprocessing", 2)):
    v = ts.SuperSuitVec("aircraft_v0", 4, num_cpus=cpus, **kw)
    obs, _ = v.reset(seed=100)
    print(f"{name + ':':<17}", [next(j for j in range(4) if np.allclose(obs[i], ref[j])) for i in range(4)])
    v.close()
