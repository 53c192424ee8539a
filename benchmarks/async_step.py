# SPDX-License-Identifier: BSD-3-Clause
"""The vector env stepped asynchronously (``send`` / ``recv``, two halves in
ping-pong) against the synchronous loop, with a CPU policy, side by side.

    python benchmarks/async_step.py [--env pcs|aircraft] [--copies 64] [--size 8]
        [--policy-scale 1,0.5] [--steps 40] [--rounds 7] [--threads 1]

The policy is a NumPy MLP over every agent's observation (one BLAS thread),
repeated until it takes ``--policy-scale`` times the env's step (calibrated
first), so that policy and env take about the same time at scale 1; a
comma-separated list measures each scale in turn (default ``1,0.5``).

- ``sync``: ``act = policy(obs)``, ``obs = venv.step(act)``;
- ``async``: ``batch_size = copies // 2``: ``recv()`` one half, run the
  policy on it while the engine steps the other half, ``send()`` it.

Each round runs both loops for ``--steps`` steps of every copy, alternated;
prints env steps/s (copies stepped per second) of the median round, the
paired ratio async / sync, async against the ideal overlap
``1 / max(policy time, env time)`` (both measured alone in the same round),
and where the engine's thread spent the async loop (median shares).
"""

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):   # before NumPy loads BLAS
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import seer_envs  # noqa: E402


class Policy:
    """An MLP over observations; ``reps`` repeats its hidden layer."""

    def __init__(self, obs_dim, out, reps, hidden=32, seed=0):
        rng = np.random.default_rng(seed)
        self.w1 = rng.normal(0, 0.3, (obs_dim, hidden)).astype(np.float32)
        self.w2 = rng.normal(0, 0.3, (hidden, hidden)).astype(np.float32)
        self.w3 = rng.normal(0, 0.3, (hidden, out)).astype(np.float32)
        self.reps, self.out = reps, out

    def __call__(self, obs, space):
        shape = obs.shape[:-1]
        h = np.tanh(obs.reshape(-1, obs.shape[-1]) @ self.w1)
        for _ in range(self.reps):
            h = np.tanh(h @ self.w2)
        y = h @ self.w3
        if hasattr(space, "n"):
            return (y.argmax(axis=1) % space.n).reshape(shape)
        return np.tanh(y[:, :2]).reshape(shape + (2,))


def make(a, batch_size=None):
    if a.env == "pcs":
        kw = dict(grid_width=a.size, grid_height=a.size)
        sid = "pcs_v0"
    else:
        kw = dict(num_uavs=a.size, battery_capacity=1e9)
        sid = "aircraft_v0"
    return seer_envs.vector_env(sid, a.copies, num_threads=a.threads, max_cycles=10**6,
                                batch_size=batch_size or a.copies, **kw)


def sync_loop(venv, policy, steps):
    obs, _ = venv.reset(seed=0)
    space = venv.single_action_space
    t0 = time.perf_counter()
    for _ in range(steps):
        obs = venv.step(policy(obs, space))[0]
    return time.perf_counter() - t0


def async_loop(venv, policy, steps):
    space = venv.single_action_space
    venv.async_reset(seed=0)
    groups = -(-venv.num_envs // venv.batch_size)
    ran = _engine_cpu(venv)
    t0 = time.perf_counter()
    for _ in range(steps * groups):
        obs, _, _, _, infos = venv.recv()
        venv.send(policy(obs, space), infos["env_id"])
    while venv.in_flight:               # the last steps in flight
        venv.recv()
    t = time.perf_counter() - t0
    # the engine's thread meanwhile: on a CPU (its steps' engine parts), and the rest
    ran = _engine_cpu(venv) - ran
    return t, ran, t - ran


def alone(venv, policy, steps):
    """(policy, env) seconds for ``steps`` full-batch steps, each alone."""
    obs, _ = venv.reset(seed=0)
    space = venv.single_action_space
    t0 = time.perf_counter()
    for _ in range(steps):
        act = policy(obs, space)
    t1 = time.perf_counter()
    for _ in range(steps):
        venv.step(act)
    return t1 - t0, time.perf_counter() - t1


def _engine_cpu(venv):
    """CPU seconds of the env's engine thread (``send``'s) so far, from the
    OS's per-thread times (psutil); 0 before its first send."""
    import psutil
    th = getattr(venv, "_thread", None)
    if th is None:
        return 0.0
    tid = th._thread.native_id
    return next((t.user_time + t.system_time for t in psutil.Process().threads() if t.id == tid), 0.0)


def measure(a, scale, sync_env, async_env):
    """Rounds of both loops at one policy scale: (async/sync, async/ideal) per round."""
    obs, _ = sync_env.reset(seed=0)
    # the policy's cost: its fixed part, then per hidden layer
    p0, e = alone(sync_env, Policy(obs.shape[-1], 9, 0), 10)
    p8, _ = alone(sync_env, Policy(obs.shape[-1], 9, 8), 10)
    reps = max(0, round((scale * e - p0) / max((p8 - p0) / 8, 1e-9)))
    policy = Policy(obs.shape[-1], 9, reps)
    sync_loop(sync_env, policy, 3)           # warm up both (and start the engine's thread)
    async_loop(async_env, policy, 3)
    rates = {"sync": [], "async": [], "ideal": []}
    shares = []                 # the engine thread's time in the async loop: (on a CPU, off it)
    for r in range(a.rounds):
        order = [("sync", sync_loop, sync_env), ("async", async_loop, async_env)]
        for name, loop, env in (order if r % 2 == 0 else order[::-1]):
            t = loop(env, policy, a.steps)
            if name == "async":
                t, ran, waited = t
                shares.append((ran / t, waited / t))
            rates[name].append(a.copies * a.steps / t)
        pt, et = alone(sync_env, policy, a.steps)
        rates["ideal"].append(a.copies * a.steps / max(pt, et))
    print(f"policy at {scale:g}x the env's step ({reps} hidden layers):")
    for k, v in rates.items():
        print(f"  {k:<6} {statistics.median(v):>10.0f} env steps/s")
    ratio = [x / y for x, y in zip(rates["async"], rates["sync"])]
    vs_ideal = [x / y for x, y in zip(rates["async"], rates["ideal"])]
    print(f"  async / sync: {statistics.median(ratio):.2f}x (rounds {min(ratio):.2f}-{max(ratio):.2f})")
    print(f"  async / ideal overlap 1/max(policy, env): {statistics.median(vs_ideal):.2f} "
          f"(rounds {min(vs_ideal):.2f}-{max(vs_ideal):.2f})")
    run_share = statistics.median(x for x, _ in shares)
    wait_share = statistics.median(y for _, y in shares)
    print(f"  the engine's thread in the async loop: {run_share:.2f} of the time on a CPU (steps' engine "
          f"parts), {wait_share:.2f} off it (waiting for a send or the GIL)")
    return ratio, vs_ideal


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", choices=["pcs", "aircraft"], default="pcs")
    p.add_argument("--copies", type=int, default=64)
    p.add_argument("--size", type=int, default=8, help="PCS grid side, or Aircraft UAVs")
    p.add_argument("--policy-scale", default="1,0.5",
                   help="policy time / env time: one value or a comma-separated list")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--threads", type=int, default=1, help="the env's threads")
    a = p.parse_args()
    if a.copies < 2:
        p.error("--copies must be >= 2 (two halves)")
    try:
        scales = [float(x) for x in str(a.policy_scale).split(",")]
    except ValueError:
        p.error(f"--policy-scale must be numbers separated by commas, got {a.policy_scale!r}")
    if not scales or min(scales) < 0:
        p.error("--policy-scale must be >= 0")
    sync_env, async_env = make(a), make(a, a.copies // 2)
    what = f"PCS {a.size}x{a.size}" if a.env == "pcs" else f"Aircraft {a.size} UAVs"
    print(f"{what} x {a.copies} copies, env {a.threads} thread(s), NumPy MLP policy (1 BLAS thread); "
          f"{a.rounds} alternated rounds of {a.steps} steps; load average {os.getloadavg()[0]:.1f}")
    summary = []
    for scale in scales:
        summary.append((scale,) + measure(a, scale, sync_env, async_env))
    print("policy / env time | async / sync | async / ideal 1/max(policy, env)")
    for scale, ratio, vs_ideal in summary:
        print(f"  {scale:<15g} | {statistics.median(ratio):.2f}x (rounds {min(ratio):.2f}-{max(ratio):.2f}) "
              f"| {statistics.median(vs_ideal):.2f} of the ideal (rounds {min(vs_ideal):.2f}-{max(vs_ideal):.2f})")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    sync_env.close()
    async_env.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
