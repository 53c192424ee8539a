# SPDX-License-Identifier: BSD-3-Clause
"""The memory a configuration needs is checked before anything is allocated
(issue 28, Why 4): a grid larger than the machine's free memory is a clear
MemoryError within a second, not OutOfMemory after a minute; the estimate is
a lower bound of the measured RSS, so nothing that fits is refused."""

import json
import os
import subprocess
import sys
import time

import pytest

import seer_envs
from seer_runtime import memory

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# RSS growth of one configuration in a fresh process: the model and engine
# (headless: init and 3 units; env/vector: reset and 3 zero-action steps).
MEASURE = r"""
import json, sys
import numpy as np, psutil
import seer_envs
from seer_runtime import Engine
form, name, copies, params = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
proc = psutil.Process()
spec = seer_envs.get(name)
cfg = spec.build_config(params)
r0 = proc.memory_info().rss
if form == "headless":
    eng = Engine(spec.make_model(cfg), num_threads=1, seed=0)
    eng.init(0.0)
    eng.run_until(3 * cfg.dt)
elif form == "env":
    env = seer_envs.make(name, num_threads=1, **params)
    env.reset_arrays(seed=0)
    sp, n = env.action_space(env.possible_agents[0]), len(env.possible_agents)
    for _ in range(3):
        env.step_arrays(np.zeros((n,) + tuple(sp.shape or ()), sp.dtype))
else:
    v = seer_envs.vector_env(name, copies, num_threads=1, **params)
    v.reset(seed=0)
    sp = v.single_action_space
    for _ in range(3):
        v.step(np.zeros((copies, v.num_agents) + tuple(sp.shape or ()), sp.dtype))
print(json.dumps({"rss": proc.memory_info().rss - r0, "estimate": cfg.memory_estimate(copies)}))
"""

CALIBRATION = [
    ("headless", "pcs_v0", 1, {"grid_width": 256, "grid_height": 256}),
    ("headless", "pcs_v0", 1, {"grid_width": 256, "grid_height": 128, "portables_per_cell": 5}),
    ("headless", "pcs_v0", 1, {"grid_width": 96, "grid_height": 96, "portables_per_cell": 40}),
    ("headless", "aircraft_v0", 1, {"num_uavs": 32768}),
    ("env", "pcs_v0", 1, {"grid_width": 128, "grid_height": 128}),
    ("env", "aircraft_v0", 1, {"num_uavs": 4096}),
    ("vector", "pcs_v0", 32, {"grid_width": 32, "grid_height": 32}),
]


@pytest.mark.parametrize("form,name,copies,params", CALIBRATION,
                         ids=[f"{f}-{n}-{c}-{sorted(p.items())}" for f, n, c, p in CALIBRATION])
def test_estimate_is_a_lower_bound_of_the_measured_rss(form, name, copies, params):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, "-c", MEASURE, form, name, str(copies), json.dumps(params)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    r = json.loads(p.stdout.strip().splitlines()[-1])
    # Never above what the configuration really takes (it must not refuse
    # what fits); headless, where the model and engine are all there is, not
    # far below either.
    assert r["estimate"] <= r["rss"], r
    if form == "headless":
        assert r["estimate"] >= 0.5 * r["rss"], r


def test_estimate_scales_with_sizes_and_copies():
    pcs = seer_envs.get("pcs_v0").build_config({"grid_width": 64, "grid_height": 64})
    assert pcs.memory_estimate(8) == 8 * pcs.memory_estimate()
    air = seer_envs.get("aircraft_v0").build_config({"num_uavs": 1000})
    assert air.memory_estimate(3) == 3 * air.memory_estimate()
    big = seer_envs.get("pcs_v0").build_config({"grid_width": 4096, "grid_height": 4096})
    assert big.memory_estimate() > 20 * 2**30        # 16.7M cells x 16 phones


def _free(monkeypatch, n):
    monkeypatch.setattr(memory, "available_bytes", lambda: n)


def test_the_issue_case_is_refused_within_a_second(monkeypatch):
    import seer_envs
    real = memory.available_bytes()
    _free(monkeypatch, min(real, 8 * 2**30))
    for threads in (1, "auto"):          # "auto": STPA's preflight builds the model first
        t0 = time.perf_counter()
        with pytest.raises(MemoryError, match=r"grid_width=4096, grid_height=4096 \(16777216 cells x "
                                              r"portables_per_cell=16\) needs about 2\d\.\d GiB .* more "
                                              r"than the [\d.]+ GiB available"):
            seer_envs.get("pcs_v0").headless(grid_width=4096, grid_height=4096, end_time=1.0, num_threads=threads)
        assert time.perf_counter() - t0 < 1.0


def test_what_fits_is_not_refused(monkeypatch):
    cfg = seer_envs.get("pcs_v0").build_config({"grid_width": 32, "grid_height": 32})
    _free(monkeypatch, cfg.memory_estimate())                 # exactly enough
    env = seer_envs.make("pcs_v0", num_threads=1, grid_width=32, grid_height=32)
    env.reset(seed=0)
    env.reset(seed=1)                                         # the model is built once, with the env
    _free(monkeypatch, cfg.memory_estimate() - 1)             # one byte short
    with pytest.raises(MemoryError, match="needs about"):
        seer_envs.make("pcs_v0", num_threads=1, grid_width=32, grid_height=32)
