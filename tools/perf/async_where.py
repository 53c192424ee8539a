# SPDX-License-Identifier: BSD-3-Clause
"""Where the engine's thread spends the asynchronous ping-pong loop of
``benchmarks/async_step.py``: inside the engine's native calls (actions
injected, events run, the boundary; the GIL released) or outside them
(Python, waiting for the GIL, waiting for a send), as a share of the loop's
wall time, median of ``--rounds`` rounds.

    python tools/perf/async_where.py [--policy-scale 0.5] [--steps 30] [--rounds 7]
        [--copies 64] [--size 8]

Where the env is the slower side (``--policy-scale`` below 1) the engine's
thread is the critical path, and every share outside the native calls is
time the loop loses against the ideal ``1 / max(policy, env)``.  A share
of wall time, not a rate, so it varies less with the machine's load than
the throughput ratios do.  It wraps the engine's methods and the scenario's
boundary with timers (a microsecond or so per call), and reads nothing
private but those, so the same script measures an older checkout of the
package (``PYTHONPATH=<checkout>``) for comparison.
"""

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):   # before NumPy loads BLAS
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

from seer_bench import async_loops as bench  # noqa: E402

import seer_envs.layout.batch as batch_mod  # noqa: E402

_clock = time.perf_counter_ns
_native = {}                # thread id -> ns inside native calls


def _timed(f):
    def call(*args, **kwargs):
        t = _clock()
        try:
            return f(*args, **kwargs)
        finally:
            k = threading.get_ident()
            _native[k] = _native.get(k, 0) + _clock() - t
    return call


class _TimedEngine:
    """The engine, its injects and runs timed."""

    __slots__ = ("_engine",)

    def __init__(self, engine):
        self._engine = engine

    def __getattr__(self, name):
        f = getattr(self._engine, name)
        return _timed(f) if name in ("inject", "inject_blocks", "run_until") else f


def _instrument(venv):
    """Time the boundary of the scenario's copies and every engine started from now on."""
    copies_cls = type(venv._batch.copies)
    copies_cls.boundary = _timed(copies_cls.boundary)
    start = batch_mod.Batch.start

    def timed_start(self, *args, **kwargs):
        out = start(self, *args, **kwargs)
        self.engine = _TimedEngine(self.engine)
        return out
    batch_mod.Batch.start = timed_start


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--policy-scale", type=float, default=0.5)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--copies", type=int, default=64)
    p.add_argument("--size", type=int, default=8, help="PCS grid side")
    a = p.parse_args()
    if a.copies < 2:
        p.error("--copies must be >= 2 (two halves)")
    cfg = argparse.Namespace(env="pcs", copies=a.copies, size=a.size, threads=1)
    sync_env, venv = bench.make(cfg), bench.make(cfg, cfg.copies // 2)
    obs, _ = sync_env.reset(seed=0)
    p0, e = bench.alone(sync_env, bench.Policy(obs.shape[-1], 9, 0), 10)
    p8, _ = bench.alone(sync_env, bench.Policy(obs.shape[-1], 9, 8), 10)
    reps = max(0, round((a.policy_scale * e - p0) / max((p8 - p0) / 8, 1e-9)))
    policy = bench.Policy(obs.shape[-1], 9, reps)
    _instrument(venv)
    bench.async_loop(venv, policy, 3)            # warm up; starts the engine's thread
    worker = next(t for t in threading.enumerate() if t.name.startswith("seer-vector"))
    outside = []
    for _ in range(a.rounds):
        _native.clear()
        t0 = _clock()
        bench.async_loop(venv, policy, a.steps)
        outside.append(1 - _native.get(worker.ident, 0) / (_clock() - t0))
    print(f"PCS {a.size}x{a.size} x {a.copies} copies in two halves, policy at {a.policy_scale:g}x the env's step; load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"the engine's thread outside the engine's native calls: {statistics.median(outside):.2f} of the "
          f"loop's wall time (rounds {min(outside):.2f}-{max(outside):.2f})")
    venv.close()
    sync_env.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
