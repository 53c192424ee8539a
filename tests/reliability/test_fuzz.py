# SPDX-License-Identifier: BSD-3-Clause
"""Serial-equivalence fuzzer: random scenario parameters, seeds and thread
counts 1-8; every run must equal the one-thread run bit for bit.

The normal suite runs a fast subset; ``pytest -m slow tests/reliability``
runs SEER_FUZZ_CASES (default 1000) cases per scenario.
"""

import os
import random
import sys

import numpy as np
import pytest

import seer_envs
from seer_runtime.models import phold

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rollout import env_trace  # noqa: E402

FAST = 12
SLOW = int(os.environ.get("SEER_FUZZ_CASES", "1000"))


def phold_case(rng):
    la = rng.choice([1.0, 0.5, 0.1, 0.02])
    p = dict(num_lps=rng.randint(1, 3000), seed=rng.randrange(2**64),
             start_events=rng.randint(0, 4), remote_fraction=rng.random(),
             lookahead=la, mean_delay=la + rng.choice([0.0, rng.random() * 3]),
             work_iters=rng.choice([0, 0, 3, 40]))
    p["end_time"] = la * rng.randint(5, 60)
    return p


def check_phold(rng):
    p = phold_case(rng)
    t = rng.randint(2, 8)
    a, b = phold.run(num_threads=1, **p), phold.run(num_threads=t, **p)
    assert (a["digest"], a["events"]) == (b["digest"], b["events"]), (p, t)


def pcs_params(rng):
    return dict(grid_width=rng.randint(1, 24), grid_height=rng.randint(1, 24),
                portables_per_cell=rng.randint(0, 30), channels_per_cell=rng.randint(1, 12),
                call_interarrival_mean=rng.choice([60.0, 200.0, 360.0]),
                call_duration_mean=rng.choice([30.0, 180.0]),
                move_interval_mean=rng.choice([20.0, 300.0, 4500.0, float("inf")]),
                handoff_latency=rng.choice([0.25, 1.0, 7.0]),
                power_control_iters=rng.choice([0, 0, 5, 60]),
                dt=rng.choice([15.0, 60.0]))


def check_pcs(rng):
    p = pcs_params(rng)
    t, seed = rng.randint(2, 8), rng.randrange(2**32)
    steps = rng.randint(1, 12)
    a = env_trace("pcs_v0", p, 1, seed, steps, seed)
    b = env_trace("pcs_v0", p, t, seed, steps, seed)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b)), (p, t)


def check_pcs_headless(rng):
    p = pcs_params(rng)
    p.pop("dt")
    t, seed = rng.randint(2, 8), rng.randrange(2**32)
    end = rng.choice([30.0, 120.0])
    keys = ("events", "call_attempts", "channel_blocks", "handoff_blocks", "handoffs", "state_digest")
    a = seer_envs.get("pcs_v0").headless(end_time=end, num_threads=1, seed=seed, **p)
    b = seer_envs.get("pcs_v0").headless(end_time=end, num_threads=t, seed=seed, **p)
    assert [a[k] for k in keys] == [b[k] for k in keys], (p, t)


def aircraft_params(rng):
    return dict(num_uavs=rng.choice([1, 2, 5, 17, 64, 150]), dynamics_substeps=rng.choice([1, 2, 8]),
                continuous_actions=rng.random() < 0.5, max_cycles=rng.choice([5, 50]))


def check_aircraft(rng):
    if "aircraft_v0" not in seer_envs.registry():
        pytest.fail("aircraft_v0 is not registered")
    p = aircraft_params(rng)
    t, seed = rng.randint(2, 8), rng.randrange(2**32)
    steps = rng.randint(1, 10)
    a = env_trace("aircraft_v0", p, 1, seed, steps, seed)
    b = env_trace("aircraft_v0", p, t, seed, steps, seed)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b)), (p, t)


CHECKS = {"phold": check_phold, "pcs_v0": check_pcs, "pcs_v0:headless": check_pcs_headless,
          "aircraft_v0": check_aircraft}


@pytest.mark.parametrize("name", list(CHECKS))
@pytest.mark.parametrize("case", range(FAST))
def test_fuzz_fast(name, case):
    CHECKS[name](random.Random(f"{name}-{case}"))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CHECKS))
def test_fuzz_slow(name):
    for case in range(SLOW):
        CHECKS[name](random.Random(f"slow-{name}-{case}"))


# --- extreme values over the whole parameter space (issue 16), in a subprocess
# with a timeout: no accepted config hangs or gives a non-finite observation
# or reward, and errors are the same at 1 and 2 threads (fuzz_extremes.py).

EXTREME_FAST = 12


def run_extremes(env, start, count, timeout):
    import json
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    penv = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    try:
        p = subprocess.run([sys.executable, os.path.join(here, "fuzz_extremes.py"), env, str(start),
                            str(count)], capture_output=True, text=True, timeout=timeout, env=penv)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        pytest.fail(f"{env} extremes {start}..{start + count} timed out after {timeout} s after "
                    f"{len(out.splitlines())} cases; the next one hangs")
    assert p.returncode == 0, p.stderr[-3000:]
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(rows) == count
    for r in rows:
        assert r["errors"][0] == r["errors"][1], ("error differs between 1 and 2 threads", r)
        if r["errors"][0] is not None:
            assert r["errors"][0].startswith("ValueError"), r
        assert r.get("finite", True), ("non-finite observation or reward", r)
        assert r.get("equal", True), ("1 and 2 threads differ", r)
    return rows


@pytest.mark.parametrize("env", ["pcs_v0", "aircraft_v0"])
def test_fuzz_extremes_fast(env):
    rows = run_extremes(env, 0, EXTREME_FAST, timeout=120)
    assert any(r["errors"][0] is None for r in rows)      # the fuzzer does reach accepted configs


@pytest.mark.slow
@pytest.mark.parametrize("env", ["pcs_v0", "aircraft_v0"])
def test_fuzz_extremes_slow(env):
    chunk = 50
    ran = 0
    for start in range(EXTREME_FAST, EXTREME_FAST + SLOW, chunk):
        rows = run_extremes(env, start, min(chunk, EXTREME_FAST + SLOW - start), timeout=600)
        ran += sum("finite" in r for r in rows)
    assert ran > 0
