# SPDX-License-Identifier: BSD-3-Clause
"""One random-action rollout of a registered env, shared by the fuzzers
(test_fuzz.py in process, fuzz_extremes.py in a subprocess)."""

import numpy as np

import seer_envs


def env_trace(name, params, threads, seed, steps, action_seed):
    """Observations, rewards and done flags of each step of ``steps``
    random-action steps (array path), then the engine's state digest."""
    env = seer_envs.make(name, num_threads=threads, **params)
    out = [env.reset_arrays(seed=seed)]
    rng = np.random.default_rng(action_seed)
    space = env.action_space(env.possible_agents[0])
    n = len(env.possible_agents)
    for _ in range(steps):
        if not env.agents:
            break
        if hasattr(space, "n"):
            act = rng.integers(0, space.n, n)
        else:
            act = rng.uniform(-1, 1, (n,) + space.shape).astype(np.float32)
        o, r, te, tr = env.step_arrays(act)
        out += [o, r, te, tr]
    out.append(env.engine.state_digest())
    return out
