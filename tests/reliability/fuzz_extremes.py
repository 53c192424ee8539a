# SPDX-License-Identifier: BSD-3-Clause
"""Extreme-value fuzzer (issue 16), run in a subprocess by test_fuzz.py.

Each case draws scenario parameters over the whole public parameter space:
every numeric field is, with some probability, replaced by an extreme (a
log-uniform value from 1e-310 to 1e310, 0, a negative, inf, NaN, a huge
integer), sizes kept small so a case costs little.  The config is built at 1
and 2 threads: both must raise the same error or both accept.  An accepted
config whose expected step work is small is stepped a few times at both
thread counts: observations and rewards must be finite and bit-identical.
Prints one JSON line per case.

    python fuzz_extremes.py ENV START COUNT
"""

import dataclasses
import json
import math
import random
import sys

import numpy as np

import seer_envs
from seer_envs.aircraft.config import AircraftConfig
from seer_envs.pcs.config import PCSConfig
from rollout import env_trace  # this folder: the script runs from it

SIZES = {"pcs_v0": ("grid_width", "grid_height", "portables_per_cell"),
         "aircraft_v0": ("num_uavs", "num_targets")}
CONFIG = {"pcs_v0": PCSConfig, "aircraft_v0": AircraftConfig}
RUN_WORK = 3e5      # step work below which an accepted config is stepped


def extreme(rng, default):
    if isinstance(default, bool):
        return rng.choice([True, False, 0, 1, "yes"])
    if isinstance(default, int):
        return rng.choice([0, 1, 2, -1, 2**rng.randint(3, 70), 10**rng.randint(1, 20), 3.5])
    r = rng.random()
    if r < 0.06:
        return rng.choice([0.0, -1.0, math.inf, -math.inf, math.nan, 5e-324])
    return 10.0 ** rng.uniform(-310, 308) if r < 0.5 else (default or 1.0) * 10.0 ** rng.uniform(-4, 4)


def params(env, rng):
    p = {}
    if env == "pcs_v0":
        p.update(grid_width=rng.randint(1, 5), grid_height=rng.randint(1, 5),
                 portables_per_cell=rng.randint(0, 12))
    else:
        p.update(num_uavs=rng.randint(1, 9), num_targets=rng.randint(0, 3))
    p["max_cycles"] = rng.choice([3, 50, 10**rng.randint(3, 17)])
    for f in dataclasses.fields(CONFIG[env]):
        if f.name in SIZES[env] or f.name == "max_cycles" or f.default is None:
            continue
        if rng.random() < 0.2:
            v = extreme(rng, f.default)
            if isinstance(v, float) and math.isinf(v) and v > 0 and f.name == "dt":
                v = 1e300
            p[f.name] = v
    return p


def one(env_name, i):
    rng = random.Random(f"extreme-{env_name}-{i}")
    p = params(env_name, rng)
    res = {"i": i, "params": repr(p)}
    errs = []
    for t in (1, 2):
        try:
            seer_envs.make(env_name, num_threads=t, **p)
            errs.append(None)
        except Exception as e:  # noqa: BLE001 - judged by the parent
            errs.append(f"{type(e).__name__}: {e}")
    res["errors"] = errs
    if errs[0] is None and errs[1] is None:
        cfg = seer_envs.make(env_name, num_threads=1, **p).config
        work = cfg.expected_work(cfg.dt) if env_name == "pcs_v0" else cfg.expected_work()
        res["work"] = work
        if work <= RUN_WORK:
            seed = rng.randrange(2**32)
            a = env_trace(env_name, p, 1, seed, 4, seed)
            b = env_trace(env_name, p, 2, seed, 4, seed)
            res["finite"] = all(bool(np.isfinite(x).all()) for x in a
                                if isinstance(x, np.ndarray) and x.dtype.kind == "f")
            res["equal"] = len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    return res


if __name__ == "__main__":
    name, start, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    for k in range(start, start + count):
        print(json.dumps(one(name, k)), flush=True)
