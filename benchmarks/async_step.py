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

from seer_bench.async_loops import Policy, alone, async_loop, make, sync_loop  # noqa: E402


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
