# SPDX-License-Identifier: BSD-3-Clause
"""The policy loops of the asynchronous-step measurements: a NumPy MLP
policy, the synchronous loop, the ``send`` / ``recv`` loop in two halves,
and policy and env timed alone.  The caller sets ``OPENBLAS_NUM_THREADS``
(and the like) to 1 before NumPy loads, for a one-BLAS-thread policy."""

import time

import numpy as np

import seer_envs


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
    ran = engine_cpu(venv)
    t0 = time.perf_counter()
    for _ in range(steps * groups):
        obs, _, _, _, infos = venv.recv()
        venv.send(policy(obs, space), infos["env_id"])
    while venv.in_flight:               # the last steps in flight
        venv.recv()
    t = time.perf_counter() - t0
    # the engine's thread meanwhile: on a CPU (its steps' engine parts), and the rest
    ran = engine_cpu(venv) - ran
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


def engine_cpu(venv):
    """CPU seconds of the env's engine thread (``send``'s) so far, from the
    OS's per-thread times (psutil); 0 before its first send."""
    import psutil
    th = getattr(venv, "_thread", None)
    if th is None:
        return 0.0
    tid = th._thread.native_id
    return next((t.user_time + t.system_time for t in psutil.Process().threads() if t.id == tid), 0.0)
